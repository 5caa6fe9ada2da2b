//! Tests of `OpenAiCompatibleModel` against a local server speaking OpenAI's wire format.

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

#[tokio::test]
async fn plain_completion_with_usage_and_request_shape() {
    let server = MockServer::start(vec![Reply::json(200, text_completion("Hi there."))]).await;
    let response = model(&server).complete(&hello()).await.unwrap();

    assert_eq!(response.message.content.as_deref(), Some("Hi there."));
    assert!(response.message.tool_calls.is_empty());
    assert_eq!(response.finish_reason, FinishReason::Stop);
    assert_eq!(
        response.usage,
        Usage {
            prompt_tokens: 12,
            completion_tokens: 7,
            total_tokens: 19
        }
    );

    let requests = server.requests().await;
    assert_eq!(requests.len(), 1);
    let req = &requests[0];
    assert_eq!(req.method, "POST");
    assert_eq!(req.path, "/v1/chat/completions");
    assert_eq!(
        req.header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    assert!(
        req.header("content-type")
            .unwrap()
            .starts_with("application/json")
    );
    assert_eq!(
        req.json(),
        json!({
            "model": "test-model",
            "messages": [
                {"role": "system", "content": "Be brief."},
                {"role": "user", "content": "Hello?"}
            ]
        })
    );
}

#[tokio::test]
async fn tool_calls_parsed_and_tool_messages_sent_in_wire_format() {
    let server = MockServer::start(vec![Reply::json(
        200,
        completion(
            json!({
                "role": "assistant",
                "content": null,
                "tool_calls": [
                    {"id": "call_abc", "type": "function",
                     "function": {"name": "get-order-tool", "arguments": "{\"order_id\": 7}"}},
                    {"id": "call_def", "type": "function",
                     "function": {"name": "refund-tool", "arguments": "{\"order_id\": 7, \"amount\""}}
                ]
            }),
            "tool_calls",
        ),
    )])
    .await;

    let schema = json!({
        "type": "object",
        "properties": {"order_id": {"type": "integer"}},
        "required": ["order_id"]
    });
    let request = ModelRequest::new([
        Message::user("Refund order 7"),
        Message::Assistant(AssistantMessage {
            content: Some("Looking it up.".into()),
            tool_calls: vec![ToolCallRequest::new(
                "call_prev",
                "get-order-tool",
                r#"{"order_id":7}"#,
            )],
        }),
        Message::tool_result("call_prev", r#"{"status":"delivered"}"#),
        Message::tool_error("call_x", "denied by policy"),
    ])
    .with_tools([ToolDefinition::new(
        "get-order-tool",
        "Fetches an order",
        schema.clone(),
    )])
    .with_tool_choice(ToolChoice::Auto)
    .with_temperature(0.5)
    .with_max_tokens(256);

    let response = model(&server).complete(&request).await.unwrap();
    assert_eq!(response.finish_reason, FinishReason::ToolCalls);
    assert_eq!(response.message.content, None);
    assert_eq!(
        response.message.tool_calls,
        vec![
            ToolCallRequest::new("call_abc", "get-order-tool", "{\"order_id\": 7}"),
            // Malformed arguments are passed through verbatim.
            ToolCallRequest::new("call_def", "refund-tool", "{\"order_id\": 7, \"amount\""),
        ]
    );
    assert!(
        response.message.tool_calls[1]
            .parse_arguments::<serde_json::Value>()
            .is_err()
    );

    let body = server.requests().await[0].json();
    assert_eq!(
        body,
        json!({
            "model": "test-model",
            "messages": [
                {"role": "user", "content": "Refund order 7"},
                {"role": "assistant", "content": "Looking it up.", "tool_calls": [
                    {"id": "call_prev", "type": "function",
                     "function": {"name": "get-order-tool", "arguments": "{\"order_id\":7}"}}
                ]},
                {"role": "tool", "tool_call_id": "call_prev", "content": "{\"status\":\"delivered\"}"},
                {"role": "tool", "tool_call_id": "call_x", "content": "denied by policy"}
            ],
            "tools": [{"type": "function", "function": {
                "name": "get-order-tool", "description": "Fetches an order", "parameters": schema
            }}],
            "tool_choice": "auto",
            "temperature": 0.5,
            "max_tokens": 256
        })
    );
}

fn tool_stream_events() -> Vec<serde_json::Value> {
    vec![
        chunk(json!({"role": "assistant", "content": ""}), None),
        chunk(json!({"content": "Let me "}), None),
        chunk(json!({"content": "check."}), None),
        chunk(
            json!({"tool_calls": [{"index": 0, "id": "call_A", "type": "function",
                "function": {"name": "get-order-tool", "arguments": ""}}]}),
            None,
        ),
        chunk(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": "{\"order"}}]}),
            None,
        ),
        chunk(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": "_id\": "}}]}),
            None,
        ),
        chunk(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": "7}"}}]}),
            None,
        ),
        chunk(
            json!({"tool_calls": [{"index": 1, "id": "call_B", "type": "function",
                "function": {"name": "weather", "arguments": "{\"city\":"}}]}),
            None,
        ),
        chunk(
            json!({"tool_calls": [{"index": 1, "function": {"arguments": "\"Paris\"}"}}]}),
            None,
        ),
        chunk(json!({}), Some("tool_calls")),
        usage_chunk(),
    ]
}

