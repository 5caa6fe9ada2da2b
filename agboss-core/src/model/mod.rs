//! Chat models.
//!
//! This module holds everything the agent loop needs to talk to an LLM, independent of
//! any provider:
//!
//! * the conversation types ([`Message`], [`ToolDefinition`], [`ToolCallRequest`],
//!   [`ModelRequest`], [`ModelResponse`], [`ModelStreamEvent`]);
//! * the [`ChatModel`] trait (native `async`, for implementors) and its dyn-compatible
//!   twin [`DynChatModel`] (for storing models behind `Arc<dyn DynChatModel>`);
//! * [`ModelError`], the typed error of every model call;
//! * [`OpenAiCompatibleModel`] (feature `openai`), a client of OpenAI's Chat Completions wire format that
//!   also speaks to compatible servers (vLLM, Ollama, LiteLLM, …);
//! * [`AnthropicModel`] (feature `anthropic`), a client of Anthropic's Messages API. Both are one HTTP client,
//!   [`HttpChatModel`], over a provider's [`Wire`]: retries with jittered backoff and
//!   `Retry-After`, timeouts, bounded SSE streams, typed errors carrying the server's
//!   message, keyless local servers, streaming on or off are written once; a provider adds
//!   its endpoint, headers, request encoding and response decoding.
//!
//! Tests use `agboss_testing::ScriptedModel`, a [`ChatModel`] that plays scripted turns.
//!
//! ```
//! use agboss_core::model::{ChatModel, Message, ModelRequest, ModelResponse, ModelError};
//!
//! /// A model that always answers the same thing.
//! struct Parrot;
//!
//! impl ChatModel for Parrot {
//!     async fn complete(&self, _req: &ModelRequest) -> Result<ModelResponse, ModelError> {
//!         Ok(ModelResponse::text("hello"))
//!     }
//! }
//!
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! let req = ModelRequest::new([Message::user("hi")]);
//! let resp = Parrot.complete(&req).await.unwrap();
//! assert_eq!(resp.message.content.as_deref(), Some("hello"));
//! # });
//! ```

// The files, each using only those above it in this list:
// error, output → types → stream → chat (the contract); sse → settings → http → events (the HTTP core)
// → wire (what a provider adds) → client (the one HTTP client) → openai, anthropic.
// The HTTP clients are behind the features `openai` and `anthropic` (either brings the core).
#[cfg(feature = "anthropic")]
mod anthropic;
mod chat;
#[cfg(any(feature = "openai", feature = "anthropic"))]
mod client;
mod error;
#[cfg(any(feature = "openai", feature = "anthropic"))]
mod events;
#[cfg(any(feature = "openai", feature = "anthropic"))]
mod http;
#[cfg(feature = "openai")]
pub(crate) mod openai;
mod output;
#[cfg(any(feature = "openai", feature = "anthropic"))]
mod settings;
#[cfg(any(feature = "openai", feature = "anthropic"))]
mod sse;
mod stream;
mod types;
#[cfg(any(feature = "openai", feature = "anthropic"))]
mod wire;

#[cfg(feature = "anthropic")]
pub use anthropic::{
    ANTHROPIC_BASE_URL, ANTHROPIC_DEFAULT_MAX_TOKENS, ANTHROPIC_DEFAULT_MODEL, ANTHROPIC_VERSION,
    AnthropicModel, AnthropicModelBuilder, AnthropicWire,
};
pub use chat::{BoxFuture, ChatModel, DynChatModel, SharedChatModel};
#[cfg(any(feature = "openai", feature = "anthropic"))]
pub use client::{HttpChatModel, HttpChatModelBuilder};
pub use error::ModelError;
#[cfg(feature = "openai")]
pub use openai::{
    DEFAULT_BASE_URL, DEFAULT_MODEL, OpenAiCompatibleModel, OpenAiCompatibleModelBuilder,
    OpenAiWire,
};
pub use output::{OUTPUT_TOOL, OutputFormat};
#[cfg(any(feature = "openai", feature = "anthropic"))]
pub use sse::StreamLimits;
pub use stream::{ModelStream, collect_stream, response_events, stream_from_response};
pub use types::{
    AssistantMessage, FinishReason, Message, ModelRequest, ModelResponse, ModelStreamEvent, Role,
    ToolCallRequest, ToolChoice, ToolDefinition, Usage,
};
#[cfg(any(feature = "openai", feature = "anthropic"))]
pub use wire::Wire;
