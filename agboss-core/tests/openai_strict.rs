//! `OpenAiCompatibleModel::strict_tools`: tools go out with `"strict": true` and the strict
//! variant of their DTO schema; what a strict model sends back (`null` for an absent optional
//! field) decodes.

mod support;

use std::time::Duration;

use agboss_core::dto::Dto;
use agboss_core::model::{ChatModel, Message, ModelRequest, OpenAiCompatibleModel, ToolDefinition};
use serde_json::json;
use support::{MockServer, Reply};

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct Refund {
    /// The order to refund.
    #[integer(min = 1)]
    pub order_id: u64,
    /// Why, if the customer said.
    #[text]
    pub reason: Option<String>,
}

fn answer() -> serde_json::Value {
    json!({
        "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "m",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
            "role": "assistant", "content": null,
            "tool_calls": [{"id": "c1", "type": "function", "function": {
                "name": "refund-tool", "arguments": "{\"orderId\": 7, \"reason\": null}"}}]}}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
    })
}

async fn sent_tools(strict: bool) -> (serde_json::Value, String) {
    let server = MockServer::start(vec![Reply::json(200, answer())]).await;
    let model = OpenAiCompatibleModel::builder()
        .base_url(server.base_url())
        .model("m")
        .timeout(Duration::from_secs(5))
        .strict_tools(strict)
        .build()
        .unwrap();
    let request = ModelRequest::new([Message::user("Refund 7")]).with_tools([ToolDefinition::new(
        "refund-tool",
        "Refunds an order",
        Refund::json_schema(),
    )]);
    let response = model.complete(&request).await.unwrap();
    let body = server.requests().await[0].json();
    (
        body["tools"][0]["function"].clone(),
        response.message.tool_calls[0].arguments.clone(),
    )
}

#[tokio::test]
async fn strict_mode_sends_the_strict_schema_and_decodes_nulls() {
    let (function, arguments) = sent_tools(true).await;
    assert_eq!(function["strict"], true);
    assert_eq!(function["parameters"], Refund::strict_json_schema());
    assert_eq!(
        function["parameters"]["required"],
        json!(["orderId", "reason"])
    );
    assert_eq!(
        function["parameters"]["properties"]["reason"]["type"],
        json!(["string", "null"])
    );
    let refund = Refund::from_json_str(&arguments).unwrap();
    assert_eq!(
        refund,
        Refund {
            order_id: 7,
            reason: None
        }
    );
}

#[tokio::test]
async fn without_strict_mode_the_schema_goes_as_it_is() {
    let (function, _) = sent_tools(false).await;
    assert!(function.get("strict").is_none());
    assert_eq!(function["parameters"], Refund::json_schema());
}
