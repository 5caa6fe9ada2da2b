//! The cascade: application → workflow → agent → tool, resolved once at build.
use std::sync::{Arc, Mutex};

use agboss_core::cascade::BoundTool;
use agboss_core::cascade::BuildWarning;
use agboss_core::cascade::Chain;
use agboss_core::dto::Dto;
use agboss_core::error::BuildError;
use agboss_core::prelude::*;
use agboss_core::{contract::scope::ScopeKind, contract::scope::ScopeRef};

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct TextDto {
    #[text(prompt = "Text")]
    pub text: String,
}

#[injectable(provided)]
pub struct Recorder(Mutex<Vec<String>>);

impl Recorder {
    fn push(&self, s: String) {
        self.0.lock().unwrap().push(s);
    }
    fn take(&self) -> Vec<String> {
        std::mem::take(&mut *self.0.lock().unwrap())
    }
}

macro_rules! recording_interceptor {
    ($ty:ident, $name:literal, $label:literal) => {
        #[tool_interceptor(name = $name, description = "Records its calls", deps = [Recorder])]
        pub struct $ty {
            rec: Arc<Recorder>,
        }
        impl BeforeToolCall for $ty {
            async fn before_tool_call(
                &self,
                _call: &ToolCallContext<'_>,
            ) -> Result<ToolCallDecision, InterceptorError> {
                self.rec.push(format!("before:{}", $label));
                Ok(ToolCallDecision::allow())
            }
        }
        impl AfterToolCall for $ty {
            async fn after_tool_call(
                &self,
                call: ToolCallResultContext<'_>,
            ) -> Result<ToolOutput, InterceptorError> {
                self.rec.push(format!("after:{}", $label));
                Ok(call.keep())
            }
        }
    };
}

recording_interceptor!(AppLevelToolInterceptor, "app-level-tool-interceptor", "app");
recording_interceptor!(
    WorkflowLevelToolInterceptor,
    "workflow-level-tool-interceptor",
    "workflow"
);
recording_interceptor!(
    AgentLevelToolInterceptor,
    "agent-level-tool-interceptor",
    "agent"
);
recording_interceptor!(
    ToolLevelToolInterceptor,
    "tool-level-tool-interceptor",
    "tool"
);

macro_rules! recording_tool {
    ($ty:ident, $name:literal $(, $key:ident = [$($v:ident),*])*) => {
        #[tool(name = $name, description = "Records its runs", input = TextDto, output = TextDto,
               deps = [Recorder] $(, $key = [$($v),*])*)]
        pub struct $ty {
            rec: Arc<Recorder>,
        }
        impl ToolHandler<TextDto, TextDto> for $ty {
            async fn run(&self, input: TextDto) -> Result<TextDto, ToolError> {
                self.rec.push("run".into());
                Ok(input)
            }
        }
    };
}

recording_tool!(
    ProbeTool,
    "probe-tool",
    tool_interceptors = [ToolLevelToolInterceptor]
);
recording_tool!(SharedTool, "shared-tool");
recording_tool!(
    NoAgentGuardTool,
    "no-agent-guard-tool",
    exclude_tool_interceptors = [AgentLevelToolInterceptor]
);

#[agent(name = "first-agent", description = "Uses the probe", tools = [ProbeTool, SharedTool, NoAgentGuardTool],
        tool_interceptors = [AgentLevelToolInterceptor])]
pub struct FirstAgent;

#[agent(name = "second-agent", description = "Shares a tool; drops the workflow guard", tools = [SharedTool],
        exclude_tool_interceptors = [WorkflowLevelToolInterceptor])]
pub struct SecondAgent;

#[agent(name = "third-agent", description = "Under the quiet workflow", tools = [ProbeTool])]
pub struct ThirdAgent;

#[agent(name = "again-agent", description = "Attaches the app guard again", tools = [ProbeTool],
        tool_interceptors = [AppLevelToolInterceptor])]
pub struct AgainAgent;

#[workflow(name = "main-workflow", description = "Main", agents = [FirstAgent, SecondAgent],
           tool_interceptors = [WorkflowLevelToolInterceptor])]
