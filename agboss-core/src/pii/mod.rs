//! PII detection and masking.
//!
//! This module is the engine behind PII policies: a set of [`Detector`]s finds personal
//! data in text (as byte ranges), and a [`PiiMasker`] replaces every finding according to
//! a [`MaskStrategy`], in plain strings ([`PiiMasker::mask_str`]) or in every string of a
//! JSON document ([`PiiMasker::mask_json`]).
//!
//! # Built-in detectors
//!
//! | name    | detector            | what it finds |
//! |---------|---------------------|---------------|
//! | `email` | [`EmailDetector`]   | ASCII e-mail addresses (`local@domain.tld`) |
//! | `phone` | [`PhoneDetector`]   | `+CC …` international numbers, NANP (`(415) 555-2671`), trunk-`0` national numbers with separators (`030 1234 5678`); never a bare digit run in text |
//! | `card`  | [`CardDetector`]    | 13–19 digit payment cards, optional space/dash groups, Luhn-checked, first digit 2–6 |
//! | `iban`  | [`IbanDetector`]    | IBANs (electronic or space-grouped), per-country length, mod-97 checksum |
//! | `ssn`   | [`SsnDetector`]     | US SSNs `AAA-GG-SSSS` outside the never-issued ranges |
//! | `ipv4`  | [`Ipv4Detector`]    | dotted-quad IPv4 (octets ≤ 255, confirmed by `std`'s parser) |
//! | `ipv6`  | [`Ipv6Detector`]    | IPv6 (at least two hex groups, confirmed by `std`'s parser) |
//!
//! Custom detectors are either a regex (`<dyn Detector>::regex(name, pattern)`, see
//! [`RegexDetector`]) or any type implementing [`Detector`].
//!
//! # Masking strategies
//!
//! * [`MaskStrategy::Redact`] writes `[REDACTED:<name>]`.
//! * [`MaskStrategy::Partial`] keeps a little of the value, as defined by
//!   [`Detector::partial`]: cards keep their last `keep` digits (`************4242`),
//!   e-mails keep the first character and the domain (`j***@example.com`; only the
//!   top-level label, `j***@***.com`, if the domain holds digits), IP addresses keep
//!   their last group (`***.***.*.7`), every other detector keeps its last `keep` characters
//!   (`*******6789`). Never more than half of the characters are kept.
//! * [`MaskStrategy::Hash`] writes `[<name>:<12 hex digits>]`, the start of an
//!   HMAC-SHA-256 of the (canonicalized, see [`Detector::canonical`]) value under the
//!   masker's secret key
//!   ([`PiiMaskerBuilder::hash_key`]): the same value always gives the same token under the
//!   same key, so masked logs stay correlatable, but the token cannot be reversed nor
//!   brute-forced without the key.
//!
//! # Overlaps and idempotency
//!
//! All detectors run on the whole text. Overlapping findings are merged into one span,
//! attributed to the longest finding (ties: earliest start, then the detector registered
//! first); the span is masked once, with that detector's strategy, so no fragment of a
//! partially overlapped value leaks. The masker then re-scans its own output (the text it
//! has just inserted is never re-matched) until nothing more is found, so masking an
//! already masked text with the same masker changes nothing (built-in detectors never match
//! the masks; a custom regex that matches masks can break this property).
//!
//! # JSON
//!
//! [`PiiMasker::mask_json`] walks every string of a [`serde_json::Value`] (object values
//! and array items; object keys are left untouched) and masks it in place; the document
//! stays valid JSON with the same shape, and values without PII are left byte-identical.
//! Non-negative integers are checked on their decimal form (a card number or a phone
//! number stored as a JSON number) and replaced by a masked *string* only when a detector
//! fires; every other number, boolean and null stays as it is, so typed fields keep their
//! types. [`MaskReport`] counts the findings per detector, never the values.
//!
//! # Example
//!
//! ```
//! use agboss_core::pii::{Detector, MaskStrategy, PiiMasker};
//! use serde_json::json;
//!
//! let masker = PiiMasker::builder()
//!     .builtins()
//!     .strategy_for("card", MaskStrategy::Partial { keep: 4 })
//!     .detector(<dyn Detector>::regex("order", r"\bORD-[0-9]{6}\b")?)
//!     .build()?;
//!
//! assert_eq!(
//!     masker.mask_str("Mail jane.doe@example.com, card 4242 4242 4242 4242, ORD-123456"),
//!     "Mail [REDACTED:email], card ************4242, [REDACTED:order]",
//! );
//! // No PII: the input is borrowed, not copied.
//! assert!(matches!(masker.mask_str("nothing here"), std::borrow::Cow::Borrowed(_)));
//!
//! let mut doc = json!({"user": {"email": "jane@example.com", "age": 41}, "ip": "10.1.2.3"});
//! let report = masker.mask_json(&mut doc);
//! assert_eq!(
//!     doc,
//!     json!({"user": {"email": "[REDACTED:email]", "age": 41}, "ip": "[REDACTED:ipv4]"})
//! );
//! assert_eq!(report.count("email"), 1);
//! assert_eq!(report.total(), 2);
//!
//! // Keyed hashing: stable tokens without the raw value.
//! let hashing = PiiMasker::builder()
//!     .detector(agboss_core::pii::EmailDetector)
//!     .default_strategy(MaskStrategy::Hash)
//!     .hash_key(b"a secret from the configuration".to_vec())
//!     .build()?;
//! let a = hashing.mask_str("jane@example.com");
//! assert!(a.starts_with("[email:") && a.len() == "[email:]".len() + 12);
//! assert_eq!(a, hashing.mask_str("JANE@example.com"));
//! # Ok::<(), agboss_core::pii::PiiError>(())
//! ```

