//! The key of a thread's virtual object: the tenant and the thread id, each escaped, joined by
//! `/`. The tenant is part of the key, so a run of one tenant never reaches another tenant's
//! object (its state, its awakeables, its single-writer queue).

/// The object key of `tenant`'s thread `thread_id`.
///
/// ```
/// use agboss_restate::{object_key, parse_object_key};
/// let key = object_key("acme", "t/1");
/// assert_eq!(key, "acme/t%2F1");
/// assert_eq!(parse_object_key(&key).unwrap(), ("acme".to_string(), "t/1".to_string()));
/// ```
pub fn object_key(tenant: &str, thread_id: &str) -> String {
    format!("{}/{}", escape(tenant), escape(thread_id))
}

/// The tenant and the thread id of an object key ([`object_key`]'s inverse), or `None` for a key
/// it did not make.
///
/// ```
/// use agboss_restate::parse_object_key;
/// assert!(parse_object_key("no-slash").is_none());
/// assert!(parse_object_key("a/b/c").is_none());
/// assert!(parse_object_key("a/%zz").is_none());
/// ```
pub fn parse_object_key(key: &str) -> Option<(String, String)> {
    let (tenant, thread) = key.split_once('/')?;
    Some((unescape(tenant)?, unescape(thread)?))
}

fn escape(part: &str) -> String {
    part.replace('%', "%25").replace('/', "%2F")
}

fn unescape(part: &str) -> Option<String> {
    let mut out = String::with_capacity(part.len());
    let mut rest = part;
    while let Some(at) = rest.find('%') {
        out.push_str(&rest[..at]);
        let code = rest.get(at + 1..at + 3)?;
        out.push(match code {
            "25" => '%',
            "2F" => '/',
            _ => return None,
        });
        rest = &rest[at + 3..];
    }
    if rest.contains('/') {
        return None;
    }
    out.push_str(rest);
    Some(out)
}

/// A path segment of an ingress URL: everything but unreserved characters percent-encoded.
pub(crate) fn url_segment(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_round_trip_and_tenants_stay_apart() {
        for (tenant, thread) in [("", "t"), ("a%2F", "/"), ("a/b", "c"), ("a", "b/c")] {
            let key = object_key(tenant, thread);
            assert_eq!(key.matches('/').count(), 1, "{key}");
            assert_eq!(
                parse_object_key(&key),
                Some((tenant.to_string(), thread.to_string()))
            );
        }
        // Tenant `a/b` with thread `c` and tenant `a` with thread `b/c` are two objects.
        assert_ne!(object_key("a/b", "c"), object_key("a", "b/c"));
        assert_eq!(url_segment("acme/t%2F1"), "acme%2Ft%252F1");
    }
}
