//! Usage limits reserved before the call: 100 parallel tool calls against a limit of 10 run
//! exactly 10; per-tool and model-request bounds refuse before the call; token bounds stop the
//! run after the call that passed them; strictest wins; a nested run (a tool that runs an
//! agent) cannot bypass the outer run's limits.
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use agboss_core::dto::Dto;
use agboss_core::engine::{LimitKind, RunContext, RunError, RunEvent, UsageLimits};
use agboss_core::model::Usage;
use agboss_core::prelude::*;
use agboss_testing::scripted::{ScriptedModel, ScriptedToolCall, Turn};
use agboss_testing::trajectory::{Move, trajectory};
use serde_json::json;

mod declared;
mod nested;
mod tenant;
mod workflow;

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct NoteDto {
    #[text(prompt = "A note")]
    pub note: String,
}

/// How many tool bodies ran, and how many at once at most.
#[injectable(provided)]
#[derive(Default)]
pub struct Ran {
    count: AtomicUsize,
    running: AtomicUsize,
    peak: AtomicUsize,
    errors: Mutex<Vec<String>>,
}

impl Ran {
    fn count(&self) -> usize {
        self.count.load(Ordering::SeqCst)
    }
}

#[tool(name = "slow-tool", description = "Takes a while", input = NoteDto, output = NoteDto, deps = [Ran])]
pub struct SlowTool {
    ran: Arc<Ran>,
}

impl ToolHandler<NoteDto, NoteDto> for SlowTool {
    async fn run(&self, input: NoteDto) -> Result<NoteDto, ToolError> {
        self.ran.count.fetch_add(1, Ordering::SeqCst);
        let now = self.ran.running.fetch_add(1, Ordering::SeqCst) + 1;
        self.ran.peak.fetch_max(now, Ordering::SeqCst);
        tokio::time::sleep(Duration::from_millis(20)).await;
        self.ran.running.fetch_sub(1, Ordering::SeqCst);
        Ok(input)
    }
}

#[tool(name = "other-tool", description = "Another tool", input = NoteDto, output = NoteDto)]
pub struct OtherTool;

impl ToolHandler<NoteDto, NoteDto> for OtherTool {
    async fn run(&self, input: NoteDto) -> Result<NoteDto, ToolError> {
        Ok(input)
    }
}

#[agent(
    name = "busy-agent",
    description = "Calls tools",
    tools = [SlowTool, OtherTool],
    max_parallel_tool_calls = 100,
    max_turns = 50
)]
pub struct BusyAgent;

fn calls(tool: &str, n: usize) -> Vec<ScriptedToolCall> {
    (0..n)
        .map(|i| ScriptedToolCall::new(tool, json!({"note": format!("n{i}")})))
        .collect()
}

fn builder(model: &Arc<ScriptedModel>, ran: &Arc<Ran>) -> AppBuilder {
    App::builder()
        .agent::<BusyAgent>()
        .provide_arc(Arc::clone(ran))
        .shared_model(Arc::clone(model) as _)
}

fn limit_error(err: &RunError) -> &agboss_core::engine::UsageLimitExceeded {
    match err {
        RunError::UsageLimit(e) => e,
        other => panic!("not a usage limit: {other}"),
    }
}

#[tokio::test]
async fn a_hundred_parallel_calls_against_a_limit_of_ten_run_exactly_ten() {
    let model = Arc::new(ScriptedModel::new([
        Turn::tool_calls(calls("slow-tool", 100)),
        Turn::text("done"),
    ]));
    let ran = Arc::new(Ran::default());
    let app = builder(&model, &ran).build().unwrap();
    let ctx = RunContext::new().usage_limits(UsageLimits::new().tool_calls(10));
    let (events, result) = app.stream("busy-agent", "go", ctx).collect_all().await;
    let err = result.unwrap_err();
    let refused = limit_error(&err);
    assert_eq!(refused.limit, LimitKind::ToolCalls);
    assert_eq!(refused.max, 10);
    assert_eq!(ran.count(), 10, "exactly the reserved calls ran");
    assert!(
        ran.peak.load(Ordering::SeqCst) > 1,
        "the calls ran in parallel"
    );
    // Every one of the ten finished (none was cancelled by the refusals).
    let finished = events
        .iter()
        .filter(|e| {
            matches!(
                e,
                RunEvent::ToolResult {
                    is_error: false,
                    ..
                }
            )
        })
        .count();
    assert_eq!(finished, 10);
    assert!(
        events
            .iter()
            .any(|e| matches!(e, RunEvent::UsageLimitExceeded { error, .. } if error.limit == LimitKind::ToolCalls))
    );
    assert_eq!(model.request_count(), 1, "no model call after the refusal");
    // The trajectory: the hundred requested calls, then one refusal for each of the ninety
    // calls that never started; no answer.
    let moves = trajectory(&events);
    assert_eq!(moves.len(), 190);
    assert!(moves[..100].iter().all(|m| matches!(m, Move::Tool { .. })));
    assert!(moves[100..].iter().all(|m| *m
        == Move::LimitExceeded {
            step: "busy-agent".into()
        }));
}

#[tokio::test]
async fn a_per_tool_bound_refuses_that_tool_only() {
    let mut turn = calls("slow-tool", 3);
    turn.extend(calls("other-tool", 3));
    let model = Arc::new(ScriptedModel::new([
        Turn::tool_calls(calls("other-tool", 2)),
        Turn::tool_calls(turn),
        Turn::text("done"),
    ]));
    let ran = Arc::new(Ran::default());
    let app = builder(&model, &ran)
        .usage_limits(UsageLimits::new().tool_calls_of("slow-tool", 2))
        .build()
        .unwrap();
    let err = app
        .execute("busy-agent", "go", RunContext::new())
        .await
        .unwrap_err();
    assert_eq!(
        limit_error(&err).limit,
        LimitKind::ToolCallsOf("slow-tool".into())
    );
    assert_eq!(ran.count(), 2);
}