pub struct MainWorkflow;

#[workflow(name = "quiet-workflow", description = "Drops the app guard", agents = [ThirdAgent],
           exclude_tool_interceptors = [AppLevelToolInterceptor])]
pub struct QuietWorkflow;

#[application(name = "cascade-application", description = "Exercises the cascade",
              workflows = [MainWorkflow, QuietWorkflow], agents = [AgainAgent],
              tool_interceptors = [AppLevelToolInterceptor])]
pub struct CascadeApplication;

/// Registered in the binary but not part of the application: a build warning.
#[agent(name = "orphan-agent", description = "Nobody reaches me", tools = [SharedTool])]
pub struct OrphanAgent;

fn build() -> (App, Arc<Recorder>) {
    let rec = Arc::new(Recorder(Mutex::new(Vec::new())));
    let app = App::builder()
        .application::<CascadeApplication>()
        .provide_arc(Arc::clone(&rec))
        .build()
        .expect("builds");
    (app, rec)
}

fn names(chain: &Chain) -> Vec<&'static str> {
    chain.entries().iter().map(|e| e.interceptor.name).collect()
}

async fn call(tool: &BoundTool, rec: &Recorder) -> Vec<String> {
    rec.take();
    tool.call("call_1", None, r#"{"text":"x"}"#)
        .await
        .into_result()
        .unwrap();
    rec.take()
}

#[tokio::test]
async fn before_runs_outer_to_inner_and_after_inner_to_outer_across_four_levels() {
    let (app, rec) = build();
    let agent = app.agent_in::<MainWorkflow, FirstAgent>().unwrap();
    let log = call(agent.tool("probe-tool").unwrap(), &rec).await;
    assert_eq!(
        log,
        [
            "before:app",
            "before:workflow",
            "before:agent",
            "before:tool",
            "run",
            "after:tool",
            "after:agent",
            "after:workflow",
            "after:app"
        ]
    );
    let chain = agent.tool("probe-tool").unwrap().chain();
    let origins: Vec<ScopeKind> = chain.entries().iter().map(|e| e.origin.kind).collect();
    assert_eq!(
        origins,
        [
            ScopeKind::Application,
            ScopeKind::Workflow,
            ScopeKind::Agent,
            ScopeKind::Tool
        ]
    );
    assert_eq!(
        chain.path(),
        ["cascade-application", "main-workflow", "first-agent"]
    );
}

#[tokio::test]
async fn exclusion_at_the_workflow_removes_an_application_interceptor_below_it() {
    let (app, rec) = build();
    let agent = app.agent_in::<QuietWorkflow, ThirdAgent>().unwrap();
    let tool = agent.tool("probe-tool").unwrap();
    assert_eq!(names(tool.chain()), ["tool-level-tool-interceptor"]);
    let ex = &tool.chain().exclusions()[0];
    assert_eq!(ex.interceptor.name, "app-level-tool-interceptor");
    assert_eq!(ex.attached_at.kind, ScopeKind::Application);
    assert_eq!(
        ex.excluded_at,
        ScopeRef {
            kind: ScopeKind::Workflow,
            name: "quiet-workflow"
        }
    );
    assert_eq!(call(tool, &rec).await, ["before:tool", "run", "after:tool"]);
}

#[tokio::test]
async fn exclusion_at_the_agent_and_two_agents_sharing_a_tool_with_different_chains() {
    let (app, rec) = build();
    let first = app.agent_in::<MainWorkflow, FirstAgent>().unwrap();
    let second = app.agent_in::<MainWorkflow, SecondAgent>().unwrap();
    let a = first.tool("shared-tool").unwrap();
    let b = second.tool("shared-tool").unwrap();
    assert_eq!(
        names(a.chain()),
        [
            "app-level-tool-interceptor",
            "workflow-level-tool-interceptor",
            "agent-level-tool-interceptor"
        ]
    );
    assert_eq!(names(b.chain()), ["app-level-tool-interceptor"]);
    assert_eq!(b.chain().exclusions()[0].excluded_at.kind, ScopeKind::Agent);
    assert_eq!(
        call(a, &rec).await,
        [
            "before:app",
            "before:workflow",
            "before:agent",
            "run",
            "after:agent",
            "after:workflow",
            "after:app"
        ]
    );
    assert_eq!(call(b, &rec).await, ["before:app", "run", "after:app"]);
}

#[tokio::test]
async fn exclusion_at_the_tool() {
    let (app, rec) = build();
    let first = app.agent_in::<MainWorkflow, FirstAgent>().unwrap();
    let tool = first.tool("no-agent-guard-tool").unwrap();
    assert_eq!(
        names(tool.chain()),
        [
            "app-level-tool-interceptor",
            "workflow-level-tool-interceptor"
        ]
    );
    assert_eq!(
        tool.chain().exclusions()[0].excluded_at.kind,
        ScopeKind::Tool
    );
    assert_eq!(
        call(tool, &rec).await,
        [
            "before:app",
            "before:workflow",
            "run",
            "after:workflow",
            "after:app"
        ]
    );
}

#[tokio::test]
async fn an_interceptor_attached_at_several_levels_runs_once_at_its_outermost_place() {
    let (app, rec) = build();
    let agent = app.agent::<AgainAgent>().unwrap();
    let tool = agent.tool("probe-tool").unwrap();
    assert_eq!(
        names(tool.chain()),
        ["app-level-tool-interceptor", "tool-level-tool-interceptor"]
    );
    assert_eq!(
        tool.chain().entries()[0].origin.kind,
        ScopeKind::Application
    );
    assert_eq!(
        call(tool, &rec).await,
        [
            "before:app",
            "before:tool",
            "run",
            "after:tool",
            "after:app"
        ]
    );
}

#[tokio::test]
async fn direct_invoke_uses_the_application_to_tool_chain() {
    let (app, rec) = build();
    assert_eq!(
        names(app.direct_chain::<ProbeTool>().unwrap()),
        ["app-level-tool-interceptor", "tool-level-tool-interceptor"]
    );
    rec.take();
    app.tool::<ProbeTool>()
        .invoke(TextDto { text: "x".into() })
        .await
        .unwrap();
    assert_eq!(
        rec.take(),
        [
            "before:app",
            "before:tool",
            "run",
            "after:tool",
            "after:app"
        ]
    );
    // Every tool any agent uses is directly callable.
    let mut direct: Vec<&str> = app.tools().map(|t| &*t.name).collect();
    direct.sort();
    assert_eq!(direct, ["no-agent-guard-tool", "probe-tool", "shared-tool"]);
}

#[test]
fn an_unreachable_agent_is_a_warning_and_deny_warnings_makes_it_an_error() {
    let (app, _) = build();
    assert!(app.warnings().contains(&BuildWarning::Unreachable {
        kind: "agent",
        name: "orphan-agent"
    }));
    let err = App::builder()
        .application::<CascadeApplication>()
        .provide(Recorder(Mutex::new(Vec::new())))
        .deny_warnings()
        .build()
        .unwrap_err();
    assert!(
        err.to_string().contains(
            "agent `orphan-agent` is registered but no path of the application reaches it"
        ),
        "{err}"
    );
}

#[test]
fn an_exclusion_with_nothing_to_remove_is_a_warning_naming_the_scope() {
    let app = App::builder()
        .tool::<NoAgentGuardTool>()
        .provide(Recorder(Mutex::new(Vec::new())))
        .build()
        .unwrap();
    assert_eq!(
        app.warnings(),
        [BuildWarning::UselessExclusion {
            interceptor: "agent-level-tool-interceptor",
            at: ScopeRef {
                kind: ScopeKind::Tool,
                name: "no-agent-guard-tool"
            }
        }]
    );
    // Useful on at least one path: no warning (no-agent-guard-tool under first-agent).
    let (app, _) = build();
    assert!(
        !app.warnings()
            .iter()
            .any(|w| matches!(w, BuildWarning::UselessExclusion { .. })),
        "{:?}",
        app.warnings()
    );
}

// ---- dependency errors at build ----

// A service dependency cycle does not compile at all: the services' `META` constants would
// refer to each other (rustc reports E0391), so no app can be built with one.

#[injectable(deps = [TenantContext])]
pub struct TenantScopedService {
    _tenant: TenantContext,
}

#[tool(name = "scoped-service-tool", description = "Needs a tenant-scoped service", input = TextDto, output = TextDto,
       deps = [TenantScopedService])]
