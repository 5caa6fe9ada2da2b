//! The agent loop: self-correction after `reply_to_model`, blocks, fail-closed guards, invalid and
//! unknown calls, parallel calls, tool-error policies, max_turns, streaming, routers.
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agboss_core::dto::Dto;
use agboss_core::engine::{
    CallDecision, CancelToken, RouteReason, RunContext, RunError, RunEvent, StepOutcome, Target,
};
use agboss_core::model::{
    Message, ModelError, ModelRequest, ModelResponse, ToolCallRequest, Usage,
};
use agboss_core::*;
use agboss_testing::scripted::{ScriptedModel, Turn};
use futures::StreamExt as _;
use serde_json::json;
use tokio::sync::Notify;

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct OrderInputDto {
    #[text(prompt = "Order ID", min_length = 3)]
    pub order_id: String,
}

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct OrderDto {
    #[text(prompt = "Order ID")]
    pub order_id: String,
    #[text(prompt = "Status")]
    pub status: String,
}

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct LabelDto {
    #[text(prompt = "Label")]
    pub label: String,
}

/// What ran, per app.
#[injectable(provided)]
pub struct Log {
    entries: Mutex<Vec<String>>,
    /// The `first` label waits for this; the `second` notifies it.
    turn: Notify,
    /// Never notified: `stuck-tool` waits forever.
    never: Notify,
    /// `count` calls in flight now, and the most seen at once.
    in_flight: AtomicUsize,
    max_in_flight: AtomicUsize,
}

impl Log {
    fn new() -> Arc<Self> {
        Arc::new(Self {
            entries: Mutex::new(Vec::new()),
            turn: Notify::new(),
            never: Notify::new(),
            in_flight: AtomicUsize::new(0),
            max_in_flight: AtomicUsize::new(0),
        })
    }
    fn push(&self, s: impl Into<String>) {
        self.entries.lock().unwrap().push(s.into());
    }
    fn entries(&self) -> Vec<String> {
        self.entries.lock().unwrap().clone()
    }
}

#[tool(name = "get-order-tool", description = "Loads an order", input = OrderInputDto,
       output = OrderDto, deps = [Log])]
pub struct GetOrderTool {
    log: Arc<Log>,
}

impl ToolHandler<OrderInputDto, OrderDto> for GetOrderTool {
    async fn run(&self, input: OrderInputDto) -> Result<OrderDto, ToolError> {
        self.log.push(format!("run:{}", input.order_id));
        if input.order_id.ends_with("FAIL") {
            return Err(ToolError::msg(
                "connection to db://admin:s3cret@10.0.0.5 refused",
            ));
        }
        Ok(OrderDto {
            order_id: input.order_id,
            status: "shipped".into(),
        })
    }
}

/// `first` waits until `second` finished: proves concurrency and that order is the model's.
#[tool(name = "ordered-tool", description = "Answers its label", input = LabelDto,
       output = LabelDto, deps = [Log])]
pub struct OrderedTool {
    log: Arc<Log>,
}

impl ToolHandler<LabelDto, LabelDto> for OrderedTool {
    async fn run(&self, input: LabelDto) -> Result<LabelDto, ToolError> {
        match input.label.as_str() {
            "count" => {
                let now = self.log.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
                self.log.max_in_flight.fetch_max(now, Ordering::SeqCst);
                for _ in 0..3 {
                    tokio::task::yield_now().await;
                }
                self.log.in_flight.fetch_sub(1, Ordering::SeqCst);
            }
            "first" => {
                // `notify_one` stores a permit, so the order of the two calls does not matter.
                self.log.turn.notified().await;
                self.log.push("first:done");
            }
            _ => {
                self.log.push(format!("{}:done", input.label));
                self.log.turn.notify_one();
            }
        }
        Ok(input)
    }
}

#[tool(name = "stuck-tool", description = "Never finishes", input = LabelDto,
       output = LabelDto, deps = [Log])]
pub struct StuckTool {
    log: Arc<Log>,
}

