//! A client of Anthropic's Messages API (`POST {base_url}/v1/messages`): the wire of the one
//! HTTP chat client.

mod wire;

use std::fmt;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde_json::Value;

use super::client::{HttpChatModel, HttpChatModelBuilder};
use super::error::ModelError;
use super::http::secret_header;
use super::types::{ModelRequest, ModelResponse};
use super::wire::Codec;

/// Default base URL of [`AnthropicModel`] (the path `/v1/messages` is appended).
pub const ANTHROPIC_BASE_URL: &str = "https://api.anthropic.com";
/// Default model of [`AnthropicModel`].
pub const ANTHROPIC_DEFAULT_MODEL: &str = "claude-sonnet-4-5";
/// The `anthropic-version` header sent with every request.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";
/// `max_tokens` of a request that sets none (the Messages API requires one).
pub const ANTHROPIC_DEFAULT_MAX_TOKENS: u32 = 4096;

/// A [`ChatModel`](crate::model::ChatModel) speaking Anthropic's Messages API: the one
/// [`HttpChatModel`] over [`AnthropicWire`], with the same retries, timeouts, stream bounds
/// and typed errors as [`OpenAiCompatibleModel`](crate::model::OpenAiCompatibleModel).
///
/// * The key goes as `x-api-key`, with `anthropic-version` [`ANTHROPIC_VERSION`]; requests that set no
///   `max_tokens` get the builder's [`max_tokens`](HttpChatModelBuilder::max_tokens).
///
/// * Tools are sent as `tools` (`input_schema`); the model's `tool_use` blocks become
///   [`ToolCallRequest`](crate::model::ToolCallRequest)s, and tool observations go back as
///   `tool_result` blocks (with `is_error`) of the next user turn. System messages become
///   the `system` field.
/// * A request's [`output`](crate::model::ModelRequest::output) is asked for through a tool,
///   [`OUTPUT_TOOL`](crate::model::OUTPUT_TOOL), with the answer's schema as its
///   `input_schema`, forced (`tool_choice` `{"type":"tool"}`, or `{"type":"any"}` beside the
///   request's own tools); its `tool_use` input comes back as the answer's text, never as a
///   tool call.
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
pub type AnthropicModel = HttpChatModel<AnthropicWire>;

/// Builder of [`AnthropicModel`]; see [`AnthropicModel::builder`].
pub type AnthropicModelBuilder = HttpChatModelBuilder<AnthropicWire>;

/// Anthropic's Messages wire format (`POST {base_url}/v1/messages`, `x-api-key`,
/// `anthropic-version`), the `W` of [`AnthropicModel`]; it holds the option only Anthropic
/// has, the default [`max_tokens`](HttpChatModelBuilder::max_tokens).
#[derive(Clone, Debug)]
pub struct AnthropicWire {
    max_tokens: u32,
}

impl Default for AnthropicWire {
    fn default() -> Self {
        Self {
            max_tokens: ANTHROPIC_DEFAULT_MAX_TOKENS,
        }
    }
}

impl Codec for AnthropicWire {
    const MODEL: &'static str = "AnthropicModel";
    const BUILDER: &'static str = "AnthropicModelBuilder";
    const PROVIDER: &'static str = "anthropic";
    const WHAT: &'static str = "Anthropic messages";
    const DEFAULT_BASE_URL: &'static str = ANTHROPIC_BASE_URL;
    const DEFAULT_MODEL: &'static str = ANTHROPIC_DEFAULT_MODEL;
    const ENV_PREFIX: &'static str = "AGBOSS_ANTHROPIC";
    const KEY_FALLBACK: &'static str = "ANTHROPIC_API_KEY";

    type Decoder = wire::StreamDecoder;

    fn endpoint(base: &str) -> String {
        format!("{base}/v1/messages")
    }

    fn headers(api_key: Option<&str>) -> Result<HeaderMap, ModelError> {
        let mut headers = HeaderMap::new();
        headers.insert(
            HeaderName::from_static("anthropic-version"),
            HeaderValue::from_static(ANTHROPIC_VERSION),
        );
        if let Some(key) = api_key {
            headers.insert(HeaderName::from_static("x-api-key"), secret_header(key)?);
        }
        Ok(headers)
    }

    fn check(&self) -> Result<(), ModelError> {
        if self.max_tokens == 0 {
            return Err(ModelError::config("max_tokens must be at least 1"));
        }
        Ok(())
    }

    fn request_body(&self, model: &str, req: &ModelRequest, stream: bool) -> Value {
        wire::request_body(model, self.max_tokens, req, stream)
    }

    fn parse_response(body: &[u8]) -> Result<ModelResponse, ModelError> {
        wire::parse_response(body)
    }

    fn read_output(response: ModelResponse) -> ModelResponse {
        wire::read_output(response)
    }

    fn debug_fields(&self, f: &mut fmt::DebugStruct<'_, '_>) {
        f.field("max_tokens", &self.max_tokens);
    }
}

impl HttpChatModelBuilder<AnthropicWire> {
    /// `max_tokens` of requests that set none (default [`ANTHROPIC_DEFAULT_MAX_TOKENS`]; at
    /// least 1).
    pub fn max_tokens(mut self, max_tokens: u32) -> Self {
        self.wire.max_tokens = max_tokens;
        self
    }
}
