//! Tests of `OpenAiCompatibleModel` against a local server speaking OpenAI's wire format.

#[path = "../support/mod.rs"]
mod support;

use std::time::{Duration, Instant};

use agboss_core::model::{
    AssistantMessage, ChatModel, FinishReason, Message, ModelError, ModelRequest, ModelStreamEvent,
    OpenAiCompatibleModel, SharedChatModel, ToolCallRequest, ToolChoice, ToolDefinition, Usage,
    collect_stream,
};
use futures::StreamExt;
use serde_json::json;
use support::{End, MockServer, Reply};

mod errors;
mod requests;
mod retries;
mod streaming;

const KEY: &str = "sk-test-secret-123";

fn model(server: &MockServer) -> OpenAiCompatibleModel {
    OpenAiCompatibleModel::builder()
        .base_url(server.base_url())
        .api_key(KEY)
        .model("test-model")
        .timeout(Duration::from_secs(5))
        .max_retries(2)
        .backoff_base(Duration::from_millis(10))
        .build()
        .expect("valid config")
}

fn completion(message: serde_json::Value, finish_reason: &str) -> serde_json::Value {
    json!({
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": "test-model",
        "choices": [{"index": 0, "message": message, "logprobs": null, "finish_reason": finish_reason}],
        "usage": {"prompt_tokens": 12, "completion_tokens": 7, "total_tokens": 19}
    })
}

fn text_completion(text: &str) -> serde_json::Value {
    completion(json!({"role": "assistant", "content": text}), "stop")
}

fn chunk(delta: serde_json::Value, finish_reason: Option<&str>) -> serde_json::Value {
    json!({
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1_700_000_000,
        "model": "test-model",
        "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish_reason}],
        "usage": null
    })
}

fn usage_chunk() -> serde_json::Value {
    json!({
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1_700_000_000,
        "model": "test-model",
        "choices": [],
        "usage": {"prompt_tokens": 30, "completion_tokens": 9, "total_tokens": 39}
    })
}

fn hello() -> ModelRequest {
    ModelRequest::new([Message::system("Be brief."), Message::user("Hello?")])
}

/// The events of a stream, stopping after the first error (which is returned apart).
async fn drain(
    mut stream: agboss_core::model::ModelStream,
) -> (Vec<ModelStreamEvent>, Option<ModelError>) {
    let mut events = Vec::new();
    while let Some(item) = stream.next().await {
        match item {
            Ok(e) => events.push(e),
            Err(e) => {
                // A failed stream must end right after its error.
                assert!(
                    stream.next().await.is_none(),
                    "stream went on after an error"
                );
                return (events, Some(e));
            }
        }
    }
    (events, None)
}
