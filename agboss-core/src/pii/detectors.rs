//! Built-in detectors and the custom regex detector.

use std::borrow::Cow;
use std::net::{Ipv4Addr, Ipv6Addr};
use std::sync::{Arc, LazyLock};

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

const DOMAIN: &str = r"[A-Za-z0-9](?:[A-Za-z0-9\-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9\-]*[A-Za-z0-9])?)*\.[A-Za-z]{2,63}";

static EMAIL: LazyLock<Regex> = LazyLock::new(|| {
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
static PHONE_INTL: LazyLock<Regex> =
    LazyLock::new(|| builtin_regex(r"\+[1-9](?:[ .\-]?(?:\([0-9]{1,5}\)|[0-9]{1,5})){1,10}"));
/// North American: `(415) 555-2671`, `415-555-2671`, `415.555.2671`, `1-415-555-2671`.
static PHONE_NANP: LazyLock<Regex> = LazyLock::new(|| {
    builtin_regex(
        r"(?:1[ .\-])?(?:\([2-9][0-9]{2}\) ?|[2-9][0-9]{2}[ .\-]?)[2-9][0-9]{2}[ .\-][0-9]{4}",
    )
});
/// National numbers with a trunk `0`: `030 1234 5678`, `06 12 34 56 78`, `(020) 7946 0958`.
static PHONE_TRUNK: LazyLock<Regex> = LazyLock::new(|| {
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
static SSN_SHAPE: LazyLock<Regex> =
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

static DIGIT_RUN: LazyLock<Regex> = LazyLock::new(|| builtin_regex(r"[0-9]+(?:[ \-][0-9]+)*"));

/// Luhn checksum of a digit string (ASCII digits).
pub(crate) fn luhn_valid(digits: &[u8]) -> bool {
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

static IBAN_CANDIDATE: LazyLock<Regex> =
    LazyLock::new(|| builtin_regex(r"[A-Za-z]{2}[0-9]{2}(?: ?[A-Za-z0-9]){11,32}"));

/// ISO 13616 mod-97 check of an IBAN (uppercase ASCII alphanumerics, no spaces).
pub(crate) fn iban_valid(iban: &[u8]) -> bool {
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

static SSN: LazyLock<Regex> = LazyLock::new(|| builtin_regex(r"[0-9]{3}-[0-9]{2}-[0-9]{4}"));

/// Whether `AAA-GG-SSSS` (as its 9 digits) may be an issued SSN: area not `000`, `666`
/// nor `9xx`; group not `00`; serial not `0000`.
pub(crate) fn ssn_valid(d: &[u8]) -> bool {
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

static IPV4: LazyLock<Regex> =
    LazyLock::new(|| builtin_regex(r"[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}"));
static IPV6_CANDIDATE: LazyLock<Regex> =
    LazyLock::new(|| builtin_regex(r"[0-9A-Fa-f.]*:[0-9A-Fa-f.]*:[0-9A-Fa-f.:]*"));

/// Partial rendering of an IP address: every alphanumeric character before the last `.`
/// or `:` becomes `*` (`***.***.*.7`, `****:***::1`).
fn ip_partial(value: &str) -> String {
    let last = value.rfind(['.', ':']).map_or(0, |i| i + 1);
    let mut out = String::with_capacity(value.len());
    out.extend(
        value[..last]
            .chars()
            .map(|c| if c.is_alphanumeric() { '*' } else { c }),
    );
    out.push_str(&value[last..]);
    out
}

/// IPv4 addresses in dotted-quad form (octets 0–255 without leading zeros, as parsed by
/// `std`), not part of a longer dotted number (`1.2.3.4.5`, a version) nor glued to a word.
///
/// Partial rendering: only the last octet stays (`***.***.*.7`). Canonical form: as
/// printed by `std`.
#[derive(Debug, Clone, Copy, Default)]
pub struct Ipv4Detector;

impl Detector for Ipv4Detector {
    fn name(&self) -> &str {
        "ipv4"
    }

    fn find(&self, text: &str, out: &mut Vec<PiiMatch>) {
        for m in IPV4.find_iter(text) {
            if m.as_str().parse::<Ipv4Addr>().is_ok() && bounded(text, m.start(), m.end(), &['.']) {
                out.push(PiiMatch::new(m.start()..m.end()));
            }
        }
    }

    fn partial(&self, value: &str, _keep: usize) -> String {
        ip_partial(value)
    }

    fn canonical<'a>(&self, value: &'a str) -> Cow<'a, str> {
        match value.parse::<Ipv4Addr>() {
            Ok(ip) => Cow::Owned(ip.to_string()),
            Err(_) => Cow::Borrowed(value),
        }
    }
}

/// IPv6 addresses (including `::` compression and an embedded IPv4 tail) with at least two
/// hexadecimal groups (so `::1` and `::` alone are not reported), confirmed by `std`'s
/// parser; times (`12:30:45`) and MAC addresses do not parse and are not reported.
///
/// Partial rendering: only the last group stays (`****:***::1`). Canonical form: as
/// printed by `std`.
#[derive(Debug, Clone, Copy, Default)]
pub struct Ipv6Detector;

impl Ipv6Detector {
    fn valid(candidate: &str) -> bool {
        let groups = candidate
            .split([':', '.'])
            .filter(|g| !g.is_empty())
            .count();
        groups >= 2 && candidate.parse::<Ipv6Addr>().is_ok()
    }
}

impl Detector for Ipv6Detector {
    fn name(&self) -> &str {
        "ipv6"
    }

    fn find(&self, text: &str, out: &mut Vec<PiiMatch>) {
        for m in IPV6_CANDIDATE.find_iter(text) {
            // The longest textual IPv6 (with an IPv4 tail) has 45 characters.
            if m.len() > 64 {
                continue;
            }
            // The candidate is ASCII: every index is a char boundary.
            let (mut start, mut end) = (m.start(), m.end());
            while end > start && text.as_bytes()[end - 1] == b'.' {
                end -= 1;
            }
            if !Self::valid(&text[start..end]) {
                let cand = &text[start..end];
                if cand.ends_with(':') && !cand.ends_with("::") {
                    end -= 1;
                }
                if cand.starts_with(':') && !cand.starts_with("::") {
                    start += 1;
                }
                if end <= start || !Self::valid(&text[start..end]) {
                    continue;
                }
            }
            if bounded(text, start, end, &[]) {
                out.push(PiiMatch::new(start..end));
            }
        }
    }

    fn partial(&self, value: &str, _keep: usize) -> String {
        ip_partial(value)
    }

    fn canonical<'a>(&self, value: &'a str) -> Cow<'a, str> {
        match value.parse::<Ipv6Addr>() {
            Ok(ip) => Cow::Owned(ip.to_string()),
            Err(_) => Cow::Borrowed(value),
        }
    }
}

// ---------------------------------------------------------------------------------------
// Custom regex

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
