//! Tests of `AnthropicModel` against a local server speaking Anthropic's Messages API: the
//! request shape, tool_use / tool_result blocks, the typed stream events, and the edge cases
//! fakellm (tests/providers.rs of the root package) cannot produce: `Retry-After` as an HTTP
//! date, 529 overloaded, an `error` event mid-stream, a stream cut before `message_stop`.

mod support;

use std::time::{Duration, Instant, SystemTime};

use agboss_core::model::{
    AnthropicModel, AssistantMessage, ChatModel, FinishReason, Message, ModelError, ModelRequest,
    ModelStreamEvent, ToolCallRequest, ToolChoice, ToolDefinition, Usage, collect_stream,
};
use futures::StreamExt as _;
use serde_json::json;
use support::{MockServer, Reply};

const KEY: &str = "sk-ant-test-secret";

fn base(server: &MockServer) -> String {
    server.base_url().trim_end_matches("/v1").to_owned()
}

fn model(server: &MockServer) -> AnthropicModel {
    AnthropicModel::builder()
        .base_url(base(server))
        .api_key(KEY)
        .model("claude-test")
        .max_tokens(256)
        .timeout(Duration::from_secs(5))
        .backoff_base(Duration::from_millis(10))
        .build()
        .expect("valid config")
}

fn message(content: serde_json::Value, stop_reason: &str) -> serde_json::Value {
    json!({"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test",
           "content": content, "stop_reason": stop_reason,
           "usage": {"input_tokens": 11, "output_tokens": 4, "cache_read_input_tokens": 2}})
}

fn conversation() -> ModelRequest {
    ModelRequest::new([
        Message::system("Be brief."),
        Message::user("Where is ACME-42?"),
        Message::Assistant(AssistantMessage {
            content: Some("Let me look.".into()),
            tool_calls: vec![
                ToolCallRequest::new("toolu_1", "get-order-tool", r#"{"orderId":"ACME-42"}"#),
                ToolCallRequest::new("toolu_2", "get-order-tool", ""),
            ],
        }),
        Message::tool_result("toolu_1", r#"{"status":"shipped"}"#),
        Message::tool_error("toolu_2", "orderId is missing"),
    ])
    .with_tools([ToolDefinition::new(
        "get-order-tool",
        "Loads an order",
        json!({"type": "object", "properties": {"orderId": {"type": "string"}}}),
    )])
    .with_tool_choice(ToolChoice::Required)
}

#[tokio::test]
async fn request_shape_and_tool_use_response() {
    let server = MockServer::start(vec![Reply::json(
        200,
        message(
            json!([{"type": "text", "text": "Checking."},
                   {"type": "tool_use", "id": "toolu_9", "name": "get-order-tool",
                    "input": {"orderId": "ACME-43"}}]),
            "tool_use",
        ),
    )])
    .await;
    let response = model(&server).complete(&conversation()).await.unwrap();
    assert_eq!(response.message.content.as_deref(), Some("Checking."));
    assert_eq!(
        response.message.tool_calls,
        [ToolCallRequest::new(
            "toolu_9",
            "get-order-tool",
            r#"{"orderId":"ACME-43"}"#
        )]
    );
    assert_eq!(response.finish_reason, FinishReason::ToolCalls);
    assert_eq!(
        response.usage,
        Usage::new(13, 4),
        "cache reads count as input"
    );

    let requests = server.requests().await;
    let req = &requests[0];
    assert_eq!(req.path, "/v1/messages");
    assert_eq!(req.header("x-api-key"), Some(KEY));
    assert_eq!(req.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(req.header("authorization"), None);
    assert_eq!(
        req.json(),
        json!({
            "model": "claude-test",
            "max_tokens": 256,
            "system": "Be brief.",
            "messages": [
                {"role": "user", "content": [{"type": "text", "text": "Where is ACME-42?"}]},
                {"role": "assistant", "content": [
                    {"type": "text", "text": "Let me look."},
                    {"type": "tool_use", "id": "toolu_1", "name": "get-order-tool",
                     "input": {"orderId": "ACME-42"}},
                    {"type": "tool_use", "id": "toolu_2", "name": "get-order-tool", "input": {}}
                ]},
                // Both results in one user turn, the failed one flagged.
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_1",
                     "content": "{\"status\":\"shipped\"}", "is_error": false},
                    {"type": "tool_result", "tool_use_id": "toolu_2",
                     "content": "orderId is missing", "is_error": true}
                ]}
            ],
            "tools": [{"name": "get-order-tool", "description": "Loads an order",
                       "input_schema": {"type": "object",
                                        "properties": {"orderId": {"type": "string"}}}}],
            "tool_choice": {"type": "any"}
        })
    );
}

