//! The nested run's usage counts into the outer run's budget, and the outer run's limits
//! hold inside it: an inner call past them is refused before it starts.
use agboss_core::engine::{AgentToolError, LimitKind, UsageLimits};
use agboss_core::model::Usage;

use super::*;

#[tokio::test]
async fn the_nested_runs_usage_counts_into_the_outer_run() {
    let model = Arc::new(ScriptedModel::new([
        ask("shipping_agent", "Where is parcel P-1?").with_usage(Usage::new(10, 1)),
        Turn::tool_call("track-tool", json!({"parcel": "P-1"})).with_usage(Usage::new(20, 2)),
        Turn::text("P-1 is in Lyon.").with_usage(Usage::new(30, 3)),
        Turn::text("In Lyon.").with_usage(Usage::new(40, 4)),
    ]));
    let rec = Recorder::new();
    let app = builder(&model, &rec).build().unwrap();
    let out = app
        .execute("desk-agent", "Where?", RunContext::new().tenant("acme"))
        .await
        .unwrap();
    // The agent tool's call and the inner track call; two outer and two inner model calls.
    assert_eq!(out.reserved.tool_calls, 2);
    assert_eq!(out.reserved.model_requests, 4);
    assert_eq!(out.reserved.output_tokens, 10);
    // The outer run's own counters are its own.
    assert_eq!((out.tool_calls, out.model_turns), (1, 2));
}

#[tokio::test]
async fn a_nested_run_cannot_bypass_the_outer_runs_tool_limit() {
    let model = Arc::new(ScriptedModel::new([
        ask("shipping_agent", "Where is parcel P-1?"),
        Turn::tool_call("track-tool", json!({"parcel": "P-1"})),
        Turn::text("never asked"),
    ]));
    let rec = Recorder::new();
    // The outer run may make one tool call: the agent tool's. The inner run's limits are the
    // app's (none): only the outer bound can refuse its call.
    let app = builder(&model, &rec).build().unwrap();
    let ctx = RunContext::new()
        .tenant("acme")
        .usage_limits(UsageLimits::new().tool_calls(1))
        .tool_error_policy("ask_shipping_agent", ToolErrorPolicy::FailStep);
    let err = app.execute("desk-agent", "Where?", ctx).await.unwrap_err();
    assert_eq!(rec.count("track:"), 0, "the inner call never started");
    assert_eq!(rec.count("shipping:"), 0, "not even its guards");
    let agent_error =
        std::iter::successors(Some(&*err as &(dyn std::error::Error + 'static)), |e| {
            e.source()
        })
        .find_map(|e| e.downcast_ref::<AgentToolError>())
        .unwrap_or_else(|| panic!("an agent tool error in {err:?}"));
    let Some(RunError::UsageLimit(refused)) = agent_error.run_error() else {
        panic!("{agent_error:?}")
    };
    assert!(refused.outer, "the outer run's bound refused it");
    assert_eq!(
        (refused.limit.clone(), refused.max),
        (LimitKind::ToolCalls, 1)
    );
    assert_eq!(model.request_count(), 2, "the outer turn and the inner one");
}
