//! Typed outputs (`#[agent(output = SomeDto)]`) on the scripted model: the request asks for the
//! schema, the answer is decoded and validated like a tool input, an invalid one goes back to
//! the model as a correction up to `output_retries`, then `RunError::InvalidOutput`; the typed
//! value on `RunOutput`, the output boundary on the JSON, the stream, threads.
use std::sync::Arc;

use agboss_core::dto::Dto;
use agboss_core::engine::{OutputError, RunContext, RunError, RunEvent};
use agboss_core::model::{Message, ModelRequest};
use agboss_core::prelude::*;
use agboss_testing::scripted::{ScriptedModel, Turn};
use agboss_testing::trajectory::assert_trajectory;
use serde_json::json;

mod boundary;
mod corrections;

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct VerdictDto {
    #[boolean(prompt = "Whether the refund is granted")]
    pub granted: bool,
    #[text(prompt = "Why, in one sentence", min_length = 3, max_length = 200)]
    pub reason: String,
    #[integer(prompt = "Amount refunded, in cents", min = 0, max = 100000)]
    pub amount_cents: u32,
}

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct OrderRefDto {
    #[text(prompt = "Order id")]
    pub order_id: String,
}

#[tool(name = "order-status-tool", description = "Tells an order's status", input = OrderRefDto, output = OrderRefDto)]
pub struct OrderStatusTool;
impl ToolHandler<OrderRefDto, OrderRefDto> for OrderStatusTool {
    async fn run(&self, input: OrderRefDto) -> Result<OrderRefDto, ToolError> {
        Ok(OrderRefDto {
            order_id: format!("{} arrived broken", input.order_id),
        })
    }
}

#[agent(
    name = "refund-agent",
    description = "Decides refunds",
    instructions = "Decide the refund.",
    tools = [OrderStatusTool],
    output = VerdictDto,
)]
pub struct RefundAgent;

#[agent(
    name = "strict-refund-agent",
    description = "Decides refunds, no second chance",
    output = VerdictDto,
    output_retries = 0
)]
pub struct StrictRefundAgent;

#[agent(name = "chat-agent", description = "Free text")]
pub struct ChatAgent;

#[pii_policy(name = "verdict-email-pii-policy", description = "Masks e-mails", detectors = [email])]
pub struct VerdictEmailPiiPolicy;

/// Rewrites `confidential` in answers (it sees the JSON text).
#[output_guardrail(
    name = "confidential-output-guardrail",
    description = "Keeps secrets out"
)]
pub struct ConfidentialOutputGuardrail;
impl OutputGuardrail for ConfidentialOutputGuardrail {
    async fn check_output(
        &self,
        output: &GuardrailContext<'_>,
    ) -> Result<GuardrailVerdict, GuardrailError> {
        let text = output.text();
        Ok(if text.contains("off-topic") {
            GuardrailVerdict::respond("Let's stay on topic.")
        } else if text.contains("confidential") {
            GuardrailVerdict::rewrite(text.replace("confidential", "[withheld]"))
        } else {
            GuardrailVerdict::pass()
        })
    }
}

#[agent(
    name = "guarded-refund-agent",
    description = "Decides refunds, guarded",
    output = VerdictDto,
    output_guardrails = [ConfidentialOutputGuardrail],
    pii_policies = [VerdictEmailPiiPolicy],
    mask_answer,
)]
pub struct GuardedRefundAgent;

fn app(model: &Arc<ScriptedModel>) -> AppBuilder {
    App::builder()
        .agent::<RefundAgent>()
        .agent::<StrictRefundAgent>()
        .agent::<ChatAgent>()
        .agent::<GuardedRefundAgent>()
        .shared_model(Arc::clone(model) as _)
}

fn verdict() -> VerdictDto {
    VerdictDto {
        granted: true,
        reason: "Damaged on arrival.".into(),
        amount_cents: 1250,
    }
}

