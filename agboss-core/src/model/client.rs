//! The one HTTP chat client, [`HttpChatModel<W>`], and its builder: the settings, `from_env`,
//! and [`ChatModel`] written once over a provider's [`Wire`].
use std::fmt;
use std::time::Duration;

use futures::StreamExt as _;

use super::chat::ChatModel;
use super::error::ModelError;
use super::events::event_stream;
use super::http::HttpCore;
use super::settings::{EnvConfig, HttpSettings, check_base_url};
use super::sse::StreamLimits;
use super::stream::{ModelStream, stream_from_response};
use super::types::{ModelRequest, ModelResponse, ModelStreamEvent};
use super::wire::Wire;

/// A [`ChatModel`] over HTTP speaking the wire format `W`, with bounded retries and timeouts.
/// Use it by its provider's name: [`OpenAiCompatibleModel`](super::OpenAiCompatibleModel)
/// (`HttpChatModel<OpenAiWire>`) or [`AnthropicModel`](super::AnthropicModel)
/// (`HttpChatModel<AnthropicWire>`); their pages say what each provider adds.
///
/// * 429 and 5xx answers, timeouts and connection failures are retried up to
///   `max_retries` times with jittered exponential backoff (`backoff_base * 2^attempt`, half
///   of it random, capped at `max_backoff`); a `Retry-After` (seconds or an HTTP date, or
///   `retry-after-ms`) is honoured when longer, up to `max_backoff`.
/// * Other error statuses fail at once with [`ModelError::Http`] carrying the provider's
///   `error.message` and `error.type`; a 429 after every retry is
///   [`ModelError::RateLimited`], with the server's message in its `Display`.
/// * `timeout` bounds a whole non-streamed call per attempt; for streams it bounds the
///   wait for the response head and then for every next chunk, within the
///   [`StreamLimits`].
/// * Answers are streamed (SSE) unless [`streaming(false)`](HttpChatModelBuilder::streaming)
///   says otherwise; then [`ChatModel::stream`] makes one plain request and replays it.
/// * No API key is needed for a local server: none is sent then.
#[derive(Clone)]
pub struct HttpChatModel<W> {
    core: HttpCore,
    has_key: bool,
    model: String,
    wire: W,
}

impl<W: Wire> fmt::Debug for HttpChatModel<W> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct(W::MODEL);
        d.field("endpoint", &self.core.endpoint)
            .field("api_key", &self.has_key.then_some("<redacted>"))
            .field("model", &self.model);
        self.wire.debug_fields(&mut d);
        d.field("settings", &self.core.settings).finish()
    }
}

/// Builder of [`HttpChatModel`] (of [`OpenAiCompatibleModel`](super::OpenAiCompatibleModel)
/// and [`AnthropicModel`](super::AnthropicModel)); see [`HttpChatModel::builder`].
#[derive(Clone)]
#[must_use = "a builder does nothing until `build`"]
pub struct HttpChatModelBuilder<W> {
    base_url: String,
    api_key: Option<String>,
    model: String,
    settings: HttpSettings,
    /// The provider's own options, set by its builder methods.
    pub(super) wire: W,
}

impl<W: Wire> fmt::Debug for HttpChatModelBuilder<W> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct(W::BUILDER);
        d.field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field("model", &self.model);
        self.wire.debug_fields(&mut d);
        d.field("settings", &self.settings).finish_non_exhaustive()
    }
}

impl<W: Wire> Default for HttpChatModelBuilder<W> {
    fn default() -> Self {
        Self {
            base_url: W::DEFAULT_BASE_URL.to_owned(),
            api_key: None,
            model: W::DEFAULT_MODEL.to_owned(),
            settings: HttpSettings::default(),
            wire: W::default(),
        }
    }
}

impl<W: Wire> HttpChatModelBuilder<W> {
    /// Base URL: for OpenAI up to and excluding `/chat/completions` (default
    /// [`DEFAULT_BASE_URL`](super::DEFAULT_BASE_URL)), for Anthropic without `/v1/messages`
    /// (default [`ANTHROPIC_BASE_URL`](super::ANTHROPIC_BASE_URL)).
    pub fn base_url(mut self, base_url: impl Into<String>) -> Self {
        self.base_url = base_url.into();
        self
    }

    /// The API key, sent to OpenAI as `Authorization: Bearer …`, to Anthropic as `x-api-key`
    /// (none by default, which suits local servers).
    pub fn api_key(mut self, api_key: impl Into<String>) -> Self {
        self.api_key = Some(api_key.into());
        self
    }

