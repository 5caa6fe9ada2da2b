//! Payment cards (Luhn), IBANs (mod 97) and US social security numbers.
use std::sync::LazyLock;

use regex::Regex;

use super::*;
use crate::pii::{Detector, PiiMatch};

pub(super) static DIGIT_RUN: LazyLock<Regex> =
    LazyLock::new(|| builtin_regex(r"[0-9]+(?:[ \-][0-9]+)*"));

/// Luhn checksum of a digit string (ASCII digits).
pub(super) fn luhn_valid(digits: &[u8]) -> bool {
    let mut sum = 0u32;
    for (i, d) in digits.iter().rev().enumerate() {
        let mut v = u32::from(d - b'0');
        if i % 2 == 1 {
            v *= 2;
            if v > 9 {
                v -= 9;
            }
        }
        sum += v;
    }
    sum.is_multiple_of(10)
}

/// Payment card numbers: 13 to 19 digits, either contiguous or in groups of 3 to 6 digits
/// separated by single spaces or dashes, first digit 2 to 6 (the issuer ranges of Visa,
/// Mastercard, Amex, Discover, JCB, Diners, UnionPay…), Luhn-valid. A card is never found
/// inside a longer digit run, nor in a decimal number.
///
/// Partial rendering: the digits only, all but the last `keep` as `*` (`************4242`).
/// Canonical form (hashing): the digits.
#[derive(Debug, Clone, Copy, Default)]
pub struct CardDetector;

impl Detector for CardDetector {
    fn name(&self) -> &str {
        "card"
    }

    fn find(&self, text: &str, out: &mut Vec<PiiMatch>) {
        let mut groups: Vec<(usize, usize)> = Vec::new();
        for run in DIGIT_RUN.find_iter(text) {
            if !bounded(text, run.start(), run.end(), &['.', ',']) {
                continue;
            }
            groups.clear();
            let bytes = run.as_str().as_bytes();
            let mut i = 0;
            while i < bytes.len() {
                let s = i;
                while i < bytes.len() && bytes[i].is_ascii_digit() {
                    i += 1;
                }
                groups.push((run.start() + s, run.start() + i));
                i += 1;
            }
            let mut digits = Vec::with_capacity(19);
            let mut g = 0;
            while g < groups.len() {
                let mut best = None;
                digits.clear();
                for (j, &(s, e)) in groups.iter().enumerate().skip(g) {
                    // A multi-group card has groups of 3 to 6 digits.
                    let group_ok = |(s, e): (usize, usize)| (3..=6).contains(&(e - s));
                    if j > g && (!group_ok((s, e)) || !group_ok(groups[g])) {
                        break;
                    }
                    digits.extend_from_slice(&text.as_bytes()[s..e]);
                    if digits.len() > 19 {
                        break;
                    }
                    if digits.len() >= 13
                        && (b'2'..=b'6').contains(&digits[0])
                        && luhn_valid(&digits)
                    {
                        best = Some(j);
                    }
                }
                match best {
                    Some(j) => {
                        out.push(PiiMatch::new(groups[g].0..groups[j].1));
                        g = j + 1;
                    }
                    None => g += 1,
                }
            }
        }
    }

    fn partial(&self, value: &str, keep: usize) -> String {
        let digits: Vec<u8> = ascii_digits(value).collect();
        if digits.is_empty() {
            return partial_keep_last(value, keep);
        }
        let kept = keep.min(digits.len() / 2);
        let mut out = "*".repeat(digits.len() - kept);
        out.extend(digits[digits.len() - kept..].iter().map(|&d| char::from(d)));
        out
    }

    fn canonical<'a>(&self, value: &'a str) -> Cow<'a, str> {
        Cow::Owned(ascii_digits(value).map(char::from).collect())
    }
}

// ---------------------------------------------------------------------------------------
// IBAN

/// IBAN lengths per country (SWIFT IBAN registry).
const IBAN_LENGTHS: &[(&str, usize)] = &[
    ("AD", 24),
    ("AE", 23),
    ("AL", 28),
    ("AT", 20),
    ("AZ", 28),
    ("BA", 20),
    ("BE", 16),
    ("BG", 22),
    ("BH", 22),
    ("BR", 29),
    ("BY", 28),
    ("CH", 21),
    ("CR", 22),
    ("CY", 28),
    ("CZ", 24),
    ("DE", 22),
    ("DK", 18),
    ("DO", 28),
    ("EE", 20),
    ("EG", 29),
    ("ES", 24),
    ("FI", 18),
    ("FO", 18),
    ("FR", 27),
    ("GB", 22),
    ("GE", 22),
    ("GI", 23),
    ("GL", 18),
    ("GR", 27),
    ("GT", 28),
    ("HR", 21),
    ("HU", 28),
    ("IE", 22),
    ("IL", 23),
    ("IQ", 23),
    ("IS", 26),
    ("IT", 27),
    ("JO", 30),
    ("KW", 30),
    ("KZ", 20),
    ("LB", 28),
    ("LC", 32),
    ("LI", 21),
    ("LT", 20),
    ("LU", 20),
    ("LV", 21),
    ("MC", 27),
    ("MD", 24),
    ("ME", 22),
    ("MK", 19),
    ("MR", 27),
    ("MT", 31),
    ("MU", 30),
    ("NL", 18),
    ("NO", 15),
    ("PK", 24),
    ("PL", 28),
    ("PS", 29),
    ("PT", 25),
    ("QA", 29),
    ("RO", 24),
    ("RS", 22),
    ("SA", 24),
    ("SC", 31),
    ("SE", 24),
    ("SI", 19),
    ("SK", 24),
    ("SM", 27),
    ("ST", 25),
    ("SV", 28),
    ("TL", 23),
    ("TN", 24),
    ("TR", 26),
    ("UA", 29),
    ("VA", 22),
    ("VG", 24),
    ("XK", 20),
];

