//! Workflow flows: steps in order under the workflow's scope, `on_error` recovering a block,
//! re-raising, and a block without a handler failing the run.
use std::sync::Arc;

use agboss_core::dto::Dto;
use agboss_core::engine::workflow::{Flow, Recovery, WorkflowFlow};
use agboss_core::engine::{RunContext, RunError, RunEvent, StepOutcome, Target};
use agboss_core::model;
use agboss_core::model::Message;
use agboss_core::prelude::*;
use agboss_testing::scripted::{ScriptedModel, Turn};
use serde_json::json;

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct RefundDto {
    #[text(prompt = "Order ID")]
    pub order_id: String,
    #[integer(prompt = "Cents", min = 1)]
    pub amount_cents: i64,
}

#[tool(name = "refund-tool", description = "Refunds an order", input = RefundDto, output = RefundDto)]
pub struct RefundTool;

impl ToolHandler<RefundDto, RefundDto> for RefundTool {
    async fn run(&self, input: RefundDto) -> Result<RefundDto, ToolError> {
        Ok(input)
    }
}

/// Attached at the workflow only: refunds above 100 00 cents are blocked.
#[tool_interceptor(name = "refund-limit-tool-interceptor", description = "Caps refunds")]
pub struct RefundLimitToolInterceptor;

impl BeforeToolCall for RefundLimitToolInterceptor {
    async fn before_tool_call(
        &self,
        call: &ToolCallContext<'_>,
    ) -> Result<ToolCallDecision, InterceptorError> {
        Ok(match call.input()["amountCents"].as_i64() {
            Some(c) if c > 10_000 => {
                ToolCallDecision::block(format!("refund of {c} cents needs a human"))
            }
            _ => ToolCallDecision::allow(),
        })
    }
}

#[agent(name = "refund-agent", description = "Refunds orders", tools = [RefundTool])]
pub struct RefundAgent;

#[agent(name = "summary-agent", description = "Summarizes")]
pub struct SummaryAgent;

#[workflow(name = "refund-workflow", description = "Refunds with a cap",
           agents = [RefundAgent, SummaryAgent], tools = [RefundTool],
           tool_interceptors = [RefundLimitToolInterceptor])]
pub struct RefundWorkflow;

impl WorkflowFlow for RefundWorkflow {
    fn flow() -> Flow {
        Flow::new()
            .agent::<RefundAgent>()
            .on_error(|err, ctx| match err.as_blocked() {
                Some(blocked) => Ok(Recovery::Output(format!(
                    "escalated to a human ({}) for: {}",
                    blocked.text(),
                    ctx.input
                ))),
                None => Err(err),
            })
            .agent::<SummaryAgent>()
    }
}

fn app(turns: impl IntoIterator<Item = Turn>) -> (App, Arc<ScriptedModel>) {
    let model = Arc::new(ScriptedModel::new(turns));
    let app = App::builder()
        .name("desk-application")
        .agent::<RefundAgent>()
        .workflow::<RefundWorkflow>()
        .model(Arc::clone(&model))
        .build()
        .unwrap();
    (app, model)
}

#[tokio::test]
async fn steps_run_in_order_and_each_output_is_the_next_input() {
    let (app, model) = app([
        Turn::tool_call("refund-tool", json!({"orderId": "A-1", "amountCents": 500})),
        Turn::text("Refunded 500 cents on A-1."),
        Turn::text("Summary: small refund done."),
    ]);
    let out = app
        .execute(
            Target::workflow::<RefundWorkflow>(),
            "refund A-1",
            RunContext::new(),
        )
        .await
        .unwrap();
    assert_eq!(out.text, "Summary: small refund done.");
    let requests = model.requests();
    assert_eq!(requests.len(), 3);
    assert_eq!(
        requests[2].messages.last(),
        Some(&Message::user("Refunded 500 cents on A-1."))
    );
}

#[tokio::test]
async fn a_block_inside_a_workflow_step_is_caught_by_on_error() {
    let (app, model) = app([
        Turn::tool_call(
            "refund-tool",
            json!({"orderId": "A-1", "amountCents": 50_000}),
        ),
        Turn::text("Summary: escalated."),
    ]);
    let (events, result) = app
        .stream(
            Target::workflow::<RefundWorkflow>(),
            "refund A-1 in full",
            RunContext::new(),
        )
        .collect_all()
        .await;
    assert_eq!(result.unwrap().text, "Summary: escalated.");
    // The handler's replacement output is the next step's input.
    assert_eq!(
        model.requests()[1].messages.last(),
        Some(&Message::user(
            "escalated to a human (refund of 50000 cents needs a human) for: refund A-1 in full"
        ))
    );
    let recovered: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            RunEvent::StepFinished {
                step,
                outcome: StepOutcome::Recovered { error },
                ..
            } => {
                assert!(error.contains("refund-limit-tool-interceptor"));
                Some(step.as_str())
            }
            _ => None,
        })
        .collect();
    assert_eq!(recovered, ["refund-agent"]);
}