fn expected_tool_stream() -> Vec<ModelStreamEvent> {
    use ModelStreamEvent::*;
    let usage = agboss_core::model::Usage {
        prompt_tokens: 30,
        completion_tokens: 9,
        total_tokens: 39,
    };
    vec![
        TextDelta {
            delta: "Let me ".into(),
        },
        TextDelta {
            delta: "check.".into(),
        },
        ToolCallStarted {
            index: 0,
            id: "call_A".into(),
            name: "get-order-tool".into(),
        },
        ToolCallArgumentsDelta {
            index: 0,
            delta: "{\"order".into(),
        },
        ToolCallArgumentsDelta {
            index: 0,
            delta: "_id\": ".into(),
        },
        ToolCallArgumentsDelta {
            index: 0,
            delta: "7}".into(),
        },
        ToolCallStarted {
            index: 1,
            id: "call_B".into(),
            name: "weather".into(),
        },
        ToolCallArgumentsDelta {
            index: 1,
            delta: "{\"city\":".into(),
        },
        ToolCallArgumentsDelta {
            index: 1,
            delta: "\"Paris\"}".into(),
        },
        Usage(usage),
        Finished(agboss_core::model::ModelResponse {
            message: AssistantMessage {
                content: Some("Let me check.".into()),
                tool_calls: vec![
                    ToolCallRequest::new("call_A", "get-order-tool", "{\"order_id\": 7}"),
                    ToolCallRequest::new("call_B", "weather", "{\"city\":\"Paris\"}"),
                ],
            },
            finish_reason: FinishReason::ToolCalls,
            usage,
        }),
    ]
}

#[tokio::test]
async fn streaming_text_and_split_tool_call_arguments() {
    let server = MockServer::start(vec![Reply::sse_events(&tool_stream_events(), true)]).await;
    let stream = model(&server).stream(&hello()).await.unwrap();
    let (events, error) = drain(stream).await;
    assert_eq!(error, None);
    assert_eq!(events, expected_tool_stream());

    let req = &server.requests().await[0];
    let body = req.json();
    assert_eq!(body["stream"], json!(true));
    assert_eq!(body["stream_options"], json!({"include_usage": true}));
    assert_eq!(body["model"], json!("test-model"));
    assert_eq!(req.header("accept"), Some("text/event-stream"));
}

#[tokio::test]
async fn stream_split_at_arbitrary_byte_boundaries_with_crlf_and_comments() {
    // Same events, CRLF line endings, a keep-alive comment and an SSE `event:` field,
    // delivered in 7-byte pieces that cut events, lines and UTF-8 sequences.
    let mut text = String::from(": keep-alive\r\n\r\n");
    for e in tool_stream_events() {
        text.push_str(&format!("event: message\r\ndata: {e}\r\n\r\n"));
    }
    text.push_str("data: [DONE]\r\n\r\n");
    let parts: Vec<Vec<u8>> = text.as_bytes().chunks(7).map(<[u8]>::to_vec).collect();
    // Raw socket: each part is its own flushed chunk, so these are the client's byte boundaries.
    let server = MockServer::start(vec![Reply::Sse {
        parts,
        end: End::Terminate,
        chunked: true,
    }])
    .await;
    let stream = model(&server).stream(&hello()).await.unwrap();
    let (events, error) = drain(stream).await;
    assert_eq!(error, None);
    assert_eq!(events, expected_tool_stream());
}

