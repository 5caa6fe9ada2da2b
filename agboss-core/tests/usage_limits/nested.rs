//! A nested run (a tool whose body runs an agent of the same app) reserves in its own budget
//! and in the outer run's: it cannot bypass the outer run's limits, and what it spends counts
//! into the outer run.
use super::*;

/// The app, for the tool that runs an agent inside its call.
#[injectable(provided)]
#[derive(Default)]
pub struct AppSlot {
    app: OnceLock<App>,
}

#[tool(name = "delegate-tool", description = "Asks the busy agent", input = NoteDto, output = NoteDto, deps = [AppSlot, Ran])]
pub struct DelegateTool {
    slot: Arc<AppSlot>,
    ran: Arc<Ran>,
}

impl ToolHandler<NoteDto, NoteDto> for DelegateTool {
    async fn run(&self, input: NoteDto) -> Result<NoteDto, ToolError> {
        let app = self.slot.app.get().expect("set after build");
        // A fresh context: nothing of the outer run's limits is passed by hand.
        match app
            .execute("busy-agent", input.note, RunContext::new())
            .await
        {
            Ok(out) => Ok(NoteDto { note: out.text }),
            Err(err) => {
                self.ran.errors.lock().unwrap().push(format!("{err:?}"));
                Err(ToolError::msg(err.to_string()))
            }
        }
    }
}

#[agent(name = "outer-agent", description = "Delegates", tools = [DelegateTool])]
pub struct OuterAgent;

fn nested_app(
    model: &Arc<ScriptedModel>,
    ran: &Arc<Ran>,
    limits: UsageLimits,
) -> (App, Arc<AppSlot>) {
    let slot = Arc::new(AppSlot::default());
    let app = App::builder()
        .agent::<OuterAgent>()
        .agent::<BusyAgent>()
        .provide_arc(Arc::clone(ran))
        .provide_arc(Arc::clone(&slot))
        .shared_model(Arc::clone(model) as _)
        .usage_limits(limits)
        .build()
        .unwrap();
    assert!(slot.app.set(app.clone()).is_ok());
    (app, slot)
}

#[tokio::test]
async fn a_nested_run_cannot_bypass_the_outer_runs_tool_limit() {
    // Outer: delegate once. Inner: 10 parallel calls (refused past the outer run's bound,
    // which ends the inner run). Outer: answer.
    let model = Arc::new(ScriptedModel::new([
        Turn::tool_call("delegate-tool", json!({"note": "count"})),
        Turn::tool_calls(calls("slow-tool", 10)),
        Turn::text("outer done"),
    ]));
    let ran = Arc::new(Ran::default());
    let (app, _slot) = nested_app(&model, &ran, UsageLimits::default());
    // Only the outer run is limited, to 5 tool calls: the delegate call is one of them.
    let ctx = RunContext::new().usage_limits(UsageLimits::new().tool_calls(5));
    let out = app.execute("outer-agent", "go", ctx).await.unwrap();
    assert_eq!(
        ran.count(),
        4,
        "the inner run got what the outer run had left"
    );
    let errors = ran.errors.lock().unwrap().clone();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].contains("outer: true"), "{}", errors[0]);
    // The outer run counted the delegate call and the inner run's four.
    assert_eq!(out.reserved.tool_calls, 5);
    assert_eq!(out.text, "outer done");
}

#[tokio::test]
async fn a_nested_runs_usage_counts_into_the_outer_run() {
    let model = Arc::new(ScriptedModel::new([
        Turn::tool_call("delegate-tool", json!({"note": "count"})),
        Turn::tool_calls(calls("slow-tool", 3)).with_usage(Usage::new(10, 5)),
        Turn::text("inner done").with_usage(Usage::new(10, 5)),
        Turn::text("outer done"),
    ]));
    let ran = Arc::new(Ran::default());
    let (app, _slot) = nested_app(&model, &ran, UsageLimits::default());
    let out = app
        .execute("outer-agent", "go", RunContext::new())
        .await
        .unwrap();
    assert_eq!(ran.count(), 3);
    assert_eq!(out.reserved.tool_calls, 4);
    assert_eq!(out.reserved.model_requests, 4);
    assert_eq!(out.reserved.output_tokens, 10);
    // The outer run's own counters stay its own.
    assert_eq!(out.tool_calls, 1);
    assert_eq!(out.model_turns, 2);
}

#[tokio::test]
async fn a_nested_run_cannot_bypass_the_outer_runs_model_requests() {
    let model = Arc::new(ScriptedModel::new([
        Turn::tool_call("delegate-tool", json!({"note": "count"})),
        Turn::tool_calls(calls("other-tool", 1)),
        Turn::tool_calls(calls("other-tool", 1)),
        Turn::tool_calls(calls("other-tool", 1)),
        Turn::text("inner done"),
        Turn::text("outer done"),
    ]));
    let ran = Arc::new(Ran::default());
    // The app's limit applies to both runs; each counts its own, and the inner one counts
    // into the outer one too: 1 (outer) + 2 (inner) = 3, the inner's third is refused.
    let (app, _slot) = nested_app(&model, &ran, UsageLimits::new().model_requests(3));
    let err = app
        .execute("outer-agent", "go", RunContext::new())
        .await
        .unwrap_err();
    // The inner run failed (its tool reported the error to the outer model, which then had
    // no request left).
    let errors = ran.errors.lock().unwrap().clone();
    assert!(
        errors[0].contains("ModelRequests") && errors[0].contains("outer: true"),
        "{errors:?}"
    );
    assert_eq!(limit_error(&err).limit, LimitKind::ModelRequests);
    assert_eq!(model.request_count(), 3);
}
