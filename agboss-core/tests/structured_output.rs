//! A request's `output` on the wire: OpenAI's `response_format` `json_schema` (strict), and
//! Anthropic's forced `final_output` tool, read back as the answer's text (whole answers and
//! streams); a typed agent over each client, end to end, against a local server.

mod support;

use std::time::Duration;

use agboss_core::dto::Dto;
use agboss_core::model::{
    AnthropicModel, ChatModel, FinishReason, Message, ModelRequest, ModelStreamEvent, OUTPUT_TOOL,
    OpenAiCompatibleModel, OutputFormat, ToolDefinition, collect_stream,
};
use agboss_core::prelude::*;
use serde_json::json;
use support::{MockServer, Reply};

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct TriageDto {
    #[text(prompt = "How urgent: low or high", pattern = "^(low|high)$")]
    pub urgency: String,
    #[text(prompt = "A note for the desk")]
    pub note: Option<String>,
}

#[agent(name = "triage-agent", description = "Triages", output = TriageDto)]
pub struct TriageAgent;

fn request(with_tool: bool) -> ModelRequest {
    let req = ModelRequest::new([Message::user("The server is down!")])
        .with_output(OutputFormat::new("TriageDto", TriageDto::json_schema()));
    if with_tool {
        req.with_tools([ToolDefinition::new(
            "lookup-tool",
            "Looks up",
            json!({"type": "object", "properties": {}}),
        )])
    } else {
        req
    }
}

fn openai(server: &MockServer, streaming: bool) -> OpenAiCompatibleModel {
    OpenAiCompatibleModel::builder()
        .base_url(server.base_url())
        .model("m")
        .timeout(Duration::from_secs(5))
        .streaming(streaming)
        .build()
        .unwrap()
}

fn anthropic(server: &MockServer, streaming: bool) -> AnthropicModel {
    AnthropicModel::builder()
        .base_url(server.base_url().trim_end_matches("/v1").to_owned())
        .api_key("k")
        .model("claude-test")
        .timeout(Duration::from_secs(5))
        .streaming(streaming)
        .build()
        .unwrap()
}

fn openai_answer(content: &str) -> serde_json::Value {
    json!({
        "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "m",
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": content}}],
        "usage": {"prompt_tokens": 3, "completion_tokens": 5, "total_tokens": 8}
    })
}

fn anthropic_answer(input: serde_json::Value) -> serde_json::Value {
    json!({"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test",
           "content": [{"type": "text", "text": "Here it is."},
                       {"type": "tool_use", "id": "toolu_9", "name": OUTPUT_TOOL, "input": input}],
           "stop_reason": "tool_use", "usage": {"input_tokens": 7, "output_tokens": 4}})
}

