//! Keys that appear twice in one object of a JSON text ([`first_duplicate`]), in any object
//! at any depth: a DTO's fields, a map field's entries, a `#[json]` value's insides. Decoding
//! keeps one of the two (serde_json's `Value` and maps the last), so a listener or an audit
//! log that reads the text could see another value than the tool: such a text is refused.
//!
//! One pass over the bytes, without recursion, at most 128 levels deep (as serde_json); a text
//! that is not JSON is left to the decoder to report (`None`).
use std::borrow::Cow;
use std::fmt::Write as _;

use foldhash::{HashSet, HashSetExt as _};

/// A key found twice: where (`$.tags.a`, `$.lines[0]["a b"]`) and which.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Duplicate {
    pub(crate) path: String,
    pub(crate) key: String,
}

/// The keys of the objects being read, in one list shared by all of them (each object's are
/// a tail of it, from its frame's `start`): no allocation per object. An object of many keys
/// moves its own to a set (linear time, not quadratic).
#[derive(Default)]
struct Keys<'a> {
    list: Vec<Cow<'a, str>>,
}

const FEW: usize = 16;

/// Deeper than this, the scan stops (`None`): serde_json refuses such a text anyway (its
/// recursion limit is 128), and the scan's stack stays small whatever the input.
const MAX_DEPTH: usize = 128;

impl<'a> Keys<'a> {
    /// Adds `key` to the object whose keys start at `start` (or are in `many`); false when it
    /// was there already.
    fn insert(
        &mut self,
        start: usize,
        many: &mut Option<HashSet<Cow<'a, str>>>,
        key: Cow<'a, str>,
    ) -> bool {
        if let Some(many) = many {
            return many.insert(key);
        }
        if self.list[start..].contains(&key) {
            return false;
        }
        if self.list.len() - start < FEW {
            self.list.push(key);
        } else {
            let mut set = HashSet::with_capacity(FEW * 2);
            set.extend(self.list.drain(start..));
            set.insert(key);
            *many = Some(set);
        }
        true
    }
}

enum Frame<'a> {
    /// An object, with the key whose value is being read.
    Object {
        /// Where its keys start in the shared list.
        start: usize,
        /// Its keys, when it has many.
        many: Option<HashSet<Cow<'a, str>>>,
        key: Cow<'a, str>,
    },
    Array {
        index: usize,
    },
}

enum State {
    Value,
    Key,
    After,
}

/// The first key that appears twice in one object of `text`, if any (`None` too when the
/// text is not JSON: the decoder reports that).
pub(crate) fn first_duplicate(text: &str) -> Option<Duplicate> {
    scan(text, &[]).duplicate
}

/// What [`scan`] found.
#[derive(Debug, Default)]
pub(crate) struct Scan {
    /// The first key twice in one object, outside the skipped value.
    pub(crate) duplicate: Option<Duplicate>,
    /// Where the value at the skipped path is in the text (its first byte to one past its
    /// last), if there is one.
    pub(crate) skipped: Option<std::ops::Range<usize>>,
}

/// Looks for a key twice in one object of `text`, except inside the value at the object path
/// `skip` (`["params", "arguments"]`, say; empty: nothing is skipped), whose place it gives.
pub(crate) fn scan(text: &str, skip: &[&str]) -> Scan {
    let mut found = Scan::default();
    found.duplicate = walk(text, skip, &mut found.skipped);
    found
}

