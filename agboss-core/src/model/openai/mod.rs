//! A client of OpenAI's Chat Completions API and compatible servers.

mod wire;

pub(crate) use wire::StreamDecoder;

use std::fmt;

use reqwest::header::{HeaderMap, HeaderValue};

use super::http::{EnvConfig, HttpCore, HttpSettings, check_base_url};
use super::{
    ChatModel, ModelError, ModelRequest, ModelResponse, ModelStream, stream_from_response,
};

/// Default base URL of [`OpenAiCompatibleModel`].
pub const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";
/// Default model name of [`OpenAiCompatibleModel`].
pub const DEFAULT_MODEL: &str = "gpt-4o-mini";

/// A [`ChatModel`] speaking OpenAI's Chat Completions wire format
/// (`POST {base_url}/chat/completions`), with bounded retries and timeouts.
///
/// * 429 and 5xx answers, timeouts and connection failures are retried up to
///   `max_retries` times with jittered exponential backoff (`backoff_base * 2^attempt`, half
///   of it random, capped at `max_backoff`); a `Retry-After` (seconds or an HTTP date, or
///   `retry-after-ms`) is honoured when longer, up to `max_backoff`.
/// * Other error statuses fail at once with [`ModelError::Http`] carrying the provider's
///   `error.message` and `error.type`; a 429 after every retry is
///   [`ModelError::RateLimited`], with the server's message in its `Display`.
/// * `timeout` bounds a whole non-streamed call per attempt; for streams it bounds the
///   wait for the response head and then for every next chunk.
/// * Answers are streamed (SSE) unless [`streaming(false)`](OpenAiCompatibleModelBuilder::streaming)
///   says otherwise; then [`ChatModel::stream`] makes one plain request and replays it.
/// * No API key is needed for a local server: none is sent then.
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
///     .streaming(false)
///     .build()?;
/// let answer = model.complete(&ModelRequest::new([Message::user("Hello!")])).await?;
/// println!("{:?}", answer.message.content);
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct OpenAiCompatibleModel {
    core: HttpCore,
    has_key: bool,
    model: String,
    strict_tools: bool,
}

impl fmt::Debug for OpenAiCompatibleModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpenAiCompatibleModel")
            .field("endpoint", &self.core.endpoint)
            .field("api_key", &self.has_key.then_some("<redacted>"))
            .field("model", &self.model)
            .field("settings", &self.core.settings)
            .field("strict_tools", &self.strict_tools)
            .finish()
    }
}

/// Builder of [`OpenAiCompatibleModel`]; see [`OpenAiCompatibleModel::builder`].
#[derive(Clone)]
#[must_use = "a builder does nothing until `build`"]
pub struct OpenAiCompatibleModelBuilder {
    base_url: String,
    api_key: Option<String>,
    model: String,
    settings: HttpSettings,
    strict_tools: bool,
}

impl fmt::Debug for OpenAiCompatibleModelBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpenAiCompatibleModelBuilder")
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field("model", &self.model)
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

