//! What a provider adds to the one HTTP chat client: its endpoint and headers, its request
//! encoding, its response and stream-event decoding, and the options only it has. Everything
//! else (retries, timeouts, the bounded SSE stream, typed errors from error bodies, the
//! builder's common settings, `from_env`) is [`HttpChatModel`](super::HttpChatModel)'s, once.
use std::fmt;

use reqwest::header::HeaderMap;
use serde_json::Value;

use super::error::ModelError;
use super::events::SseDecoder;
use super::types::{ModelRequest, ModelResponse};

/// A provider's wire format, the `W` of [`HttpChatModel<W>`](super::HttpChatModel):
/// [`OpenAiWire`](super::OpenAiWire) (OpenAI's Chat Completions and compatible servers) or
/// [`AnthropicWire`](super::AnthropicWire) (Anthropic's Messages API). A value of it holds the
/// provider's own options (OpenAI's `strict_tools`, Anthropic's default `max_tokens`).
///
/// Sealed: it is implemented by those two types only; a model of another kind implements
/// [`ChatModel`](super::ChatModel) directly.
pub trait Wire: Codec {}

impl<W: Codec> Wire for W {}

/// The crate-private half of [`Wire`] (public in a private module, so it cannot be named, and
/// so not implemented, outside the crate).
pub trait Codec: Clone + Default + Send + Sync + 'static {
    /// The public name of the model type, for its `Debug`.
    const MODEL: &'static str;
    /// The public name of the builder type, for its `Debug`.
    const BUILDER: &'static str;
    /// `gen_ai.provider.name` (`"openai"`, `"anthropic"`).
    const PROVIDER: &'static str;
    /// What one request is, for logs (`"chat completion"`).
    const WHAT: &'static str;
    /// The base URL of the hosted API.
    const DEFAULT_BASE_URL: &'static str;
    /// The model name requests ask for unless told otherwise.
    const DEFAULT_MODEL: &'static str;
    /// The prefix of the variables `from_env` reads (`AGBOSS_OPENAI`).
    const ENV_PREFIX: &'static str;
    /// The provider's own key variable, read when `{ENV_PREFIX}_API_KEY` is not set.
    const KEY_FALLBACK: &'static str;

    /// Decodes the `data` of the SSE events of a streamed answer.
    type Decoder: SseDecoder + Default;

    /// The URL requests are posted to, from a checked base URL (no trailing slash).
    fn endpoint(base: &str) -> String;

    /// The headers of every request: the API key (when there is one), a version.
    fn headers(api_key: Option<&str>) -> Result<HeaderMap, ModelError>;

    /// Checks the provider's own options when the model is built.
    fn check(&self) -> Result<(), ModelError> {
        Ok(())
    }

    /// The JSON body of one request for `model`; `stream` asks for a streamed answer.
    fn request_body(&self, model: &str, req: &ModelRequest, stream: bool) -> Value;

    /// Parses the body of a successful non-streamed answer.
    fn parse_response(body: &[u8]) -> Result<ModelResponse, ModelError>;

    /// The answer to a request with an [`output`](ModelRequest::output) as the runtime reads
    /// it: the typed answer as the message's text (a wire that asks for it through a forced
    /// tool turns that call back into text here). Applied to whole answers and to the
    /// `Finished` event of streams. The default leaves the answer as it is.
    fn read_output(response: ModelResponse) -> ModelResponse {
        response
    }

    /// Adds the provider's own options to a `Debug` of the model or its builder.
    fn debug_fields(&self, f: &mut fmt::DebugStruct<'_, '_>);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{AnthropicWire, ModelStreamEvent, OpenAiWire};

    /// The most a model error's text may be: a short quote of the answer, never the answer.
    const BOUND: usize = 5_000;

    fn decode_event<W: Wire>(data: &str) -> Result<(), ModelError> {
        W::Decoder::default().on_event(data, &mut Vec::<ModelStreamEvent>::new())
    }

    /// Errs (some answers are fine for one wire: Anthropic reads `{"error":..}` without a
    /// `type` as an empty message) with a bounded text.
    fn assert_bounded(result: Result<impl fmt::Debug, ModelError>, what: &str) -> usize {
        let Err(err) = result else { return 0 };
        let shown = err.to_string();
        assert!(shown.len() < BOUND, "{what}: {} bytes", shown.len());
        usize::from(shown.contains("aaaa"))
    }

    /// Answers that quote a megabyte in serde's message or as the provider's error message.
    fn every_wire_bounds_its_errors<W: Wire>() {
        let big = "a".repeat(1_000_000);
        let bodies = [
            format!(r#"{{"choices":"{big}","content":"{big}"}}"#),
            format!(r#"{{"error":{{"message":"{big}","type":"x"}}}}"#),
            format!(r#"{{"type":"error","error":{{"message":"{big}","type":"x"}}}}"#),
            format!(r#""{big}" junk"#),
        ];
        let mut quoting = 0;
        for body in &bodies {
            quoting += assert_bounded(W::parse_response(body.as_bytes()), &body[..30]);
            quoting += assert_bounded(decode_event::<W>(body), &body[..30]);
        }
        assert!(
            quoting >= 4,
            "errors keep a short prefix of what they quote"
        );
    }

    #[test]
    fn an_answer_of_a_megabyte_is_quoted_by_a_short_prefix_in_errors() {
        every_wire_bounds_its_errors::<OpenAiWire>();
        every_wire_bounds_its_errors::<AnthropicWire>();
    }
}
