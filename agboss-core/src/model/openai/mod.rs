//! A client of OpenAI's Chat Completions API and compatible servers.

mod wire;

pub(crate) use wire::StreamDecoder;

use std::collections::VecDeque;
use std::fmt;
use std::time::Duration;

use futures::StreamExt;

use crate::model::sse::{SseStream, StreamLimits};
use reqwest::StatusCode;
use reqwest::header::{HeaderMap, HeaderValue};

use super::{ChatModel, ModelError, ModelRequest, ModelResponse, ModelStream, ModelStreamEvent};

/// Default base URL of [`OpenAiCompatibleModel`].
pub const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";
/// Default model name of [`OpenAiCompatibleModel`].
pub const DEFAULT_MODEL: &str = "gpt-4o-mini";

const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);
const DEFAULT_MAX_RETRIES: u32 = 2;
const DEFAULT_BACKOFF_BASE: Duration = Duration::from_millis(500);
const DEFAULT_MAX_BACKOFF: Duration = Duration::from_secs(30);
const MAX_ERROR_BODY: usize = 4096;

/// A [`ChatModel`] speaking OpenAI's Chat Completions wire format
/// (`POST {base_url}/chat/completions`), with bounded retries and timeouts.
///
/// * 429 and 5xx answers, timeouts and connection failures are retried up to
///   `max_retries` times with exponential backoff (`backoff_base * 2^attempt`, capped at
///   `max_backoff`); a 429's `Retry-After` (seconds) is honoured when longer, up to
///   `max_backoff`.
/// * Other error statuses fail at once with [`ModelError::Http`] carrying the provider's
///   `error.message` and `error.type`.
/// * `timeout` bounds a whole non-streamed call per attempt; for streams it bounds the
///   wait for the response head and then for every next chunk.
///
/// ```no_run
/// use agboss_core::model::{ChatModel, Message, ModelRequest, OpenAiCompatibleModel};
/// use std::time::Duration;
///
/// # async fn run() -> Result<(), agboss_core::model::ModelError> {
/// let model = OpenAiCompatibleModel::builder()
///     .base_url("http://127.0.0.1:8000/v1")
///     .api_key("sk-local")
///     .model("my-model")
///     .timeout(Duration::from_secs(30))
///     .max_retries(3)
///     .build()?;
/// let answer = model.complete(&ModelRequest::new([Message::user("Hello!")])).await?;
/// println!("{:?}", answer.message.content);
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct OpenAiCompatibleModel {
    client: reqwest::Client,
    endpoint: String,
    api_key: Option<String>,
    model: String,
    timeout: Duration,
    max_retries: u32,
    backoff_base: Duration,
    max_backoff: Duration,
    limits: StreamLimits,
    strict_tools: bool,
}

impl fmt::Debug for OpenAiCompatibleModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpenAiCompatibleModel")
            .field("endpoint", &self.endpoint)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field("model", &self.model)
            .field("timeout", &self.timeout)
            .field("max_retries", &self.max_retries)
            .field("backoff_base", &self.backoff_base)
            .field("max_backoff", &self.max_backoff)
            .field("limits", &self.limits)
            .field("strict_tools", &self.strict_tools)
            .finish()
    }
}

/// Builder of [`OpenAiCompatibleModel`]; see [`OpenAiCompatibleModel::builder`].
#[derive(Clone)]
pub struct OpenAiCompatibleModelBuilder {
    base_url: String,
    api_key: Option<String>,
    model: String,
    timeout: Duration,
    max_retries: u32,
    backoff_base: Duration,
    max_backoff: Duration,
    limits: StreamLimits,
    client: Option<reqwest::Client>,
    strict_tools: bool,
}

impl fmt::Debug for OpenAiCompatibleModelBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpenAiCompatibleModelBuilder")
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field("model", &self.model)
            .field("timeout", &self.timeout)
            .field("max_retries", &self.max_retries)
            .field("backoff_base", &self.backoff_base)
            .field("max_backoff", &self.max_backoff)
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

impl Default for OpenAiCompatibleModelBuilder {
    fn default() -> Self {
        Self {
            base_url: DEFAULT_BASE_URL.to_owned(),
            api_key: None,
            model: DEFAULT_MODEL.to_owned(),
            timeout: DEFAULT_TIMEOUT,
            max_retries: DEFAULT_MAX_RETRIES,
            backoff_base: DEFAULT_BACKOFF_BASE,
            max_backoff: DEFAULT_MAX_BACKOFF,
            limits: StreamLimits::default(),
            client: None,
            strict_tools: false,
        }
    }
}

