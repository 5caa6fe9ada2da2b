//! A client of OpenAI's Chat Completions API and compatible servers: the wire of the one HTTP
//! chat client.

mod wire;

use std::fmt;

use reqwest::header::{AUTHORIZATION, HeaderMap};
use serde_json::Value;

use super::client::{HttpChatModel, HttpChatModelBuilder};
use super::error::ModelError;
use super::events::SseDecoder as _;
use super::http::secret_header;
use super::sse::{SseStream, StreamLimits};
use super::types::{ModelRequest, ModelResponse, ModelStreamEvent};
use super::wire::Codec;

/// Default base URL of [`OpenAiCompatibleModel`].
pub const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";
/// Default model name of [`OpenAiCompatibleModel`].
pub const DEFAULT_MODEL: &str = "gpt-4o-mini";

/// A [`ChatModel`](crate::model::ChatModel) speaking OpenAI's Chat Completions wire format
/// (`POST {base_url}/chat/completions`), also to compatible servers (vLLM, Ollama, LiteLLM,
/// …): the one [`HttpChatModel`] over [`OpenAiWire`], with its bounded retries, timeouts,
/// bounded streams and typed errors (see there).
///
/// * The key goes as `Authorization: Bearer …`; with none (a local server), none is sent.
/// * Tools are sent as `function` tools, in strict mode with
///   [`strict_tools`](HttpChatModelBuilder::strict_tools); a refusal is the answer's text.
/// * A request's [`output`](crate::model::ModelRequest::output) is sent as `response_format`
///   `{"type": "json_schema", "json_schema": {"name", "schema", "strict": true}}`, the schema
///   in its [strict variant](crate::dto::strict_schema).
/// * Streams ask for the usage (`stream_options.include_usage`) and end at `data: [DONE]`;
///   tool-call fragments are assembled by index.
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
pub type OpenAiCompatibleModel = HttpChatModel<OpenAiWire>;

/// Builder of [`OpenAiCompatibleModel`]; see [`OpenAiCompatibleModel::builder`].
pub type OpenAiCompatibleModelBuilder = HttpChatModelBuilder<OpenAiWire>;

/// OpenAI's Chat Completions wire format (`POST {base_url}/chat/completions`, a bearer key),
/// the `W` of [`OpenAiCompatibleModel`]; it holds the option only OpenAI has,
/// [`strict_tools`](HttpChatModelBuilder::strict_tools).
#[derive(Clone, Debug, Default)]
pub struct OpenAiWire {
    strict_tools: bool,
}

impl Codec for OpenAiWire {
    const MODEL: &'static str = "OpenAiCompatibleModel";
    const BUILDER: &'static str = "OpenAiCompatibleModelBuilder";
    const PROVIDER: &'static str = "openai";
    const WHAT: &'static str = "chat completion";
    const DEFAULT_BASE_URL: &'static str = DEFAULT_BASE_URL;
    const DEFAULT_MODEL: &'static str = DEFAULT_MODEL;
    const ENV_PREFIX: &'static str = "AGBOSS_OPENAI";
    const KEY_FALLBACK: &'static str = "OPENAI_API_KEY";

    type Decoder = wire::StreamDecoder;

    fn endpoint(base: &str) -> String {
        format!("{base}/chat/completions")
    }

    fn headers(api_key: Option<&str>) -> Result<HeaderMap, ModelError> {
        let mut headers = HeaderMap::new();
        if let Some(key) = api_key {
            headers.insert(AUTHORIZATION, secret_header(&format!("Bearer {key}"))?);
        }
        Ok(headers)
    }

    fn request_body(&self, model: &str, req: &ModelRequest, stream: bool) -> Value {
        wire::request_body(model, req, stream, self.strict_tools)
    }

    fn parse_response(body: &[u8]) -> Result<ModelResponse, ModelError> {
        wire::parse_response(body)
    }

    fn debug_fields(&self, f: &mut fmt::DebugStruct<'_, '_>) {
        f.field("strict_tools", &self.strict_tools);
    }
}

impl HttpChatModelBuilder<OpenAiWire> {
    /// Sends every tool with `"strict": true` and the strict variant of its parameters
    /// schema ([`strict_schema`](crate::dto::strict_schema): `additionalProperties: false`,
    /// every property required, an `Option` field nullable), so the model's arguments follow
    /// the schema exactly (default off). The DTOs decode the `null` a strict model sends for
    /// an optional field as `None`. Map and `#[json]` fields have no strict form: OpenAI
    /// rejects tools with them in strict mode.
    pub fn strict_tools(mut self, on: bool) -> Self {
        self.wire.strict_tools = on;
        self
    }
}

/// Decodes an OpenAI-style streamed body delivered in `chunks`, as the client does: the
/// events decoded, then how the body ended (the first error, if any). The entry point of the
/// SSE unit tests, the stream fuzz target and its corpus replay.
pub fn decode_openai_chunks(
    chunks: Vec<Vec<u8>>,
) -> (Vec<ModelStreamEvent>, Result<(), ModelError>) {
    use futures::StreamExt as _;
    futures::executor::block_on(async {
        let mut events = SseStream::new(
            futures::stream::iter(chunks.into_iter().map(Ok::<_, ModelError>)),
            StreamLimits::default(),
        );
        let mut decoder = wire::StreamDecoder::default();
        let mut out = Vec::new();
        while let Some(event) = events.next().await {
            let decoded = event.and_then(|event| decoder.on_event(&event.data, &mut out));
            if decoded.is_err() || decoder.is_done() {
                return (out, decoded);
            }
        }
        let end = decoder.finish(events.ended_mid_event());
        (out, end)
    })
}

#[cfg(test)]
mod sse_tests;