fn system_texts(req: &ModelRequest) -> Vec<String> {
    req.messages
        .iter()
        .filter_map(|m| match m {
            Message::System { content } => Some(content.clone()),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn a_typed_answer_is_asked_for_by_its_schema_and_read_back_typed() {
    let model = Arc::new(ScriptedModel::new([Turn::text(
        r#"{"granted": true, "reason": "Damaged on arrival.", "amountCents": 1250}"#,
    )]));
    let app = app(&model).build().unwrap();
    let out = app
        .execute("refund-agent", "Order 7 arrived broken.", RunContext::new())
        .await
        .unwrap();
    assert_eq!(out.value::<VerdictDto>().unwrap(), verdict());
    assert_eq!(
        out.output,
        Some(json!({"granted": true, "reason": "Damaged on arrival.", "amountCents": 1250}))
    );
    // The text is the typed value's JSON (its canonical form, not the model's spacing).
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&out.text).unwrap(),
        out.output.clone().unwrap()
    );
    assert!(!out.text.contains(": "), "{}", out.text);
    let req = model.last_request().unwrap();
    let format = req.output.expect("the request asks for the output");
    assert_eq!(format.name, "VerdictDto");
    assert_eq!(format.schema, VerdictDto::json_schema());
    // The scripted model has no structured mode: the schema is in a system message, after
    // the instructions and before the user's text.
    let systems = system_texts(&model.last_request().unwrap());
    assert_eq!(systems.len(), 2, "{systems:?}");
    assert_eq!(systems[0], "Decide the refund.");
    assert!(systems[1].contains("\"amountCents\""), "{}", systems[1]);
    assert!(matches!(
        model.last_request().unwrap().messages.last(),
        Some(Message::User { .. })
    ));
}

#[tokio::test]
async fn a_model_with_a_structured_mode_gets_no_schema_prompt() {
    let model = Arc::new(ScriptedModel::new([Turn::output(&verdict())]).with_structured_output());
    let app = app(&model).build().unwrap();
    let out = app
        .execute("refund-agent", "Order 7?", RunContext::new())
        .await
        .unwrap();
    assert_eq!(out.value::<VerdictDto>().unwrap(), verdict());
    let req = model.last_request().unwrap();
    assert_eq!(system_texts(&req), vec!["Decide the refund.".to_string()]);
    assert_eq!(req.output.unwrap().name, "VerdictDto");
}

#[tokio::test]
async fn a_typed_agent_calls_its_tools_before_it_answers() {
    let model = Arc::new(ScriptedModel::new([
        Turn::tool_call("order-status-tool", json!({"orderId": "O-7"})),
        Turn::output(&verdict()),
    ]));
    let app = app(&model).build().unwrap();
    let out = app
        .execute("refund-agent", "Order 7?", RunContext::new())
        .await
        .unwrap();
    assert_eq!(out.tool_calls, 1);
    assert_eq!(out.value::<VerdictDto>().unwrap(), verdict());
    // Every turn asks for the output, the tool's turn too.
    assert!(model.requests().iter().all(|r| r.output.is_some()));
    assert!(
        model.requests()[1]
            .last_tool_result()
            .and_then(Message::text)
            .is_some_and(|t| t.contains("arrived broken"))
    );
}

#[test]
fn describe_names_the_typed_answer_of_each_typed_agent() {
    let model = Arc::new(ScriptedModel::new([]));
    let text = app(&model).build().unwrap().describe();
    let typed = |agent: &str| {
        let start = text.find(&format!("agent `{agent}`")).expect(&text);
        text[start..]
            .lines()
            .nth(1)
            .unwrap_or_default()
            .trim()
            .to_owned()
    };
    assert_eq!(typed("refund-agent"), "answers a typed `VerdictDto`");
    assert_ne!(
        typed("chat-agent"),
        "answers a typed `VerdictDto`",
        "{text}"
    );
}

#[tokio::test]
async fn a_free_text_answer_has_no_typed_value() {
    let model = Arc::new(ScriptedModel::new([Turn::text(r#"{"granted": true}"#)]));
    let app = app(&model).build().unwrap();
    let out = app
        .execute("chat-agent", "hi", RunContext::new())
        .await
        .unwrap();
    assert_eq!(out.output, None);
    assert!(matches!(
        out.value::<VerdictDto>(),
        Err(OutputError::Untyped)
    ));
    assert!(model.last_request().unwrap().output.is_none());
}

#[tokio::test]
async fn a_typed_value_read_as_another_dto_names_the_failing_paths() {
    let model = Arc::new(ScriptedModel::new([Turn::output(&verdict())]));
    let app = app(&model).build().unwrap();
    let out = app
        .execute("refund-agent", "Order 7?", RunContext::new())
        .await
        .unwrap();
    let Err(OutputError::Invalid(err)) = out.value::<OrderRefDto>() else {
        panic!("read as another DTO");
    };
    assert!(err.at("$.orderId").is_some(), "{err}");
}

#[tokio::test]
async fn a_scripted_typed_answer_refuses_a_request_that_asks_for_none() {
    let model = Arc::new(ScriptedModel::new([Turn::output(&verdict())]));
    let app = app(&model).build().unwrap();
    let err = app
        .execute("chat-agent", "hi", RunContext::new())
        .await
        .unwrap_err();
    assert!(
        matches!(&*err, RunError::Model { .. }) && err.to_string().contains("free text"),
        "{err}"
    );
}

/// The text deltas of a run's events, concatenated.
fn deltas(events: &[RunEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            RunEvent::TextDelta { delta, .. } => Some(delta.clone()),
            _ => None,
        })
        .collect()
}
