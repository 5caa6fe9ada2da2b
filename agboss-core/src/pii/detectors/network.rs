//! IPv4 and IPv6 addresses.
use std::net::{Ipv4Addr, Ipv6Addr};
use std::sync::LazyLock;

use regex::Regex;

use super::*;
use crate::pii::{Detector, PiiMatch};

pub(super) static IPV4: LazyLock<Regex> =
    LazyLock::new(|| builtin_regex(r"[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}"));
pub(super) static IPV6_CANDIDATE: LazyLock<Regex> =
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
