//! Server-rendered HTML: [`escape`] for every text that is not ours, the page layout, and the
//! small pieces every page shares (times, links, the forms' CSRF field).
use std::fmt::Write as _;

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

/// `text` escaped for HTML text and attribute values (`&`, `<`, `>`, `"`, `'`).
pub(super) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// `segment` percent-encoded for one path segment of a URL.
pub(super) fn segment(segment: &str) -> String {
    let mut out = String::with_capacity(segment.len());
    for b in segment.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(char::from(b));
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

/// How long ago `then_ms` was, or how long until it, for a human: `3 min ago`, `in 2 h`.
pub(super) fn relative(then_ms: i64, now_ms: i64) -> String {
    if then_ms == i64::MAX {
        return "never".into();
    }
    let delta = then_ms.saturating_sub(now_ms);
    let secs = delta.unsigned_abs() / 1000;
    let amount = match secs {
        0..60 => format!("{secs} s"),
        60..3600 => format!("{} min", secs / 60),
        3600..86_400 => format!("{} h", secs / 3600),
        _ => format!("{} d", secs / 86_400),
    };
    if delta < 0 {
        format!("{amount} ago")
    } else {
        format!("in {amount}")
    }
}

/// A decision for a human, escaped: `approved by maria`, `rejected by maria: why`, `edited by
/// maria` (an edit's input is not shown: it may hold what the policies mask).
pub(super) fn decision(decision: &crate::store::TicketDecision) -> String {
    use crate::store::TicketDecision;
    match decision {
        TicketDecision::Approved { by } => format!("approved by {}", escape(by)),
        TicketDecision::Rejected { by, message } => {
            format!("rejected by {}: {}", escape(by), escape(message))
        }
        TicketDecision::Edited { by, .. } => format!("edited by {}", escape(by)),
    }
}

/// The hidden CSRF field of a form.
pub(super) fn csrf_field(token: &str) -> String {
    format!(
        r#"<input type="hidden" name="{}" value="{}">"#,
        super::csrf::FIELD,
        escape(token)
    )
}

/// A whole page: `body` (already HTML) in the layout, with `title` escaped.
pub(super) struct Page<'a> {
    pub(super) base: &'a str,
    pub(super) title: &'a str,
    /// Who is looking (escaped here), `None` on a refusal page.
    pub(super) who: Option<(&'a str, &'a str)>,
    pub(super) body: String,
}

impl Page<'_> {
    /// The page as a response with `status` and the console's security headers.
    pub(super) fn respond(&self, status: StatusCode) -> Response {
        let who = self.who.map_or_else(String::new, |(approver, tenant)| {
            format!(
                r#"<span class="who">{} · tenant <b id="tenant">{}</b></span>"#,
                escape(approver),
                escape(tenant)
            )
        });
        let html = format!(
            r#"<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{title} · agboss console</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="{base}/assets/console.css">
<script defer src="{base}/assets/console.js"></script></head>
<body><header><a class="brand" href="{base}/">agboss console</a> <a href="{base}/">Inbox</a> <a href="{base}/app">App</a>{who}</header>
<main><h1>{title}</h1>
{body}
</main></body></html>"#,
            title = escape(self.title),
            base = escape(self.base),
            body = self.body,
        );
        with_headers(status, "text/html; charset=utf-8", html)
    }
}

/// A response of `body` with the console's headers: no caching, no sniffing, no framing, and a
/// content security policy that runs only the console's own script.
pub(super) fn with_headers(
    status: StatusCode,
    content_type: &'static str,
    body: String,
) -> Response {
    let mut response = (status, body).into_response();
    let headers = response.headers_mut();
    let set = [
        (header::CONTENT_TYPE, content_type),
        (header::CACHE_CONTROL, "no-store"),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        (header::REFERRER_POLICY, "same-origin"),
        (header::X_FRAME_OPTIONS, "DENY"),
        (
            header::CONTENT_SECURITY_POLICY,
            "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; \
             connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
        ),
    ];
    for (name, value) in set {
        headers.insert(name, HeaderValue::from_static(value));
    }
    response
}

/// A short page saying why a request was refused or failed (`message` is escaped).
pub(super) fn message_page(
    base: &str,
    who: Option<(&str, &str)>,
    status: StatusCode,
    title: &str,
    message: &str,
) -> Response {
    Page {
        base,
        title,
        who,
        body: format!(r#"<p class="refused" id="message">{}</p>"#, escape(message)),
    }
    .respond(status)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_and_quotes() {
        assert_eq!(
            escape(r#"<script>alert("x" & 'y')</script>"#),
            "&lt;script&gt;alert(&quot;x&quot; &amp; &#39;y&#39;)&lt;/script&gt;"
        );
        assert_eq!(segment("ticket_1/../x y"), "ticket_1%2F..%2Fx%20y");
        assert_eq!(relative(0, 90_000), "1 min ago");
        assert_eq!(relative(7_200_000, 0), "in 2 h");
    }
}
