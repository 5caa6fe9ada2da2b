//! Hostile model streams: usage overflow, endless keep-alives, events and responses without an end, split tool names.

use super::*;

#[tokio::test]
async fn token_usage_that_would_overflow_saturates() {
    let huge = json!({"prompt_tokens": u64::MAX, "completion_tokens": 1});
    let server = MockServer::start(vec![
        Reply::json(
            200,
            json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": "hi"},
                    "finish_reason": "stop"}], "usage": huge}),
        ),
        Reply::sse_events(
            &[
                chunk(json!({"content": "hi"}), Some("stop")),
                json!({"choices": [], "usage": huge}),
            ],
            true,
        ),
    ])
    .await;
    let m = model(&server, StreamLimits::default());
    let response = m.complete(&hello()).await.unwrap();
    assert_eq!(response.usage.total_tokens, u64::MAX);
    let response = collect_stream(m.stream(&hello()).await.unwrap())
        .await
        .unwrap();
    assert_eq!(response.usage.total_tokens, u64::MAX);
    let mut total = response.usage;
    total += response.usage;
    assert_eq!(total.prompt_tokens, u64::MAX);
}

#[tokio::test]
async fn keep_alives_forever_end_at_the_response_deadline() {
    let keep_alives: Vec<String> = (0..30).map(|_| ": keep-alive\n\n".to_owned()).collect();
    let server = MockServer::start(vec![Reply::sse(keep_alives, End::Hang)]).await;
    let limits = StreamLimits {
        deadline: Duration::from_millis(300),
        ..StreamLimits::default()
    };
    let mut stream = model(&server, limits).stream(&hello()).await.unwrap();
    let error = loop {
        match stream.next().await {
            Some(Ok(_)) => {}
            Some(Err(e)) => break e,
            None => panic!("the stream ended without an error"),
        }
    };
    // The whole response's deadline fired, not the 5 s per-chunk timeout.
    assert!(
        matches!(error, ModelError::Timeout { after } if after == Duration::from_millis(300)),
        "{error:?}"
    );
}

#[tokio::test]
async fn an_event_without_an_end_is_bounded() {
    let big: Vec<String> = std::iter::once("data: ".to_owned())
        .chain((0..8).map(|_| "a".repeat(16 * 1024)))
        .collect();
    let server = MockServer::start(vec![Reply::sse(big, End::Hang)]).await;
    let limits = StreamLimits {
        max_event_bytes: 64 * 1024,
        ..StreamLimits::default()
    };
    let error = collect_stream(model(&server, limits).stream(&hello()).await.unwrap())
        .await
        .unwrap_err();
    assert!(
        matches!(
            error,
            ModelError::TooLarge {
                what: "one event",
                limit: 65536
            }
        ),
        "{error:?}"
    );
}

#[tokio::test]
async fn a_response_without_an_end_is_bounded() {
    let events: Vec<serde_json::Value> = (0..2_000)
        .map(|_| chunk(json!({"content": "0123456789"}), None))
        .collect();
    let server = MockServer::start(vec![Reply::sse_events(&events, false)]).await;
    let limits = StreamLimits {
        max_response_bytes: 64 * 1024,
        ..StreamLimits::default()
    };
    let error = collect_stream(model(&server, limits).stream(&hello()).await.unwrap())
        .await
        .unwrap_err();
    assert!(
        matches!(
            error,
            ModelError::TooLarge {
                what: "the response",
                ..
            }
        ),
        "{error:?}"
    );
}

#[tokio::test]
async fn a_tool_name_split_across_deltas_after_the_id_is_kept_whole() {
    let server = MockServer::start(vec![Reply::sse_events(
        &[
            chunk(
                json!({"tool_calls": [{"index": 0, "id": "call_1", "function": {"name": "soak-order"}}]}),
                None,
            ),
            chunk(
                json!({"tool_calls": [{"index": 0, "function": {"name": "-tool"}}]}),
                None,
            ),
            chunk(
                json!({"tool_calls": [{"index": 0, "function": {"arguments": "{}"}}]}),
                Some("tool_calls"),
            ),
        ],
        true,
    )])
    .await;
    let mut stream = model(&server, StreamLimits::default())
        .stream(&hello())
        .await
        .unwrap();
    let mut started = Vec::new();
    let mut finished = None;
    while let Some(event) = stream.next().await {
        match event.unwrap() {
            ModelStreamEvent::ToolCallStarted { name, .. } => started.push(name),
            ModelStreamEvent::Finished(r) => finished = Some(r),
            _ => {}
        }
    }
    assert_eq!(started, ["soak-order-tool"]);
    assert_eq!(
        finished.unwrap().message.tool_calls[0].name,
        "soak-order-tool"
    );
}
