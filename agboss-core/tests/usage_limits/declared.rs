//! Limits declared on the cascade (`usage_limits(..)` on `#[application]`, `#[workflow]`,
//! `#[agent]`): a run gets the strictest of every scope's on its path, the app builder's and
//! its own; `describe()` shows them per path.
use std::sync::Arc;

use agboss_core::engine::{LimitKind, RunContext, UsageLimits};
use agboss_core::prelude::*;
use agboss_testing::scripted::{ScriptedModel, Turn};

use super::{OtherTool, Ran, SlowTool, calls, limit_error};

#[agent(name = "capped-agent", description = "Calls tools, capped", tools = [SlowTool, OtherTool],
        max_parallel_tool_calls = 100, max_turns = 50,
        usage_limits(tool_calls = 4, tool_calls_per_tool(OtherTool = 1)))]
pub struct CappedAgent;

#[agent(name = "free-agent", description = "Calls tools", tools = [SlowTool],
        max_parallel_tool_calls = 100)]
pub struct FreeAgent;

#[workflow(name = "capped-workflow", description = "Caps its agents", agents = [FreeAgent],
           usage_limits(model_requests = 2, tool_calls = 6))]
pub struct CappedWorkflow;

#[application(name = "capped-application", description = "Caps everything", workflows = [CappedWorkflow],
              agents = [CappedAgent], usage_limits(tool_calls = 5, output_tokens = 900))]
pub struct CappedApplication;

fn build(model: ScriptedModel, ran: &Arc<Ran>) -> App {
    App::builder()
        .application::<CappedApplication>()
        .provide_arc(Arc::clone(ran))
        .model(model)
        .build()
        .unwrap()
}

#[tokio::test]
async fn a_limit_declared_on_the_agent_bounds_its_runs() {
    let ran = Arc::new(Ran::default());
    let app = build(
        ScriptedModel::new([Turn::tool_calls(calls("slow-tool", 20)), Turn::text("done")]),
        &ran,
    );
    let err = app
        .execute("capped-agent", "go", RunContext::new())
        .await
        .unwrap_err();
    let refused = limit_error(&err);
    // The agent's 4, stricter than the application's 5.
    assert_eq!(
        (refused.limit.clone(), refused.max),
        (LimitKind::ToolCalls, 4)
    );
    assert_eq!(ran.count(), 4);
}

#[tokio::test]
async fn a_per_tool_bound_declared_on_the_agent_names_the_tool() {
    let ran = Arc::new(Ran::default());
    let app = build(
        ScriptedModel::new([Turn::tool_calls(calls("other-tool", 3)), Turn::text("done")]),
        &ran,
    );
    let err = app
        .execute("capped-agent", "go", RunContext::new())
        .await
        .unwrap_err();
    assert_eq!(
        limit_error(&err).limit,
        LimitKind::ToolCallsOf("other-tool".into())
    );
}

#[tokio::test]
async fn the_workflow_and_the_run_tighten_what_the_path_allows() {
    let ran = Arc::new(Ran::default());
    // The workflow's 6 is looser than the application's 5: 5 hold.
    let app = build(
        ScriptedModel::new([Turn::tool_calls(calls("slow-tool", 20)), Turn::text("done")]),
        &ran,
    );
    let err = app
        .execute("capped-workflow", "go", RunContext::new())
        .await
        .unwrap_err();
    assert_eq!(limit_error(&err).max, 5);
    assert_eq!(ran.count(), 5);
    // A run's own limits tighten it further; never loosen it.
    let app = build(
        ScriptedModel::new([Turn::tool_calls(calls("slow-tool", 20)), Turn::text("done")]),
        &ran,
    );
    let ctx = RunContext::new().usage_limits(UsageLimits::new().tool_calls(100).model_requests(1));
    let err = app.execute("capped-agent", "go", ctx).await.unwrap_err();
    let refused = limit_error(&err);
    assert_eq!(
        (refused.limit.clone(), refused.max),
        (LimitKind::ToolCalls, 4)
    );
}

#[test]
fn describe_shows_the_limits_in_force_on_each_path() {
    let ran = Arc::new(Ran::default());
    let text = build(ScriptedModel::new([Turn::text("hi")]), &ran).describe();
    assert!(
        text.contains("  usage limits: output tokens 900, tool calls 5\n"),
        "{text}"
    );
    assert!(
        text.contains("    usage limits: model requests 2, output tokens 900, tool calls 5\n"),
        "{text}"
    );
    assert!(
        text.contains("usage limits: output tokens 900, tool calls 4, calls of `other-tool` 1"),
        "{text}"
    );
}
