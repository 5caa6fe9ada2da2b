//! Attribute arguments: darling models ([`model`]) of value shapes ([`value`]), parsed in one
//! place ([`parse`]) that turns darling's errors into the rule codes users see
//! (`[attr.unknown-key]`, `[attr.missing-key]`, `[attr.duplicate-key]`, `[attr.value]`,
//! `[attr.syntax]`), with the keys and examples of the macro's documentation ([`docs`]).
pub mod docs;
pub mod model;
pub mod value;

use darling::FromMeta;
use darling::ast::NestedMeta;
use proc_macro2::{Span, TokenStream};

use crate::diag::Errors;
use docs::MacroDoc;

/// Parses `attr` into `T`, pushing every error of the attribute into `errors`. `None` when
/// the arguments could not be read (every reason is in `errors`).
pub fn parse<T: FromMeta>(doc: MacroDoc, attr: TokenStream, errors: &mut Errors) -> Option<T> {
    let m = doc.attr;
    let items = match NestedMeta::parse_meta_list(attr) {
        Ok(items) => items,
        Err(e) => {
            errors.push(syn::Error::new(
                e.span(),
                format!(
                    "[attr.syntax] cannot read the arguments of `#[{m}]`: {e}; write `#[{m}(key = value, ...)]`"
                ),
            ));
            return None;
        }
    };
    match T::from_list(&items) {
        Ok(model) => Some(model),
        Err(e) => {
            translate(doc, e, errors);
            None
        }
    }
}

/// One darling error per key, rewritten with its rule code and a fix.
fn translate(doc: MacroDoc, error: darling::Error, errors: &mut Errors) {
    let m = doc.attr;
    let singles: Vec<darling::Error> = error.flatten().into_iter().collect();
    let keys: Vec<String> = doc.keys().iter().map(|k| k.key.to_owned()).collect();
    let all_keys = keys.join(", ");
    // Keys suggested for a misspelt one: not reported again as missing.
    let mut suggested: Vec<String> = Vec::new();
    let mut out: Vec<syn::Error> = Vec::new();
    for e in singles {
        let span = e.explicit_span().unwrap_or_else(Span::call_site);
        let text = e.to_string();
        let (message, location) = match text.rsplit_once(" at ") {
            Some((msg, loc)) if keys.iter().any(|k| k == loc) => (msg.to_owned(), Some(loc)),
            _ => (text.clone(), None),
        };
        let quoted = |s: &str| s.split('`').nth(1).map(str::to_owned);
        let rewritten = if let Some(rest) = message.strip_prefix("Unknown field: ") {
            let name = quoted(rest).unwrap_or_default();
            let close = rest
                .split_once("Did you mean ")
                .and_then(|(_, s)| quoted(s));
            let hint = match &close {
                Some(k) => {
                    suggested.push(k.clone());
                    format!("did you mean `{k}`? ")
                }
                None => String::new(),
            };
            format!(
                "[attr.unknown-key] unknown key `{name}` in `#[{m}]`: {hint}the keys are: {all_keys}"
            )
        } else if let Some(rest) = message.strip_prefix("Missing field ") {
            let name = quoted(rest).unwrap_or_default();
            if suggested.contains(&name) {
                continue;
            }
            format!("[attr.missing-key] `#[{m}]` needs `{}`", doc.example(&name))
        } else if let Some(rest) = message.strip_prefix("Duplicate field ") {
            let name = quoted(rest).unwrap_or_default();
            format!("[attr.duplicate-key] `{name}` is given twice in `#[{m}]`; keep one")
        } else if let Some(key) = location {
            format!("[attr.value] `{key}` expects `{}`", doc.example(key))
        } else {
            format!("[attr.syntax] {message} in `#[{m}]`; write `#[{m}(key = value, ...)]`")
        };
        out.push(syn::Error::new(span, rewritten));
    }
    // A missing key comes after every other error of the attribute, as it reads.
    out.sort_by_key(|e| e.to_string().starts_with("[attr.missing-key]"));
    for e in out {
        errors.push(e);
    }
}

/// `name` and `description` read leniently (other keys ignored, errors dropped): the naming
/// rules are checked even when another key of the attribute is wrong.
#[derive(FromMeta, Default)]
#[darling(allow_unknown_fields)]
struct LooseNamed {
    name: Option<value::Str>,
    description: Option<value::Str>,
}

/// The `name` and `description` literals of `attr`, if they are there and are texts.
pub fn loose_named(attr: &TokenStream) -> (Option<syn::LitStr>, Option<syn::LitStr>) {
    let loose = NestedMeta::parse_meta_list(attr.clone())
        .ok()
        .and_then(|items| LooseNamed::from_list(&items).ok())
        .unwrap_or_default();
    (loose.name.map(|s| s.0), loose.description.map(|s| s.0))
}

#[cfg(test)]
mod tests {
    use super::docs::{self, MacroDoc};
    use super::model::*;
    use super::*;

    /// Every key of a macro's documentation, written as its example, parses into its model.
    fn accepts<T: FromMeta>(doc: MacroDoc) {
        let keys = doc.keys();
        let list: Vec<&str> = keys.iter().map(|k| k.example).collect();
        let tokens: TokenStream = list.join(", ").parse().expect("examples are tokens");
        let mut errors = Errors::default();
        let model = parse::<T>(doc, tokens, &mut errors);
        assert!(
            model.is_some() && errors.is_empty(),
            "#[{}]: {}",
            doc.attr,
            errors.to_compile_errors()
        );
    }

    #[test]
    fn documented_keys_are_the_accepted_keys() {
        accepts::<ToolArgs>(docs::TOOL_DOC);
        accepts::<McpToolArgs>(docs::MCP_TOOL_DOC);
        accepts::<InterceptorArgs>(docs::TOOL_INTERCEPTOR_DOC);
        accepts::<ChannelArgs>(docs::CHANNEL_DOC);
        accepts::<InputGuardrailArgs>(docs::INPUT_GUARDRAIL_DOC);
        accepts::<OutputGuardrailArgs>(docs::OUTPUT_GUARDRAIL_DOC);
        accepts::<PiiPolicyArgs>(docs::PII_POLICY_DOC);
        accepts::<InjectableArgs>(docs::INJECTABLE_DOC);
        accepts::<AgentArgs>(docs::AGENT_DOC);
        accepts::<RouterArgs>(docs::ROUTER_DOC);
        accepts::<WorkflowArgs>(docs::WORKFLOW_DOC);
        accepts::<ApplicationArgs>(docs::APPLICATION_DOC);
    }

    #[test]
    fn every_table_names_each_key_once() {
        for doc in docs::ALL {
            let keys = doc.keys();
            assert!(!keys.is_empty(), "#[{}] has no keys", doc.attr);
            for (i, k) in keys.iter().enumerate() {
                assert!(
                    !keys[..i].iter().any(|o| o.key == k.key),
                    "#[{}] lists `{}` twice",
                    doc.attr,
                    k.key
                );
                assert!(k.example.starts_with(k.key), "example of `{}`", k.key);
            }
        }
    }

    #[test]
    fn a_misspelt_key_is_suggested_and_not_reported_missing() {
        let tokens: TokenStream = r#"name = "a-tool", descripton = "x", input = A, output = B"#
            .parse()
            .unwrap();
        let mut errors = Errors::default();
        assert!(parse::<ToolArgs>(docs::TOOL_DOC, tokens, &mut errors).is_none());
        let text = errors.to_compile_errors().to_string();
        assert!(text.contains("did you mean `description`?"), "{text}");
        assert!(!text.contains("attr.missing-key"), "{text}");
    }
}
