//! CSRF protection of every state change: a form carries a token bound to the user's tenant,
//! approver and session and to a secret of this console (random per router), checked in
//! constant time on every `POST`; and a `POST` whose `Origin` is another site (or `null`) is
//! refused whatever it carries. A missing `Origin` (an old browser, a script) falls back on the
//! token alone.
use axum::http::{HeaderMap, header};

use super::auth::ConsoleUser;
use crate::store::types::sha256_hex;

/// The name of a form's CSRF field (and of the header a script may send instead).
pub(super) const FIELD: &str = "csrf";
/// The header a script sends the token in.
pub(super) const HEADER: &str = "x-csrf-token";

/// The token of `user`'s forms under `secret`.
pub(super) fn token(secret: &str, user: &ConsoleUser) -> String {
    let bound = format!(
        "agboss-console-csrf\n{secret}\n{}\n{}\n{}",
        user.tenant, user.approver.id, user.session
    );
    sha256_hex(bound.as_bytes())
}

/// Whether `given` is `user`'s token (compared in constant time).
pub(super) fn valid(secret: &str, user: &ConsoleUser, given: Option<&str>) -> bool {
    let Some(given) = given else {
        return false;
    };
    let expected = token(secret, user);
    expected.len() == given.len()
        && expected
            .bytes()
            .zip(given.bytes())
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            == 0
}

/// Whether the request's `Origin`, when it has one, is the site it was sent to (its `Host`).
pub(super) fn same_origin(headers: &HeaderMap) -> bool {
    let Some(origin) = headers.get(header::ORIGIN) else {
        return true;
    };
    let (Ok(origin), Some(host)) = (
        origin.to_str(),
        headers.get(header::HOST).and_then(|h| h.to_str().ok()),
    ) else {
        return false;
    };
    let authority = origin
        .strip_prefix("https://")
        .or_else(|| origin.strip_prefix("http://"));
    authority.is_some_and(|a| a.eq_ignore_ascii_case(host))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::channel::Approver;

    #[test]
    fn a_token_is_bound_to_its_user_session_and_secret() {
        let maria = ConsoleUser::new("acme", Approver::new("maria")).session("s1");
        let t = token("k", &maria);
        assert!(valid("k", &maria, Some(&t)));
        assert!(
            !valid("other", &maria, Some(&t)),
            "another console's secret"
        );
        assert!(
            !valid("k", &maria.clone().session("s2"), Some(&t)),
            "another session"
        );
        let globex = ConsoleUser::new("globex", Approver::new("maria")).session("s1");
        assert!(!valid("k", &globex, Some(&t)), "another tenant");
        assert!(!valid("k", &maria, None));
        assert!(!valid("k", &maria, Some("")));
    }

    #[test]
    fn origin_must_be_the_host() {
        let headers = |origin: Option<&str>| {
            let mut h = HeaderMap::new();
            h.insert(header::HOST, "127.0.0.1:8080".parse().unwrap());
            if let Some(o) = origin {
                h.insert(header::ORIGIN, o.parse().unwrap());
            }
            h
        };
        assert!(same_origin(&headers(None)));
        assert!(same_origin(&headers(Some("http://127.0.0.1:8080"))));
        assert!(!same_origin(&headers(Some("http://evil.example"))));
        assert!(!same_origin(&headers(Some("null"))));
    }
}
