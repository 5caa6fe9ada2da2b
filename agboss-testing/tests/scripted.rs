//! Tests of `ScriptedModel`.

use std::sync::Arc;

use agboss_core::model::{
    ChatModel, FinishReason, Message, ModelError, ModelRequest, ModelResponse, ModelStreamEvent,
    SharedChatModel, ToolCallRequest, ToolDefinition, Usage, collect_stream,
};
use agboss_testing::ScriptedModel;
use agboss_testing::scripted::{ScriptedToolCall, Turn};
use futures::StreamExt;
use serde_json::json;

fn user(text: &str) -> ModelRequest {
    ModelRequest::new([Message::user(text)])
}

#[tokio::test]
async fn plays_turns_in_order_with_deterministic_call_ids() {
    let model = ScriptedModel::new([
        Turn::tool_call("get-order-tool", json!({"order_id": 42})),
        Turn::tool_calls([
            ScriptedToolCall::new("a", json!({})),
            ScriptedToolCall::new("b", json!({"x": 1})).with_id("explicit"),
            ScriptedToolCall::new("c", json!([1, 2])),
        ]),
        Turn::text("final answer"),
    ]);
    assert_eq!(model.remaining(), 3);

    let first = model.complete(&user("hi")).await.unwrap();
    assert_eq!(first.finish_reason, FinishReason::ToolCalls);
    assert_eq!(first.message.content, None);
    assert_eq!(
        first.message.tool_calls,
        vec![ToolCallRequest::new(
            "call_1",
            "get-order-tool",
            r#"{"order_id":42}"#
        )]
    );
    let args: serde_json::Value = first.message.tool_calls[0].parse_arguments().unwrap();
    assert_eq!(args, json!({"order_id": 42}));

    let second = model.complete(&user("again")).await.unwrap();
    let ids: Vec<&str> = second
        .message
        .tool_calls
        .iter()
        .map(|c| c.id.as_str())
        .collect();
    assert_eq!(ids, ["call_2", "explicit", "call_3"]);
    let names: Vec<&str> = second
        .message
        .tool_calls
        .iter()
        .map(|c| c.name.as_str())
        .collect();
    assert_eq!(names, ["a", "b", "c"]);

    let third = model.complete(&user("done?")).await.unwrap();
    assert_eq!(third.finish_reason, FinishReason::Stop);
    assert_eq!(third.message.content.as_deref(), Some("final answer"));
    assert!(third.message.tool_calls.is_empty());
    assert!(model.is_exhausted());
}

#[tokio::test]
async fn records_every_request() {
    let model = ScriptedModel::new([Turn::text("one"), Turn::text("two")]);
    let tools = [ToolDefinition::new(
        "t",
        "a tool",
        json!({"type": "object", "properties": {}}),
    )];
    let req1 = user("first").with_tools(tools.clone());
    let req2 = ModelRequest::new([
        Message::system("be nice"),
        Message::user("first"),
        Message::Assistant(agboss_core::model::AssistantMessage::tool_calls([
            ToolCallRequest::new("call_1", "t", "{}"),
        ])),
        Message::tool_error("call_1", "denied"),
    ])
    .with_temperature(0.0);
    model.complete(&req1).await.unwrap();
    model.complete(&req2).await.unwrap();
    assert_eq!(model.requests(), vec![req1, req2.clone()]);
    assert_eq!(model.last_request(), Some(req2));
    assert_eq!(model.request_count(), 2);
}

#[tokio::test]
async fn running_out_of_script_is_a_typed_error() {
    let model = ScriptedModel::new([Turn::text("only")]);
    model.complete(&user("1")).await.unwrap();
    let err = model.complete(&user("2")).await.unwrap_err();
    assert_eq!(err, ModelError::ScriptExhausted { served: 1 });
    assert!(!err.is_retryable());
    // The unanswered request is recorded too.
    assert_eq!(model.request_count(), 2);
    let err = match model.stream(&user("3")).await {
        Err(e) => e,
        Ok(_) => panic!("stream should fail when the script is exhausted"),
    };
    assert!(matches!(err, ModelError::ScriptExhausted { served: 1 }));
}