#[tokio::test]
async fn stream_with_multibyte_text_split_inside_a_character() {
    let event = chunk(json!({"content": "héllo wörld ✓"}), Some("stop"));
    // serde_json writes non-ASCII characters as UTF-8, not as escapes.
    let raw = format!("data: {event}\n\ndata: [DONE]\n\n");
    let bytes = raw.as_bytes();
    let inside_e = raw.find('é').unwrap() + 1;
    let inside_check = raw.find('✓').unwrap() + 2;
    // Raw socket: the chunks must end inside the characters.
    let server = MockServer::start(vec![Reply::Sse {
        parts: vec![
            bytes[..inside_e].to_vec(),
            bytes[inside_e..inside_check].to_vec(),
            bytes[inside_check..].to_vec(),
        ],
        end: End::Terminate,
        chunked: true,
    }])
    .await;
    let response = collect_stream(model(&server).stream(&hello()).await.unwrap())
        .await
        .unwrap();
    assert_eq!(response.message.content.as_deref(), Some("héllo wörld ✓"));
    assert_eq!(response.finish_reason, FinishReason::Stop);
    assert_eq!(response.usage, Usage::default());
}

#[tokio::test]
async fn retries_after_429_honouring_retry_after() {
    let server = MockServer::start(vec![
        Reply::json(
            429,
            json!({"error": {"message": "Rate limit reached", "type": "requests"}}),
        )
        .with_header("Retry-After", "1"),
        Reply::json(200, text_completion("finally")),
    ])
    .await;
    let started = Instant::now();
    let response = model(&server).complete(&hello()).await.unwrap();
    assert_eq!(response.message.content.as_deref(), Some("finally"));
    assert_eq!(server.requests().await.len(), 2, "one retry expected");
    assert!(
        started.elapsed() >= Duration::from_millis(900),
        "Retry-After: 1 was not honoured ({:?})",
        started.elapsed()
    );
}

#[tokio::test]
async fn rate_limit_after_all_retries_is_typed() {
    let limited = || {
        Reply::json(
            429,
            json!({"error": {"message": "Slow down", "type": "tokens"}}),
        )
        .with_header("Retry-After", "0")
    };
    let server = MockServer::start(vec![limited(), limited(), limited(), limited()]).await;
    let err = model(&server).complete(&hello()).await.unwrap_err();
    assert_eq!(
        err,
        ModelError::RateLimited {
            retry_after: Some(Duration::ZERO),
            message: Some("Slow down".into())
        }
    );
    assert!(err.is_retryable());
    // First attempt plus max_retries (2).
    assert_eq!(server.requests().await.len(), 3);
}

#[tokio::test]
async fn retries_after_500_then_succeeds() {
    let server = MockServer::start(vec![
        Reply::json(
            500,
            json!({"error": {"message": "The server had an error", "type": "server_error"}}),
        ),
        Reply::raw(503, "upstream unavailable"),
        Reply::json(200, text_completion("recovered")),
    ])
    .await;
    let response = model(&server).complete(&hello()).await.unwrap();
    assert_eq!(response.message.content.as_deref(), Some("recovered"));
    assert_eq!(server.requests().await.len(), 3);
}

#[tokio::test]
async fn server_errors_after_all_retries_surface_the_last_status() {
    let server = MockServer::start(vec![
        Reply::raw(500, "boom"),
        Reply::raw(502, "bad gateway"),
        Reply::raw(503, "still down"),
        Reply::json(200, text_completion("too late")),
    ])
    .await;
    let err = model(&server).complete(&hello()).await.unwrap_err();
    match &err {
        ModelError::Http {
            status,
            message,
            error_type,
            body,
        } => {
            assert_eq!(*status, 503);
            assert_eq!(message, "still down");
            assert_eq!(error_type, &None);
            assert_eq!(body, "still down");
        }
        other => panic!("expected Http error, got {other:?}"),
    }
    assert!(err.is_retryable());
    assert_eq!(server.requests().await.len(), 3);
}

#[tokio::test]
async fn client_error_body_is_surfaced_without_retry() {
    let error_body = json!({"error": {
        "message": "Invalid schema for function 'get-order-tool'",
        "type": "invalid_request_error",
        "param": "tools[0].function.parameters",
        "code": "invalid_function_parameters"
    }});
    let server = MockServer::start(vec![
        Reply::json(400, error_body.clone()),
        Reply::json(200, text_completion("must not be reached")),
    ])
    .await;
    let err = model(&server).complete(&hello()).await.unwrap_err();
    match &err {
        ModelError::Http {
            status,
            message,
            error_type,
            body,
        } => {
            assert_eq!(*status, 400);
            assert_eq!(message, "Invalid schema for function 'get-order-tool'");
            assert_eq!(error_type.as_deref(), Some("invalid_request_error"));
            assert_eq!(
                serde_json::from_str::<serde_json::Value>(body).unwrap(),
                error_body
            );
        }
        other => panic!("expected Http error, got {other:?}"),
    }
    assert!(!err.is_retryable());
    assert!(err.to_string().contains("Invalid schema"));
    assert_eq!(
        server.requests().await.len(),
        1,
        "a 400 must not be retried"
    );
}

