//! The events of a whole run as a person reads them (`{:#}` of `RunEvent`): no `Debug` text,
//! one line each, indented by their place in the run.
use std::sync::Arc;

use agboss_core::dto::Dto;
use agboss_core::engine::{RunContext, RunEvent, Target};
use agboss_core::model::{ModelResponse, ToolCallRequest, Usage};
use agboss_core::prelude::*;
use agboss_testing::scripted::{ScriptedModel, Turn};

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct OrderInputDto {
    #[text(prompt = "Order ID")]
    pub order_id: String,
}

#[tool(name = "get-order-tool", description = "Loads an order", input = OrderInputDto,
       output = OrderInputDto)]
pub struct GetOrderTool;

impl ToolHandler<OrderInputDto, OrderInputDto> for GetOrderTool {
    async fn run(&self, input: OrderInputDto) -> Result<OrderInputDto, ToolError> {
        Ok(input)
    }
}

#[tool_interceptor(name = "acme-only-tool-interceptor", description = "Only ACME orders")]
pub struct AcmeOnlyToolInterceptor;

impl BeforeToolCall for AcmeOnlyToolInterceptor {
    async fn before_tool_call(
        &self,
        call: &ToolCallContext<'_>,
    ) -> Result<ToolCallDecision, InterceptorError> {
        Ok(match call.input()["orderId"].as_str() {
            Some(id) if id.starts_with("ACME-") => ToolCallDecision::allow(),
            Some(id) if id.starts_with("EVIL-") => ToolCallDecision::block("flagged order"),
            _ => ToolCallDecision::reply_to_model("Not an ACME order."),
        })
    }
}

#[agent(name = "pretty-agent", description = "Answers", tools = [GetOrderTool],
        tool_interceptors = [AcmeOnlyToolInterceptor])]
pub struct PrettyAgent;

#[agent(name = "pretty-other-agent", description = "Anything else")]
pub struct PrettyOtherAgent;

#[router(name = "pretty-router", description = "Routes", routes = [PrettyAgent, PrettyOtherAgent],
         fallback = PrettyOtherAgent)]
pub struct PrettyRouter;

async fn lines(turns: Vec<Turn>) -> Vec<String> {
    let app = App::builder()
        .router::<PrettyRouter>()
        .model(Arc::new(ScriptedModel::new(turns)))
        .build()
        .unwrap();
    let (events, result) = app
        .stream(
            Target::router::<PrettyRouter>(),
            "Where is ACME-1?",
            RunContext::new().run_id("run-1"),
        )
        .collect_all()
        .await;
    let mut out: Vec<String> = events
        .iter()
        .filter(|e| !matches!(e, RunEvent::TextDelta { .. }))
        .map(|e| format!("{e:#}"))
        .collect();
    match result {
        Ok(output) => out.push(format!("{:#}", RunEvent::Completed(output))),
        Err(err) => out.push(format!("error: {err}")),
    }
    out
}

#[tokio::test]
async fn a_run_reads_as_indented_lines_without_debug_text() {
    let got = lines(vec![
        Turn::text("pretty-agent"),
        Turn::response(
            ModelResponse::tool_calls([
                ToolCallRequest::new("c1", "get-order-tool", r#"{"orderId":"OTHER-9"}"#),
                ToolCallRequest::new("c2", "get-order-tool", r#"{"orderId":"ACME-1"}"#),
            ])
            .with_usage(Usage::new(10, 5)),
        ),
        Turn::text("ACME-1 is on its way."),
    ])
    .await;
    let want = [
        "run run-1 → pretty-router",
        "  ▶ router pretty-router ← Where is ACME-1?",
        "    ⇢ pretty-router chose pretty-agent (the model answered \"pretty-agent\")",
        "  ■ router pretty-router done",
        "  ▶ agent pretty-agent ← Where is ACME-1?",
        "    · pretty-agent used 15 tokens (10 in, 5 out)",
        "    → c1 get-order-tool {\"orderId\":\"OTHER-9\"}",
        "    → c2 get-order-tool {\"orderId\":\"ACME-1\"}",
        "      ↩ c1 replied to the model by acme-only-tool-interceptor: Not an ACME order.",
        "      = c1 Not an ACME order.  (an error observation)",
        "      ✔ c2 allowed",
        "      = c2 {\"orderId\":\"ACME-1\"}",
        "    ✎ pretty-agent: ACME-1 is on its way.",
        "  ■ agent pretty-agent done",
        "completed: \"ACME-1 is on its way.\" (3 model turns, 2 tool calls, 15 tokens)",
    ];
    assert_eq!(got, want, "\n{}", got.join("\n"));
}

#[tokio::test]
async fn a_block_and_a_failed_step_read_plainly() {
    let got = lines(vec![
        Turn::text("pretty-agent"),
        Turn::tool_call_with_id(
            "c1",
            "get-order-tool",
            serde_json::json!({"orderId": "EVIL-1"}),
        ),
    ])
    .await;
    assert!(
        got.contains(
            &"      ✖ c1 BLOCKED by acme-only-tool-interceptor: flagged order".to_string()
        ),
        "{got:#?}"
    );
    assert!(
        got.iter()
            .any(|l| l.starts_with("  ■ agent pretty-agent FAILED: ")),
        "{got:#?}"
    );
    for line in &got {
        assert!(
            !line.contains(" {") || line.contains("{\""),
            "no Debug structs: {line}"
        );
        assert!(!line.contains("ModelChoice"), "{line}");
    }
}
