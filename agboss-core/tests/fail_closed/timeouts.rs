//! Hook and tool time limits: hanging hooks fail the step, app-wide and default limits, tool timeouts, runtimes without timers.

use super::*;
use agboss_core::callback::SharedToolCallback;
use agboss_core::contract::outcome::FailureKind;
use agboss_core::error::ToolCallErrorKind;

// --- Defect 2: a hanging guard is a guard failure, bounded by its own limit -------------------

#[tokio::test]
async fn a_hanging_before_hook_times_out_as_a_guard_failure_and_fails_the_step() {
    // The run's tool timeout is far away: the interceptor's own 50 ms limit decides.
    let ctx = RunContext::new().tool_timeout(Duration::from_secs(30));
    let (result, events, _, runs) = run_mode("guard-hangs", ctx).await;
    let err = result.expect_err("the step fails");
    let StepFailedError::ToolCall { source, .. } = err.as_step_failed().unwrap() else {
        panic!("{err:?}")
    };
    assert!(
        matches!(
            source.kind(),
            ToolCallErrorKind::InterceptorTimeout {
                interceptor: "fc-guard-tool-interceptor",
                timeout_ms: 50,
                ..
            }
        ),
        "{source:?}"
    );
    assert!(source.is_guard_failure());
    assert!(matches!(
        decisions(&events)[..],
        [CallDecision::GuardFailed { .. }]
    ));
    assert_eq!(runs, 0);
}

#[tokio::test]
async fn a_hook_that_suspends_within_its_limit_is_not_a_failure() {
    let (result, events, _, runs) = run_mode("guard-slow", RunContext::new()).await;
    assert_eq!(result.unwrap(), "done");
    assert_eq!(decisions(&events), [CallDecision::Allowed]);
    assert_eq!(runs, 1);
}

#[tokio::test]
async fn the_app_wide_hook_limit_bounds_interceptors_without_their_own() {
    let app = App::builder()
        .tool_interceptor::<FcAfterToolInterceptor>()
        .tool::<FcTool>()
        .provide(FcRuns::default())
        .interceptor_timeout(Duration::from_millis(30))
        .build()
        .unwrap();
    let chain = app.direct_chain::<FcTool>().unwrap();
    assert_eq!(
        chain.hook_timeouts(),
        [("fc-after-tool-interceptor", Duration::from_millis(30))]
    );
    let outcome = app.tool::<FcTool>().call(r#"{"mode":"after-hangs"}"#).await;
    let failure = outcome.failure().expect("failed");
    assert_eq!(failure.kind(), FailureKind::Guard);
    assert!(matches!(
        failure.error().kind(),
        ToolCallErrorKind::InterceptorTimeout { timeout_ms: 30, .. }
    ));
    // The tool ran, but its output was discarded: the after-hook never finished.
    assert_eq!(app.services().get::<FcRuns>().unwrap().get(), 1);
}

#[tokio::test]
async fn the_default_hook_limit_is_ten_seconds() {
    let app = App::builder()
        .tool_interceptor::<FcAfterToolInterceptor>()
        .tool_interceptor::<FcGuardToolInterceptor>()
        .tool::<FcTool>()
        .provide(FcRuns::default())
        .build()
        .unwrap();
    assert_eq!(
        app.direct_chain::<FcTool>().unwrap().hook_timeouts(),
        [
            ("fc-after-tool-interceptor", Duration::from_secs(10)),
            ("fc-guard-tool-interceptor", Duration::from_millis(50)),
        ]
    );
}

#[tokio::test]
async fn the_run_tool_timeout_bounds_the_tool_not_the_guards() {
    // A hanging tool under the run's limit: a tool error, reported to the model.
    let ctx = RunContext::new().tool_timeout(Duration::from_millis(20));
    let (result, events, listener, runs) = run_mode("tool-hangs", ctx).await;
    assert_eq!(result.unwrap(), "done");
    assert_eq!(decisions(&events), [CallDecision::Allowed]);
    assert!(
        listener
            .seen
            .lock()
            .unwrap()
            .iter()
            .any(|l| l.contains("timed out after 20 ms"))
    );
    assert_eq!(runs, 1);
    // A hanging guard under a short run limit is still the guard's own timeout, and fails.
    let ctx = RunContext::new().tool_timeout(Duration::from_millis(5));
    let (result, _, _, runs) = run_mode("guard-hangs", ctx).await;
    assert!(result.unwrap_err().as_step_failed().is_some());
    assert_eq!(runs, 0);
}

#[tokio::test]
async fn the_run_tool_timeout_bounds_a_callback_of_another_source_as_a_whole() {
    let model = ScriptedModel::new([
        Turn::tool_call("fc-tool", json!({ "mode": "ok" })),
        Turn::text("done"),
    ]);
    let (app, runs) = app_with(Softening::default(), model);
    // The run swaps the agent's tool for a custom callback of the same name that hangs.
    let ctx = RunContext::new()
        .tool_timeout(Duration::from_millis(20))
        .wrap_callbacks(|_, callbacks| {
            callbacks
                .into_iter()
                .map(|c| {
                    Arc::new(Hanging {
                        definition: c.definition().clone(),
                        metadata: agboss_core::callback::ToolMetadata {
                            source: agboss_core::callback::ToolSource::Custom,
                            ..c.metadata().clone()
                        },
                    }) as SharedToolCallback
                })
                .collect()
        });
    let (events, result) = tokio::time::timeout(
        Duration::from_secs(5),
        app.stream(Target::agent::<FcAgent>(), "go", ctx)
            .collect_all(),
    )
    .await
    .expect("the run ends on its own");
    assert_eq!(result.unwrap().text, "done");
    assert_eq!(decisions(&events), [CallDecision::Allowed]);
    assert!(
        observations(&events)[0].contains("(timeout)"),
        "{:?}",
        observations(&events)
    );
    assert_eq!(runs.get(), 0, "the native tool was replaced");
}

#[test]
fn a_suspending_hook_in_a_runtime_without_timers_is_awaited_not_a_panic() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a runtime without the time driver");
    let app = App::builder()
        .tool_interceptor::<FcSlowGuardToolInterceptor>()
        .tool::<FcTool>()
        .provide(FcRuns::default())
        .build()
        .unwrap();
    let outcome = rt.block_on(app.tool::<FcTool>().call(r#"{"mode":"ok"}"#));
    assert!(matches!(outcome, CallOutcome::Ran(_)), "{outcome:?}");
}
