//! Built-in detectors (one module per family) and the custom regex detector.
mod contact;
mod financial;
mod network;

pub use contact::{EmailDetector, PhoneDetector};
pub use financial::{CardDetector, IbanDetector, SsnDetector};
pub use network::{Ipv4Detector, Ipv6Detector};

use std::borrow::Cow;
use std::sync::Arc;

use regex::Regex;

use super::{Detector, PiiError, PiiMatch, is_valid_detector_name, partial_keep_last};

/// Compiles a built-in (constant, tested) pattern.
fn builtin_regex(pattern: &str) -> Regex {
    match Regex::new(pattern) {
        Ok(regex) => regex,
        Err(err) => panic!("built-in PII pattern {pattern:?} does not compile: {err}"),
    }
}

/// A character that glues to a value: letters, digits (any script) and `_`.
fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Whether `text[start..end]` stands on its own: the character before (after) it is not a
/// word character, nor one of `joins` itself preceded (followed) by a word character (so
/// `1.2.3.4.5` holds no IPv4 and `12.4242…` no card), nor a run of `*` that is 4 or more
/// long or glued to a word character (or, after the value, to `@`): the shape of partial
/// masks such as `j***@example.com` or `************4242`, so that what a partial mask
/// keeps never combines with its neighbours into a new finding. Markdown emphasis
/// (`**4242 4242 4242 4242**`) does not glue.
fn bounded(text: &str, start: usize, end: usize, joins: &[char]) -> bool {
    let (Some(head), Some(tail)) = (text.get(..start), text.get(end..)) else {
        return false;
    };
    let glued_before = {
        let mut it = head.chars().rev();
        match it.next() {
            Some(c) if is_word(c) => true,
            Some('*') => {
                let rest = head.trim_end_matches('*');
                head.len() - rest.len() >= 4 || rest.ends_with(is_word)
            }
            Some(c) if joins.contains(&c) => it.next().is_some_and(is_word),
            _ => false,
        }
    };
    let glued_after = {
        let mut it = tail.chars();
        match it.next() {
            Some(c) if is_word(c) => true,
            Some('*') => {
                let rest = tail.trim_start_matches('*');
                tail.len() - rest.len() >= 4 || rest.starts_with(|c: char| is_word(c) || c == '@')
            }
            Some(c) if joins.contains(&c) => it.next().is_some_and(is_word),
            _ => false,
        }
    };
    !glued_before && !glued_after
}

fn ascii_digits(value: &str) -> impl Iterator<Item = u8> + '_ {
    value.bytes().filter(u8::is_ascii_digit)
}

// ---------------------------------------------------------------------------------------
// E-mail

/// A custom detector: every non-empty match of a regex (syntax of the `regex` crate; use
/// `\b` or anchors for boundaries). Build it with [`RegexDetector::new`] or
/// `<dyn Detector>::regex(name, pattern)`.
#[derive(Debug, Clone)]
pub struct RegexDetector {
    name: String,
    regex: Regex,
}

impl RegexDetector {
    /// A detector named `name` (see [`Detector::name`]) matching `pattern`.
    ///
    /// # Errors
    /// [`PiiError::InvalidName`] for a bad name, [`PiiError::InvalidRegex`] if the pattern
    /// does not compile (syntax, or over the regex crate's size limit).
    pub fn new(name: &str, pattern: &str) -> Result<Self, PiiError> {
        let regex = Regex::new(pattern).map_err(|source| PiiError::InvalidRegex {
            name: name.to_owned(),
            source,
        })?;
        Self::from_regex(name, regex)
    }

    /// A detector named `name` for an already compiled regex.
    ///
    /// # Errors
    /// [`PiiError::InvalidName`] for a bad name.
    pub fn from_regex(name: &str, regex: Regex) -> Result<Self, PiiError> {
        if !is_valid_detector_name(name) {
            return Err(PiiError::InvalidName(name.to_owned()));
        }
        Ok(Self {
            name: name.to_owned(),
            regex,
        })
    }

    /// The regex of the detector.
    pub fn regex(&self) -> &Regex {
        &self.regex
    }
}

impl Detector for RegexDetector {
    fn name(&self) -> &str {
        &self.name
    }

    fn find(&self, text: &str, out: &mut Vec<PiiMatch>) {
        out.extend(
            self.regex
                .find_iter(text)
                .filter(|m| !m.is_empty())
                .map(|m| PiiMatch::new(m.start()..m.end())),
        );
    }
}

/// One instance of every built-in detector, in this order (the most specific first, as
/// the order breaks ties between equal overlapping findings): email, card, iban, ssn,
/// phone, ipv4, ipv6.
pub fn builtin_detectors() -> Vec<Arc<dyn Detector>> {
    vec![
        Arc::new(EmailDetector),
        Arc::new(CardDetector),
        Arc::new(IbanDetector),
        Arc::new(SsnDetector),
        Arc::new(PhoneDetector),
        Arc::new(Ipv4Detector),
        Arc::new(Ipv6Detector),
    ]
}

#[cfg(test)]
mod tests {
    use super::contact::{EMAIL, PHONE_INTL, PHONE_NANP, PHONE_TRUNK, SSN_SHAPE};
    use super::financial::{DIGIT_RUN, IBAN_CANDIDATE, SSN, iban_valid, luhn_valid, ssn_valid};
    use super::network::{IPV4, IPV6_CANDIDATE};
    use super::*;

    #[test]
    fn pii_builtin_patterns_compile() {
        for re in [
            &*EMAIL,
            &*PHONE_INTL,
            &*PHONE_NANP,
            &*PHONE_TRUNK,
            &*DIGIT_RUN,
            &*IBAN_CANDIDATE,
            &*SSN,
            &*SSN_SHAPE,
            &*IPV4,
            &*IPV6_CANDIDATE,
        ] {
            assert!(!re.as_str().is_empty());
        }
    }

    #[test]
    fn pii_luhn_iban_ssn_checks() {
        assert!(luhn_valid(b"4242424242424242"));
        assert!(!luhn_valid(b"4242424242424241"));
        assert!(iban_valid(b"DE89370400440532013000"));
        assert!(iban_valid(b"GB82WEST12345698765432"));
        assert!(!iban_valid(b"DE89370400440532013001"));
        assert!(ssn_valid(b"123456789"));
        assert!(!ssn_valid(b"666456789"));
        assert!(!ssn_valid(b"900456789"));
        assert!(!ssn_valid(b"123006789"));
        assert!(!ssn_valid(b"123450000"));
    }

    #[test]
    fn pii_bounded() {
        assert!(bounded("a 1.2 b", 2, 5, &['.']));
        assert!(!bounded("x1.2", 1, 4, &['.']));
        assert!(!bounded("9.1.2", 2, 5, &['.']));
        assert!(bounded("1.2.", 0, 3, &['.']));
        assert!(!bounded("é", 1, 2, &[]));
        assert!(bounded("**42**", 2, 4, &[]));
        assert!(!bounded("0::0***@a.aa", 0, 4, &[]));
        assert!(!bounded("x***42", 4, 6, &[]));
        assert!(bounded("***42", 3, 5, &[]));
        assert!(!bounded("****42", 4, 6, &[]));
        assert!(!bounded("42****", 0, 2, &[]));
    }
}