#[tokio::test]
async fn steps_run_under_the_workflows_scope() {
    // The same agent directly under the application has no refund cap: the call runs.
    let (app, _) = app([
        Turn::tool_call(
            "refund-tool",
            json!({"orderId": "A-1", "amountCents": 50_000}),
        ),
        Turn::text("Refunded in full."),
    ]);
    let out = app
        .execute(Target::agent::<RefundAgent>(), "x", RunContext::new())
        .await
        .unwrap();
    assert_eq!(out.text, "Refunded in full.");
    let in_workflow = app.agent_in::<RefundWorkflow, RefundAgent>().unwrap();
    assert_eq!(
        in_workflow.tools[0].chain().before_order(),
        ["refund-limit-tool-interceptor"]
    );
}

#[tokio::test]
async fn a_block_without_a_handler_fails_the_workflow() {
    let (app, model) = app([
        Turn::tool_call(
            "refund-tool",
            json!({"orderId": "A-1", "amountCents": 50_000}),
        ),
        Turn::text("never reached"),
    ]);
    let flow = Flow::new().agent::<RefundAgent>().agent::<SummaryAgent>();
    let err = app
        .execute(
            Target::workflow_with::<RefundWorkflow>(flow),
            "x",
            RunContext::new(),
        )
        .await
        .unwrap_err();
    assert_eq!(
        err.as_blocked().unwrap().interceptor,
        "refund-limit-tool-interceptor"
    );
    assert_eq!(model.request_count(), 1);
}

#[tokio::test]
async fn a_handler_can_re_raise_and_on_any_error_sees_it() {
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen2 = Arc::clone(&seen);
    let flow = Flow::new()
        .agent::<RefundAgent>()
        .on_error(|err, _| Err(err))
        .on_any_error(move |err, ctx| {
            seen2
                .lock()
                .unwrap()
                .push(format!("{}#{}", ctx.step, ctx.index));
            Err(err)
        });
    let (app, _) = app([Turn::tool_call(
        "refund-tool",
        json!({"orderId": "A-1", "amountCents": 50_000}),
    )]);
    let err = app
        .execute(
            Target::workflow_with::<RefundWorkflow>(flow),
            "x",
            RunContext::new(),
        )
        .await
        .unwrap_err();
    assert!(matches!(
        *err,
        RunError::Step(StepFailedError::ToolBlocked(_))
    ));
    assert_eq!(*seen.lock().unwrap(), ["refund-agent#0"]);
}

#[tokio::test]
async fn tool_steps_use_the_workflow_chain_and_recover_with_on_error() {
    let flow = || {
        Flow::new()
            .map("to-refund", |text| {
                let cents: i64 = text.trim().parse().map_err(|_| StepFailedError::Other {
                    step: "to-refund".into(),
                    message: format!("not a number: {text}"),
                })?;
                Ok(json!({"orderId": "A-9", "amountCents": cents}).to_string())
            })
            .tool::<RefundTool>()
            .on_error(|err, _| match err.as_blocked() {
                Some(_) => Ok(Recovery::Finish("needs a human".into())),
                None => Err(err),
            })
    };
    let (app, _) = app([]);
    let out = app
        .execute(
            Target::workflow_with::<RefundWorkflow>(flow()),
            "700",
            RunContext::new(),
        )
        .await
        .unwrap();
    assert_eq!(out.text, r#"{"orderId":"A-9","amountCents":700}"#);
    let out = app
        .execute(
            Target::workflow_with::<RefundWorkflow>(flow()),
            "70000",
            RunContext::new(),
        )
        .await
        .unwrap();
    assert_eq!(out.text, "needs a human");
    // A map failure without a handler is a step failure of its own.
    let err = app
        .execute(
            Target::workflow_with::<RefundWorkflow>(flow()),
            "lots",
            RunContext::new(),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(*err, RunError::Step(StepFailedError::Other { ref step, .. }) if step == "to-refund")
    );
}

#[tokio::test]
async fn model_errors_in_a_step_are_catchable_and_unknown_steps_are_not() {
    let flow = Flow::new()
        .agent::<SummaryAgent>()
        .on_error(|_, _| Ok(Recovery::Skip));
    let (app, _) = app([Turn::error(model::ModelError::other("down"))]);
    let out = app
        .execute(
            Target::workflow_with::<RefundWorkflow>(flow),
            "as is",
            RunContext::new(),
        )
        .await
        .unwrap();
    assert_eq!(out.text, "as is");

    #[agent(name = "outsider-agent", description = "Not in the workflow")]
    pub struct OutsiderAgent;
    let flow = Flow::new().agent::<OutsiderAgent>();
    let err = app
        .execute(
            Target::workflow_with::<RefundWorkflow>(flow),
            "x",
            RunContext::new(),
        )
        .await
        .unwrap_err();
    assert!(matches!(*err, RunError::UnknownTarget { ref name, .. } if name == "outsider-agent"));
}

#[tokio::test]
async fn a_workflow_by_name_runs_its_default_flow() {
    let (app, _) = app([
        Turn::text("refund agent answer"),
        Turn::text("summary agent answer"),
    ]);
    let out = app
        .execute("refund-workflow", "x", RunContext::new())
        .await
        .unwrap();
    assert_eq!(out.text, "summary agent answer");
}
