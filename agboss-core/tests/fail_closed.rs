//! Regression tests of the layered core's defects: a listener never softens a guard failure, a
//! hanging guard is a guard failure (its own time limit, not the tool's), listeners see the
//! masked input, masked results keep their declaration order; the outcome names its decision;
//! error chains keep their sources.
use std::error::Error as _;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agboss_core::callback::listener::{ToolCallInfo, ToolCallListener};
use agboss_core::dto::Dto;
use agboss_core::engine::{CallDecision, RunContext, RunError, RunEvent, Target};
use agboss_core::*;
use agboss_testing::scripted::{ScriptedModel, Turn};
use serde_json::json;

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct FcInputDto {
    #[text(prompt = "What to do")]
    pub mode: String,
}

/// Fields declared out of alphabetical order, on purpose.
#[derive(Dto, Debug, Clone, PartialEq)]
pub struct FcRecordDto {
    #[text(prompt = "Zeta, declared first")]
    pub zeta: String,
    #[text(prompt = "Middle")]
    pub middle: String,
    #[text(prompt = "Alpha, declared last")]
    pub alpha: String,
}

/// Counts how often the tool ran.
#[injectable(provided)]
#[derive(Default)]
pub struct FcRuns(AtomicUsize);

impl FcRuns {
    fn get(&self) -> usize {
        self.0.load(Ordering::SeqCst)
    }
}

#[pii_policy(name = "fc-email-pii-policy", description = "Masks e-mails", detectors = [email])]
pub struct FcEmailPiiPolicy;

#[tool(name = "fc-tool", description = "Echoes its mode into a record", input = FcInputDto,
       output = FcRecordDto, deps = [FcRuns], pii_policies = [FcEmailPiiPolicy])]
pub struct FcTool {
    runs: Arc<FcRuns>,
}

impl ToolHandler<FcInputDto, FcRecordDto> for FcTool {
    async fn run(&self, input: FcInputDto) -> Result<FcRecordDto, ToolError> {
        self.runs.0.fetch_add(1, Ordering::SeqCst);
        if input.mode == "tool-fails" {
            return Err(std::io::Error::other("disk on fire").into());
        }
        if input.mode == "tool-hangs" {
            std::future::pending::<()>().await;
        }
        Ok(FcRecordDto {
            zeta: "z".into(),
            middle: input.mode,
            alpha: "a".into(),
        })
    }
}

/// Fails, panics or hangs on demand; allows everything else.
#[tool_interceptor(
    name = "fc-guard-tool-interceptor",
    description = "Misbehaves on demand",
    timeout_ms = 50
)]
pub struct FcGuardToolInterceptor;

impl BeforeToolCall for FcGuardToolInterceptor {
    async fn before_tool_call(
        &self,
        call: &ToolCallContext<'_>,
    ) -> Result<ToolCallDecision, InterceptorError> {
        match call.input()["mode"].as_str() {
            Some("guard-errs") => Err(InterceptorError::msg("acl service down: 10.0.0.9")),
            Some("guard-panics") => panic!("guard exploded"),
            Some("guard-hangs") => std::future::pending().await,
            Some("guard-slow") => {
                tokio::time::sleep(Duration::from_millis(5)).await;
                Ok(ToolCallDecision::allow())
            }
            _ => Ok(ToolCallDecision::allow()),
        }
    }
}

/// Needs a tenant: without one its dependency cannot be built.
#[tool_interceptor(name = "fc-tenant-tool-interceptor", description = "Reads the tenant",
                   deps = [TenantContext])]
pub struct FcTenantToolInterceptor {
    tenant: TenantContext,
}

impl BeforeToolCall for FcTenantToolInterceptor {
    async fn before_tool_call(
        &self,
        _call: &ToolCallContext<'_>,
    ) -> Result<ToolCallDecision, InterceptorError> {
        let _ = self.tenant.tenant_id();
        Ok(ToolCallDecision::allow())
    }
}

