//! A client of Anthropic's Messages API (`POST {base_url}/v1/messages`).

mod wire;

use std::fmt;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};

use super::http::{EnvConfig, HttpCore, HttpSettings, check_base_url};
use super::{
    ChatModel, ModelError, ModelRequest, ModelResponse, ModelStream, stream_from_response,
};

/// Default base URL of [`AnthropicModel`] (the path `/v1/messages` is appended).
pub const ANTHROPIC_BASE_URL: &str = "https://api.anthropic.com";
/// Default model of [`AnthropicModel`].
pub const ANTHROPIC_DEFAULT_MODEL: &str = "claude-sonnet-4-5";
/// The `anthropic-version` header sent with every request.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";
/// `max_tokens` of a request that sets none (the Messages API requires one).
pub const ANTHROPIC_DEFAULT_MAX_TOKENS: u32 = 4096;

/// A [`ChatModel`] speaking Anthropic's Messages API, with the same retries, timeouts, stream
/// bounds and typed errors as [`OpenAiCompatibleModel`](crate::model::OpenAiCompatibleModel).
///
/// * Tools are sent as `tools` (`input_schema`); the model's `tool_use` blocks become
///   [`ToolCallRequest`](crate::model::ToolCallRequest)s, and tool observations go back as
///   `tool_result` blocks (with `is_error`) of the next user turn. System messages become
///   the `system` field.
/// * Streams decode the typed events (`message_start`, `content_block_start`,
///   `content_block_delta` with `text_delta` or `input_json_delta`, `message_delta`,
///   `message_stop`, `error`); `ping` and unknown events are skipped.
/// * `stop_reason`: `end_turn` / `stop_sequence` → [`FinishReason::Stop`](crate::model::FinishReason::Stop),
///   `tool_use` → `ToolCalls`, `max_tokens` → `Length`, `refusal` → `ContentFilter`, others
///   kept verbatim. Usage: input tokens (cache reads and writes included) and output tokens.
/// * 429, 5xx (529 `overloaded_error` too), timeouts and connection failures are retried with
///   jittered exponential backoff, honouring `Retry-After` (seconds or an HTTP date); errors
///   carry the server's `error.message` and `error.type`.
///
/// ```no_run
/// use agboss_core::model::{AnthropicModel, ChatModel, Message, ModelRequest};
///
/// # async fn run() -> Result<(), agboss_core::model::ModelError> {
/// let model = AnthropicModel::builder()
///     .api_key("sk-ant-…")
///     .model("claude-sonnet-4-5")
///     .max_tokens(1024)
///     .build()?;
/// let answer = model.complete(&ModelRequest::new([Message::user("Hello!")])).await?;
/// println!("{:?}", answer.message.content);
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct AnthropicModel {
    core: HttpCore,
    has_key: bool,
    model: String,
    max_tokens: u32,
}

impl fmt::Debug for AnthropicModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AnthropicModel")
            .field("endpoint", &self.core.endpoint)
            .field("api_key", &self.has_key.then_some("<redacted>"))
            .field("model", &self.model)
            .field("max_tokens", &self.max_tokens)
            .field("settings", &self.core.settings)
            .finish()
    }
}

/// Builder of [`AnthropicModel`]; see [`AnthropicModel::builder`].
#[derive(Clone)]
#[must_use = "a builder does nothing until `build`"]
pub struct AnthropicModelBuilder {
    base_url: String,
    api_key: Option<String>,
    model: String,
    max_tokens: u32,
    settings: HttpSettings,
}

impl fmt::Debug for AnthropicModelBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AnthropicModelBuilder")
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field("model", &self.model)
            .field("max_tokens", &self.max_tokens)
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

impl Default for AnthropicModelBuilder {
    fn default() -> Self {
        Self {
            base_url: ANTHROPIC_BASE_URL.to_owned(),
            api_key: None,
            model: ANTHROPIC_DEFAULT_MODEL.to_owned(),
            max_tokens: ANTHROPIC_DEFAULT_MAX_TOKENS,
            settings: HttpSettings::default(),
        }
    }
}

impl AnthropicModelBuilder {
    /// Base URL without `/v1/messages` (default [`ANTHROPIC_BASE_URL`]).
    pub fn base_url(mut self, base_url: impl Into<String>) -> Self {
        self.base_url = base_url.into();
        self
    }

    /// The key sent as `x-api-key` (none by default, which suits local servers).
    pub fn api_key(mut self, api_key: impl Into<String>) -> Self {
        self.api_key = Some(api_key.into());
        self
    }

    /// Model name sent in every request (default [`ANTHROPIC_DEFAULT_MODEL`]).
    pub fn model(mut self, model: impl Into<String>) -> Self {
        self.model = model.into();
        self
    }

    /// `max_tokens` of requests that set none (default [`ANTHROPIC_DEFAULT_MAX_TOKENS`]).
    pub fn max_tokens(mut self, max_tokens: u32) -> Self {
        self.max_tokens = max_tokens;
        self
    }