pub struct ScopedServiceTool {
    _s: Arc<TenantScopedService>,
}
impl ToolHandler<TextDto, TextDto> for ScopedServiceTool {
    async fn run(&self, input: TextDto) -> Result<TextDto, ToolError> {
        Ok(input)
    }
}

#[test]
fn a_context_in_a_service_is_a_build_error() {
    let err = App::builder()
        .tool::<ScopedServiceTool>()
        .build()
        .unwrap_err();
    assert_eq!(
        err,
        BuildError::ContextInService {
            service: "TenantScopedService",
            context: "TenantContext"
        }
    );
}

#[test]
fn a_missing_provider_for_an_interceptor_names_it() {
    // The application's interceptors need the provided `Recorder`.
    let err = App::builder()
        .application::<CascadeApplication>()
        .build()
        .unwrap_err();
    assert_eq!(
        err,
        BuildError::MissingProvider {
            component: "ProbeTool",
            dependency: "Recorder",
            hint: "it is `#[injectable(provided)]`: give the app an instance with `.provide(...)`"
        }
    );
}

// ---- a tool's `timeout_ms` bounds its `run` only ----

#[tool_interceptor(
    name = "unbounded-tool-interceptor",
    description = "No time limit of its own"
)]
pub struct UnboundedToolInterceptor;
impl BeforeToolCall for UnboundedToolInterceptor {
    async fn before_tool_call(
        &self,
        _call: &ToolCallContext<'_>,
    ) -> Result<ToolCallDecision, InterceptorError> {
        Ok(ToolCallDecision::allow())
    }
}