mod detectors;
mod mask_key;
mod masker;

use std::borrow::Cow;
use std::ops::Range;
use std::sync::Arc;

pub use detectors::{
    CardDetector, EmailDetector, IbanDetector, Ipv4Detector, Ipv6Detector, PhoneDetector,
    RegexDetector, SsnDetector, builtin_detectors,
};
pub use masker::{Finding, MaskReport, MaskStrategy, PiiMasker, PiiMaskerBuilder};

/// Errors of the PII engine (all raised while building detectors and maskers; masking
/// itself never fails).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PiiError {
    /// The pattern of a custom regex detector does not compile.
    #[error("invalid regex for PII detector `{name}`: {source}")]
    InvalidRegex {
        /// Name of the detector.
        name: String,
        /// The regex compiler's error.
        #[source]
        source: regex::Error,
    },
    /// A detector name is empty, longer than 64 bytes, or uses a character outside
    /// `[A-Za-z0-9_.-]` (names are written into masks such as `[REDACTED:name]`).
    #[error("invalid PII detector name `{0}`: expected 1 to 64 characters from [A-Za-z0-9_.-]")]
    InvalidName(String),
    /// [`PiiMaskerBuilder::strategy_for`] names a detector the builder does not have.
    #[error("unknown PII detector `{0}`")]
    UnknownDetector(String),
    /// Two detectors of one masker have the same name.
    #[error("duplicate PII detector name `{0}`")]
    DuplicateDetector(String),
    /// A detector (or the default strategy) uses [`MaskStrategy::Hash`] but no non-empty
    /// key was given to [`PiiMaskerBuilder::hash_key`].
    #[error("the Hash masking strategy needs a non-empty key (PiiMaskerBuilder::hash_key)")]
    MissingHashKey,
}

/// One finding of a [`Detector`]: a byte range of the scanned text.
///
/// Both ends must be `char` boundaries of the text with `start < end`; the masker ignores
/// findings that are not (so a faulty custom detector cannot make it panic).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PiiMatch {
    /// Start byte offset (inclusive).
    pub start: usize,
    /// End byte offset (exclusive).
    pub end: usize,
}

impl PiiMatch {
    /// A finding covering `range`.
    pub fn new(range: Range<usize>) -> Self {
        Self {
            start: range.start,
            end: range.end,
        }
    }

    /// The byte range of the finding.
    pub fn range(&self) -> Range<usize> {
        self.start..self.end
    }

    /// Whether the finding is a non-empty range of `text` on `char` boundaries.
    pub fn is_valid_in(&self, text: &str) -> bool {
        self.start < self.end
            && self.end <= text.len()
            && text.is_char_boundary(self.start)
            && text.is_char_boundary(self.end)
    }
}

impl From<Range<usize>> for PiiMatch {
    fn from(range: Range<usize>) -> Self {
        Self::new(range)
    }
}

