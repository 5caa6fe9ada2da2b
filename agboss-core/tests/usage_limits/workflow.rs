//! Workflow tool steps are reserved like the agent loop's calls, and no `on_error` handler can
//! recover from a usage limit.
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