impl ToolHandler<LabelDto, LabelDto> for StuckTool {
    async fn run(&self, input: LabelDto) -> Result<LabelDto, ToolError> {
        self.log.push("stuck:start");
        self.log.never.notified().await;
        self.log.push("stuck:end");
        Ok(input)
    }
}

/// Orders must start with the tenant's prefix (reply); `EVIL-` is blocked; `ERR-` makes the
/// interceptor fail; `BOOM-` makes it panic.
#[tool_interceptor(name = "tenant-guard-tool-interceptor", description = "Tenant ACL",
                   deps = [TenantContext])]
pub struct TenantGuardToolInterceptor {
    tenant: TenantContext,
}

impl BeforeToolCall for TenantGuardToolInterceptor {
    async fn before_tool_call(
        &self,
        call: &ToolCallContext<'_>,
    ) -> Result<ToolCallDecision, InterceptorError> {
        let Some(order_id) = call.input()["orderId"].as_str().map(str::to_string) else {
            return Ok(ToolCallDecision::allow());
        };
        let prefix = format!("{}-", self.tenant.tenant_id().to_uppercase());
        Ok(if order_id.starts_with("EVIL-") {
            ToolCallDecision::block(format!("order {order_id} is flagged"))
        } else if order_id.starts_with("ERR-") {
            return Err(InterceptorError::msg("acl backend down"));
        } else if order_id.starts_with("BOOM-") {
            panic!("acl exploded");
        } else if !order_id.starts_with(&prefix) {
            ToolCallDecision::reply_to_model(format!(
                "Order {order_id} does not belong to tenant {}. Ask the user to confirm their order ID.",
                self.tenant.tenant_id()
            ))
        } else {
            ToolCallDecision::allow()
        })
    }
}

#[agent(name = "support-agent", description = "Answers order questions",
        instructions = "You help with orders.",
        tools = [GetOrderTool, OrderedTool, StuckTool],
        tool_interceptors = [TenantGuardToolInterceptor])]
pub struct SupportAgent;

#[agent(name = "strict-agent", description = "Fails on tool errors", tools = [GetOrderTool],
        tool_errors = "fail-step", tool_interceptors = [TenantGuardToolInterceptor])]
pub struct StrictAgent;

#[agent(name = "short-agent", description = "Two turns at most", tools = [GetOrderTool],
        max_turns = 2, tool_interceptors = [TenantGuardToolInterceptor])]
pub struct ShortAgent;

#[agent(name = "serial-agent", description = "One call at a time", tools = [OrderedTool],
        max_parallel_tool_calls = 1)]
pub struct SerialAgent;

#[agent(name = "billing-agent", description = "Invoices, refunds and payments")]
pub struct BillingAgent;

#[agent(name = "shipping-agent", description = "Deliveries and tracking")]
pub struct ShippingAgent;

#[router(name = "desk-router", description = "Routes support requests",
         routes = [BillingAgent, ShippingAgent], fallback = ShippingAgent)]
pub struct DeskRouter;

#[router(name = "first-router", description = "Falls back to the first route",
         routes = [BillingAgent, ShippingAgent])]
pub struct FirstRouter;

struct Fixture {
    app: App,
    model: Arc<ScriptedModel>,
    log: Arc<Log>,
}

fn fixture(turns: impl IntoIterator<Item = Turn>) -> Fixture {
    let model = Arc::new(ScriptedModel::new(turns));
    let log = Log::new();
    let app = App::builder()
        .name("test-application")
        .agent::<SupportAgent>()
        .agent::<StrictAgent>()
        .agent::<ShortAgent>()
        .agent::<SerialAgent>()
        .router::<DeskRouter>()
        .router::<FirstRouter>()
        .provide_arc(Arc::clone(&log))
        .model(Arc::clone(&model))
        .build()
        .expect("app builds");
    Fixture { app, model, log }
}

fn acme() -> RunContext {
    RunContext::new().tenant("acme")
}