impl OpenAiCompatibleModelBuilder {
    /// Base URL up to and excluding `/chat/completions`
    /// (default [`DEFAULT_BASE_URL`]).
    pub fn base_url(mut self, base_url: impl Into<String>) -> Self {
        self.base_url = base_url.into();
        self
    }

    /// Bearer token sent as `Authorization: Bearer …` (none by default, which suits
    /// local servers).
    pub fn api_key(mut self, api_key: impl Into<String>) -> Self {
        self.api_key = Some(api_key.into());
        self
    }

    /// Model name sent in every request (default [`DEFAULT_MODEL`]).
    pub fn model(mut self, model: impl Into<String>) -> Self {
        self.model = model.into();
        self
    }

    /// Timeout of one attempt; for streams, of the head and of each chunk (default 60 s).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Retries after the first attempt (default 2; `0` disables retries).
    pub fn max_retries(mut self, max_retries: u32) -> Self {
        self.max_retries = max_retries;
        self
    }

    /// Delay before the first retry, doubled for each further one (default 500 ms).
    pub fn backoff_base(mut self, backoff_base: Duration) -> Self {
        self.backoff_base = backoff_base;
        self
    }

    /// Upper bound of one retry delay, `Retry-After` included (default 30 s).
    pub fn max_backoff(mut self, max_backoff: Duration) -> Self {
        self.max_backoff = max_backoff;
        self
    }

    /// Bounds of every streamed response (see [`StreamLimits`]; defaults: 10 min, 1 MiB per
    /// event, 32 MiB in all).
    pub fn stream_limits(mut self, limits: StreamLimits) -> Self {
        self.limits = limits;
        self
    }

    /// Sends every tool with `"strict": true` and the strict variant of its parameters
    /// schema ([`strict_schema`](crate::dto::strict_schema): `additionalProperties: false`,
    /// every property required, an `Option` field nullable), so the model's arguments follow
    /// the schema exactly (default off). The DTOs decode the `null` a strict model sends for
    /// an optional field as `None`. Map and `#[json]` fields have no strict form: OpenAI
    /// rejects tools with them in strict mode.
    pub fn strict_tools(mut self, on: bool) -> Self {
        self.strict_tools = on;
        self
    }

    /// Uses this `reqwest::Client` (e.g. with a proxy) instead of a new one.
    pub fn http_client(mut self, client: reqwest::Client) -> Self {
        self.client = Some(client);
        self
    }

    /// Builds the model.
    ///
    /// Fails with [`ModelError::Config`] when the base URL is not `http(s)://…`, the model
    /// name is empty, the API key cannot be sent as a header, or the HTTP client cannot be
    /// created.
    pub fn build(self) -> Result<OpenAiCompatibleModel, ModelError> {
        let base = self.base_url.trim().trim_end_matches('/');
        let parsed = reqwest::Url::parse(base)
            .map_err(|e| ModelError::config(format!("invalid base URL {base:?}: {e}")))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(ModelError::config(format!(
                "base URL {base:?} must start with http:// or https://"
            )));
        }
        if self.model.trim().is_empty() {
            return Err(ModelError::config("model name is empty"));
        }
        if let Some(key) = &self.api_key {
            HeaderValue::from_str(&format!("Bearer {key}")).map_err(|_| {
                ModelError::config("API key contains characters not allowed in a header")
            })?;
        }
        let client = match self.client {
            Some(c) => c,
            None => reqwest::Client::builder()
                .connect_timeout(self.timeout)
                .build()
                .map_err(|e| ModelError::config(format!("cannot build HTTP client: {e}")))?,
        };
        Ok(OpenAiCompatibleModel {
            client,
            endpoint: format!("{base}/chat/completions"),
            api_key: self.api_key,
            model: self.model,
            timeout: self.timeout,
            max_retries: self.max_retries,
            backoff_base: self.backoff_base,
            max_backoff: self.max_backoff,
            limits: self.limits,
            strict_tools: self.strict_tools,
        })
    }
}