impl Default for OpenAiCompatibleModelBuilder {
    fn default() -> Self {
        Self {
            base_url: DEFAULT_BASE_URL.to_owned(),
            api_key: None,
            model: DEFAULT_MODEL.to_owned(),
            settings: HttpSettings::default(),
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

    super::http::http_settings_setters!();

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

    /// Builds the model.
    ///
    /// Fails with [`ModelError::Config`] when the base URL is not `http(s)://…`, the model
    /// name is empty, the API key cannot be sent as a header, or the HTTP client cannot be
    /// created.
    pub fn build(self) -> Result<OpenAiCompatibleModel, ModelError> {
        let base = check_base_url(&self.base_url)?;
        if self.model.trim().is_empty() {
            return Err(ModelError::config("model name is empty"));
        }
        let mut headers = HeaderMap::new();
        if let Some(key) = &self.api_key {
            let mut value = HeaderValue::from_str(&format!("Bearer {key}")).map_err(|_| {
                ModelError::config("API key contains characters not allowed in a header")
            })?;
            value.set_sensitive(true);
            headers.insert(reqwest::header::AUTHORIZATION, value);
        }
        let endpoint = format!("{base}/chat/completions");
        Ok(OpenAiCompatibleModel {
            core: HttpCore::new(self.settings, endpoint, headers, "chat completion")?,
            has_key: self.api_key.is_some(),
            model: self.model,
            strict_tools: self.strict_tools,
        })
    }
}

impl OpenAiCompatibleModel {
    /// A builder with the defaults ([`DEFAULT_BASE_URL`], [`DEFAULT_MODEL`], 60 s
    /// timeout, 2 retries, 500 ms backoff base, streaming).
    pub fn builder() -> OpenAiCompatibleModelBuilder {
        OpenAiCompatibleModelBuilder::default()
    }

    /// A model configured from the environment:
    ///
    /// * `AGBOSS_OPENAI_BASE_URL` (default [`DEFAULT_BASE_URL`]),
    /// * `AGBOSS_OPENAI_API_KEY`, else `OPENAI_API_KEY`: required for the default base URL;
    ///   with a base URL of your own (a local server) it may be missing, and none is sent,
    /// * `AGBOSS_OPENAI_MODEL` (default [`DEFAULT_MODEL`]),
    /// * `AGBOSS_OPENAI_STREAM` (`false`/`0`/`no`/`off` turns streaming off; default on).
    ///
    /// Fails with [`ModelError::Config`] when no API key is set for the default base URL.
    pub fn from_env() -> Result<Self, ModelError> {
        Self::from_lookup(|name| std::env::var(name).ok())
    }

    /// Like [`from_env`](Self::from_env), reading variables through `lookup`
    /// (handy in tests, where changing the process environment is racy).
    ///
    /// ```
    /// use agboss_core::model::OpenAiCompatibleModel;
    /// let model = OpenAiCompatibleModel::from_lookup(|name| match name {
    ///     "AGBOSS_OPENAI_BASE_URL" => Some("http://127.0.0.1:9999/v1".into()),
    ///     "AGBOSS_OPENAI_STREAM" => Some("false".into()),
    ///     _ => None,
    /// })?;
    /// assert_eq!(model.endpoint(), "http://127.0.0.1:9999/v1/chat/completions");
    /// assert!(!model.is_streaming());
    /// # Ok::<(), agboss_core::model::ModelError>(())
    /// ```
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, ModelError> {
        Self::builder_from_lookup(lookup)?.build()
    }

    /// The builder [`from_lookup`](Self::from_lookup) would build, to adjust further.
    pub fn builder_from_lookup(
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Result<OpenAiCompatibleModelBuilder, ModelError> {
        let env = EnvConfig::read(lookup, "AGBOSS_OPENAI", "OPENAI_API_KEY")?;
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

    /// The full URL requests are posted to (`{base_url}/chat/completions`).
    pub fn endpoint(&self) -> &str {
        &self.core.endpoint
    }

    /// Whether [`ChatModel::stream`] asks for a streamed answer.
    pub fn is_streaming(&self) -> bool {
        self.core.settings.streaming
    }
}

impl ChatModel for OpenAiCompatibleModel {
    fn model_name(&self) -> &str {
        &self.model
    }

    fn provider_name(&self) -> &'static str {
        "openai"
    }

    async fn complete(&self, req: &ModelRequest) -> Result<ModelResponse, ModelError> {
        let body = wire::request_body(&self.model, req, false, self.strict_tools);
        let response = self.core.send_with_retries(&body, false).await?;
        let bytes = self.core.read_body(response).await?;
        let parsed = wire::parse_response(bytes.as_ref());
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

    /// True when the client streams (see its streaming switch).
    fn streams(&self) -> bool {
        self.core.settings.streaming
    }

    async fn stream(&self, req: &ModelRequest) -> Result<ModelStream, ModelError> {
        if !self.core.settings.streaming {
            return Ok(stream_from_response(self.complete(req).await?, 0));
        }
        let body = wire::request_body(&self.model, req, true, self.strict_tools);
        let response = self.core.send_with_retries(&body, true).await?;
        Ok(self
            .core
            .event_stream(response, wire::StreamDecoder::default()))
    }
}

#[cfg(test)]
mod sse_tests;
