//! E-mail addresses and phone numbers.
use std::sync::LazyLock;

use regex::Regex;

use super::*;
use crate::pii::{Detector, PiiMatch};

const DOMAIN: &str = r"[A-Za-z0-9](?:[A-Za-z0-9\-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9\-]*[A-Za-z0-9])?)*\.[A-Za-z]{2,63}";

pub(super) static EMAIL: LazyLock<Regex> = LazyLock::new(|| {
    builtin_regex(&format!(
        r"[A-Za-z0-9][A-Za-z0-9._%+\-]*@{DOMAIN}(?:[A-Za-z0-9._%+\-]*@{DOMAIN})*"
    ))
});

/// E-mail addresses: an ASCII local part (`[A-Za-z0-9._%+-]`, no `*`), `@`, a dotted
/// domain ending in an alphabetic TLD. Internationalized addresses are not detected.
///
/// Several addresses glued by their domains (`a@b.com@c.org`, `a@b.com.x@c.org`) are one
/// finding.
///
/// Partial rendering: first character, `***`, then the domain (`j***@example.com`); if the
/// domain holds anything but letters, dots and dashes (digits, a second `@`), only its
/// top-level label stays (`j***@***.com`).
/// Canonical form (hashing): ASCII lowercase.
#[derive(Debug, Clone, Copy, Default)]
pub struct EmailDetector;

impl Detector for EmailDetector {
    fn name(&self) -> &str {
        "email"
    }

    fn find(&self, text: &str, out: &mut Vec<PiiMatch>) {
        out.extend(
            EMAIL
                .find_iter(text)
                .map(|m| PiiMatch::new(m.start()..m.end())),
        );
    }

    fn partial(&self, value: &str, _keep: usize) -> String {
        let first = value.chars().next().unwrap_or('*');
        let Some((_, domain)) = value.split_once('@') else {
            return format!("{first}***");
        };
        let plain = |s: &str| {
            s.bytes()
                .all(|b| b.is_ascii_alphabetic() || b == b'.' || b == b'-')
        };
        if !domain.is_empty() && plain(domain) {
            // Only letters: nothing another detector could find in what is kept.
            return format!("{first}***@{domain}");
        }
        match domain.rsplit_once('.') {
            Some((_, tld)) if !tld.is_empty() && tld.bytes().all(|b| b.is_ascii_alphabetic()) => {
                format!("{first}***@***.{tld}")
            }
            _ => format!("{first}***@***"),
        }
    }

    fn canonical<'a>(&self, value: &'a str) -> Cow<'a, str> {
        if value.bytes().any(|b| b.is_ascii_uppercase()) {
            Cow::Owned(value.to_ascii_lowercase())
        } else {
            Cow::Borrowed(value)
        }
    }
}

// ---------------------------------------------------------------------------------------
// Phone

/// `+CC` then groups of digits, optionally parenthesized, with optional separators.
pub(super) static PHONE_INTL: LazyLock<Regex> =
    LazyLock::new(|| builtin_regex(r"\+[1-9](?:[ .\-]?(?:\([0-9]{1,5}\)|[0-9]{1,5})){1,10}"));
/// North American: `(415) 555-2671`, `415-555-2671`, `415.555.2671`, `1-415-555-2671`.
pub(super) static PHONE_NANP: LazyLock<Regex> = LazyLock::new(|| {
    builtin_regex(
        r"(?:1[ .\-])?(?:\([2-9][0-9]{2}\) ?|[2-9][0-9]{2}[ .\-]?)[2-9][0-9]{2}[ .\-][0-9]{4}",
    )
});
/// National numbers with a trunk `0`: `030 1234 5678`, `06 12 34 56 78`, `(020) 7946 0958`.
pub(super) static PHONE_TRUNK: LazyLock<Regex> = LazyLock::new(|| {
    builtin_regex(r"(?:\(0[0-9]{1,4}\) ?|0[0-9]{1,4})(?:[ .\-/]?[0-9]{2,4}){1,5}")
});