    /// Model name sent in every request (default [`DEFAULT_MODEL`](super::DEFAULT_MODEL),
    /// [`ANTHROPIC_DEFAULT_MODEL`](super::ANTHROPIC_DEFAULT_MODEL)).
    pub fn model(mut self, model: impl Into<String>) -> Self {
        self.model = model.into();
        self
    }

    /// Timeout of one attempt; for streams, of the head and of each chunk (default 60 s).
    pub fn timeout(mut self, timeout: Duration) -> Self {
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
    pub fn backoff_base(mut self, backoff_base: Duration) -> Self {
        self.settings.backoff_base = backoff_base;
        self
    }

    /// Upper bound of one retry delay, `Retry-After` included (default 30 s).
    pub fn max_backoff(mut self, max_backoff: Duration) -> Self {
        self.settings.max_backoff = max_backoff;
        self
    }

    /// Bounds of every streamed response (see [`StreamLimits`]; defaults: 10 min, 1 MiB per
    /// event, 32 MiB in all).
    pub fn stream_limits(mut self, limits: StreamLimits) -> Self {
        self.settings.limits = limits;
        self
    }

    /// Whether [`ChatModel::stream`] asks for a streamed answer (default `true`); with `false`
    /// it makes one plain request and replays the answer as events (for servers that cannot
    /// stream, or proxies that buffer).
    pub fn streaming(mut self, streaming: bool) -> Self {
        self.settings.streaming = streaming;
        self
    }

    /// Uses this `reqwest::Client` (e.g. with a proxy) instead of a new one.
    pub fn http_client(mut self, client: reqwest::Client) -> Self {
        self.settings.client = Some(client);
        self
    }

    /// Builds the model.
    ///
    /// Fails with [`ModelError::Config`] when the base URL is not `http(s)://…`, the model
    /// name is empty, a provider option is out of range (Anthropic's `max_tokens` 0), the API
    /// key cannot be sent as a header, or the HTTP client cannot be created.
    ///
    /// ```
    /// use agboss_core::model::AnthropicModel;
    /// let model = AnthropicModel::builder().base_url("http://127.0.0.1:9999/").build()?;
    /// assert_eq!(model.endpoint(), "http://127.0.0.1:9999/v1/messages");
    /// assert!(AnthropicModel::builder().max_tokens(0).build().is_err());
    /// # Ok::<(), agboss_core::model::ModelError>(())
    /// ```
    pub fn build(self) -> Result<HttpChatModel<W>, ModelError> {
        let base = check_base_url(&self.base_url)?;
        if self.model.trim().is_empty() {
            return Err(ModelError::config("model name is empty"));
        }
        self.wire.check()?;
        let headers = W::headers(self.api_key.as_deref())?;
        let endpoint = W::endpoint(base);
        Ok(HttpChatModel {
            core: HttpCore::new(self.settings, endpoint, headers, W::WHAT)?,
            has_key: self.api_key.is_some(),
            model: self.model,
            wire: self.wire,
        })
    }
}

impl<W: Wire> HttpChatModel<W> {
    /// A builder with the defaults (the provider's base URL and model, 60 s timeout,
    /// 2 retries, 500 ms backoff base, streaming; Anthropic: 4096 `max_tokens`).
    pub fn builder() -> HttpChatModelBuilder<W> {
        HttpChatModelBuilder::default()
    }

    /// A model configured from the environment, `P` being `AGBOSS_OPENAI` for
    /// [`OpenAiCompatibleModel`](super::OpenAiCompatibleModel) and `AGBOSS_ANTHROPIC` for
    /// [`AnthropicModel`](super::AnthropicModel):
    ///
    /// * `P_BASE_URL` (default: the provider's),
    /// * `P_API_KEY`, else `OPENAI_API_KEY` / `ANTHROPIC_API_KEY`: required for the default
    ///   base URL; with a base URL of your own (a local server) it may be missing, and none
    ///   is sent,
    /// * `P_MODEL` (default: the provider's),
    /// * `P_STREAM` (`false`/`0`/`no`/`off` turns streaming off; default on).
    ///
    /// Fails with [`ModelError::Config`] when no API key is set for the default base URL.
    pub fn from_env() -> Result<Self, ModelError> {
        Self::from_lookup(|name| std::env::var(name).ok())
    }

