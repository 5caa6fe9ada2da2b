//! A key twice in one object of an HTTP request's JSON: rmcp parses the request into maps,
//! which keep one of the two, before a tool's decoder sees the arguments. So the body is
//! screened first ([`screen`]): a key twice in a `tools/call`'s `params.arguments` keeps the
//! arguments' raw text ([`RawArguments`], in the request's extensions), which the handler
//! decodes instead of rmcp's map (the tool's input is then refused with a `duplicate` error
//! at the key's path, as for any caller); a key twice anywhere else refuses the request.
//!
//! Over stdio the same screening runs on each line rmcp reads ([`ScreenedLines`]): the raw
//! arguments are kept by request id ([`RawByRequest`]), and a line with a key twice elsewhere
//! is replaced by a request of a method no server has, so rmcp answers it with an error.
use std::collections::HashMap;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, ready};

use tokio::io::{AsyncRead, ReadBuf};

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

/// The raw arguments of stdio requests that hold a key twice, by request id (its JSON text):
/// taken by the handler when it runs the call.
#[derive(Debug, Default)]
pub(crate) struct RawByRequest(Mutex<HashMap<String, RawArguments>>);

impl RawByRequest {
    /// Keeps the raw arguments of request `id`; false when too many are kept already (the
    /// line is then refused: never decoded from rmcp's map).
    fn keep(&self, id: String, raw: RawArguments) -> bool {
        let mut kept = self.lock();
        if kept.len() >= MAX_KEPT && !kept.contains_key(&id) {
            return false;
        }
        kept.insert(id, raw);
        true
    }

    /// The raw arguments of request `id` (its JSON text), once.
    pub(crate) fn take(&self, id: &str) -> Option<RawArguments> {
        self.lock().remove(id)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, RawArguments>> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// How many raw arguments are kept at once (calls in flight whose line held a key twice).
const MAX_KEPT: usize = 256;

/// The method a refused stdio line is replaced by: no handler has it, so rmcp answers
/// "method not found" to the request's id.
const REFUSED_METHOD: &str = "agboss/refused-a-key-twice-in-one-object";

/// A reader of JSON-RPC lines (rmcp's stdio framing) that screens each line as [`screen`]
/// screens an HTTP body.
pub(crate) struct ScreenedLines<R> {
    inner: R,
    raw: Arc<RawByRequest>,
    /// The line being read (no newline yet).
    line: Vec<u8>,
    /// Screened bytes not yet handed out, from `out_pos`.
    out: Vec<u8>,
    out_pos: usize,
    eof: bool,
}

impl<R> ScreenedLines<R> {
    pub(crate) fn new(inner: R, raw: Arc<RawByRequest>) -> Self {
        Self {
            inner,
            raw,
            line: Vec::new(),
            out: Vec::new(),
            out_pos: 0,
            eof: false,
        }
    }

    /// Screens the complete line in `self.line` into `self.out`.
    fn finish_line(&mut self) {
        let line = std::mem::take(&mut self.line);
        let refused = match screen(&line) {
            Screened::Faithful => None,
            Screened::Raw(raw) => {
                let message = parse(&line);
                let id = message.as_ref().and_then(|m| m.get("id")).cloned();
                let is_call = message
                    .as_ref()
                    .and_then(|m| m.get("method"))
                    .and_then(serde_json::Value::as_str)
                    == Some("tools/call");
                match id {
                    Some(id) if is_call && self.raw.keep(id.to_string(), raw) => None,
                    id => Some(id),
                }
            }
            Screened::Refused => Some(parse(&line).and_then(|m| m.get("id").cloned())),
        };
        match refused {
            None => self.out.extend_from_slice(&line),
            Some(id) => {
                let refusal = serde_json::json!({
                    "jsonrpc": "2.0",
                    "id": id.unwrap_or(serde_json::Value::Null),
                    "method": REFUSED_METHOD,
                });
                self.out.extend_from_slice(refusal.to_string().as_bytes());
                self.out.push(b'\n');
            }
        }
    }
}

fn parse(line: &[u8]) -> Option<serde_json::Value> {
    serde_json::from_slice(line).ok()
}

impl<R: AsyncRead + Unpin> AsyncRead for ScreenedLines<R> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        loop {
            if this.out_pos < this.out.len() {
                let n = buf.remaining().min(this.out.len() - this.out_pos);
                buf.put_slice(&this.out[this.out_pos..this.out_pos + n]);
                this.out_pos += n;
                if this.out_pos == this.out.len() {
                    this.out.clear();
                    this.out_pos = 0;
                }
                return Poll::Ready(Ok(()));
            }
            if this.eof {
                return Poll::Ready(Ok(()));
            }
            let mut chunk = [0u8; 8192];
            let mut read = ReadBuf::new(&mut chunk);
            ready!(Pin::new(&mut this.inner).poll_read(cx, &mut read))?;
            let got = read.filled();
            if got.is_empty() {
                this.eof = true;
                if !this.line.is_empty() {
                    this.finish_line();
                }
                continue;
            }
            let mut rest = got;
            while let Some(newline) = rest.iter().position(|&b| b == b'\n') {
                this.line.extend_from_slice(&rest[..=newline]);
                this.finish_line();
                rest = &rest[newline + 1..];
            }
            this.line.extend_from_slice(rest);
        }
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::AsyncReadExt as _;

    use super::*;

    /// Hands out its bytes three at a time.
    struct Trickle(Vec<u8>, usize);

    impl AsyncRead for Trickle {
        fn poll_read(
            mut self: Pin<&mut Self>,
            _cx: &mut Context<'_>,
            buf: &mut ReadBuf<'_>,
        ) -> Poll<io::Result<()>> {
            let start = self.1;
            let end = (start + 3).min(self.0.len());
            buf.put_slice(&self.0[start..end]);
            self.1 = end;
            Poll::Ready(Ok(()))
        }
    }

    #[tokio::test]
    async fn lines_split_across_reads_are_screened_whole() {
        let input = concat!(
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
            "\n",
            r#"{"jsonrpc":"2.0","id":"c","method":"tools/call","params":{"name":"t","arguments":{"a":1,"a":2}}}"#,
            "\n",
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"t","name":"u"}}"#,
            "\n",
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        );
        let raw = Arc::new(RawByRequest::default());
        let mut reader =
            ScreenedLines::new(Trickle(input.as_bytes().to_vec(), 0), Arc::clone(&raw));
        let mut out = String::new();
        reader.read_to_string(&mut out).await.unwrap();
        let lines: Vec<&str> = out.lines().collect();
        let expected: Vec<&str> = input.lines().collect();
        assert_eq!(lines.len(), 4, "{out}");
        assert_eq!(lines[0], expected[0]);
        assert_eq!(lines[1], expected[1], "kept as sent");
        assert_eq!(raw.take(r#""c""#).unwrap().0.as_ref(), r#"{"a":1,"a":2}"#);
        assert_eq!(raw.take(r#""c""#).map(|r| r.0), None, "taken once");
        let refused: serde_json::Value = serde_json::from_str(lines[2]).unwrap();
        assert_eq!(refused["id"], 3);
        assert_eq!(refused["method"], REFUSED_METHOD);
        assert_eq!(lines[3], expected[3], "the last line without a newline");
    }
}
