//! Streaming: text and split tool-call arguments, odd chunk boundaries, truncated and malformed streams.

use super::*;

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