#[tokio::test]
async fn error_status_on_a_stream_request_fails_before_streaming() {
    let server = MockServer::start(vec![Reply::json(
        401,
        json!({"error": {"message": "Incorrect API key provided", "type": "invalid_request_error"}}),
    )])
    .await;
    let err = match model(&server).stream(&hello()).await {
        Err(e) => e,
        Ok(_) => panic!("expected an error"),
    };
    assert!(
        matches!(&err, ModelError::Http { status: 401, message, .. } if message == "Incorrect API key provided"),
        "{err:?}"
    );
    assert_eq!(server.requests().await.len(), 1);
}

#[tokio::test]
async fn malformed_json_body_is_a_typed_error() {
    let server = MockServer::start(vec![
        Reply::raw(200, "{\"choices\": [{\"message\": "),
        Reply::json(200, json!({"id": "x", "choices": []})),
        Reply::json(200, json!({"choices": [{"message": {"content": 5}}]})),
    ])
    .await;
    let m = model(&server);
    for expected in [
        "invalid chat completion JSON",
        "no choices",
        "invalid chat completion JSON",
    ] {
        match m.complete(&hello()).await {
            Err(ModelError::MalformedResponse { detail }) => {
                assert!(detail.contains(expected), "{detail}")
            }
            other => panic!("expected MalformedResponse, got {other:?}"),
        }
    }
    // Malformed answers are not retried.
    assert_eq!(server.requests().await.len(), 3);
}

#[tokio::test]
async fn error_object_in_a_200_body_is_a_provider_error() {
    let server = MockServer::start(vec![Reply::json(
        200,
        json!({"error": {"message": "model overloaded", "type": "server_error"}}),
    )])
    .await;
    let err = model(&server).complete(&hello()).await.unwrap_err();
    assert_eq!(
        err,
        ModelError::Provider {
            message: "model overloaded".into(),
            error_type: Some("server_error".into())
        }
    );
}

#[tokio::test]
async fn stream_without_done_is_truncated() {
    let server = MockServer::start(vec![Reply::sse_events(
        &[
            chunk(json!({"content": "partial "}), None),
            chunk(json!({"content": "answer"}), Some("stop")),
        ],
        false,
    )])
    .await;
    let stream = model(&server).stream(&hello()).await.unwrap();
    let (events, error) = drain(stream).await;
    assert_eq!(
        events,
        vec![
            ModelStreamEvent::TextDelta {
                delta: "partial ".into()
            },
            ModelStreamEvent::TextDelta {
                delta: "answer".into()
            },
        ]
    );
    let error = error.expect("truncation error");
    assert!(
        matches!(&error, ModelError::StreamTruncated { detail } if detail.contains("[DONE]")),
        "{error:?}"
    );
    assert!(error.is_retryable());
}

#[tokio::test]
async fn connection_dropped_mid_event_is_truncated() {
    let first = format!("data: {}\n\n", chunk(json!({"content": "Hel"}), None));
    // Raw socket: wiremock cannot cut a connection in the middle of a body.
    let server = MockServer::start(vec![Reply::sse(
        [first, "data: {\"id\":\"chatcmpl-1\",\"choi".to_owned()],
        End::Drop,
    )])
    .await;
    let stream = model(&server).stream(&hello()).await.unwrap();
    let (events, error) = drain(stream).await;
    assert_eq!(
        events,
        vec![ModelStreamEvent::TextDelta {
            delta: "Hel".into()
        }]
    );
    let error = error.expect("truncation error");
    assert!(
        matches!(error, ModelError::StreamTruncated { .. }),
        "{error:?}"
    );
}

#[tokio::test]
async fn clean_close_mid_event_is_truncated() {
    let server = MockServer::start(vec![Reply::sse(
        ["data: {\"id\":\"chatcmpl-1\""],
        End::Terminate,
    )])
    .await;
    let stream = model(&server).stream(&hello()).await.unwrap();
    let (events, error) = drain(stream).await;
    assert!(events.is_empty());
    assert!(
        matches!(&error, Some(ModelError::StreamTruncated { detail }) if detail.contains("middle of an event")),
        "{error:?}"
    );
}