#[tokio::test]
async fn openai_asks_for_the_strict_json_schema() {
    let server = MockServer::start(vec![Reply::json(
        200,
        openai_answer(r#"{"urgency":"high","note":null}"#),
    )])
    .await;
    let model = openai(&server, false);
    assert!(model.structured_output());
    let response = model.complete(&request(false)).await.unwrap();
    assert_eq!(
        response.message.content.as_deref(),
        Some(r#"{"urgency":"high","note":null}"#)
    );
    let body = server.requests().await[0].json();
    assert_eq!(body["response_format"]["type"], "json_schema");
    let schema = &body["response_format"]["json_schema"];
    assert_eq!(schema["name"], "TriageDto");
    assert_eq!(schema["strict"], true);
    assert_eq!(schema["schema"], TriageDto::strict_json_schema());
    // What a strict model sends for an absent optional field decodes.
    let triage = TriageDto::from_json_str(response.message.content.as_deref().unwrap()).unwrap();
    assert_eq!(triage.note, None);
}

#[tokio::test]
async fn a_request_without_output_sends_no_response_format() {
    let server = MockServer::start(vec![Reply::json(200, openai_answer("hi"))]).await;
    let req = ModelRequest::new([Message::user("hi")]);
    openai(&server, false).complete(&req).await.unwrap();
    let body = server.requests().await[0].json();
    assert!(body.get("response_format").is_none(), "{body}");
}

#[tokio::test]
async fn anthropic_forces_the_output_tool_and_reads_its_input_as_the_answer() {
    let server = MockServer::start(vec![
        Reply::json(200, anthropic_answer(json!({"urgency": "high"}))),
        Reply::json(200, anthropic_answer(json!({"urgency": "low"}))),
    ])
    .await;
    let model = anthropic(&server, false);
    assert!(model.structured_output());
    let alone = model.complete(&request(false)).await.unwrap();
    assert_eq!(
        alone.message.content.as_deref(),
        Some(r#"{"urgency":"high"}"#)
    );
    assert!(alone.message.tool_calls.is_empty());
    assert_eq!(alone.finish_reason, FinishReason::Stop);
    let beside = model.complete(&request(true)).await.unwrap();
    assert_eq!(
        beside.message.content.as_deref(),
        Some(r#"{"urgency":"low"}"#)
    );

    let sent = server.requests().await;
    let first = sent[0].json();
    assert_eq!(
        first["tool_choice"],
        json!({"type": "tool", "name": OUTPUT_TOOL})
    );
    assert_eq!(first["tools"].as_array().unwrap().len(), 1);
    assert_eq!(first["tools"][0]["name"], OUTPUT_TOOL);
    assert_eq!(first["tools"][0]["input_schema"], TriageDto::json_schema());
    // Beside the request's own tools: any tool, the output one last.
    let second = sent[1].json();
    assert_eq!(second["tool_choice"], json!({"type": "any"}));
    let names: Vec<&str> = second["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["lookup-tool", OUTPUT_TOOL]);
}

#[tokio::test]
async fn anthropic_keeps_real_tool_calls_beside_the_output_tool() {
    let mut answer = anthropic_answer(json!({"urgency": "low"}));
    answer["content"]
        .as_array_mut()
        .unwrap()
        .push(json!({"type": "tool_use", "id": "toolu_1", "name": "lookup-tool", "input": {}}));
    let server = MockServer::start(vec![Reply::json(200, answer)]).await;
    let response = anthropic(&server, false)
        .complete(&request(true))
        .await
        .unwrap();
    assert_eq!(response.message.tool_calls.len(), 1);
    assert_eq!(response.message.tool_calls[0].name, "lookup-tool");
    assert_eq!(response.finish_reason, FinishReason::ToolCalls);
}

fn sse(events: &[serde_json::Value]) -> Reply {
    Reply::sse_typed_events(events)
}

fn output_stream() -> Vec<serde_json::Value> {
    vec![
        json!({"type": "message_start", "message": {"id": "msg_1", "type": "message",
               "role": "assistant", "content": [], "usage": {"input_tokens": 20, "output_tokens": 1}}}),
        json!({"type": "content_block_start", "index": 0, "content_block":
               {"type": "tool_use", "id": "toolu_1", "name": OUTPUT_TOOL, "input": {}}}),
        json!({"type": "content_block_delta", "index": 0, "delta":
               {"type": "input_json_delta", "partial_json": "{\"urgency\":"}}),
        json!({"type": "content_block_delta", "index": 0, "delta":
               {"type": "input_json_delta", "partial_json": "\"high\"}"}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 9}}),
        json!({"type": "message_stop"}),
    ]
}

#[tokio::test]
async fn an_anthropic_stream_finishes_with_the_output_as_text() {
    let server = MockServer::start(vec![sse(&output_stream())]).await;
    let stream = anthropic(&server, true)
        .stream(&request(false))
        .await
        .unwrap();
    let response = collect_stream(stream).await.unwrap();
    assert_eq!(
        response.message.content.as_deref(),
        Some(r#"{"urgency":"high"}"#)
    );
    assert!(response.message.tool_calls.is_empty());
    // No text delta of the half object: the stream's text events are the model's text only.
    let server = MockServer::start(vec![sse(&output_stream())]).await;
    let stream = anthropic(&server, true)
        .stream(&request(false))
        .await
        .unwrap();
    let events: Vec<ModelStreamEvent> = futures::StreamExt::collect::<Vec<_>>(stream)
        .await
        .into_iter()
        .map(Result::unwrap)
        .collect();
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, ModelStreamEvent::TextDelta { .. }))
    );
}

#[tokio::test]
async fn a_typed_agent_over_each_client_reads_its_typed_answer() {
    let server = MockServer::start(vec![Reply::json(
        200,
        openai_answer(r#"{"urgency":"high","note":"Page the on-call."}"#),
    )])
    .await;
    let app = App::builder()
        .agent::<TriageAgent>()
        .model(openai(&server, false))
        .build()
        .unwrap();
    let out = app
        .execute("triage-agent", "The server is down!", RunContext::new())
        .await
        .unwrap();
    let triage: TriageDto = out.value().unwrap();
    assert_eq!(triage.urgency, "high");
    assert_eq!(triage.note.as_deref(), Some("Page the on-call."));
    // A structured model gets no schema prompt.
    let body = server.requests().await[0].json();
    assert_eq!(body["messages"].as_array().unwrap().len(), 1, "{body}");

    let server = MockServer::start(vec![sse(&output_stream())]).await;
    let app = App::builder()
        .agent::<TriageAgent>()
        .model(anthropic(&server, true))
        .build()
        .unwrap();
    let out = app
        .execute("triage-agent", "The server is down!", RunContext::new())
        .await
        .unwrap();
    assert_eq!(out.value::<TriageDto>().unwrap().urgency, "high");
}
