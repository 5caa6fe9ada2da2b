//! The request side of the HTTP chat clients: one endpoint, retries with jittered
//! exponential backoff and `Retry-After`, timeouts, and typed errors from error bodies.
use std::time::{Duration, SystemTime};

use reqwest::StatusCode;
use reqwest::header::{HeaderMap, HeaderValue};
use serde::Deserialize;

use super::error::ModelError;
use super::settings::HttpSettings;

/// Bytes of an error body kept in [`ModelError::Http`].
const MAX_ERROR_BODY: usize = 4096;

/// One endpoint and how to call it.
#[derive(Clone)]
pub(crate) struct HttpCore {
    client: reqwest::Client,
    pub(crate) endpoint: String,
    headers: HeaderMap,
    pub(crate) settings: HttpSettings,
    /// What a request is, for logs (`"chat completion"`, `"messages request"`).
    what: &'static str,
}

/// Outcome of one attempt that did not produce a usable response.
struct AttemptFailure {
    error: ModelError,
    /// Delay the server asked for (`Retry-After`).
    retry_after: Option<Duration>,
}

impl HttpCore {
    /// A client of `endpoint` sending `headers` with every request.
    pub(crate) fn new(
        settings: HttpSettings,
        endpoint: String,
        headers: HeaderMap,
        what: &'static str,
    ) -> Result<Self, ModelError> {
        let client = match &settings.client {
            Some(c) => c.clone(),
            None => {
                crate::tls::ensure_provider();
                reqwest::Client::builder()
                    .connect_timeout(settings.timeout)
                    .build()
                    .map_err(|e| ModelError::config(format!("cannot build HTTP client: {e}")))?
            }
        };
        Ok(Self {
            client,
            endpoint,
            headers,
            settings,
            what,
        })
    }

    /// The delay before retry `attempt` (0-based): `backoff_base * 2^attempt` with equal
    /// jitter (half of it fixed, half random), at least what the server asked for, at most
    /// `max_backoff`.
    pub(crate) fn backoff(&self, attempt: u32, retry_after: Option<Duration>) -> Duration {
        let exp = self
            .settings
            .backoff_base
            .saturating_mul(2u32.saturating_pow(attempt.min(16)));
        let half = exp / 2;
        let jittered = half + half.mul_f64(fastrand::f64());
        jittered
            .max(retry_after.unwrap_or_default())
            .min(self.settings.max_backoff)
    }

    /// Sends `body` with retries until a 2xx response head arrives. For non-streamed calls
    /// each attempt also gets reqwest's request timeout, which keeps covering the body read.
    pub(crate) async fn send_with_retries(
        &self,
        body: &serde_json::Value,
        streaming: bool,
    ) -> Result<reqwest::Response, ModelError> {
        let what = self.what;
        let mut attempt: u32 = 0;
        loop {
            tracing::debug!(endpoint = %self.endpoint, attempt, streaming, "sending {what} request");
            let failure = match self.attempt(body, streaming).await {
                Ok(response) => return Ok(response),
                Err(failure) => failure,
            };
            if attempt >= self.settings.max_retries || !failure.error.is_retryable() {
                tracing::debug!(attempt, error = %failure.error, "{what} failed");
                return Err(failure.error);
            }
            let delay = self.backoff(attempt, failure.retry_after);
            tracing::debug!(
                attempt,
                delay_ms = u64::try_from(delay.as_millis()).unwrap_or(u64::MAX),
                error = %failure.error,
                "retrying {what}"
            );
            tokio::time::sleep(delay).await;
            attempt += 1;
        }
    }