#[tokio::test]
async fn model_requests_are_refused_before_the_call() {
    let model = Arc::new(ScriptedModel::new(
        (0..10).map(|_| Turn::tool_calls(calls("other-tool", 1))),
    ));
    let ran = Arc::new(Ran::default());
    let app = builder(&model, &ran).build().unwrap();
    let ctx = RunContext::new().usage_limits(UsageLimits::new().model_requests(3));
    let err = app.execute("busy-agent", "go", ctx).await.unwrap_err();
    let refused = limit_error(&err);
    assert_eq!(
        (refused.limit.clone(), refused.max, refused.used),
        (LimitKind::ModelRequests, 3, 4)
    );
    assert_eq!(model.request_count(), 3, "the fourth call was never made");
}

#[tokio::test]
async fn the_call_that_passes_a_token_bound_is_the_last() {
    let model = Arc::new(ScriptedModel::new((0..10).map(|_| {
        Turn::tool_calls(calls("other-tool", 1)).with_usage(Usage::new(100, 8))
    })));
    let ran = Arc::new(Ran::default());
    let app = builder(&model, &ran).build().unwrap();
    let ctx = RunContext::new().usage_limits(UsageLimits::new().output_tokens(20));
    let err = app.execute("busy-agent", "go", ctx).await.unwrap_err();
    let over = limit_error(&err);
    assert_eq!(
        (over.limit.clone(), over.used),
        (LimitKind::OutputTokens, 24)
    );
    assert_eq!(model.request_count(), 3);
}

#[tokio::test]
async fn the_strictest_limits_win_and_a_run_reports_what_it_reserved() {
    let script = || {
        Arc::new(ScriptedModel::new([
            Turn::tool_calls(calls("other-tool", 4)),
            Turn::text("done"),
        ]))
    };
    let ran = Arc::new(Ran::default());
    // The app allows 3: a run asking for 10 does not loosen it.
    let model = script();
    let app = builder(&model, &ran)
        .usage_limits(UsageLimits::new().tool_calls(3))
        .build()
        .unwrap();
    let ctx = RunContext::new().usage_limits(UsageLimits::new().tool_calls(10));
    let err = app.execute("busy-agent", "go", ctx).await.unwrap_err();
    assert_eq!(limit_error(&err).max, 3);
    // The app allows 10, the run 4: the run's passes, and reports what it reserved.
    let model = script();
    let app = builder(&model, &ran)
        .usage_limits(UsageLimits::new().tool_calls(10))
        .build()
        .unwrap();
    let ctx = RunContext::new().usage_limits(UsageLimits::new().tool_calls(4));
    let out = app.execute("busy-agent", "go", ctx).await.unwrap();
    assert_eq!(out.reserved.tool_calls, 4);
    assert_eq!(out.reserved.model_requests, 2);
}

#[tokio::test]
async fn a_cost_bound_counts_with_the_price_table_and_stops_after_the_call_that_passes_it() {
    use agboss_core::engine::{Price, PriceTable};
    // $1 per million prompt tokens, $2 per million generated: each turn costs
    // 100_000 × 1 + 50_000 × 2 = $0.20 (200_000 micro-dollars).
    let model = Arc::new(ScriptedModel::new((0..10).map(|_| {
        Turn::tool_calls(calls("other-tool", 1)).with_usage(Usage::new(100_000, 50_000))
    })));
    let ran = Arc::new(Ran::default());
    let app = builder(&model, &ran)
        .prices(PriceTable::new().price("scripted", Price::per_mtok(1_000_000, 2_000_000)))
        .build()
        .unwrap();
    let ctx = RunContext::new().usage_limits(UsageLimits::new().cost_micros(500_000));
    let err = app.execute("busy-agent", "go", ctx).await.unwrap_err();
    let over = limit_error(&err);
    assert_eq!(
        (over.limit.clone(), over.max, over.used),
        (LimitKind::Cost, 500_000, 600_000)
    );
    assert_eq!(
        model.request_count(),
        3,
        "$0.40 spent was below the bound, $0.60 is not"
    );

    // Under the bound, the run reports its cost.
    let model = Arc::new(ScriptedModel::new([
        Turn::text("done").with_usage(Usage::new(1_500, 250))
    ]));
    let app = builder(&model, &ran)
        .prices(PriceTable::new().price("scripted", Price::per_mtok(1_000_000, 2_000_000)))
        .build()
        .unwrap();
    let ctx = RunContext::new().usage_limits(UsageLimits::new().cost_micros(500_000));
    let out = app.execute("busy-agent", "go", ctx).await.unwrap();
    // 1_500 × $1/Mtok + 250 × $2/Mtok = $0.0015 + $0.0005 = $0.002.
    assert_eq!(out.reserved.cost_micros, 2_000);
}

#[tokio::test]
async fn a_cost_bound_refuses_a_model_without_a_price() {
    let model = Arc::new(ScriptedModel::new([Turn::text("done")]));
    let ran = Arc::new(Ran::default());
    let app = builder(&model, &ran)
        .usage_limits(UsageLimits::new().cost_micros(1_000_000))
        .build()
        .unwrap();
    let err = app
        .execute("busy-agent", "go", RunContext::new())
        .await
        .unwrap_err();
    assert_eq!(
        limit_error(&err).limit,
        LimitKind::UnpricedModel("scripted".into())
    );
    assert_eq!(
        model.request_count(),
        0,
        "no call whose cost cannot be counted"
    );
}