    super::http::http_settings_setters!();

    /// Builds the model.
    ///
    /// Fails with [`ModelError::Config`] when the base URL is not `http(s)://…`, the model
    /// name is empty, `max_tokens` is 0, the API key cannot be sent as a header, or the HTTP
    /// client cannot be created.
    ///
    /// ```
    /// use agboss_core::model::AnthropicModel;
    /// let model = AnthropicModel::builder().base_url("http://127.0.0.1:9999/").build()?;
    /// assert_eq!(model.endpoint(), "http://127.0.0.1:9999/v1/messages");
    /// assert!(AnthropicModel::builder().max_tokens(0).build().is_err());
    /// # Ok::<(), agboss_core::model::ModelError>(())
    /// ```
    pub fn build(self) -> Result<AnthropicModel, ModelError> {
        let base = check_base_url(&self.base_url)?;
        if self.model.trim().is_empty() {
            return Err(ModelError::config("model name is empty"));
        }
        if self.max_tokens == 0 {
            return Err(ModelError::config("max_tokens must be at least 1"));
        }
        let mut headers = HeaderMap::new();
        headers.insert(
            HeaderName::from_static("anthropic-version"),
            HeaderValue::from_static(ANTHROPIC_VERSION),
        );
        if let Some(key) = &self.api_key {
            let mut value = HeaderValue::from_str(key).map_err(|_| {
                ModelError::config("API key contains characters not allowed in a header")
            })?;
            value.set_sensitive(true);
            headers.insert(HeaderName::from_static("x-api-key"), value);
        }
        let endpoint = format!("{base}/v1/messages");
        Ok(AnthropicModel {
            core: HttpCore::new(self.settings, endpoint, headers, "Anthropic messages")?,
            has_key: self.api_key.is_some(),
            model: self.model,
            max_tokens: self.max_tokens,
        })
    }
}

impl AnthropicModel {
    /// A builder with the defaults ([`ANTHROPIC_BASE_URL`], [`ANTHROPIC_DEFAULT_MODEL`],
    /// 4096 `max_tokens`, 60 s timeout, 2 retries, 500 ms backoff base, streaming).
    pub fn builder() -> AnthropicModelBuilder {
        AnthropicModelBuilder::default()
    }

    /// A model configured from the environment:
    ///
    /// * `AGBOSS_ANTHROPIC_BASE_URL` (default [`ANTHROPIC_BASE_URL`]),
    /// * `AGBOSS_ANTHROPIC_API_KEY`, else `ANTHROPIC_API_KEY`: required for the default base
    ///   URL; with a base URL of your own (a local server) it may be missing,
    /// * `AGBOSS_ANTHROPIC_MODEL` (default [`ANTHROPIC_DEFAULT_MODEL`]),
    /// * `AGBOSS_ANTHROPIC_STREAM` (`false`/`0`/`no`/`off` turns streaming off; default on).
    ///
    /// Fails with [`ModelError::Config`] when no API key is set for the default base URL.
    pub fn from_env() -> Result<Self, ModelError> {
        Self::from_lookup(|name| std::env::var(name).ok())
    }

    /// Like [`from_env`](Self::from_env), reading variables through `lookup`.
    ///
    /// ```
    /// use agboss_core::model::AnthropicModel;
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
    ) -> Result<AnthropicModelBuilder, ModelError> {
        let env = EnvConfig::read(lookup, "AGBOSS_ANTHROPIC", "ANTHROPIC_API_KEY")?;
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

    /// The full URL requests are posted to (`{base_url}/v1/messages`).
    pub fn endpoint(&self) -> &str {
        &self.core.endpoint
    }

    /// Whether [`ChatModel::stream`] asks for a streamed answer.
    pub fn is_streaming(&self) -> bool {
        self.core.settings.streaming
    }
}

impl ChatModel for AnthropicModel {
    fn model_name(&self) -> &str {
        &self.model
    }

    fn provider_name(&self) -> &'static str {
        "anthropic"
    }

    async fn complete(&self, req: &ModelRequest) -> Result<ModelResponse, ModelError> {
        let body = wire::request_body(&self.model, self.max_tokens, req, false);
        let response = self.core.send_with_retries(&body, false).await?;
        let bytes = self.core.read_body(response).await?;
        wire::parse_response(bytes.as_ref())
    }

    /// True when the client streams (see its streaming switch).
    fn streams(&self) -> bool {
        self.core.settings.streaming
    }

    async fn stream(&self, req: &ModelRequest) -> Result<ModelStream, ModelError> {
        if !self.core.settings.streaming {
            return Ok(stream_from_response(self.complete(req).await?, 0));
        }
        let body = wire::request_body(&self.model, self.max_tokens, req, true);
        let response = self.core.send_with_retries(&body, true).await?;
        Ok(self
            .core
            .event_stream(response, wire::StreamDecoder::default()))
    }
}