/// Outcome of one attempt that did not produce a usable response.
struct AttemptFailure {
    error: ModelError,
    /// Delay the server asked for (429 `Retry-After`).
    retry_after: Option<Duration>,
}

impl OpenAiCompatibleModel {
    /// A builder with the defaults ([`DEFAULT_BASE_URL`], [`DEFAULT_MODEL`], 60 s
    /// timeout, 2 retries, 500 ms backoff base).
    pub fn builder() -> OpenAiCompatibleModelBuilder {
        OpenAiCompatibleModelBuilder::default()
    }

    /// A model configured from the environment:
    ///
    /// * `AGBOSS_OPENAI_BASE_URL` (default [`DEFAULT_BASE_URL`]),
    /// * `AGBOSS_OPENAI_API_KEY`, else `OPENAI_API_KEY` (required),
    /// * `AGBOSS_OPENAI_MODEL` (default [`DEFAULT_MODEL`]).
    ///
    /// Fails with [`ModelError::Config`] when no API key is set.
    pub fn from_env() -> Result<Self, ModelError> {
        Self::from_lookup(|name| std::env::var(name).ok())
    }

    /// Like [`from_env`](Self::from_env), reading variables through `lookup`
    /// (handy in tests, where changing the process environment is racy).
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, ModelError> {
        Self::builder_from_lookup(lookup)?.build()
    }