#[tool_interceptor(
    name = "bounded-tool-interceptor",
    description = "Has its own limit",
    timeout_ms = 50
)]
pub struct BoundedToolInterceptor;
impl BeforeToolCall for BoundedToolInterceptor {
    async fn before_tool_call(
        &self,
        _call: &ToolCallContext<'_>,
    ) -> Result<ToolCallDecision, InterceptorError> {
        Ok(ToolCallDecision::allow())
    }
}

#[tool(name = "quick-tool", description = "Has a 200 ms limit", input = TextDto, output = TextDto,
       timeout_ms = 200, tool_interceptors = [UnboundedToolInterceptor, BoundedToolInterceptor])]
pub struct QuickTool;
impl ToolHandler<TextDto, TextDto> for QuickTool {
    async fn run(&self, input: TextDto) -> Result<TextDto, ToolError> {
        Ok(input)
    }
}

#[test]
fn a_tool_timeout_over_an_interceptor_without_its_own_limit_is_a_warning() {
    let app = App::builder().tool::<QuickTool>().build().unwrap();
    let warning = BuildWarning::HooksNotBoundByToolTimeout {
        tool: "quick-tool".into(),
        interceptor: "unbounded-tool-interceptor",
        hook_timeout: agboss_core::contract::interceptor::DEFAULT_HOOK_TIMEOUT,
    };
    // The interceptor with a limit of its own is not reported.
    assert_eq!(app.warnings(), std::slice::from_ref(&warning));
    assert!(
        warning
            .to_string()
            .contains("#[tool_interceptor(timeout_ms = ..)]"),
        "{warning}"
    );
    // deny_warnings makes it a build error, so CI catches a guard whose limit grew.
    assert!(
        App::builder()
            .tool::<QuickTool>()
            .deny_warnings()
            .build()
            .is_err()
    );
    // An app bound on hooks no looser than the tool's limit: nothing grew, no warning.
    let app = App::builder()
        .tool::<QuickTool>()
        .interceptor_timeout(std::time::Duration::from_millis(200))
        .build()
        .unwrap();
    assert_eq!(app.warnings(), []);
}