#[tokio::test]
async fn malformed_stream_chunk_and_error_event_are_typed() {
    let server = MockServer::start(vec![
        Reply::sse(["data: {not json}\n\n", "data: [DONE]\n\n"], End::Terminate),
        Reply::sse(
            ["data: {\"error\":{\"message\":\"context length exceeded\",\"type\":\"invalid_request_error\"}}\n\n"],
            End::Terminate,
        ),
    ])
    .await;
    let m = model(&server);
    let (events, error) = drain(m.stream(&hello()).await.unwrap()).await;
    assert!(events.is_empty());
    assert!(
        matches!(error, Some(ModelError::MalformedResponse { .. })),
        "{error:?}"
    );
    let (_, error) = drain(m.stream(&hello()).await.unwrap()).await;
    assert_eq!(
        error,
        Some(ModelError::Provider {
            message: "context length exceeded".into(),
            error_type: Some("invalid_request_error".into())
        })
    );
}

#[tokio::test]
async fn timeout_when_the_server_never_answers() {
    let server = MockServer::start(vec![Reply::Hang, Reply::Hang, Reply::Hang]).await;
    let m = OpenAiCompatibleModel::builder()
        .base_url(server.base_url())
        .api_key(KEY)
        .timeout(Duration::from_millis(200))
        .max_retries(1)
        .backoff_base(Duration::from_millis(1))
        .build()
        .unwrap();
    let err = m.complete(&hello()).await.unwrap_err();
    assert_eq!(
        err,
        ModelError::Timeout {
            after: Duration::from_millis(200)
        }
    );
    assert!(err.is_retryable());
    assert_eq!(server.requests().await.len(), 2, "timeouts are retried");

    let m = OpenAiCompatibleModel::builder()
        .base_url(server.base_url())
        .timeout(Duration::from_millis(200))
        .max_retries(0)
        .build()
        .unwrap();
    let err = match m.stream(&hello()).await {
        Err(e) => e,
        Ok(_) => panic!("expected a timeout"),
    };
    assert!(matches!(err, ModelError::Timeout { .. }), "{err:?}");
    assert_eq!(server.requests().await.len(), 3);
    // Without an API key no Authorization header is sent.
    assert_eq!(server.requests().await[2].header("authorization"), None);
}

#[tokio::test]
async fn stalled_stream_times_out() {
    // Raw socket: wiremock cannot stall a body after its first bytes.
    let server = MockServer::start(vec![Reply::sse(
        [format!(
            "data: {}\n\n",
            chunk(json!({"content": "a"}), None)
        )],
        End::Hang,
    )])
    .await;
    let m = OpenAiCompatibleModel::builder()
        .base_url(server.base_url())
        .timeout(Duration::from_millis(300))
        .max_retries(0)
        .build()
        .unwrap();
    let (events, error) = drain(m.stream(&hello()).await.unwrap()).await;
    assert_eq!(
        events,
        vec![ModelStreamEvent::TextDelta { delta: "a".into() }]
    );
    assert_eq!(
        error,
        Some(ModelError::Timeout {
            after: Duration::from_millis(300)
        })
    );
}

#[tokio::test]
async fn connection_refused_is_a_transport_error() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let m = OpenAiCompatibleModel::builder()
        .base_url(format!("http://127.0.0.1:{port}/v1"))
        .max_retries(0)
        .timeout(Duration::from_secs(2))
        .build()
        .unwrap();
    let err = m.complete(&hello()).await.unwrap_err();
    assert!(matches!(err, ModelError::Transport { .. }), "{err:?}");
    assert!(err.is_retryable());
}