    /// Like [`from_env`](Self::from_env), reading variables through `lookup`
    /// (handy in tests, where changing the process environment is racy).
    ///
    /// ```
    /// use agboss_core::model::{AnthropicModel, OpenAiCompatibleModel};
    /// let model = OpenAiCompatibleModel::from_lookup(|name| match name {
    ///     "AGBOSS_OPENAI_BASE_URL" => Some("http://127.0.0.1:9999/v1".into()),
    ///     "AGBOSS_OPENAI_STREAM" => Some("false".into()),
    ///     _ => None,
    /// })?;
    /// assert_eq!(model.endpoint(), "http://127.0.0.1:9999/v1/chat/completions");
    /// assert!(!model.is_streaming());
    /// let model = AnthropicModel::from_lookup(|name| match name {
    ///     "AGBOSS_ANTHROPIC_BASE_URL" => Some("http://127.0.0.1:9999".into()),
    ///     "AGBOSS_ANTHROPIC_STREAM" => Some("off".into()),
    ///     _ => None,
    /// })?;
    /// assert!(!model.is_streaming());
    /// assert!(AnthropicModel::from_lookup(|_| None).is_err(), "the real API needs a key");
    /// # Ok::<(), agboss_core::model::ModelError>(())
    /// ```
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, ModelError> {
        Self::builder_from_lookup(lookup)?.build()
    }

    /// The builder [`from_lookup`](Self::from_lookup) would build, to adjust further.
    pub fn builder_from_lookup(
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Result<HttpChatModelBuilder<W>, ModelError> {
        let env = EnvConfig::read(lookup, W::ENV_PREFIX, W::KEY_FALLBACK)?;
        let mut builder = Self::builder().streaming(env.streaming);
        if let Some(key) = env.api_key {
            builder = builder.api_key(key);
        }
        if let Some(base) = env.base_url {
            builder = builder.base_url(base);
        }
        if let Some(model) = env.model {
            builder = builder.model(model);
        }
        Ok(builder)
    }

    /// The model name sent in requests.
    pub fn model_name(&self) -> &str {
        &self.model
    }

    /// The full URL requests are posted to (OpenAI: `{base_url}/chat/completions`,
    /// Anthropic: `{base_url}/v1/messages`).
    pub fn endpoint(&self) -> &str {
        &self.core.endpoint
    }

    /// Whether [`ChatModel::stream`] asks for a streamed answer.
    pub fn is_streaming(&self) -> bool {
        self.core.settings.streaming
    }
}

impl<W: Wire> ChatModel for HttpChatModel<W> {
    fn model_name(&self) -> &str {
        &self.model
    }

    fn provider_name(&self) -> &'static str {
        W::PROVIDER
    }

    async fn complete(&self, req: &ModelRequest) -> Result<ModelResponse, ModelError> {
        let body = self.wire.request_body(&self.model, req, false);
        let response = self.core.send_with_retries(&body, false).await?;
        let bytes = self.core.read_body(response).await?;
        let parsed = W::parse_response(bytes.as_ref()).map(|r| match req.output {
            Some(_) => W::read_output(r),
            None => r,
        });
        if let Ok(r) = &parsed {
            tracing::debug!(
                finish_reason = r.finish_reason.as_str(),
                tool_calls = r.message.tool_calls.len(),
                prompt_tokens = r.usage.prompt_tokens,
                completion_tokens = r.usage.completion_tokens,
                "{} received",
                W::WHAT
            );
        }
        parsed
    }

    /// True when the client streams (see its streaming switch).
    fn streams(&self) -> bool {
        self.core.settings.streaming
    }

    /// True: both wires ask for a typed answer in the provider's own mode.
    fn structured_output(&self) -> bool {
        true
    }

    async fn stream(&self, req: &ModelRequest) -> Result<ModelStream, ModelError> {
        if !self.core.settings.streaming {
            return Ok(stream_from_response(self.complete(req).await?, 0));
        }
        let body = self.wire.request_body(&self.model, req, true);
        let response = self.core.send_with_retries(&body, true).await?;
        let events = event_stream(
            response,
            W::Decoder::default(),
            &self.core.settings,
            W::WHAT,
        );
        if req.output.is_none() {
            return Ok(events);
        }
        Ok(Box::pin(events.map(|event| match event {
            Ok(ModelStreamEvent::Finished(r)) => Ok(ModelStreamEvent::Finished(W::read_output(r))),
            other => other,
        })))
    }
}
