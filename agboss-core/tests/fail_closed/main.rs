//! Regression tests of the layered core's defects: a listener never softens a guard failure, a
//! hanging guard is a guard failure (its own time limit, not the tool's), listeners see the
//! masked input, masked results keep their declaration order; the outcome names its decision;
//! error chains keep their sources.
use std::error::Error as _;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agboss_core::callback::ToolCallback;
use agboss_core::callback::ToolInvocation;
use agboss_core::callback::listener::{ToolCallInfo, ToolCallListener};
use agboss_core::dto::Dto;
use agboss_core::engine::{CallDecision, RunContext, RunError, RunEvent, Target};
use agboss_core::prelude::*;
use agboss_testing::scripted::{ScriptedModel, Turn};
use serde_json::json;

mod failures;
mod outcomes;
mod timeouts;

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
    (
        result.map(|o| o.text).map_err(RunError::from),
        events,
        listener,
        runs.get(),
    )
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