fn walk(
    text: &str,
    skip: &[&str],
    skipped: &mut Option<std::ops::Range<usize>>,
) -> Option<Duplicate> {
    let b = text.as_bytes();
    let mut i = 0;
    let mut stack: Vec<Frame<'_>> = Vec::new();
    let mut keys = Keys::default();
    let mut state = State::Value;
    loop {
        i = skip_ws(b, i);
        if matches!(state, State::Value) && !skip.is_empty() && at(&stack, skip) {
            let start = i;
            i = value_end(b, i)?;
            *skipped = Some(start..i);
            state = State::After;
            continue;
        }
        state = match state {
            State::Value => match *b.get(i)? {
                b'{' => {
                    i = skip_ws(b, i + 1);
                    if *b.get(i)? == b'}' {
                        i += 1;
                        State::After
                    } else {
                        if stack.len() == MAX_DEPTH {
                            return None;
                        }
                        stack.push(Frame::Object {
                            start: keys.list.len(),
                            many: None,
                            key: Cow::Borrowed(""),
                        });
                        State::Key
                    }
                }
                b'[' => {
                    i = skip_ws(b, i + 1);
                    if *b.get(i)? == b']' {
                        i += 1;
                        State::After
                    } else {
                        if stack.len() == MAX_DEPTH {
                            return None;
                        }
                        stack.push(Frame::Array { index: 0 });
                        State::Value
                    }
                }
                b'"' => {
                    (_, i) = string_end(b, i)?;
                    State::After
                }
                _ => {
                    i = scalar_end(b, i)?;
                    State::After
                }
            },
            State::Key => {
                if *b.get(i)? != b'"' {
                    return None;
                }
                let start = i;
                let escaped;
                (escaped, i) = string_end(b, i)?;
                let key = if escaped {
                    Cow::Owned(serde_json::from_str::<String>(&text[start..i]).ok()?)
                } else {
                    Cow::Borrowed(&text[start + 1..i - 1])
                };
                i = skip_ws(b, i);
                if *b.get(i)? != b':' {
                    return None;
                }
                i += 1;
                let Some(Frame::Object {
                    start,
                    many,
                    key: current,
                }) = stack.last_mut()
                else {
                    return None;
                };
                if !keys.insert(*start, many, key.clone()) {
                    return Some(Duplicate {
                        path: render(&stack[..stack.len() - 1], &key),
                        key: key.into_owned(),
                    });
                }
                *current = key;
                State::Value
            }
            State::After => match (stack.last_mut(), b.get(i)) {
                (None, _) => return None,
                (Some(Frame::Array { index }), Some(b',')) => {
                    *index += 1;
                    i += 1;
                    State::Value
                }
                (Some(Frame::Object { .. }), Some(b',')) => {
                    i += 1;
                    State::Key
                }
                (Some(Frame::Array { .. }), Some(b']')) => {
                    stack.pop();
                    i += 1;
                    State::After
                }
                (Some(Frame::Object { start, .. }), Some(b'}')) => {
                    keys.list.truncate(*start);
                    stack.pop();
                    i += 1;
                    State::After
                }
                _ => return None,
            },
        };
    }
}

/// Whether the value being read is at the object path `path`.
fn at(stack: &[Frame<'_>], path: &[&str]) -> bool {
    stack.len() == path.len()
        && stack
            .iter()
            .zip(path)
            .all(|(frame, step)| matches!(frame, Frame::Object { key, .. } if key == step))
}

/// One past the end of the value that starts at `b[i]` (delimited, not checked).
fn value_end(b: &[u8], mut i: usize) -> Option<usize> {
    match *b.get(i)? {
        b'"' => return string_end(b, i).map(|(_, end)| end),
        b'{' | b'[' => {}
        _ => return scalar_end(b, i),
    }
    let mut depth = 0usize;
    loop {
        match *b.get(i)? {
            b'"' => {
                (_, i) = string_end(b, i)?;
                continue;
            }
            b'{' | b'[' => depth += 1,
            b'}' | b']' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            _ => {}
        }
        i += 1;
    }
}

/// One past the end of the number or literal that starts at `b[i]` (`None`: there is none).
fn scalar_end(b: &[u8], start: usize) -> Option<usize> {
    let mut i = start;
    while i < b.len() && !matches!(b[i], b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r') {
        i += 1;
    }
    (i > start).then_some(i)
}

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && matches!(b[i], b' ' | b'\t' | b'\n' | b'\r') {
        i += 1;
    }
    i
}