pub(super) static IBAN_CANDIDATE: LazyLock<Regex> =
    LazyLock::new(|| builtin_regex(r"[A-Za-z]{2}[0-9]{2}(?: ?[A-Za-z0-9]){11,32}"));

/// ISO 13616 mod-97 check of an IBAN (uppercase ASCII alphanumerics, no spaces).
pub(super) fn iban_valid(iban: &[u8]) -> bool {
    if !(15..=34).contains(&iban.len()) || !iban.iter().all(u8::is_ascii_alphanumeric) {
        return false;
    }
    let check = &iban[2..4];
    if !check.iter().all(u8::is_ascii_digit) || check == b"00" || check == b"01" || check == b"99" {
        return false;
    }
    let mut rem = 0u32;
    for &c in iban[4..].iter().chain(&iban[..4]) {
        rem = match c {
            b'0'..=b'9' => (rem * 10 + u32::from(c - b'0')) % 97,
            b'A'..=b'Z' => (rem * 100 + u32::from(c - b'A') + 10) % 97,
            b'a'..=b'z' => (rem * 100 + u32::from(c - b'a') + 10) % 97,
            _ => return false,
        };
    }
    rem == 1
}

/// IBANs, electronic (`DE89370400440532013000`) or grouped by single spaces
/// (`DE89 3704 0044 0532 0130 00`), any letter case: the length must be the registry length
/// of the country (about 80 countries, all of SEPA), or 15 to 34 characters for a country
/// outside the table, and the mod-97 checksum must hold.
///
/// Partial rendering: the last `keep` characters of the canonical form. Canonical form
/// (hashing): uppercase without spaces.
#[derive(Debug, Clone, Copy, Default)]
pub struct IbanDetector;

impl IbanDetector {
    /// End (byte offset in `text`) of the IBAN starting at `start` within `candidate`.
    fn accept(text: &str, start: usize, candidate: &str) -> Option<usize> {
        let country = candidate.get(..2)?.to_ascii_uppercase();
        let expected = IBAN_LENGTHS
            .iter()
            .find(|(c, _)| *c == country)
            .map(|&(_, len)| len);
        let mut alnum = Vec::with_capacity(34);
        let mut end = None;
        for (i, c) in candidate.char_indices() {
            if c == ' ' {
                continue;
            }
            alnum.push(c.to_ascii_uppercase() as u8);
            if Some(alnum.len()) == expected {
                end = Some(start + i + 1);
                break;
            }
        }
        let end = match expected {
            Some(_) => end?,
            None => start + candidate.len(),
        };
        (bounded(text, start, end, &[]) && iban_valid(&alnum)).then_some(end)
    }
}

impl Detector for IbanDetector {
    fn name(&self) -> &str {
        "iban"
    }

    fn find(&self, text: &str, out: &mut Vec<PiiMatch>) {
        let mut pos = 0;
        while let Some(m) = IBAN_CANDIDATE.find_at(text, pos) {
            match Self::accept(text, m.start(), m.as_str()) {
                Some(end) => {
                    out.push(PiiMatch::new(m.start()..end));
                    pos = end;
                }
                // The candidate starts with an ASCII letter: +1 is a char boundary.
                None => pos = m.start() + 1,
            }
        }
    }

    fn partial(&self, value: &str, keep: usize) -> String {
        partial_keep_last(&self.canonical(value), keep)
    }

    fn canonical<'a>(&self, value: &'a str) -> Cow<'a, str> {
        Cow::Owned(
            value
                .chars()
                .filter(|c| !c.is_whitespace())
                .map(|c| c.to_ascii_uppercase())
                .collect(),
        )
    }
}

// ---------------------------------------------------------------------------------------
// US SSN

pub(super) static SSN: LazyLock<Regex> =
    LazyLock::new(|| builtin_regex(r"[0-9]{3}-[0-9]{2}-[0-9]{4}"));

/// Whether `AAA-GG-SSSS` (as its 9 digits) may be an issued SSN: area not `000`, `666`
/// nor `9xx`; group not `00`; serial not `0000`.
pub(super) fn ssn_valid(d: &[u8]) -> bool {
    d.len() == 9
        && d.iter().all(u8::is_ascii_digit)
        && &d[..3] != b"000"
        && &d[..3] != b"666"
        && d[0] != b'9'
        && &d[3..5] != b"00"
        && &d[5..] != b"0000"
}

/// US Social Security Numbers written `AAA-GG-SSSS`, excluding the never-issued ranges
/// (area `000`, `666`, `900`–`999`; group `00`; serial `0000`).
///
/// Canonical form (hashing): the 9 digits.
#[derive(Debug, Clone, Copy, Default)]
pub struct SsnDetector;

impl Detector for SsnDetector {
    fn name(&self) -> &str {
        "ssn"
    }

    fn find(&self, text: &str, out: &mut Vec<PiiMatch>) {
        for m in SSN.find_iter(text) {
            let digits: Vec<u8> = ascii_digits(m.as_str()).collect();
            if ssn_valid(&digits) && bounded(text, m.start(), m.end(), &['-', '.']) {
                out.push(PiiMatch::new(m.start()..m.end()));
            }
        }
    }

    fn canonical<'a>(&self, value: &'a str) -> Cow<'a, str> {
        Cow::Owned(ascii_digits(value).map(char::from).collect())
    }
}

// ---------------------------------------------------------------------------------------
// IP addresses
