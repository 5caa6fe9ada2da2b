//! TARGETS.md: every way of calling a tool runs the same resolved chain. One tool, one
//! application-level and one tool-level interceptor, one app-wide listener; each row of the
//! matrix calls the tool another way and checks the recorded order (and the listener).
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use agboss_core::callback::SharedToolCallback;
use agboss_core::callback::listener::{ToolCallInfo, ToolCallListener, ToolCallListeners};
use agboss_core::callback::{BoundToolCallback, ToolInvocation};
use agboss_core::cascade::ResolvedAgent;
use agboss_core::dto::Dto;
use agboss_core::engine::workflow::Flow;
use agboss_core::engine::{RunContext, RunEvent, Target};
use agboss_core::prelude::*;
use agboss_testing::scripted::{ScriptedModel, Turn};
use futures::StreamExt as _;
use serde_json::json;

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct TextDto {
    #[text(prompt = "Text")]
    pub text: String,
}

#[injectable(provided)]
pub struct MatrixLog(Mutex<Vec<String>>);

impl MatrixLog {
    fn push(&self, s: &str) {
        self.0.lock().unwrap().push(s.to_string());
    }
    fn take(&self) -> Vec<String> {
        std::mem::take(&mut *self.0.lock().unwrap())
    }
}

#[tool_interceptor(name = "matrix-app-tool-interceptor", description = "Outer guard", deps = [MatrixLog])]
pub struct MatrixAppToolInterceptor {
    log: Arc<MatrixLog>,
}
impl BeforeToolCall for MatrixAppToolInterceptor {
    async fn before_tool_call(
        &self,
        _call: &ToolCallContext<'_>,
    ) -> Result<ToolCallDecision, InterceptorError> {
        self.log.push("before:app");
        Ok(ToolCallDecision::allow())
    }
}
impl AfterToolCall for MatrixAppToolInterceptor {
    async fn after_tool_call(
        &self,
        call: ToolCallResultContext<'_>,
    ) -> Result<ToolOutput, InterceptorError> {
        self.log.push("after:app");
        Ok(call.keep())
    }
}

#[tool_interceptor(name = "matrix-tool-tool-interceptor", description = "Inner guard", deps = [MatrixLog])]
pub struct MatrixToolToolInterceptor {
    log: Arc<MatrixLog>,
}
impl BeforeToolCall for MatrixToolToolInterceptor {
    async fn before_tool_call(
        &self,
        _call: &ToolCallContext<'_>,
    ) -> Result<ToolCallDecision, InterceptorError> {
        self.log.push("before:tool");
        Ok(ToolCallDecision::allow())
    }
}
impl AfterToolCall for MatrixToolToolInterceptor {
    async fn after_tool_call(
        &self,
        call: ToolCallResultContext<'_>,
    ) -> Result<ToolOutput, InterceptorError> {
        self.log.push("after:tool");
        Ok(call.keep())
    }
}

#[tool(name = "matrix-tool", description = "Echoes", input = TextDto, output = TextDto,
       tool_interceptors = [MatrixToolToolInterceptor], deps = [MatrixLog])]
pub struct MatrixTool {
    log: Arc<MatrixLog>,
}
impl ToolHandler<TextDto, TextDto> for MatrixTool {
    async fn run(&self, input: TextDto) -> Result<TextDto, ToolError> {
        self.log.push("run");
        Ok(input)
    }
}

#[agent(name = "matrix-agent", description = "Calls the tool", tools = [MatrixTool])]
pub struct MatrixAgent;

#[workflow(name = "matrix-workflow", description = "Calls the tool as a step",
           agents = [MatrixAgent], tools = [MatrixTool])]
pub struct MatrixWorkflow;

#[application(name = "matrix-application", description = "One tool, every way of calling it",
              workflows = [MatrixWorkflow], agents = [MatrixAgent],
              tool_interceptors = [MatrixAppToolInterceptor])]
pub struct MatrixApplication;

