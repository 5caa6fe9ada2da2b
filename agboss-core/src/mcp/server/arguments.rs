//! A key twice in one object of an HTTP request's JSON: rmcp parses the request into maps,
//! which keep one of the two, before a tool's decoder sees the arguments. So the body is
//! screened first ([`screen`]): a key twice in a `tools/call`'s `params.arguments` keeps the
//! arguments' raw text ([`RawArguments`], in the request's extensions), which the handler
//! decodes instead of rmcp's map (the tool's input is then refused with a `duplicate` error
//! at the key's path, as for any caller); a key twice anywhere else refuses the request.
use std::sync::Arc;

use crate::dto::duplicate;

/// The raw text of a `tools/call`'s arguments that hold a key twice.
#[derive(Debug, Clone)]
pub(crate) struct RawArguments(pub(crate) Arc<str>);

/// What the screening of a body decided.
#[derive(Debug)]
pub(crate) enum Screened {
    /// No key twice: rmcp's parse is faithful.
    Faithful,
    /// A key twice in the arguments: decode these instead.
    Raw(RawArguments),
    /// A key twice elsewhere: refused.
    Refused,
}

/// Screens one request body (text that is not UTF-8 or not JSON is left to rmcp to refuse).
pub(crate) fn screen(body: &[u8]) -> Screened {
    let Ok(text) = std::str::from_utf8(body) else {
        return Screened::Faithful;
    };
    let found = duplicate::scan(text, &["params", "arguments"]);
    if found.duplicate.is_some() {
        return Screened::Refused;
    }
    match found.skipped {
        Some(span) if duplicate::first_duplicate(&text[span.clone()]).is_some() => {
            Screened::Raw(RawArguments(Arc::from(&text[span])))
        }
        _ => Screened::Faithful,
    }
}