/// A PII detector: finds values of one kind in a text.
///
/// The trait is dyn-compatible; maskers hold detectors as `Arc<dyn Detector>`. Only
/// [`name`](Detector::name) and [`find`](Detector::find) are required; the other methods
/// tune the masking of what the detector finds.
pub trait Detector: Send + Sync {
    /// Name of the detector, used in masks (`[REDACTED:name]`) and reports. Must be 1 to
    /// 64 characters from `[A-Za-z0-9_.-]` and unique within a masker.
    fn name(&self) -> &str;

    /// Appends every finding in `text` to `out` (in any order, overlaps allowed).
    fn find(&self, text: &str, out: &mut Vec<PiiMatch>);

    /// Like [`find`](Detector::find), for the decimal form of a non-negative JSON integer
    /// (digits only). Defaults to `find`; [`PhoneDetector`] overrides it to accept a phone
    /// number stored as a number, which it would not accept as a bare digit run in text.
    fn find_in_number(&self, digits: &str, out: &mut Vec<PiiMatch>) {
        self.find(digits, out);
    }

    /// The [`MaskStrategy::Partial`] rendering of `value` (a text this detector found,
    /// possibly merged with overlapping findings). Default: the last `keep` characters
    /// (at most half of them), every other character replaced by `*`.
    fn partial(&self, value: &str, keep: usize) -> String {
        partial_keep_last(value, keep)
    }

    /// The canonical form of `value` hashed by [`MaskStrategy::Hash`], so that spellings of
    /// one value (`4242 4242 …` and `4242-4242-…`) give one token. Default: `value` as is.
    fn canonical<'a>(&self, value: &'a str) -> Cow<'a, str> {
        Cow::Borrowed(value)
    }
}

impl dyn Detector {
    /// A custom detector named `name` that finds every non-empty match of `pattern`
    /// (syntax of the `regex` crate). Same as [`RegexDetector::new`].
    ///
    /// ```
    /// use agboss_core::pii::Detector;
    /// let d = <dyn Detector>::regex("employee_id", r"\bEMP-[0-9]{5}\b").unwrap();
    /// assert_eq!(d.name(), "employee_id");
    /// assert!(<dyn Detector>::regex("bad", "(").is_err());
    /// ```
    pub fn regex(name: &str, pattern: &str) -> Result<RegexDetector, PiiError> {
        RegexDetector::new(name, pattern)
    }
}

impl<D: Detector + ?Sized> Detector for Box<D> {
    fn name(&self) -> &str {
        (**self).name()
    }
    fn find(&self, text: &str, out: &mut Vec<PiiMatch>) {
        (**self).find(text, out)
    }
    fn find_in_number(&self, digits: &str, out: &mut Vec<PiiMatch>) {
        (**self).find_in_number(digits, out)
    }
    fn partial(&self, value: &str, keep: usize) -> String {
        (**self).partial(value, keep)
    }
    fn canonical<'a>(&self, value: &'a str) -> Cow<'a, str> {
        (**self).canonical(value)
    }
}

impl<D: Detector + ?Sized> Detector for Arc<D> {
    fn name(&self) -> &str {
        (**self).name()
    }
    fn find(&self, text: &str, out: &mut Vec<PiiMatch>) {
        (**self).find(text, out)
    }
    fn find_in_number(&self, digits: &str, out: &mut Vec<PiiMatch>) {
        (**self).find_in_number(digits, out)
    }
    fn partial(&self, value: &str, keep: usize) -> String {
        (**self).partial(value, keep)
    }
    fn canonical<'a>(&self, value: &'a str) -> Cow<'a, str> {
        (**self).canonical(value)
    }
}

/// The default partial rendering: the last `keep` characters of `value` (never more than
/// half of its characters), every other character replaced by `*`.
pub fn partial_keep_last(value: &str, keep: usize) -> String {
    let n = value.chars().count();
    let kept = keep.min(n / 2);
    let mut out = String::with_capacity(value.len());
    out.extend(std::iter::repeat_n('*', n - kept));
    out.extend(value.chars().skip(n - kept));
    out
}

/// Whether `name` is a valid detector name (1 to 64 characters from `[A-Za-z0-9_.-]`).
pub fn is_valid_detector_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
}
