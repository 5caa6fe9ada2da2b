//! What the HTTP model clients share: settings, retries with jittered exponential backoff and
//! `Retry-After`, typed errors from error bodies, and the bounded SSE event stream a
//! provider's decoder turns into [`ModelStreamEvent`]s.
use std::collections::VecDeque;
use std::time::{Duration, SystemTime};

use futures::StreamExt as _;
use reqwest::StatusCode;
use reqwest::header::HeaderMap;
use serde::Deserialize;

use super::sse::{SseStream, StreamLimits};
use super::{ModelError, ModelStream, ModelStreamEvent};

pub(crate) const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);
pub(crate) const DEFAULT_MAX_RETRIES: u32 = 2;
pub(crate) const DEFAULT_BACKOFF_BASE: Duration = Duration::from_millis(500);
pub(crate) const DEFAULT_MAX_BACKOFF: Duration = Duration::from_secs(30);
const MAX_ERROR_BODY: usize = 4096;

/// The settings every HTTP client's builder has.
#[derive(Clone, Debug)]
pub(crate) struct HttpSettings {
    pub(crate) timeout: Duration,
    pub(crate) max_retries: u32,
    pub(crate) backoff_base: Duration,
    pub(crate) max_backoff: Duration,
    pub(crate) limits: StreamLimits,
    pub(crate) streaming: bool,
    pub(crate) client: Option<reqwest::Client>,
}

impl Default for HttpSettings {
    fn default() -> Self {
        Self {
            timeout: DEFAULT_TIMEOUT,
            max_retries: DEFAULT_MAX_RETRIES,
            backoff_base: DEFAULT_BACKOFF_BASE,
            max_backoff: DEFAULT_MAX_BACKOFF,
            limits: StreamLimits::default(),
            streaming: true,
            client: None,
        }
    }
}

/// The setters of [`HttpSettings`] on a client builder with a `settings` field.
macro_rules! http_settings_setters {
    () => {
        /// Timeout of one attempt; for streams, of the head and of each chunk (default 60 s).
        pub fn timeout(mut self, timeout: std::time::Duration) -> Self {
            self.settings.timeout = timeout;
            self
        }

        /// Retries after the first attempt (default 2; `0` disables retries).
        pub fn max_retries(mut self, max_retries: u32) -> Self {
            self.settings.max_retries = max_retries;
            self
        }

        /// Delay before the first retry, doubled for each further one, half of it random
        /// (default 500 ms).
        pub fn backoff_base(mut self, backoff_base: std::time::Duration) -> Self {
            self.settings.backoff_base = backoff_base;
            self
        }

        /// Upper bound of one retry delay, `Retry-After` included (default 30 s).
        pub fn max_backoff(mut self, max_backoff: std::time::Duration) -> Self {
            self.settings.max_backoff = max_backoff;
            self
        }

        /// Bounds of every streamed response (see [`StreamLimits`](crate::model::StreamLimits);
        /// defaults: 10 min, 1 MiB per event, 32 MiB in all).
        pub fn stream_limits(mut self, limits: crate::model::StreamLimits) -> Self {
            self.settings.limits = limits;
            self
        }

        /// Whether [`ChatModel::stream`](crate::model::ChatModel::stream) asks for a streamed
        /// answer (default `true`); with `false` it makes one plain request and replays the
        /// answer as events (for servers that cannot stream, or proxies that buffer).
        pub fn streaming(mut self, streaming: bool) -> Self {
            self.settings.streaming = streaming;
            self
        }

        /// Uses this `reqwest::Client` (e.g. with a proxy) instead of a new one.
        pub fn http_client(mut self, client: reqwest::Client) -> Self {
            self.settings.client = Some(client);
            self
        }
    };
}
pub(crate) use http_settings_setters;

/// `base` without trailing slashes, if it is an `http(s)://` URL.
pub(crate) fn check_base_url(base: &str) -> Result<&str, ModelError> {
    let base = base.trim().trim_end_matches('/');
    let parsed = reqwest::Url::parse(base)
        .map_err(|e| ModelError::config(format!("invalid base URL {base:?}: {e}")))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(ModelError::config(format!(
            "base URL {base:?} must start with http:// or https://"
        )));
    }
    Ok(base)
}

/// `true` unless `value` says off (`false`, `0`, `no`, `off`).
pub(crate) fn env_flag(value: Option<String>, default: bool) -> bool {
    match value.as_deref().map(|v| v.trim().to_ascii_lowercase()) {
        Some(v) if matches!(v.as_str(), "false" | "0" | "no" | "off") => false,
        Some(v) if matches!(v.as_str(), "true" | "1" | "yes" | "on") => true,
        _ => default,
    }
}

/// What a client's `from_env` reads: `{prefix}_BASE_URL`, `{prefix}_API_KEY` (else
/// `key_fallback`), `{prefix}_MODEL`, `{prefix}_STREAM`. A key is required only for the default
/// (hosted) base URL: with a base URL of one's own, a missing key is a keyless local server.
pub(crate) struct EnvConfig {
    pub(crate) base_url: Option<String>,
    pub(crate) api_key: Option<String>,
    pub(crate) model: Option<String>,
    pub(crate) streaming: bool,
}