#[derive(Clone, Default)]
struct Counting(Arc<AtomicUsize>);
impl ToolCallListener for Counting {
    type Context = ();
    fn after_call(&self, _: &mut (), _: &ToolCallInfo<'_>, _: &CallOutcome) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

const CHAIN: [&str; 5] = [
    "before:app",
    "before:tool",
    "run",
    "after:tool",
    "after:app",
];

struct Fixture {
    app: App,
    log: Arc<MatrixLog>,
    listened: Arc<AtomicUsize>,
}

fn fixture(turns: Vec<Turn>) -> Fixture {
    let log = Arc::new(MatrixLog(Mutex::new(Vec::new())));
    let listener = Counting::default();
    let listened = Arc::clone(&listener.0);
    let app = App::builder()
        .application::<MatrixApplication>()
        .provide_arc(Arc::clone(&log))
        .model(ScriptedModel::new(turns))
        .tool_call_listener(listener)
        .build()
        .unwrap();
    Fixture { app, log, listened }
}

fn one_call() -> Vec<Turn> {
    vec![
        Turn::tool_call("matrix-tool", json!({"text": "hi"})),
        Turn::text("done"),
    ]
}

#[tokio::test]
async fn direct_calls_typed_json_outcome_and_by_name() {
    let f = fixture(vec![]);
    f.app
        .tool::<MatrixTool>()
        .invoke(TextDto { text: "a".into() })
        .await
        .unwrap();
    assert_eq!(f.log.take(), CHAIN, "typed invoke");
    f.app
        .tool::<MatrixTool>()
        .invoke_json(r#"{"text":"a"}"#)
        .await
        .unwrap();
    assert_eq!(f.log.take(), CHAIN, "invoke_json");
    f.app
        .tool::<MatrixTool>()
        .call(r#"{"text":"a"}"#)
        .await
        .into_result()
        .unwrap();
    assert_eq!(f.log.take(), CHAIN, "ToolHandle::call");
    f.app
        .tool_by_name("matrix-tool")
        .unwrap()
        .invoke_json(r#"{"text":"a"}"#)
        .await
        .unwrap();
    assert_eq!(f.log.take(), CHAIN, "by name");
}

#[tokio::test]
async fn bound_tools_and_callbacks_with_and_without_listeners() {
    let f = fixture(vec![]);
    let agent = f.app.agent::<MatrixAgent>().unwrap();
    let invocation = ToolInvocation::new("c1", r#"{"text":"a"}"#);
    agent
        .tool("matrix-tool")
        .unwrap()
        .call("c1", None, r#"{"text":"a"}"#)
        .await
        .into_result()
        .unwrap();
    assert_eq!(f.log.take(), CHAIN, "BoundTool::call");

    raw_callbacks(agent)[0]
        .call(invocation)
        .await
        .into_result()
        .unwrap();
    assert_eq!(f.log.take(), CHAIN, "bare callback");
    assert_eq!(f.listened.load(Ordering::SeqCst), 0);

    f.app.agent_callbacks(agent)[0]
        .call(invocation)
        .await
        .into_result()
        .unwrap();
    assert_eq!(f.log.take(), CHAIN, "app-listened agent callback");
    assert_eq!(f.listened.load(Ordering::SeqCst), 1);

    f.app.callbacks()[0]
        .call(invocation)
        .await
        .into_result()
        .unwrap();
    assert_eq!(f.log.take(), CHAIN, "app-listened direct callback");
    assert_eq!(f.listened.load(Ordering::SeqCst), 2);

    let extra = Counting::default();
    let wrapped = ToolCallListeners::wrap_all(raw_callbacks(agent), extra.clone());
    wrapped[0].call(invocation).await.into_result().unwrap();
    assert_eq!(f.log.take(), CHAIN, "wrap_all");
    assert_eq!(extra.0.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn the_agent_loop_execute_and_stream() {
    let f = fixture(one_call());
    let out = f
        .app
        .execute(Target::agent::<MatrixAgent>(), "go", RunContext::new())
        .await
        .unwrap();
    assert_eq!(out.text, "done");
    assert_eq!(f.log.take(), CHAIN, "execute");
    assert_eq!(
        f.listened.load(Ordering::SeqCst),
        1,
        "app listener in the loop"
    );

    let f = fixture(one_call());
    let events: Vec<_> = f
        .app
        .stream(Target::agent::<MatrixAgent>(), "go", RunContext::new())
        .collect()
        .await;
    assert!(matches!(events.last(), Some(Ok(RunEvent::Completed(_)))));
    assert_eq!(f.log.take(), CHAIN, "stream");
}

#[tokio::test]
async fn parallel_calls_of_one_turn_each_run_the_chain() {
    let f = fixture(vec![
        Turn::tool_calls([
            ("matrix-tool", json!({"text": "1"})),
            ("matrix-tool", json!({"text": "2"})),
            ("matrix-tool", json!({"text": "3"})),
        ]),
        Turn::text("done"),
    ]);
    f.app
        .execute(Target::agent::<MatrixAgent>(), "go", RunContext::new())
        .await
        .unwrap();
    let log = f.log.take();
    for step in CHAIN {
        assert_eq!(
            log.iter().filter(|e| *e == step).count(),
            3,
            "{step}: {log:?}"
        );
    }
    assert_eq!(f.listened.load(Ordering::SeqCst), 3);
}

#[tokio::test]
async fn a_workflow_tool_step_and_an_agent_under_the_workflow() {
    let f = fixture(one_call());
    let flow = Flow::new()
        .agent::<MatrixAgent>()
        .map("to-args", |_| Ok(json!({"text": "step"}).to_string()))
        .tool::<MatrixTool>();
    let out = f
        .app
        .execute(
            Target::workflow_with::<MatrixWorkflow>(flow),
            "go",
            RunContext::new(),
        )
        .await
        .unwrap();
    assert!(out.text.contains("step"), "{}", out.text);
    let log = f.log.take();
    assert_eq!(log.len(), 10, "{log:?}");
    assert_eq!(log[..5], CHAIN, "agent under the workflow");
    assert_eq!(log[5..], CHAIN, "workflow tool step");
}

/// The agent's tools as undecorated callbacks.
fn raw_callbacks(agent: &ResolvedAgent) -> Vec<SharedToolCallback> {
    agent.tools.iter().map(BoundToolCallback::shared).collect()
}
