//! The asked agent's own cascade holds inside the nested run: its interceptor's block stops
//! its call (the caller's interceptors never see it), and the agent tool's call fails with
//! the nested run's error, typed.
use agboss_core::engine::AgentToolError;

use super::*;

interceptor!(
    NoTrackToolInterceptor,
    "no-track-tool-interceptor",
    "inner",
    |_| ToolCallDecision::block("tracking is closed")
);

#[agent(
    name = "closed-agent",
    description = "Tracks nothing",
    tools = [TrackTool],
    tool_interceptors = [NoTrackToolInterceptor],
)]
pub struct ClosedAgent;

#[agent(name = "front-agent", description = "Asks the closed desk", tool_interceptors = [DeskToolInterceptor], agent_tools = [ClosedAgent])]
pub struct FrontAgent;

#[tokio::test]
async fn the_inner_agents_interceptor_blocks_inside_and_the_call_fails_typed() {
    let model = Arc::new(ScriptedModel::new([
        ask("closed_agent", "Where is parcel P-1?"),
        Turn::tool_call("track-tool", json!({"parcel": "P-1"})),
        Turn::text("never asked"),
    ]));
    let rec = Recorder::new();
    let app = App::builder()
        .agent::<FrontAgent>()
        .agent::<ClosedAgent>()
        .provide_arc(Arc::clone(&rec))
        .model(Arc::clone(&model))
        .build()
        .unwrap();
    let ctx = RunContext::new()
        .tenant("acme")
        .tool_error_policy("ask_closed_agent", ToolErrorPolicy::FailStep);
    let err = app.execute("front-agent", "Where?", ctx).await.unwrap_err();
    // The caller's interceptor saw its own call only; the inner one blocked the inner call.
    assert_eq!(rec.take(), ["desk:ask_closed_agent", "inner:track-tool"]);
    assert_eq!(model.request_count(), 2);
    let agent_error =
        std::iter::successors(Some(&*err as &(dyn std::error::Error + 'static)), |e| {
            e.source()
        })
        .find_map(|e| e.downcast_ref::<AgentToolError>())
        .unwrap_or_else(|| panic!("an agent tool error in {err:?}"));
    let blocked = agent_error
        .run_error()
        .and_then(RunError::as_blocked)
        .unwrap_or_else(|| panic!("{agent_error:?}"));
    assert_eq!(
        (blocked.tool_name.as_str(), blocked.interceptor),
        ("track-tool", "no-track-tool-interceptor")
    );
}