/// The end (one past the closing quote) of the string that starts at `b[start] == '"'`, and
/// whether it holds an escape; `None` when it does not end.
fn string_end(b: &[u8], start: usize) -> Option<(bool, usize)> {
    let mut i = start + 1;
    let mut escaped = false;
    loop {
        match *b.get(i)? {
            b'"' => return Some((escaped, i + 1)),
            b'\\' => {
                escaped = true;
                i += 2;
            }
            _ => i += 1,
        }
    }
}

/// `$` and the segments of `frames` (each object's current key, each array's index), then
/// `key`.
fn render(frames: &[Frame<'_>], key: &str) -> String {
    let mut path = String::from("$");
    for frame in frames {
        match frame {
            Frame::Object { key, .. } => push_key(&mut path, key),
            Frame::Array { index } => {
                let _ = write!(path, "[{index}]");
            }
        }
    }
    push_key(&mut path, key);
    path
}

/// `.key` for a key that reads as a name, else `["key"]` (JSON-quoted).
fn push_key(path: &mut String, key: &str) {
    let plain = key.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if plain {
        path.push('.');
        path.push_str(key);
    } else {
        path.push('[');
        path.push_str(&serde_json::Value::from(key).to_string());
        path.push(']');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> Option<String> {
        first_duplicate(text).map(|d| d.path)
    }

    #[test]
    fn finds_the_first_duplicate_at_its_path() {
        assert_eq!(at(r#"{"a":1,"a":2}"#).as_deref(), Some("$.a"));
        assert_eq!(
            at(r#" { "x" : [ 0 , { "k" : 1 , "k" : 2 } ] } "#).as_deref(),
            Some("$.x[1].k")
        );
        assert_eq!(
            at(r#"{"a":{"b":1},"c":{"b":2,"\u0062":3}}"#).as_deref(),
            Some("$.c.b")
        );
        assert_eq!(
            at(r#"{"m":{"a b":1,"a b":2}}"#).as_deref(),
            Some(r#"$.m["a b"]"#)
        );
        assert_eq!(at(r#"[{"a":"\"}","a":1}]"#).as_deref(), Some("$[0].a"));
        let many: Vec<String> = (0..100).map(|i| format!(r#""k{i}":{i}"#)).collect();
        assert_eq!(at(&format!("{{{}}}", many.join(","))), None);
        assert_eq!(
            at(&format!(r#"{{{},"k42":0}}"#, many.join(","))).as_deref(),
            Some("$.k42")
        );
    }

    #[test]
    fn skips_one_value_and_gives_its_place() {
        let text = r#"{"jsonrpc":"2.0","params":{"name":"t","arguments":{"a":1,"a":2}},"id":1}"#;
        let found = scan(text, &["params", "arguments"]);
        assert_eq!(found.duplicate, None);
        assert_eq!(&text[found.skipped.unwrap()], r#"{"a":1,"a":2}"#);
        let text = r#"{"params":{"arguments":"x" ,"name":"a","name":"b"}}"#;
        let found = scan(text, &["params", "arguments"]);
        assert_eq!(found.duplicate.unwrap().path, "$.params.name");
        assert_eq!(&text[found.skipped.unwrap()], r#""x""#);
        let text = r#"{"params":{"arguments":12}}"#;
        assert_eq!(
            &text[scan(text, &["params", "arguments"]).skipped.unwrap()],
            "12"
        );
    }

    #[test]
    fn is_silent_on_what_has_none_or_is_not_json() {
        for text in [
            r#"{"a":1,"b":{"a":1},"c":[{"a":1},{"a":2}]}"#,
            "[]",
            "{}",
            "42",
            r#""a""#,
            "",
            "{",
            r#"{"a":1,"a""#,
            r#"{"a" 1}"#,
            "[1,,2]",
            r#"{"a":"unterminated}"#,
            "}}}]]]",
        ] {
            assert_eq!(at(text), None, "{text}");
        }
        let deep = "[".repeat(100_000);
        assert_eq!(at(&deep), None);
        let deep = format!("{}{{\"a\":1,\"a\":2}}{}", "[".repeat(100), "]".repeat(100));
        assert_eq!(at(&deep).unwrap(), format!("${}.a", "[0]".repeat(100)));
    }
}