/// The tool messages of a request, as `(call_id, content, is_error)`.
fn observations(req: &ModelRequest) -> Vec<(String, String, bool)> {
    req.messages
        .iter()
        .filter_map(|m| match m {
            Message::Tool {
                call_id,
                content,
                is_error,
            } => Some((call_id.clone(), content.clone(), *is_error)),
            _ => None,
        })
        .collect()
}

fn calls(calls: &[(&str, &str, &str)]) -> Turn {
    Turn::response(ModelResponse::tool_calls(
        calls
            .iter()
            .map(|(id, name, args)| ToolCallRequest::new(*id, *name, *args)),
    ))
}

fn self_correction_script() -> Vec<Turn> {
    vec![
        Turn::tool_call_with_id("c1", "get-order-tool", json!({"orderId": "OTHER-9"}))
            .with_usage(Usage::new(10, 5)),
        // The model reads the reply and corrects its arguments.
        Turn::from_fn(|req| {
            let reply = req.last_tool_result().and_then(Message::text).unwrap_or("");
            if reply.contains("does not belong to tenant acme") {
                Turn::tool_call_with_id("c2", "get-order-tool", json!({"orderId": "ACME-42"}))
            } else {
                Turn::text("the reply never arrived")
            }
        }),
        Turn::text("Order ACME-42 has shipped."),
    ]
}