/// No time limit of its own: the app's applies. Hangs its after-hook on demand.
#[tool_interceptor(
    name = "fc-after-tool-interceptor",
    description = "Hangs after the tool"
)]
pub struct FcAfterToolInterceptor;

impl AfterToolCall for FcAfterToolInterceptor {
    async fn after_tool_call(
        &self,
        call: ToolCallResultContext<'_>,
    ) -> Result<ToolOutput, InterceptorError> {
        if call.input()["mode"] == "after-hangs" {
            std::future::pending::<()>().await;
        }
        Ok(call.keep())
    }
}

#[agent(name = "fc-agent", description = "Calls fc-tool", tools = [FcTool],
        tool_interceptors = [FcGuardToolInterceptor])]
pub struct FcAgent;

/// A listener that tries to soften every failure, and records what it saw.
#[derive(Clone, Default)]
struct Softening {
    seen: Arc<Mutex<Vec<String>>>,
}

impl ToolCallListener for Softening {
    type Context = ();
    fn before_call(&self, call: &ToolCallInfo<'_>) {
        self.seen.lock().unwrap().push(format!(
            "input {} | masked {}",
            call.input, call.masked_input
        ));
    }
    fn on_error(&self, _: &mut (), _: &ToolCallInfo<'_>, error: &ToolCallError) -> Option<String> {
        self.seen.lock().unwrap().push(format!("error {error}"));
        Some(format!("it's fine, carry on ({error})"))
    }
}

fn app_with(listener: Softening, model: ScriptedModel) -> (App, Arc<FcRuns>) {
    let runs = Arc::new(FcRuns::default());
    let app = App::builder()
        .agent::<FcAgent>()
        .provide_arc(Arc::clone(&runs))
        .tool_call_listener(listener)
        .model(model)
        .build()
        .expect("app builds");
    (app, runs)
}

/// One agent run whose model calls `fc-tool` with `mode`, then answers.
async fn run_mode(
    mode: &str,
    ctx: RunContext,
) -> (Result<String, RunError>, Vec<RunEvent>, Softening, usize) {
    let listener = Softening::default();
    let model = ScriptedModel::new([
        Turn::tool_call("fc-tool", json!({ "mode": mode })),
        Turn::text("done"),
    ]);
    let (app, runs) = app_with(listener.clone(), model);
    // Bounded here so that a guard that is not bounded fails the test instead of hanging it.
    let (events, result) = tokio::time::timeout(
        Duration::from_secs(5),
        app.stream(Target::agent::<FcAgent>(), "go", ctx)
            .collect_all(),
    )
    .await
    .expect("the run ends on its own");
    (result.map(|o| o.text), events, listener, runs.get())
}

fn decisions(events: &[RunEvent]) -> Vec<CallDecision> {
    events
        .iter()
        .filter_map(|e| match e {
            RunEvent::ToolCallDecision { decision, .. } => Some(decision.clone()),
            _ => None,
        })
        .collect()
}