impl EnvConfig {
    pub(crate) fn read(
        lookup: impl Fn(&str) -> Option<String>,
        prefix: &str,
        key_fallback: &str,
    ) -> Result<Self, ModelError> {
        let get =
            |suffix: &str| lookup(&format!("{prefix}_{suffix}")).filter(|v| !v.trim().is_empty());
        let base_url = get("BASE_URL");
        let api_key =
            get("API_KEY").or_else(|| lookup(key_fallback).filter(|v| !v.trim().is_empty()));
        if api_key.is_none() && base_url.is_none() {
            return Err(ModelError::config(format!(
                "no API key: set {prefix}_API_KEY or {key_fallback} (or {prefix}_BASE_URL for a keyless local server)"
            )));
        }
        Ok(Self {
            base_url,
            api_key,
            model: get("MODEL"),
            streaming: env_flag(get("STREAM"), true),
        })
    }
}

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

    /// The events of a 2xx streamed answer, decoded by `decoder`, within the per-chunk timeout
    /// and the [`StreamLimits`].
    pub(crate) fn event_stream<D: SseDecoder>(
        &self,
        response: reqwest::Response,
        decoder: D,
    ) -> ModelStream {
        let timeout = self.settings.timeout;
        let limits = self.settings.limits;
        let bytes = response
            .bytes_stream()
            .map(move |chunk| chunk.map_err(|e| transport_error(&e, timeout)));
        let state = StreamState {
            events: SseStream::new(bytes, limits),
            deadline: tokio::time::Instant::now() + limits.deadline,
            limits,
            decoder,
            pending: VecDeque::new(),
            finished: false,
            timeout,
            what: self.what,
        };
        Box::pin(futures::stream::unfold(state, next_event))
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

/// `error.message` and `error.type` of an error body (OpenAI's `{"error": {..}}`, Anthropic's
/// `{"type": "error", "error": {..}}`), if `body` is one.
pub(crate) fn parse_error_body(body: &str) -> Option<(Option<String>, Option<String>)> {
    let parsed: WireErrorBody = serde_json::from_str(body).ok()?;
    Some((parsed.error.message, parsed.error.error_type))
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
fn error_chain(e: &(dyn std::error::Error + 'static)) -> String {
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

/// A transport error of a streamed body: a timeout, or the connection lost.
fn transport_error(e: &reqwest::Error, timeout: Duration) -> ModelError {
    if e.is_timeout() {
        ModelError::Timeout { after: timeout }
    } else {
        ModelError::StreamTruncated {
            detail: format!("connection lost mid-stream: {}", error_chain(e)),
        }
    }
}

/// Turns the `data` of a provider's SSE events into [`ModelStreamEvent`]s.
pub(crate) trait SseDecoder: Send + 'static {
    /// One event's data; appends the resulting events to `out`.
    fn on_event(&mut self, data: &str, out: &mut Vec<ModelStreamEvent>) -> Result<(), ModelError>;
    /// At the end of the body: an error unless the stream ended properly (`mid_event`: the
    /// body ended inside an event, which SSE discards).
    fn finish(&mut self, mid_event: bool) -> Result<(), ModelError>;
    /// `true` once the end marker was seen.
    fn is_done(&self) -> bool;
}

struct StreamState<D> {
    events: SseStream,
    /// When the whole response must have ended.
    deadline: tokio::time::Instant,
    limits: StreamLimits,
    decoder: D,
    pending: VecDeque<ModelStreamEvent>,
    /// Set after the last item (event or error) was handed out.
    finished: bool,
    timeout: Duration,
    what: &'static str,
}

async fn next_event<D: SseDecoder>(
    mut state: StreamState<D>,
) -> Option<(Result<ModelStreamEvent, ModelError>, StreamState<D>)> {
    loop {
        if let Some(event) = state.pending.pop_front() {
            return Some((Ok(event), state));
        }
        if state.finished || state.decoder.is_done() {
            return None;
        }
        // The per-chunk timeout, but never past the whole response's deadline.
        let chunk_deadline = (tokio::time::Instant::now() + state.timeout).min(state.deadline);
        let next = match tokio::time::timeout_at(chunk_deadline, state.events.next()).await {
            Err(_) => Err(ModelError::Timeout {
                after: if chunk_deadline == state.deadline {
                    state.limits.deadline
                } else {
                    state.timeout
                },
            }),
            Ok(None) => {
                // End of body: fine only after the end marker (then `finish` is Ok).
                state.finished = true;
                let mid_event = state.events.ended_mid_event();
                state.decoder.finish(mid_event).map(|()| Vec::new())
            }
            Ok(Some(Err(error))) => Err(error),
            Ok(Some(Ok(event))) => {
                let mut out = Vec::new();
                state.decoder.on_event(&event.data, &mut out).map(|()| out)
            }
        };
        match next {
            // No complete event yet: read more (the loop re-checks `finished`).
            Ok(events) => state.pending.extend(events),
            Err(error) => {
                let what = state.what;
                tracing::debug!(error = %error, "{what} stream failed");
                state.finished = true;
                return Some((Err(error), state));
            }
        }
    }
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
