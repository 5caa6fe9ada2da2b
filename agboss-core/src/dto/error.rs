//! [`FieldError`] and [`ValidationError`].
use std::fmt;

use serde::Serialize;

use super::JsonPath;

/// The `code` of a [`FieldError`]: which rule failed.
pub mod code {
    /// A required field is absent (or `null`).
    pub const REQUIRED: &str = "required";
    /// The JSON value has the wrong type (e.g. a string where an integer is expected).
    pub const TYPE: &str = "type";
    /// A text is shorter than `min_length` characters.
    pub const MIN_LENGTH: &str = "min_length";
    /// A text is longer than `max_length` characters.
    pub const MAX_LENGTH: &str = "max_length";
    /// A text does not match `pattern`.
    pub const PATTERN: &str = "pattern";
    /// A text is not one of `choices`.
    pub const CHOICES: &str = "choices";
    /// A number is below `min` (or below the range of its Rust type).
    pub const MIN: &str = "min";
    /// A number is above `max` (or above the range of its Rust type).
    pub const MAX: &str = "max";
    /// A list has fewer than `min_items` elements.
    pub const MIN_ITEMS: &str = "min_items";
    /// A list has more than `max_items` elements.
    pub const MAX_ITEMS: &str = "max_items";
    /// The input is not JSON at all.
    pub const JSON: &str = "json";
    /// A key appears more than once in one object.
    pub const DUPLICATE: &str = "duplicate";
}

/// One failed check, at one place of the input.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FieldError {
    /// JSON path with wire names, e.g. `$.lines[0].sku` (`$` is the whole input).
    pub path: String,
    /// The rule that failed: one of the constants in [`code`].
    pub code: &'static str,
    /// What is wrong, for a human or a model, e.g. `is required`.
    pub message: String,
}

/// Bytes of a [`FieldError`]'s `path` or `message` at most: a text that would be longer (it
/// quotes the input: serde's message of a string of a megabyte, a map key in a path) keeps its
/// start and its end, with how much was left out between them.
pub const MAX_ERROR_TEXT: usize = 512;

impl FieldError {
    /// An error at `path` (rendered now); the message is bounded by [`MAX_ERROR_TEXT`].
    pub fn new(path: &JsonPath, code: &'static str, message: impl Into<String>) -> Self {
        Self {
            path: bounded(path.render()),
            code,
            message: bounded(message.into()),
        }
    }

    /// An error at an already rendered path; path and message are bounded by
    /// [`MAX_ERROR_TEXT`].
    pub fn at(path: impl Into<String>, code: &'static str, message: impl Into<String>) -> Self {
        Self {
            path: bounded(path.into()),
            code,
            message: bounded(message.into()),
        }
    }
}

/// `text` itself when it is at most [`MAX_ERROR_TEXT`] bytes; else its first and last bytes
/// (cut on char boundaries) around `… (N bytes left out) …`, at most `MAX_ERROR_TEXT` in all.
/// For every error text that may quote an input or an answer (DTO reports, model errors).
pub(crate) fn bounded(text: String) -> String {
    if text.len() <= MAX_ERROR_TEXT {
        return text;
    }
    let mut head = MAX_ERROR_TEXT * 5 / 8;
    while !text.is_char_boundary(head) {
        head -= 1;
    }
    let mut tail = text.len() - MAX_ERROR_TEXT / 4;
    while !text.is_char_boundary(tail) {
        tail += 1;
    }
    let left_out = tail - head;
    format!(
        "{} … ({left_out} bytes left out) … {}",
        &text[..head],
        &text[tail..]
    )
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

/// Every failure found in one input of DTO [`dto`](ValidationError::dto).
///
/// `Display` lists them all, one per line:
///
/// ```text
/// invalid CreateOrder (2 errors):
/// - $.orderId: is required
/// - $.lines[0].quantity: must be at least 1 (got 0)
/// ```
///
/// It serializes as `{"dto": "CreateOrder", "errors": [{"path", "code", "message"}, ...]}`, a
/// form to show a model so it can fix its arguments. It is bounded whatever the input: at most
/// [`MAX_REPORTED_ERRORS`] failures, each path and message at most [`MAX_ERROR_TEXT`] bytes
/// (a quote of the input keeps a short start and end).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, thiserror::Error)]
pub struct ValidationError {
    /// The DTO's type name ([`Dto::DTO_NAME`](super::Dto::DTO_NAME)).
    pub dto: &'static str,
    /// The failures, in the order of the fields (never empty when returned by this crate), at
    /// most [`MAX_REPORTED_ERRORS`].
    pub errors: Vec<FieldError>,
    /// True when checking stopped at [`MAX_REPORTED_ERRORS`]: there may be more.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub more: bool,
}

/// Failures a [`ValidationError`] reports at most: checking stops there, so a hostile input
/// (`{"lines":[{},{},…]}` of megabytes) costs bounded time, memory and observation text.
pub const MAX_REPORTED_ERRORS: usize = 20;

impl ValidationError {
    /// A validation error with several failures (cut to [`MAX_REPORTED_ERRORS`]).
    pub fn new(dto: &'static str, mut errors: Vec<FieldError>) -> Self {
        let more = errors.len() > MAX_REPORTED_ERRORS;
        errors.truncate(MAX_REPORTED_ERRORS);
        Self { dto, errors, more }
    }

    /// A validation error with one failure at an already rendered `path`.
    pub fn single(dto: &'static str, path: &str, code: &'static str, message: &str) -> Self {
        Self {
            dto,
            errors: vec![FieldError::at(path, code, message)],
            more: false,
        }
    }

    /// The failure at `path`, if any (handy in tests).
    pub fn at(&self, path: &str) -> Option<&FieldError> {
        self.errors.iter().find(|e| e.path == path)
    }
}

impl fmt::Display for ValidationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.errors.len();
        let more = if self.more { " or more" } else { "" };
        write!(
            f,
            "invalid {} ({n}{more} error{}):",
            self.dto,
            if n == 1 && !self.more { "" } else { "s" }
        )?;
        for error in &self.errors {
            write!(f, "\n- {error}")?;
        }
        if self.more {
            write!(
                f,
                "\n- (checking stopped after {MAX_REPORTED_ERRORS} errors: fix these and send again)"
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_text_keeps_its_start_and_end_within_the_bound() {
        let short = "x".repeat(MAX_ERROR_TEXT);
        assert_eq!(bounded(short.clone()), short);
        let long = format!("start {} end", "é".repeat(500_000));
        let cut = bounded(long.clone());
        assert!(cut.len() <= MAX_ERROR_TEXT, "{} bytes", cut.len());
        assert!(cut.starts_with("start é"), "{cut}");
        assert!(cut.ends_with("é end"), "{cut}");
        assert!(cut.contains("bytes left out"), "{cut}");
        let e = FieldError::at(long.clone(), code::TYPE, long);
        assert!(e.path.len() <= MAX_ERROR_TEXT && e.message.len() <= MAX_ERROR_TEXT);
    }
}