    /// The builder [`from_lookup`](Self::from_lookup) would build, to adjust further.
    pub fn builder_from_lookup(
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Result<OpenAiCompatibleModelBuilder, ModelError> {
        let get = |name: &str| lookup(name).filter(|v| !v.trim().is_empty());
        let api_key = get("AGBOSS_OPENAI_API_KEY")
            .or_else(|| get("OPENAI_API_KEY"))
            .ok_or_else(|| {
                ModelError::config("no API key: set AGBOSS_OPENAI_API_KEY or OPENAI_API_KEY")
            })?;
        let mut builder = Self::builder().api_key(api_key);
        if let Some(base) = get("AGBOSS_OPENAI_BASE_URL") {
            builder = builder.base_url(base);
        }
        if let Some(model) = get("AGBOSS_OPENAI_MODEL") {
            builder = builder.model(model);
        }
        Ok(builder)
    }

    /// The model name sent in requests.
    pub fn model_name(&self) -> &str {
        &self.model
    }

    /// The full URL requests are posted to (`{base_url}/chat/completions`).
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    fn backoff(&self, attempt: u32, retry_after: Option<Duration>) -> Duration {
        let exp = self
            .backoff_base
            .saturating_mul(2u32.saturating_pow(attempt.min(16)));
        exp.max(retry_after.unwrap_or_default())
            .min(self.max_backoff)
    }

    fn headers(&self) -> HeaderMap {
        let mut headers = HeaderMap::new();
        if let Some(key) = &self.api_key {
            // Validated in `build`.
            if let Ok(mut v) = HeaderValue::from_str(&format!("Bearer {key}")) {
                v.set_sensitive(true);
                headers.insert(reqwest::header::AUTHORIZATION, v);
            }
        }
        headers
    }

    /// Sends `body` with retries until a 2xx response head arrives.
    ///
    /// For non-streamed calls each attempt also gets reqwest's request timeout, which
    /// keeps covering the body read by the caller.
    async fn send_with_retries(
        &self,
        body: &serde_json::Value,
        streaming: bool,
    ) -> Result<reqwest::Response, ModelError> {
        let mut attempt: u32 = 0;
        loop {
            tracing::debug!(
                endpoint = %self.endpoint,
                model = %self.model,
                attempt,
                streaming,
                "sending chat completion request"
            );
            let failure = match self.attempt(body, streaming).await {
                Ok(response) => return Ok(response),
                Err(failure) => failure,
            };
            if attempt >= self.max_retries || !failure.error.is_retryable() {
                tracing::debug!(attempt, error = %failure.error, "chat completion failed");
                return Err(failure.error);
            }
            let delay = self.backoff(attempt, failure.retry_after);
            tracing::debug!(
                attempt,
                delay_ms = delay.as_millis() as u64,
                error = %failure.error,
                "retrying chat completion"
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
        let mut request = self
            .client
            .post(&self.endpoint)
            .headers(self.headers())
            .json(body);
        if streaming {
            request = request.header(reqwest::header::ACCEPT, "text/event-stream");
        } else {
            request = request.timeout(self.timeout);
        }
        let sent = match tokio::time::timeout(self.timeout, request.send()).await {
            Err(_) => Err(ModelError::Timeout {
                after: self.timeout,
            }),
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
        let retry_after = retry_after(response.headers());
        let raw = match tokio::time::timeout(self.timeout, response.bytes()).await {
            Ok(Ok(bytes)) => String::from_utf8_lossy(&bytes).into_owned(),
            _ => String::new(),
        };
        let raw = wire::truncate(&raw, MAX_ERROR_BODY).to_owned();
        let (message, error_type) = wire::parse_error_body(&raw).unwrap_or((None, None));
        let error = if status == StatusCode::TOO_MANY_REQUESTS {
            ModelError::RateLimited {
                retry_after,
                message,
            }
        } else {
            ModelError::Http {
                status: status.as_u16(),
                message: message.unwrap_or_else(|| {
                    if raw.is_empty() {
                        status.canonical_reason().unwrap_or("error").to_owned()
                    } else {
                        raw.clone()
                    }
                }),
                error_type,
                body: raw,
            }
        };
        Err(AttemptFailure { error, retry_after })
    }

    fn map_reqwest(&self, e: reqwest::Error) -> ModelError {
        if e.is_timeout() {
            ModelError::Timeout {
                after: self.timeout,
            }
        } else {
            ModelError::Transport {
                detail: error_chain(&e),
            }
        }
    }
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

/// `Retry-After` (seconds) or OpenAI's `retry-after-ms`.
fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let get = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    if let Some(ms) = get("retry-after-ms").and_then(|v| v.trim().parse::<f64>().ok())
        && ms.is_finite()
        && ms >= 0.0
    {
        return Some(Duration::from_secs_f64(ms / 1000.0));
    }
    get("retry-after")
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s >= 0.0)
        .map(Duration::from_secs_f64)
}

impl ChatModel for OpenAiCompatibleModel {
    async fn complete(&self, req: &ModelRequest) -> Result<ModelResponse, ModelError> {
        let body = wire::request_body(&self.model, req, false, self.strict_tools);
        // Reading the body of a 2xx answer is not retried: that would need buffering
        // the whole exchange inside the retry loop; timeouts there surface as errors.
        let response = self.send_with_retries(&body, false).await?;
        let bytes = response.bytes().await.map_err(|e| self.map_reqwest(e))?;
        let parsed = wire::parse_response(&bytes);
        if let Ok(r) = &parsed {
            tracing::debug!(
                finish_reason = r.finish_reason.as_str(),
                tool_calls = r.message.tool_calls.len(),
                prompt_tokens = r.usage.prompt_tokens,
                completion_tokens = r.usage.completion_tokens,
                "chat completion received"
            );
        }
        parsed
    }

    async fn stream(&self, req: &ModelRequest) -> Result<ModelStream, ModelError> {
        let body = wire::request_body(&self.model, req, true, self.strict_tools);
        let response = self.send_with_retries(&body, true).await?;
        let timeout = self.timeout;
        let bytes = response
            .bytes_stream()
            .map(move |chunk| chunk.map_err(|e| transport_error(&e, timeout)));
        let state = StreamState {
            events: SseStream::new(bytes, self.limits),
            deadline: tokio::time::Instant::now() + self.limits.deadline,
            limits: self.limits,
            decoder: wire::StreamDecoder::default(),
            pending: VecDeque::new(),
            finished: false,
            timeout: self.timeout,
        };
        Ok(Box::pin(futures::stream::unfold(state, next_event)))
    }
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

struct StreamState {
    events: SseStream,
    /// When the whole response must have ended.
    deadline: tokio::time::Instant,
    limits: StreamLimits,
    decoder: wire::StreamDecoder,
    pending: VecDeque<ModelStreamEvent>,
    /// Set after the last item (event or error) was handed out.
    finished: bool,
    timeout: Duration,
}

async fn next_event(
    mut state: StreamState,
) -> Option<(Result<ModelStreamEvent, ModelError>, StreamState)> {
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
                // End of body: fine only after [DONE] (then `finish` is Ok).
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
                tracing::debug!(error = %error, "chat completion stream failed");
                state.finished = true;
                return Some((Err(error), state));
            }
        }
    }
}

#[cfg(test)]
mod sse_tests;