    async fn attempt(
        &self,
        body: &serde_json::Value,
        streaming: bool,
    ) -> Result<reqwest::Response, AttemptFailure> {
        let timeout = self.settings.timeout;
        let mut request = self
            .client
            .post(&self.endpoint)
            .headers(self.headers.clone())
            .json(body);
        if streaming {
            request = request.header(reqwest::header::ACCEPT, "text/event-stream");
        } else {
            request = request.timeout(timeout);
        }
        let sent = match tokio::time::timeout(timeout, request.send()).await {
            Err(_) => Err(ModelError::Timeout { after: timeout }),
            Ok(r) => r.map_err(|e| self.map_reqwest(e)),
        };
        let response = sent.map_err(|error| AttemptFailure {
            error,
            retry_after: None,
        })?;
        let status = response.status();
        if status.is_success() {
            return Ok(response);
        }
        let retry_after = retry_after(response.headers(), SystemTime::now());
        let raw = match tokio::time::timeout(timeout, response.bytes()).await {
            Ok(Ok(bytes)) => String::from_utf8_lossy(&bytes).into_owned(),
            _ => String::new(),
        };
        let error = status_error(status, retry_after, truncate(&raw, MAX_ERROR_BODY));
        Err(AttemptFailure { error, retry_after })
    }

    /// Reads the body of a 2xx answer (not retried: that would need buffering the whole
    /// exchange inside the retry loop; a timeout there surfaces as an error).
    pub(crate) async fn read_body(
        &self,
        response: reqwest::Response,
    ) -> Result<impl AsRef<[u8]>, ModelError> {
        response.bytes().await.map_err(|e| self.map_reqwest(e))
    }

    fn map_reqwest(&self, e: reqwest::Error) -> ModelError {
        if e.is_timeout() {
            ModelError::Timeout {
                after: self.settings.timeout,
            }
        } else {
            ModelError::Transport {
                detail: error_chain(&e),
            }
        }
    }
}

/// The typed error of a non-2xx answer: [`ModelError::RateLimited`] for 429, else
/// [`ModelError::Http`], each with the server's `error.message` (OpenAI's and Anthropic's
/// error bodies both have `error.message` and `error.type`).
pub(crate) fn status_error(
    status: StatusCode,
    retry_after: Option<Duration>,
    raw: &str,
) -> ModelError {
    let (message, error_type) = parse_error_body(raw).unwrap_or((None, None));
    if status == StatusCode::TOO_MANY_REQUESTS {
        return ModelError::RateLimited {
            retry_after,
            message: message.or_else(|| (!raw.is_empty()).then(|| raw.to_owned())),
        };
    }
    ModelError::Http {
        status: status.as_u16(),
        message: message.unwrap_or_else(|| {
            if raw.is_empty() {
                status.canonical_reason().unwrap_or("error").to_owned()
            } else {
                raw.to_owned()
            }
        }),
        error_type,
        body: raw.to_owned(),
    }
}

#[derive(Deserialize)]
struct WireErrorBody {
    error: WireError,
}

/// The `error` object of an error body or of an error event.
#[derive(Deserialize)]
pub(crate) struct WireError {
    #[serde(default)]
    pub(crate) message: Option<String>,
    #[serde(rename = "type", default)]
    pub(crate) error_type: Option<String>,
}

impl WireError {
    /// The error a provider reported inside a successful answer.
    pub(crate) fn into_error(self) -> ModelError {
        ModelError::provider(self.message, self.error_type)
    }
}

/// `error.message` and `error.type` of an error body (OpenAI's `{"error": {..}}`, Anthropic's
/// `{"type": "error", "error": {..}}`), if `body` is one.
pub(crate) fn parse_error_body(body: &str) -> Option<(Option<String>, Option<String>)> {
    let parsed: WireErrorBody = serde_json::from_str(body).ok()?;
    Some((parsed.error.message, parsed.error.error_type))
}

/// `value` (an API key, `Bearer {key}`) as a header value kept out of logs.
pub(crate) fn secret_header(value: &str) -> Result<HeaderValue, ModelError> {
    let mut value = HeaderValue::from_str(value)
        .map_err(|_| ModelError::config("API key contains characters not allowed in a header"))?;
    value.set_sensitive(true);
    Ok(value)
}

/// At most `max` bytes of `s`, cut on a char boundary.
pub(crate) fn truncate(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// `e` and its sources, joined by `: `.
pub(crate) fn error_chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut out = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        out.push_str(": ");
        out.push_str(&s.to_string());
        source = s.source();
    }
    out
}