#[tokio::test]
async fn usable_as_a_shared_dyn_model() {
    let server = MockServer::start(vec![
        Reply::json(200, text_completion("dyn complete")),
        Reply::sse_events(
            &[
                chunk(json!({"content": "dyn stream"}), Some("stop")),
                usage_chunk(),
            ],
            true,
        ),
    ])
    .await;
    let shared: SharedChatModel = std::sync::Arc::new(model(&server));
    let a = shared.complete(&hello()).await.unwrap();
    assert_eq!(a.message.content.as_deref(), Some("dyn complete"));
    let b = collect_stream(shared.stream(&hello()).await.unwrap())
        .await
        .unwrap();
    assert_eq!(b.message.content.as_deref(), Some("dyn stream"));
    assert_eq!(b.usage.total_tokens, 39);
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
    let err = OpenAiCompatibleModel::from_lookup(env(&[("AGBOSS_OPENAI_MODEL", "m")])).unwrap_err();
    assert!(matches!(err, ModelError::Config { .. }), "{err:?}");
    assert!(err.to_string().contains("AGBOSS_OPENAI_API_KEY"));

    let m = OpenAiCompatibleModel::from_lookup(env(&[("OPENAI_API_KEY", "sk-fallback")])).unwrap();
    assert_eq!(m.endpoint(), "https://api.openai.com/v1/chat/completions");
    assert_eq!(m.model_name(), agboss_core::model::DEFAULT_MODEL);

    let m = OpenAiCompatibleModel::from_lookup(env(&[
        ("AGBOSS_OPENAI_API_KEY", "sk-primary-secret"),
        ("OPENAI_API_KEY", "sk-fallback"),
        ("AGBOSS_OPENAI_BASE_URL", "http://127.0.0.1:9/v1/"),
        ("AGBOSS_OPENAI_MODEL", "local-model"),
    ]))
    .unwrap();
    assert_eq!(m.endpoint(), "http://127.0.0.1:9/v1/chat/completions");
    assert_eq!(m.model_name(), "local-model");
    let debug = format!("{m:?}");
    assert!(!debug.contains("sk-primary-secret"), "{debug}");
    assert!(debug.contains("redacted"));

    let bad = OpenAiCompatibleModel::builder().base_url("ftp://x").build();
    assert!(matches!(bad, Err(ModelError::Config { .. })));
    let bad = OpenAiCompatibleModel::builder().model("  ").build();
    assert!(matches!(bad, Err(ModelError::Config { .. })));
    let bad = OpenAiCompatibleModel::builder().api_key("bad\nkey").build();
    assert!(matches!(bad, Err(ModelError::Config { .. })));
}

/// Captures the `tracing` output of the current thread.
#[derive(Clone, Default)]
struct Capture(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl std::io::Write for Capture {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test(flavor = "current_thread")]
async fn retries_are_logged_without_the_api_key() {
    let capture = Capture::default();
    let writer = capture.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::DEBUG)
        .with_ansi(false)
        .with_writer(move || writer.clone())
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);
    // A callsite another test's thread registered first may have cached an interest computed
    // without this thread's subscriber: recompute it now that the subscriber is in place.
    tracing::callsite::rebuild_interest_cache();

    let server = MockServer::start(vec![
        Reply::raw(500, "boom"),
        Reply::json(200, text_completion("ok")),
    ])
    .await;
    model(&server).complete(&hello()).await.unwrap();

    let logs = String::from_utf8(capture.0.lock().unwrap().clone()).unwrap();
    assert!(logs.contains("sending chat completion request"), "{logs}");
    assert!(logs.contains("retrying chat completion"), "{logs}");
    assert!(!logs.contains(KEY), "API key leaked into logs:\n{logs}");
}

#[tokio::test]
async fn keyless_and_not_streamed_when_switched_off() {
    let server = MockServer::start(vec![Reply::json(200, text_completion("plain"))]).await;
    let model = OpenAiCompatibleModel::from_lookup(|name| match name {
        "AGBOSS_OPENAI_BASE_URL" => Some(server.base_url()),
        "AGBOSS_OPENAI_STREAM" => Some("false".into()),
        _ => None,
    })
    .expect("a base URL without a key is a local server");
    assert!(!model.is_streaming());
    let response = collect_stream(model.stream(&hello()).await.unwrap())
        .await
        .unwrap();
    assert_eq!(response.message.content.as_deref(), Some("plain"));
    let requests = server.requests().await;
    assert_eq!(requests[0].header("authorization"), None, "no key sent");
    assert_eq!(requests[0].json().get("stream"), None, "a plain request");
}

#[tokio::test]
async fn a_rate_limit_says_the_servers_message() {
    let server = MockServer::start(vec![
        Reply::json(
            429,
            json!({"error": {"message": "Too many tokens per minute", "type": "tokens"}}),
        )
        .with_header("Retry-After", "0"),
    ])
    .await;
    let once = OpenAiCompatibleModel::builder()
        .base_url(server.base_url())
        .max_retries(0)
        .build()
        .unwrap();
    let err = once.complete(&hello()).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "model provider rate limit hit: Too many tokens per minute (retry after 0.0 s)"
    );
}
