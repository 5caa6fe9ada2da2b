//! Failures stay failures: listeners cannot soften a failing guard, only a tool's own error is reportable, source chains.

use super::*;
use agboss_core::callback::ToolInvocation;
use agboss_core::contract::outcome::CallFailure;
use agboss_core::contract::outcome::FailureKind;
use agboss_core::error::ToolCallErrorKind;

// --- Defect 1: a listener can never soften a guard failure ------------------------------------

#[tokio::test]
async fn a_failing_interceptor_fails_the_step_whatever_the_listener_reports() {
    for (mode, expect) in [
        ("guard-errs", "acl service down"),
        ("guard-panics", "guard exploded"),
    ] {
        let (result, events, listener, runs) = run_mode(mode, RunContext::new()).await;
        let err = result.expect_err(mode);
        let step = err.as_step_failed().expect("a step failure");
        assert!(step.to_string().contains(expect), "{mode}: {step}");
        assert!(
            matches!(decisions(&events)[..], [CallDecision::GuardFailed { .. }]),
            "{mode}: {:?}",
            decisions(&events)
        );
        // The listener was told, but its soft text reached no model.
        assert!(
            listener
                .seen
                .lock()
                .unwrap()
                .iter()
                .any(|l| l.starts_with("error "))
        );
        assert!(
            observations(&events).is_empty(),
            "{:?}",
            observations(&events)
        );
        assert_eq!(runs, 0, "{mode}: the tool never ran");
    }
}

#[tokio::test]
async fn a_missing_dependency_of_a_guard_is_never_softened() {
    let listener = Softening::default();
    let app = App::builder()
        .tool_interceptor::<FcTenantToolInterceptor>()
        .tool::<FcTool>()
        .provide(FcRuns::default())
        .tool_call_listener(listener.clone())
        .build()
        .unwrap();
    // No tenant on the invocation: the guard's `TenantContext` cannot be built.
    let outcome = app.callbacks()[0]
        .call(ToolInvocation::new("c1", r#"{"mode":"ok"}"#))
        .await;
    let failure = outcome.failure().expect("failed");
    assert_eq!(failure.kind(), FailureKind::Guard);
    assert_eq!(failure.report(), None, "the listener's report was refused");
    assert!(outcome.fails_closed());
    assert!(matches!(
        failure.error().kind(),
        ToolCallErrorKind::Dependency {
            component: "fc-tenant-tool-interceptor",
            ..
        }
    ));
    assert!(matches!(
        outcome.decision(),
        CallDecision::GuardFailed { .. }
    ));
    assert_eq!(app.services().get::<FcRuns>().unwrap().get(), 0);
}

#[tokio::test]
async fn a_tool_failure_can_still_be_reported_by_a_listener() {
    let (result, events, _, runs) = run_mode("tool-fails", RunContext::new()).await;
    assert_eq!(result.unwrap(), "done");
    assert_eq!(decisions(&events), [CallDecision::Allowed]);
    let obs = observations(&events);
    assert_eq!(obs.len(), 1);
    assert!(obs[0].starts_with("it's fine, carry on"), "{obs:?}");
    assert_eq!(runs, 1);
}

#[tokio::test]
async fn a_failure_refuses_a_report_unless_it_is_the_tools_own() {
    let mut guard = CallFailure::new(
        FailureKind::Guard,
        ToolCallError::new("x", ToolCallErrorKind::NotInApp),
    );
    assert!(!guard.set_report("soft".into()));
    assert_eq!(guard.report(), None);
    let mut tool = CallFailure::new(
        FailureKind::Tool,
        ToolCallError::new("x", ToolCallErrorKind::NotInApp),
    );
    assert!(tool.set_report("soft".into()));
    assert_eq!(tool.report(), Some("soft"));
}

#[tokio::test]
async fn tool_and_interceptor_errors_keep_their_source_chain() {
    let app = App::builder()
        .tool_interceptor::<FcGuardToolInterceptor>()
        .tool::<FcTool>()
        .provide(FcRuns::default())
        .build()
        .unwrap();
    let err = app
        .tool::<FcTool>()
        .invoke(FcInputDto {
            mode: "tool-fails".into(),
        })
        .await
        .unwrap_err();
    let source = err.source().expect("the tool's error is the source");
    assert_eq!(source.to_string(), "disk on fire");
    assert!(source.downcast_ref::<std::io::Error>().is_some());

    let err = app
        .tool::<FcTool>()
        .invoke(FcInputDto {
            mode: "guard-errs".into(),
        })
        .await
        .unwrap_err();
    assert_eq!(
        err.source().unwrap().to_string(),
        "acl service down: 10.0.0.9"
    );
    // Both convert into a boxed error for code that takes any error.
    let boxed: Box<dyn std::error::Error + Send + Sync> = ToolError::msg("late").into();
    assert_eq!(boxed.to_string(), "late");
}