/// Phone numbers in text: international (`+49 30 1234 5678`, `+14155552671`), North
/// American with separators (`(415) 555-2671`) and trunk-`0` national numbers with at least
/// one separator (`030 1234 5678`, `06 12 34 56 78`). A bare run of digits in text (an
/// amount, a year, an id) is never a phone number; dates such as `03.04.2024 10` are
/// excluded.
///
/// In a JSON number ([`Detector::find_in_number`]) an integer of 11 to 15 digits not
/// starting with `0` is taken as an E.164 number without its `+` (if it starts with `1`,
/// it must be a valid 11-digit North American number, which excludes Unix timestamps in
/// milliseconds).
///
/// Canonical form (hashing): the digits, with the leading `+` if any.
#[derive(Debug, Clone, Copy, Default)]
pub struct PhoneDetector;

/// Cuts the phone candidate `m` after a digit group so that it holds at most `max`
/// digits; `None` if it holds fewer than `min`.
fn phone_cut(value: &str, min: usize, max: usize) -> Option<usize> {
    let bytes = value.as_bytes();
    let mut digits = 0;
    let mut best = None;
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i].is_ascii_digit() {
            let run_start = i;
            while i < bytes.len() && bytes[i].is_ascii_digit() {
                i += 1;
            }
            digits += i - run_start;
            if digits > max {
                break;
            }
            let end = if bytes.get(i) == Some(&b')') {
                i + 1
            } else {
                i
            };
            if digits >= min {
                best = Some(end);
            }
        } else {
            i += 1;
        }
    }
    best
}

/// `AAA-GG-SSSS`: an SSN, not a national phone number.
pub(super) static SSN_SHAPE: LazyLock<Regex> =
    LazyLock::new(|| builtin_regex(r"^[0-9]{3}-[0-9]{2}-[0-9]{4}$"));

/// Whether the digit groups of `value` start like a date (`DD.MM.YYYY`, `DD/MM/YYYY`…).
fn looks_like_date(value: &str) -> bool {
    let groups: Vec<&str> = value
        .split(|c: char| !c.is_ascii_digit())
        .filter(|g| !g.is_empty())
        .take(3)
        .collect();
    let num = |g: &str| g.parse::<u32>().unwrap_or(u32::MAX);
    matches!(groups.as_slice(), [d, m, y]
        if d.len() == 2 && m.len() == 2 && y.len() == 4
            && (1..=31).contains(&num(d)) && (1..=31).contains(&num(m))
            && (y.starts_with("19") || y.starts_with("20")))
}

impl PhoneDetector {
    fn push(
        text: &str,
        regex: &Regex,
        (min, max): (usize, usize),
        national: bool,
        out: &mut Vec<PiiMatch>,
    ) {
        for m in regex.find_iter(text) {
            let Some(cut) = phone_cut(m.as_str(), min, max) else {
                continue;
            };
            let (start, end) = (m.start(), m.start() + cut);
            let value = &text[start..end];
            if national
                && (!value.contains([' ', '.', '-', '/', '('])
                    || looks_like_date(value)
                    || SSN_SHAPE.is_match(value))
            {
                continue;
            }
            if bounded(text, start, end, &['.', '-', ':', '/', ',']) {
                out.push(PiiMatch::new(start..end));
            }
        }
    }
}

impl Detector for PhoneDetector {
    fn name(&self) -> &str {
        "phone"
    }

    fn find(&self, text: &str, out: &mut Vec<PiiMatch>) {
        Self::push(text, &PHONE_INTL, (8, 15), false, out);
        Self::push(text, &PHONE_NANP, (10, 11), false, out);
        Self::push(text, &PHONE_TRUNK, (9, 12), true, out);
    }

    fn find_in_number(&self, digits: &str, out: &mut Vec<PiiMatch>) {
        let b = digits.as_bytes();
        let ok = (11..=15).contains(&b.len())
            && b.iter().all(u8::is_ascii_digit)
            && b[0] != b'0'
            && (b[0] != b'1' || (b.len() == 11 && b[1] >= b'2' && b[4] >= b'2'));
        if ok {
            out.push(PiiMatch::new(0..digits.len()));
        }
    }

    fn canonical<'a>(&self, value: &'a str) -> Cow<'a, str> {
        let mut out = String::with_capacity(value.len());
        if value.starts_with('+') {
            out.push('+');
        }
        out.extend(ascii_digits(value).map(char::from));
        Cow::Owned(out)
    }
}

// ---------------------------------------------------------------------------------------
// Payment card
