//! Workflow tool steps are reserved like the agent loop's calls, and no `on_error` handler can
//! recover from a usage limit; a router refused by one stops instead of falling back.
use agboss_core::engine::Target;
use agboss_core::engine::workflow::{Flow, Recovery};

use super::*;

#[workflow(name = "note-workflow", description = "Notes twice", tools = [SlowTool])]
pub struct NoteWorkflow;

#[tokio::test]
async fn a_tool_step_past_the_limit_fails_the_run_whatever_on_error_says() {
    let flow = Flow::new()
        .tool::<SlowTool>()
        .tool::<SlowTool>()
        .on_error(|_, _| Ok(Recovery::Finish("recovered".into())));
    let ran = Arc::new(Ran::default());
    let app = App::builder()
        .workflow::<NoteWorkflow>()
        .provide_arc(Arc::clone(&ran))
        .build()
        .unwrap();
    let ctx = RunContext::new().usage_limits(UsageLimits::new().tool_calls_of("slow-tool", 1));
    let err = app
        .execute(
            Target::workflow_with::<NoteWorkflow>(flow),
            r#"{"note": "hi"}"#,
            ctx,
        )
        .await
        .unwrap_err();
    assert_eq!(
        limit_error(&err).limit,
        LimitKind::ToolCallsOf("slow-tool".into())
    );
    assert_eq!(ran.count(), 1, "the second step never ran");
}

#[agent(name = "idle-agent", description = "Does nothing")]
pub struct IdleAgent;

#[router(name = "busy-router", description = "Routes to the busy or the idle agent", routes = [BusyAgent, IdleAgent])]
pub struct BusyRouter;

#[tokio::test]
async fn a_router_refused_by_a_limit_stops_instead_of_falling_back() {
    let model = Arc::new(ScriptedModel::new([
        Turn::text("busy-agent"),
        Turn::text("done"),
    ]));
    let app = App::builder()
        .router::<BusyRouter>()
        .provide_arc(Arc::new(Ran::default()))
        .shared_model(Arc::clone(&model) as _)
        .build()
        .unwrap();
    let ctx = RunContext::new().usage_limits(UsageLimits::new().model_requests(0));
    let (events, result) = app.stream("busy-router", "go", ctx).collect_all().await;
    let err = result.unwrap_err();
    assert_eq!(limit_error(&err).limit, LimitKind::ModelRequests);
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, RunEvent::RouteChosen { .. })),
        "the router fell back to a route"
    );
    assert!(
        events.iter().any(
            |e| matches!(e, RunEvent::UsageLimitExceeded { step, .. } if step == "busy-router")
        )
    );
    assert_eq!(model.request_count(), 0);
}