/// The delay a server asks for: OpenAI's `retry-after-ms`, else `Retry-After` in seconds or
/// as an HTTP date (a date in the past is no delay).
pub(crate) fn retry_after(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    let get = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
    };
    if let Some(ms) = get("retry-after-ms").and_then(|v| v.parse::<f64>().ok())
        && ms.is_finite()
        && ms >= 0.0
    {
        return Some(Duration::from_secs_f64(ms / 1000.0));
    }
    let value = get("retry-after")?;
    if let Ok(secs) = value.parse::<f64>() {
        return (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs));
    }
    let at = httpdate::parse_http_date(value).ok()?;
    Some(at.duration_since(now).unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, HeaderValue::from_str(v).unwrap());
        }
        h
    }

    #[test]
    fn retry_after_in_seconds_milliseconds_and_http_dates() {
        let now = httpdate::parse_http_date("Tue, 01 Dec 2026 10:00:00 GMT").unwrap();
        let at = |pairs| retry_after(&headers(pairs), now);
        assert_eq!(at(&[("retry-after", "2")]), Some(Duration::from_secs(2)));
        assert_eq!(
            at(&[("retry-after", "0.5")]),
            Some(Duration::from_millis(500))
        );
        assert_eq!(
            at(&[("retry-after-ms", "250"), ("retry-after", "9")]),
            Some(Duration::from_millis(250))
        );
        assert_eq!(
            at(&[("retry-after", "Tue, 01 Dec 2026 10:00:07 GMT")]),
            Some(Duration::from_secs(7))
        );
        assert_eq!(
            at(&[("retry-after", "Tue, 01 Dec 2026 09:59:00 GMT")]),
            Some(Duration::ZERO),
            "a date in the past is no delay"
        );
        assert_eq!(at(&[("retry-after", "soon")]), None);
        assert_eq!(at(&[("retry-after", "-1")]), None);
        assert_eq!(at(&[]), None);
    }

    #[test]
    fn backoff_is_jittered_between_half_and_all_of_the_exponential_delay() {
        let settings = HttpSettings {
            backoff_base: Duration::from_millis(100),
            max_backoff: Duration::from_secs(1),
            ..HttpSettings::default()
        };
        let core = HttpCore::new(settings, "http://x".into(), HeaderMap::new(), "test").unwrap();
        let delays: Vec<Duration> = (0..50).map(|_| core.backoff(1, None)).collect();
        assert!(
            delays
                .iter()
                .all(|d| *d >= Duration::from_millis(100) && *d <= Duration::from_millis(200))
        );
        assert!(delays.iter().any(|d| *d != delays[0]), "jittered");
        // The server's delay wins when longer; nothing passes the cap.
        assert_eq!(
            core.backoff(0, Some(Duration::from_millis(700))),
            Duration::from_millis(700)
        );
        assert_eq!(core.backoff(10, None), Duration::from_secs(1));
        assert_eq!(
            core.backoff(0, Some(Duration::from_secs(60))),
            Duration::from_secs(1)
        );
    }

    #[test]
    fn error_bodies_of_both_providers_give_the_servers_message() {
        let openai = r#"{"error":{"message":"Rate limit reached","type":"requests"}}"#;
        let anthropic =
            r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;
        let err = status_error(StatusCode::TOO_MANY_REQUESTS, None, openai);
        assert_eq!(
            err.to_string(),
            "model provider rate limit hit: Rate limit reached"
        );
        let err = status_error(StatusCode::from_u16(529).unwrap(), None, anthropic);
        assert!(
            matches!(&err, ModelError::Http { status: 529, message, error_type: Some(t), .. }
                if message == "Overloaded" && t == "overloaded_error"),
            "{err:?}"
        );
        let err = status_error(StatusCode::BAD_GATEWAY, None, "");
        assert_eq!(
            err.to_string(),
            "model provider returned HTTP 502: Bad Gateway"
        );
    }
}