fn sse(events: &[serde_json::Value]) -> Reply {
    Reply::sse_typed_events(events)
}

fn stream_events() -> Vec<serde_json::Value> {
    vec![
        json!({"type": "message_start", "message": {"id": "msg_1", "type": "message",
               "role": "assistant", "content": [], "usage": {"input_tokens": 20, "output_tokens": 1}}}),
        json!({"type": "ping"}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "On "}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "it."}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "content_block_start", "index": 1, "content_block":
               {"type": "tool_use", "id": "toolu_1", "name": "get-order-tool", "input": {}}}),
        json!({"type": "content_block_delta", "index": 1, "delta":
               {"type": "input_json_delta", "partial_json": "{\"orderId\":"}}),
        json!({"type": "content_block_delta", "index": 1, "delta":
               {"type": "input_json_delta", "partial_json": "\"ACME-42\"}"}}),
        json!({"type": "content_block_stop", "index": 1}),
        json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 9}}),
        json!({"type": "message_stop"}),
    ]
}

#[tokio::test]
async fn stream_of_text_and_input_json_deltas() {
    let server = MockServer::start(vec![sse(&stream_events())]).await;
    let stream = model(&server).stream(&conversation()).await.unwrap();
    let events: Vec<ModelStreamEvent> = stream.map(Result::unwrap).collect().await;
    let expected_call =
        ToolCallRequest::new("toolu_1", "get-order-tool", r#"{"orderId":"ACME-42"}"#);
    assert_eq!(
        events[..6],
        [
            ModelStreamEvent::TextDelta {
                delta: "On ".into()
            },
            ModelStreamEvent::TextDelta {
                delta: "it.".into()
            },
            ModelStreamEvent::ToolCallStarted {
                index: 0,
                id: "toolu_1".into(),
                name: "get-order-tool".into()
            },
            ModelStreamEvent::ToolCallArgumentsDelta {
                index: 0,
                delta: "{\"orderId\":".into()
            },
            ModelStreamEvent::ToolCallArgumentsDelta {
                index: 0,
                delta: "\"ACME-42\"}".into()
            },
            ModelStreamEvent::Usage(Usage::new(20, 9)),
        ]
    );
    let ModelStreamEvent::Finished(response) = &events[6] else {
        panic!("{events:?}")
    };
    assert_eq!(response.message.content.as_deref(), Some("On it."));
    assert_eq!(response.message.tool_calls, [expected_call]);
    assert_eq!(response.finish_reason, FinishReason::ToolCalls);
    let requests = server.requests().await;
    assert_eq!(requests[0].json()["stream"], true);
    assert_eq!(requests[0].header("accept"), Some("text/event-stream"));
}

#[tokio::test]
async fn streaming_off_sends_one_plain_request_and_replays_it() {
    let server = MockServer::start(vec![Reply::json(
        200,
        message(json!([{"type": "text", "text": "Hi."}]), "end_turn"),
    )])
    .await;
    let keyless = AnthropicModel::builder()
        .base_url(base(&server))
        .streaming(false)
        .build()
        .unwrap();
    let response = collect_stream(keyless.stream(&conversation()).await.unwrap())
        .await
        .unwrap();
    assert_eq!(response.message.content.as_deref(), Some("Hi."));
    assert_eq!(response.finish_reason, FinishReason::Stop);
    let requests = server.requests().await;
    assert_eq!(requests[0].json().get("stream"), None);
    assert_eq!(
        requests[0].header("x-api-key"),
        None,
        "keyless: no key sent"
    );
}

#[tokio::test]
async fn retry_after_as_an_http_date_is_honoured() {
    let at = httpdate::fmt_http_date(SystemTime::now() + Duration::from_secs(2));
    let server =
        MockServer::start(vec![
        Reply::json(
            429,
            json!({"type": "error", "error": {"type": "rate_limit_error", "message": "Slow down"}}),
        )
        .with_header("retry-after", &at),
        Reply::json(200, message(json!([{"type": "text", "text": "ok"}]), "end_turn")),
    ])
        .await;
    let started = Instant::now();
    let response = model(&server).complete(&conversation()).await.unwrap();
    assert_eq!(response.message.content.as_deref(), Some("ok"));
    // The date has a one-second resolution: at least one second is left of the two.
    assert!(
        started.elapsed() >= Duration::from_millis(900),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn overloaded_529_is_retried_then_typed_with_the_servers_message() {
    let overloaded = || {
        Reply::json(
            529,
            json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
        )
    };
    let server = MockServer::start(vec![overloaded(), overloaded(), overloaded()]).await;
    let err = model(&server).complete(&conversation()).await.unwrap_err();
    assert!(
        matches!(&err, ModelError::Http { status: 529, message, error_type: Some(t), .. }
            if message == "Overloaded" && t == "overloaded_error"),
        "{err:?}"
    );
    assert_eq!(server.requests().await.len(), 3, "two retries");
    assert_eq!(
        err.to_string(),
        "model provider returned HTTP 529: Overloaded"
    );
}

#[tokio::test]
async fn an_error_event_mid_stream_is_a_provider_error() {
    let mut events = stream_events()[..4].to_vec();
    events.push(
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
    );
    let server = MockServer::start(vec![sse(&events)]).await;
    let err = collect_stream(model(&server).stream(&conversation()).await.unwrap())
        .await
        .unwrap_err();
    assert!(
        matches!(&err, ModelError::Provider { message, error_type: Some(t) }
            if message == "Overloaded" && t == "overloaded_error"),
        "{err:?}"
    );
}

#[tokio::test]
async fn a_stream_without_message_stop_is_truncated() {
    let events = stream_events()[..10].to_vec();
    let server = MockServer::start(vec![sse(&events)]).await;
    let err = collect_stream(model(&server).stream(&conversation()).await.unwrap())
        .await
        .unwrap_err();
    assert!(
        matches!(&err, ModelError::StreamTruncated { detail } if detail.contains("message_stop")),
        "{err:?}"
    );
}

#[test]
fn configuration_from_environment_lookup() {
    let env = |pairs: &'static [(&'static str, &'static str)]| {
        move |name: &str| {
            pairs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| (*v).to_owned())
        }
    };
    let err = AnthropicModel::from_lookup(env(&[])).unwrap_err();
    assert!(err.to_string().contains("ANTHROPIC_API_KEY"), "{err}");
    let m = AnthropicModel::from_lookup(env(&[("ANTHROPIC_API_KEY", "sk-ant-secret")])).unwrap();
    assert_eq!(m.endpoint(), "https://api.anthropic.com/v1/messages");
    assert!(m.is_streaming());
    assert!(!format!("{m:?}").contains("sk-ant-secret"));
    let m = AnthropicModel::from_lookup(env(&[
        ("AGBOSS_ANTHROPIC_BASE_URL", "http://127.0.0.1:9/"),
        ("AGBOSS_ANTHROPIC_MODEL", "claude-local"),
        ("AGBOSS_ANTHROPIC_STREAM", "false"),
    ]))
    .unwrap();
    assert_eq!(m.endpoint(), "http://127.0.0.1:9/v1/messages");
    assert_eq!(m.model_name(), "claude-local");
    assert!(!m.is_streaming());
}