#[tokio::test]
async fn reply_to_model_lets_the_model_self_correct() {
    let f = fixture(self_correction_script());
    let out = f
        .app
        .execute(
            Target::agent::<SupportAgent>(),
            "Where is my order?",
            acme(),
        )
        .await
        .unwrap();
    assert_eq!(out.text, "Order ACME-42 has shipped.");
    assert_eq!(out.model_turns, 3);
    assert_eq!(out.tool_calls, 2);
    assert_eq!(out.usage, Usage::new(10, 5));

    let requests = f.model.requests();
    assert_eq!(requests.len(), 3);
    // The first request: instructions, the user's input, the agent's tools.
    assert_eq!(
        requests[0].messages[0],
        Message::system("You help with orders.")
    );
    assert_eq!(requests[0].messages[1], Message::user("Where is my order?"));
    let tools: Vec<&str> = requests[0].tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(tools, ["get-order-tool", "ordered-tool", "stuck-tool"]);
    // The reply arrived as the observation of call c1, and the tool did not run for it.
    assert_eq!(
        observations(&requests[1]),
        [(
            "c1".to_string(),
            "Order OTHER-9 does not belong to tenant acme. Ask the user to confirm their order ID."
                .to_string(),
            true
        )]
    );
    // The corrected call ran; its output is c2's observation.
    let obs = observations(&requests[2]);
    assert_eq!(obs.len(), 2);
    assert_eq!(obs[1].0, "c2");
    assert_eq!(obs[1].1, r#"{"orderId":"ACME-42","status":"shipped"}"#);
    assert!(!obs[1].2);
    assert_eq!(f.log.entries(), ["run:ACME-42"]);
}

#[tokio::test]
async fn block_without_a_handler_fails_execute_with_tool_blocked_error() {
    let f = fixture([
        Turn::tool_call_with_id("c1", "get-order-tool", json!({"orderId": "EVIL-1"})),
        Turn::text("never reached"),
    ]);
    let err = f
        .app
        .execute(Target::agent::<SupportAgent>(), "refund EVIL-1", acme())
        .await
        .unwrap_err();
    let blocked = err.as_blocked().expect("a ToolBlockedError");
    assert_eq!(blocked.interceptor, "tenant-guard-tool-interceptor");
    assert_eq!(blocked.tool_name, "get-order-tool");
    assert_eq!(blocked.call_id, "c1");
    assert_eq!(
        blocked.kind,
        BlockKind::Block {
            reason: "order EVIL-1 is flagged".into()
        }
    );
    assert!(matches!(
        err,
        RunError::Step(StepFailedError::ToolBlocked(_))
    ));
    // The step failed at once: no further model turn, the tool never ran.
    assert_eq!(f.model.request_count(), 1);
    assert!(f.log.entries().is_empty());
}

#[tokio::test]
async fn failing_or_panicking_interceptors_fail_the_step_closed() {
    for (order, expect_panic) in [("ERR-1", false), ("BOOM-1", true)] {
        let f = fixture([
            Turn::tool_call("get-order-tool", json!({ "orderId": order })),
            Turn::text("never reached"),
        ]);
        let err = f
            .app
            .execute(Target::agent::<SupportAgent>(), "x", acme())
            .await
            .unwrap_err();
        let RunError::Step(StepFailedError::ToolCall { step, source }) = &err else {
            panic!("expected a failed step, got {err:?}");
        };
        assert_eq!(step, "support-agent");
        if expect_panic {
            assert!(matches!(
                **source,
                ToolCallError::InterceptorPanicked { .. }
            ));
        } else {
            assert!(matches!(**source, ToolCallError::InterceptorFailed { .. }));
        }
        assert_eq!(f.model.request_count(), 1, "never a soft observation");
        assert!(f.log.entries().is_empty());
    }
}

#[tokio::test]
async fn invalid_and_unknown_calls_become_observations_and_the_loop_goes_on() {
    let f = fixture([
        calls(&[
            ("u1", "refund-everything-tool", "{}"),
            ("j1", "get-order-tool", "{orderId: ACME-1"),
            ("d1", "get-order-tool", r#"{"orderId": 42}"#),
            ("d2", "get-order-tool", r#"{"orderId": "A"}"#),
            ("e1", "get-order-tool", ""),
        ]),
        Turn::text("Sorry, let me try again later."),
    ]);
    let out = f
        .app
        .execute(Target::agent::<SupportAgent>(), "x", acme())
        .await
        .unwrap();
    assert_eq!(out.text, "Sorry, let me try again later.");
    let obs = observations(&f.model.requests()[1]);
    let ids: Vec<&str> = obs.iter().map(|o| o.0.as_str()).collect();
    assert_eq!(ids, ["u1", "j1", "d1", "d2", "e1"]);
    assert!(obs.iter().all(|o| o.2), "every observation is an error");
    assert_eq!(
        obs[0].1,
        "Unknown tool `refund-everything-tool`. The tools you can call are: get-order-tool, ordered-tool, stuck-tool."
    );
    assert!(obs[1].1.contains("are not valid JSON"), "{}", obs[1].1);
    // DTO failures name the field paths.
    assert!(obs[2].1.contains("$.orderId:"), "{}", obs[2].1);
    assert!(obs[3].1.contains("$.orderId:"), "{}", obs[3].1);
    assert!(!obs[3].1.contains("line 1"), "{}", obs[3].1);
    // Empty arguments are `{}`: a missing required field.
    assert!(obs[4].1.contains("$.orderId: is required"), "{}", obs[4].1);
    assert!(f.log.entries().is_empty(), "no tool ran");
}

#[tokio::test]
async fn parallel_calls_run_concurrently_and_keep_the_models_order() {
    let f = fixture([
        calls(&[
            ("p1", "ordered-tool", r#"{"label":"first"}"#),
            ("p2", "ordered-tool", r#"{"label":"second"}"#),
        ]),
        Turn::text("done"),
    ]);
    // `first` cannot finish before `second` ran: a sequential loop would never end (the guard
    // turns that into a failure instead of a hang).
    let out = tokio::time::timeout(
        Duration::from_secs(20),
        f.app.execute(Target::agent::<SupportAgent>(), "x", acme()),
    )
    .await
    .expect("the calls ran concurrently")
    .unwrap();
    assert_eq!(out.text, "done");
    assert_eq!(f.log.entries(), ["second:done", "first:done"]);
    let obs = observations(&f.model.requests()[1]);
    assert_eq!(
        obs,
        [
            ("p1".to_string(), r#"{"label":"first"}"#.to_string(), false),
            ("p2".to_string(), r#"{"label":"second"}"#.to_string(), false),
        ]
    );
}

#[tokio::test]
async fn max_parallel_tool_calls_bounds_the_concurrency() {
    let three_counts = || {
        calls(&[
            ("p1", "ordered-tool", r#"{"label":"count"}"#),
            ("p2", "ordered-tool", r#"{"label":"count"}"#),
            ("p3", "ordered-tool", r#"{"label":"count"}"#),
        ])
    };
    // `serial-agent` sets `max_parallel_tool_calls = 1`.
    let f = fixture([three_counts(), Turn::text("done")]);
    let out = f
        .app
        .execute(Target::agent::<SerialAgent>(), "x", RunContext::new())
        .await
        .unwrap();
    assert_eq!(out.text, "done");
    assert_eq!(f.log.max_in_flight.load(Ordering::SeqCst), 1);

    // The default bound lets all three overlap; a run-level bound of 2 caps them.
    let f = fixture([three_counts(), Turn::text("done")]);
    f.app
        .execute(Target::agent::<SupportAgent>(), "x", acme())
        .await
        .unwrap();
    assert_eq!(f.log.max_in_flight.load(Ordering::SeqCst), 3);
    let f = fixture([three_counts(), Turn::text("done")]);
    f.app
        .execute(
            Target::agent::<SupportAgent>(),
            "x",
            acme().max_parallel_tool_calls(2),
        )
        .await
        .unwrap();
    assert_eq!(f.log.max_in_flight.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn a_block_cancels_sibling_calls_still_in_flight() {
    let f = fixture([
        calls(&[
            ("s1", "stuck-tool", r#"{"label":"slow"}"#),
            ("b1", "get-order-tool", r#"{"orderId":"EVIL-7"}"#),
            ("q1", "get-order-tool", r#"{"orderId":"ACME-7"}"#),
        ]),
        Turn::text("never reached"),
    ]);
    let stream = f.app.stream(
        Target::agent::<SupportAgent>(),
        "x",
        acme().max_parallel_tool_calls(2),
    );
    // If the loop waited for its siblings, `stuck-tool` would hold it forever.
    let (events, result) = tokio::time::timeout(Duration::from_secs(20), stream.collect_all())
        .await
        .expect("the block ended the step without waiting for siblings");
    let err = result.unwrap_err();
    assert_eq!(err.as_blocked().unwrap().call_id, "b1");
    // The sibling started and was dropped before finishing; the queued call never started.
    assert_eq!(f.log.entries(), ["stuck:start"]);
    let cancelled: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            RunEvent::ToolCallCancelled { call_id, .. } => Some(call_id.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(cancelled, ["s1", "q1"]);
    assert!(events.iter().any(|e| matches!(
        e,
        RunEvent::ToolCallDecision { call_id, decision: CallDecision::Blocked { .. }, .. } if call_id == "b1"
    )));
}

#[tokio::test]
async fn a_tool_error_is_reported_safely_by_default() {
    let f = fixture([
        Turn::tool_call_with_id("c1", "get-order-tool", json!({"orderId": "ACME-FAIL"})),
        Turn::text("The order system is down."),
    ]);
    let (events, result) = f
        .app
        .stream(Target::agent::<SupportAgent>(), "x", acme())
        .collect_all()
        .await;
    assert_eq!(result.unwrap().text, "The order system is down.");
    let obs = observations(&f.model.requests()[1]);
    assert_eq!(obs.len(), 1);
    assert!(obs[0].2);
    assert!(
        obs[0].1.contains("`get-order-tool` failed (tool error)"),
        "{}",
        obs[0].1
    );
    assert!(
        !obs[0].1.contains("s3cret"),
        "no internal details for the model"
    );
    // The operator sees the full error in the event stream.
    assert!(events.iter().any(|e| matches!(
        e,
        RunEvent::ToolError { error, call_id, .. } if call_id == "c1" && error.contains("s3cret")
    )));
}

#[tokio::test]
async fn a_tool_error_fails_the_step_under_fail_step() {
    let f = fixture([
        Turn::tool_call("get-order-tool", json!({"orderId": "ACME-FAIL"})),
        Turn::text("never reached"),
    ]);
    let err = f
        .app
        .execute(Target::agent::<StrictAgent>(), "x", acme())
        .await
        .unwrap_err();
    let RunError::Step(StepFailedError::ToolCall { step, source }) = &err else {
        panic!("expected a failed step, got {err:?}");
    };
    assert_eq!(step, "strict-agent");
    assert!(matches!(**source, ToolCallError::ToolFailed { .. }));
    assert!(err.as_blocked().is_none());
    assert_eq!(f.model.request_count(), 1);

    // The same policy per tool, on an agent that reports by default.
    let f = fixture([
        Turn::tool_call("get-order-tool", json!({"orderId": "ACME-FAIL"})),
        Turn::text("never reached"),
    ]);
    let ctx = acme().tool_error_policy("get-order-tool", ToolErrorPolicy::FailStep);
    let err = f
        .app
        .execute(Target::agent::<SupportAgent>(), "x", ctx)
        .await
        .unwrap_err();
    assert!(matches!(
        err,
        RunError::Step(StepFailedError::ToolCall { .. })
    ));
}

#[tokio::test]
async fn max_turns_ends_the_loop_with_a_typed_error() {
    let looping = || {
        (0..5)
            .map(|_| Turn::tool_call("get-order-tool", json!({"orderId": "ACME-1"})))
            .collect::<Vec<_>>()
    };
    let f = fixture(looping());
    let err = f
        .app
        .execute(Target::agent::<ShortAgent>(), "x", acme())
        .await
        .unwrap_err();
    assert!(
        matches!(&err, RunError::MaxTurnsExceeded { agent, max_turns: 2 } if agent == "short-agent"),
        "{err:?}"
    );
    assert_eq!(f.model.request_count(), 2);

    let f = fixture(looping());
    let err = f
        .app
        .execute(Target::agent::<SupportAgent>(), "x", acme().max_turns(3))
        .await
        .unwrap_err();
    assert!(matches!(
        err,
        RunError::MaxTurnsExceeded { max_turns: 3, .. }
    ));
    assert_eq!(f.model.request_count(), 3);
}

/// A compact rendering of an event, for order assertions.
fn label(e: &RunEvent) -> String {
    match e {
        RunEvent::RunStarted { target, .. } => format!("run-started:{target}"),
        RunEvent::StepStarted { step, .. } => format!("step-started:{step}"),
        RunEvent::TextDelta { .. } => "text".into(),
        RunEvent::Usage { usage, .. } => format!("usage:{}", usage.total_tokens),
        RunEvent::ToolCallRequested { call_id, .. } => format!("requested:{call_id}"),
        RunEvent::ToolCallDecision {
            call_id, decision, ..
        } => match decision {
            CallDecision::Allowed => format!("allowed:{call_id}"),
            CallDecision::RepliedToModel { .. } => format!("replied:{call_id}"),
            CallDecision::Blocked { .. } => format!("blocked:{call_id}"),
            CallDecision::GuardFailed { .. } => format!("guard-failed:{call_id}"),
            CallDecision::Rejected { .. } => format!("rejected:{call_id}"),
            _ => format!("decision:{call_id}"),
        },
        RunEvent::ToolResult {
            call_id, is_error, ..
        } => format!(
            "result:{call_id}:{}",
            if *is_error { "error" } else { "ok" }
        ),
        RunEvent::ToolError { call_id, .. } => format!("tool-error:{call_id}"),
        RunEvent::ToolCallCancelled { call_id, .. } => format!("cancelled:{call_id}"),
        RunEvent::RouteChosen { route, .. } => format!("route:{route}"),
        RunEvent::FinalAnswer { text, .. } => format!("final:{text}"),
        RunEvent::StepFinished { step, outcome, .. } => match outcome {
            StepOutcome::Succeeded => format!("step-finished:{step}"),
            _ => format!("step-failed:{step}"),
        },
        RunEvent::Completed(out) => format!("completed:{}", out.text),
        _ => "other".into(),
    }
}

#[tokio::test]
async fn the_stream_yields_events_in_order_and_ends_like_execute() {
    let f = fixture(self_correction_script());
    let mut stream = f.app.stream(
        Target::agent::<SupportAgent>(),
        "Where is my order?",
        acme().run_id("run-1"),
    );
    let mut labels = Vec::new();
    let mut last = None;
    while let Some(item) = stream.next().await {
        let event = item.expect("no error");
        labels.push(label(&event));
        last = Some(event);
    }
    let mut compact: Vec<String> = Vec::new();
    for l in labels {
        // Text deltas are many; keep one per run of them.
        if l == "text" && compact.last().is_some_and(|p| p == "text") {
            continue;
        }
        compact.push(l);
    }
    assert_eq!(
        compact,
        [
            "run-started:support-agent",
            "step-started:support-agent",
            "usage:15",
            "requested:c1",
            "replied:c1",
            "result:c1:error",
            "requested:c2",
            "allowed:c2",
            "result:c2:ok",
            "text",
            "final:Order ACME-42 has shipped.",
            "step-finished:support-agent",
            "completed:Order ACME-42 has shipped.",
        ]
    );
    let Some(RunEvent::Completed(streamed)) = last else {
        panic!("the stream ends with Completed")
    };
    // `execute` on the same script returns the same output.
    let g = fixture(self_correction_script());
    let executed = g
        .app
        .execute(
            Target::agent::<SupportAgent>(),
            "Where is my order?",
            acme().run_id("run-1"),
        )
        .await
        .unwrap();
    assert_eq!(streamed, executed);
    assert_eq!(g.model.requests(), f.model.requests());
}

#[tokio::test]
async fn the_stream_ends_with_the_same_error_as_execute() {
    let f = fixture([Turn::tool_call(
        "get-order-tool",
        json!({"orderId": "EVIL-1"}),
    )]);
    let items: Vec<_> = f
        .app
        .stream(Target::agent::<SupportAgent>(), "x", acme())
        .collect()
        .await;
    let last = items.last().unwrap();
    let Err(err) = last else {
        panic!("the stream ends with the error")
    };
    assert!(err.as_blocked().is_some());
    assert!(items[..items.len() - 1].iter().all(Result::is_ok));
}

#[tokio::test]
async fn a_router_runs_the_route_the_model_chose() {
    let f = fixture([
        Turn::text(" `Billing-Agent`."),
        Turn::text("Your refund is on its way."),
    ]);
    let (events, result) = f
        .app
        .stream(
            Target::router::<DeskRouter>(),
            "I want a refund",
            RunContext::new(),
        )
        .collect_all()
        .await;
    let out = result.unwrap();
    assert_eq!(out.text, "Your refund is on its way.");
    assert_eq!(
        out.routes,
        [("desk-router".to_string(), "billing-agent".to_string())]
    );
    assert!(events.iter().any(|e| matches!(
        e,
        RunEvent::RouteChosen { route, reason: RouteReason::ModelChoice { .. }, .. } if route == "billing-agent"
    )));
    // The router's request: no tools, the routes listed with their descriptions.
    let routing = &f.model.requests()[0];
    assert!(routing.tools.is_empty());
    let system = routing.messages[0].text().unwrap();
    assert!(system.contains("- billing-agent: Invoices, refunds and payments"));
    assert!(system.contains("- shipping-agent: Deliveries and tracking"));
    assert_eq!(routing.messages[1], Message::user("I want a refund"));
    // The chosen agent got the user's input.
    assert_eq!(
        f.model.requests()[1].messages.last(),
        Some(&Message::user("I want a refund"))
    );
}

#[tokio::test]
async fn a_router_falls_back_deterministically() {
    // An unusable answer: the declared fallback.
    let f = fixture([
        Turn::text("Hmm, hard to say."),
        Turn::text("Tracking says tomorrow."),
    ]);
    let (events, result) = f
        .app
        .stream(Target::router::<DeskRouter>(), "where?", RunContext::new())
        .collect_all()
        .await;
    assert_eq!(result.unwrap().routes[0].1, "shipping-agent");
    assert!(events.iter().any(|e| matches!(
        e,
        RunEvent::RouteChosen { route, reason: RouteReason::Fallback { why }, .. }
            if route == "shipping-agent" && why.contains("names no single route")
    )));

    // A model error: the first route when no fallback is declared.
    let f = fixture([
        Turn::error(ModelError::other("provider down")),
        Turn::text("Invoice sent."),
    ]);
    let out = f
        .app
        .execute(
            Target::router::<FirstRouter>(),
            "invoice?",
            RunContext::new(),
        )
        .await
        .unwrap();
    assert_eq!(out.routes[0].1, "billing-agent");
    assert_eq!(out.text, "Invoice sent.");
}

#[tokio::test]
async fn model_errors_unknown_targets_missing_models_and_cancellation_are_typed() {
    let f = fixture([Turn::error(ModelError::other("provider down"))]);
    let err = f
        .app
        .execute(Target::agent::<SupportAgent>(), "x", acme())
        .await
        .unwrap_err();
    assert!(matches!(err, RunError::Model { ref step, .. } if step == "support-agent"));

    let err = f
        .app
        .execute("no-such-agent", "x", acme())
        .await
        .unwrap_err();
    assert!(matches!(err, RunError::UnknownTarget { ref name, .. } if name == "no-such-agent"));

    let bare = App::builder().agent::<BillingAgent>().build().unwrap();
    let err = bare
        .execute("billing-agent", "x", RunContext::new())
        .await
        .unwrap_err();
    assert!(matches!(err, RunError::NoModel { .. }));

    let token = CancelToken::new();
    token.cancel();
    let f = fixture([Turn::text("never")]);
    let err = f
        .app
        .execute(
            Target::agent::<SupportAgent>(),
            "x",
            acme().cancel_token(token),
        )
        .await
        .unwrap_err();
    assert!(matches!(err, RunError::Cancelled));
    assert_eq!(f.model.request_count(), 0);
}

/// A decorator through the `wrap_callbacks` hook sees every call of the loop.
#[tokio::test]
async fn wrap_callbacks_decorates_every_tool_of_the_loop() {
    use agboss_core::callback::{SharedToolCallback, ToolCallback, ToolInvocation, ToolMetadata};
    use agboss_core::model::ToolDefinition;

    struct Counting {
        inner: SharedToolCallback,
        seen: Arc<Mutex<Vec<String>>>,
    }
    impl ToolCallback for Counting {
        fn definition(&self) -> &ToolDefinition {
            self.inner.definition()
        }
        fn metadata(&self) -> &ToolMetadata {
            self.inner.metadata()
        }
        fn call<'a>(
            &'a self,
            invocation: ToolInvocation<'a>,
        ) -> futures::future::BoxFuture<'a, CallOutcome> {
            self.seen.lock().unwrap().push(format!(
                "{}:{}",
                self.inner.definition().name,
                invocation.call_id
            ));
            self.inner.call(invocation)
        }
    }

    let seen = Arc::new(Mutex::new(Vec::new()));
    let paths = Arc::new(Mutex::new(Vec::new()));
    let (seen2, paths2) = (Arc::clone(&seen), Arc::clone(&paths));
    let ctx = acme().wrap_callbacks(move |scopes, callbacks| {
        paths2
            .lock()
            .unwrap()
            .push(scopes.iter().map(|s| s.name).collect::<Vec<_>>());
        callbacks
            .into_iter()
            .map(|inner| {
                Arc::new(Counting {
                    inner,
                    seen: Arc::clone(&seen2),
                }) as SharedToolCallback
            })
            .collect()
    });
    let f = fixture(self_correction_script());
    f.app
        .execute(Target::agent::<SupportAgent>(), "x", ctx)
        .await
        .unwrap();
    assert_eq!(
        *seen.lock().unwrap(),
        ["get-order-tool:c1", "get-order-tool:c2"]
    );
    assert_eq!(
        *paths.lock().unwrap(),
        [vec!["test-application", "support-agent"]]
    );
}