fn observations(events: &[RunEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            RunEvent::ToolResult { content, .. } => Some(content.clone()),
            _ => None,
        })
        .collect()
}

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
        failure.error(),
        ToolCallError::Dependency {
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
        ToolCallError::NotInApp {
            tool_name: "x".into(),
        },
    );
    assert!(!guard.set_report("soft".into()));
    assert_eq!(guard.report(), None);
    let mut tool = CallFailure::new(
        FailureKind::Tool,
        ToolCallError::NotInApp {
            tool_name: "x".into(),
        },
    );
    assert!(tool.set_report("soft".into()));
    assert_eq!(tool.report(), Some("soft"));
}

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
            **source,
            ToolCallError::InterceptorTimeout {
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
        failure.error(),
        ToolCallError::InterceptorTimeout { timeout_ms: 30, .. }
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

// --- Defect 3: listeners see the masked input ---------------------------------------------------

#[tokio::test]
async fn listeners_get_the_raw_and_the_masked_input() {
    let (result, _, listener, _) = run_mode("mail jane@example.com", RunContext::new()).await;
    assert_eq!(result.unwrap(), "done");
    let seen = listener.seen.lock().unwrap().clone();
    assert_eq!(
        seen[0],
        r#"input {"mode":"mail jane@example.com"} | masked {"mode":"mail [REDACTED:email]"}"#
    );
}

// --- Defect 4: what the model reads keeps its shape -----------------------------------------------

#[tokio::test]
async fn a_masked_result_keeps_the_declaration_order_of_its_fields() {
    let app = App::builder()
        .tool::<FcTool>()
        .provide(FcRuns::default())
        .build()
        .unwrap();
    let plain = app
        .tool::<FcTool>()
        .invoke_json(r#"{"mode":"nothing personal"}"#)
        .await
        .unwrap();
    assert_eq!(
        plain,
        r#"{"zeta":"z","middle":"nothing personal","alpha":"a"}"#
    );
    let masked = app
        .tool::<FcTool>()
        .invoke_json(r#"{"mode":"jane@example.com"}"#)
        .await
        .unwrap();
    assert_eq!(
        masked,
        r#"{"zeta":"z","middle":"[REDACTED:email]","alpha":"a"}"#
    );
}

// --- One outcome type, with its decision; error sources ------------------------------------------

#[tokio::test]
async fn every_outcome_names_its_decision_where_it_was_taken() {
    let app = App::builder()
        .tool_interceptor::<FcGuardToolInterceptor>()
        .tool::<FcTool>()
        .provide(FcRuns::default())
        .build()
        .unwrap();
    let call = |args: &'static str| {
        let app = app.clone();
        async move { app.tool::<FcTool>().call(args).await }
    };
    assert!(matches!(
        call(r#"{"mode":"ok"}"#).await,
        CallOutcome::Ran(_)
    ));
    let rejected = call(r#"{"mode":1}"#).await;
    assert_eq!(rejected.failure().unwrap().kind(), FailureKind::Rejected);
    assert!(matches!(rejected.decision(), CallDecision::Rejected { .. }));
    let not_json = call("not json").await;
    assert_eq!(not_json.failure().unwrap().kind(), FailureKind::Rejected);
    assert!(
        not_json
            .error()
            .unwrap()
            .to_string()
            .contains("not valid JSON"),
        "{not_json:?}"
    );
    let failed = call(r#"{"mode":"tool-fails"}"#).await;
    assert_eq!(failed.failure().unwrap().kind(), FailureKind::Tool);
    assert_eq!(failed.decision(), CallDecision::Allowed);
    let guard = call(r#"{"mode":"guard-errs"}"#).await;
    assert_eq!(guard.failure().unwrap().kind(), FailureKind::Guard);
    assert!(guard.fails_closed());
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

/// A user's own callback that never answers.
struct Hanging {
    definition: agboss_core::model::ToolDefinition,
    metadata: agboss_core::callback::ToolMetadata,
}

impl ToolCallback for Hanging {
    fn definition(&self) -> &agboss_core::model::ToolDefinition {
        &self.definition
    }
    fn metadata(&self) -> &agboss_core::callback::ToolMetadata {
        &self.metadata
    }
    fn call<'a>(&'a self, _: ToolInvocation<'a>) -> futures::future::BoxFuture<'a, CallOutcome> {
        Box::pin(std::future::pending())
    }
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

/// Suspends once (a yield, no timer of its own), then allows.
#[tool_interceptor(name = "fc-slow-guard-tool-interceptor", description = "Yields once")]
pub struct FcSlowGuardToolInterceptor;

impl BeforeToolCall for FcSlowGuardToolInterceptor {
    async fn before_tool_call(
        &self,
        _call: &ToolCallContext<'_>,
    ) -> Result<ToolCallDecision, InterceptorError> {
        tokio::task::yield_now().await;
        Ok(ToolCallDecision::allow())
    }
}