#[tokio::test]
async fn closure_turn_reacts_to_the_request() {
    let model = ScriptedModel::new([
        Turn::tool_call("lookup", json!({"q": "x"})),
        Turn::from_fn(|req| match req.last_tool_result() {
            Some(Message::Tool {
                content, is_error, ..
            }) => Turn::text(format!("observed: {content} (error: {is_error})")),
            _ => Turn::error(ModelError::other("no observation")),
        }),
        Turn::from_fn(|req| Turn::tool_call("echo", json!({"n": req.messages.len()}))),
    ]);
    let first = model.complete(&user("go")).await.unwrap();
    let call_id = first.message.tool_calls[0].id.clone();
    let req = ModelRequest::new([
        Message::user("go"),
        Message::Assistant(first.message.clone()),
        Message::tool_result(call_id, "42 apples"),
    ]);
    let second = model.complete(&req).await.unwrap();
    assert_eq!(
        second.message.content.as_deref(),
        Some("observed: 42 apples (error: false)")
    );
    let third = model.complete(&req).await.unwrap();
    assert_eq!(third.message.tool_calls[0].id, "call_2");
    assert_eq!(third.message.tool_calls[0].arguments, r#"{"n":3}"#);
}

#[tokio::test]
async fn scripted_errors_and_raw_arguments() {
    let model = ScriptedModel::new([
        Turn::error(ModelError::RateLimited {
            retry_after: None,
            message: Some("slow down".into()),
        }),
        Turn::raw_tool_call("broken", "{not json"),
        Turn::response(
            ModelResponse::tool_calls([ToolCallRequest::new("fixed-id", "t", "")])
                .with_usage(Usage::new(3, 4)),
        ),
        Turn::text("with usage")
            .with_usage(Usage::new(10, 5))
            .with_finish_reason(FinishReason::Length),
    ]);
    let err = model.complete(&user("1")).await.unwrap_err();
    assert!(err.is_retryable());
    let broken = model.complete(&user("2")).await.unwrap();
    assert_eq!(broken.message.tool_calls[0].arguments, "{not json");
    assert!(
        broken.message.tool_calls[0]
            .parse_arguments::<serde_json::Value>()
            .is_err()
    );
    let fixed = model.complete(&user("3")).await.unwrap();
    assert_eq!(fixed.message.tool_calls[0].id, "fixed-id");
    assert_eq!(fixed.usage.total_tokens, 7);
    // Empty arguments mean "no parameters".
    assert_eq!(
        fixed.message.tool_calls[0]
            .parse_arguments::<serde_json::Value>()
            .unwrap(),
        json!({})
    );
    let last = model.complete(&user("4")).await.unwrap();
    assert_eq!(last.finish_reason, FinishReason::Length);
    assert_eq!(last.usage, Usage::new(10, 5));
}

#[tokio::test]
async fn stream_emits_deltas_then_finished() {
    let model = ScriptedModel::new([
        Turn::text("Hello, streaming world").with_usage(Usage::new(5, 6)),
        Turn::tool_calls([
            ("first", json!({"city": "Paris"})),
            ("second", json!({"n": 12345})),
        ])
        .with_text("calling"),
    ]);
    let events: Vec<ModelStreamEvent> = model
        .stream(&user("hi"))
        .await
        .unwrap()
        .map(Result::unwrap)
        .collect()
        .await;
    let deltas: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            ModelStreamEvent::TextDelta { delta } => Some(delta.as_str()),
            _ => None,
        })
        .collect();
    assert!(deltas.len() > 1, "text should arrive in several deltas");
    assert_eq!(deltas.concat(), "Hello, streaming world");
    assert_eq!(
        events[events.len() - 2],
        ModelStreamEvent::Usage(Usage::new(5, 6))
    );
    match events.last() {
        Some(ModelStreamEvent::Finished(r)) => {
            assert_eq!(r.message.content.as_deref(), Some("Hello, streaming world"))
        }
        other => panic!("expected Finished last, got {other:?}"),
    }

    let events: Vec<ModelStreamEvent> = model
        .stream(&user("tools"))
        .await
        .unwrap()
        .map(Result::unwrap)
        .collect()
        .await;
    // Rebuild the calls from the events and compare with the final response.
    let mut rebuilt: Vec<(String, String, String)> = Vec::new();
    for e in &events {
        match e {
            ModelStreamEvent::ToolCallStarted { index, id, name } => {
                assert_eq!(*index, rebuilt.len());
                rebuilt.push((id.clone(), name.clone(), String::new()));
            }
            ModelStreamEvent::ToolCallArgumentsDelta { index, delta } => {
                rebuilt[*index].2.push_str(delta)
            }
            _ => {}
        }
    }
    assert_eq!(
        rebuilt,
        vec![
            (
                "call_1".into(),
                "first".into(),
                r#"{"city":"Paris"}"#.into()
            ),
            ("call_2".into(), "second".into(), r#"{"n":12345}"#.into()),
        ]
    );
    let Some(ModelStreamEvent::Finished(finished)) = events.last() else {
        panic!("expected Finished last");
    };
    assert_eq!(finished.message.content.as_deref(), Some("calling"));
    assert_eq!(finished.message.tool_calls.len(), 2);
    assert_eq!(finished.message.tool_calls[1].id, "call_2");
}

#[tokio::test]
async fn usable_behind_dyn_and_collect_stream() {
    let scripted = Arc::new(ScriptedModel::new([Turn::text("a"), Turn::text("b")]));
    let shared: SharedChatModel = scripted.clone();
    let first = shared.complete(&user("x")).await.unwrap();
    assert_eq!(first.message.content.as_deref(), Some("a"));
    let second = collect_stream(shared.stream(&user("y")).await.unwrap())
        .await
        .unwrap();
    assert_eq!(second.message.content.as_deref(), Some("b"));
    assert_eq!(scripted.requests().len(), 2);
    scripted.push(Turn::text("c"));
    assert_eq!(
        shared
            .complete(&user("z"))
            .await
            .unwrap()
            .message
            .content
            .as_deref(),
        Some("c")
    );
}
