//! Requests and replies: the wire format, tool calls, a shared dyn model, configuration, switches.

use super::*;

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
