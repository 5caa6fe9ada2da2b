//! `ToolCallListener` / `ToolCallListeners`: one test per sentence of the seed's Semantics
//! section, how a listener sees each outcome of the pipeline, nesting, app/agent listeners and
//! 1,000 concurrent calls through one listener.
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use agboss_core::callback::listener::{ToolCallInfo, ToolCallListener, ToolCallListeners};
use agboss_core::callback::{
    SharedToolCallback, ToolCallback, ToolInvocation, ToolMetadata, ToolSource,
};
use agboss_core::dto::Dto;
use agboss_core::model::ToolDefinition;
use agboss_core::*;
use futures::FutureExt as _;
use futures::future::BoxFuture;

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct LsnTextDto {
    #[text(prompt = "Some text", max_length = 64)]
    pub text: String,
}

/// Counts tool runs; provided per app so tests do not share state.
#[injectable(provided)]
#[derive(Default)]
pub struct LsnRuns(AtomicUsize);

impl LsnRuns {
    fn get(&self) -> usize {
        self.0.load(Ordering::SeqCst)
    }
}

#[tool(name = "lsn-echo-tool", description = "Echoes its text", input = LsnTextDto,
       output = LsnTextDto, tool_interceptors = [LsnGuardToolInterceptor], deps = [LsnRuns])]
pub struct LsnEchoTool {
    runs: Arc<LsnRuns>,
}

impl ToolHandler<LsnTextDto, LsnTextDto> for LsnEchoTool {
    async fn run(&self, input: LsnTextDto) -> Result<LsnTextDto, ToolError> {
        self.runs.0.fetch_add(1, Ordering::SeqCst);
        match input.text.as_str() {
            "fail" => Err(ToolError::msg("disk on fire")),
            "panic" => panic!("tool exploded"),
            "sleep" => {
                tokio::time::sleep(std::time::Duration::from_secs(3600)).await;
                Ok(input)
            }
            _ => Ok(LsnTextDto {
                text: format!("echo:{}", input.text),
            }),
        }
    }
}

#[tool(name = "lsn-slow-tool", description = "Never answers in time", input = LsnTextDto,
       output = LsnTextDto, timeout_ms = 20)]
pub struct LsnSlowTool;

impl ToolHandler<LsnTextDto, LsnTextDto> for LsnSlowTool {
    async fn run(&self, input: LsnTextDto) -> Result<LsnTextDto, ToolError> {
        tokio::time::sleep(std::time::Duration::from_secs(3600)).await;
        Ok(input)
    }
}

#[tool_interceptor(
    name = "lsn-guard-tool-interceptor",
    description = "Replies or blocks by text"
)]
pub struct LsnGuardToolInterceptor;

impl BeforeToolCall for LsnGuardToolInterceptor {
    async fn before_tool_call(
        &self,
        call: &ToolCallContext<'_>,
    ) -> Result<ToolCallDecision, InterceptorError> {
        Ok(match call.input()["text"].as_str() {
            Some("reply") => ToolCallDecision::reply_to_model("use another text"),
            Some("block") => ToolCallDecision::block("not allowed"),
            _ => ToolCallDecision::allow(),
        })
    }
}

#[agent(name = "lsn-echo-agent", description = "Echoes", tools = [LsnEchoTool])]
pub struct LsnEchoAgent;

fn app() -> (App, Arc<LsnRuns>) {
    let runs = Arc::new(LsnRuns::default());
    let app = App::builder()
        .tool::<LsnEchoTool>()
        .tool::<LsnSlowTool>()
        .provide_arc(Arc::clone(&runs))
        .build()
        .expect("app builds");
    (app, runs)
}

fn echo(app: &App) -> SharedToolCallback {
    app.callbacks()
        .into_iter()
        .find(|c| c.definition().name == "lsn-echo-tool")
        .unwrap()
}

fn inv<'a>(call_id: &'a str, arguments: &'a str) -> ToolInvocation<'a> {
    ToolInvocation::new(call_id, arguments)
}

/// What a caller of a callback gets: the text for the model (an output, a reply, a reported
/// failure), or the error.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Seen {
    Output {
        content: String,
        truncated: bool,
    },
    ReplyToModel {
        message: String,
        interceptor: &'static str,
    },
    ReportedError {
        message: String,
    },
}

impl Seen {
    fn of(outcome: &CallOutcome) -> Option<Self> {
        Some(match outcome {
            CallOutcome::Ran(r) => Self::Output {
                content: r.text.clone(),
                truncated: r.truncated,
            },
            CallOutcome::Replied {
                message,
                interceptor,
            } => Self::ReplyToModel {
                message: message.clone(),
                interceptor,
            },
            CallOutcome::Failed(f) => Self::ReportedError {
                message: f.report()?.to_string(),
            },
        })
    }
    fn content(&self) -> &str {
        match self {
            Self::Output { content, .. } => content,
            Self::ReplyToModel { message, .. } | Self::ReportedError { message } => message,
        }
    }
    fn is_error(&self) -> bool {
        !matches!(self, Self::Output { .. })
    }
}

trait Settle {
    fn settle(self) -> Result<Seen, ToolCallError>;
}

impl Settle for CallOutcome {
    fn settle(self) -> Result<Seen, ToolCallError> {
        match Seen::of(&self) {
            Some(seen) => Ok(seen),
            None => Err(self.into_result().unwrap_err()),
        }
    }
}

fn text(t: &str) -> String {
    serde_json::json!({ "text": t }).to_string()
}

/// Records every method call as a line; the context is `"<call id>#<n>"`.
#[derive(Default)]
struct Recording {
    lines: Mutex<Vec<String>>,
    seq: AtomicUsize,
    report: Option<&'static str>,
    panic_in: Option<&'static str>,
}

impl Recording {
    fn reporting(message: &'static str) -> Self {
        Self {
            report: Some(message),
            ..Self::default()
        }
    }
    fn panicking_in(method: &'static str) -> Self {
        Self {
            panic_in: Some(method),
            ..Self::default()
        }
    }
    fn push(&self, line: String) {
        self.lines.lock().unwrap().push(line);
    }
    fn lines(&self) -> Vec<String> {
        self.lines.lock().unwrap().clone()
    }
    fn maybe_panic(&self, method: &str) {
        if self.panic_in == Some(method) {
            panic!("listener {method} exploded");
        }
    }
}

fn kind(result: &CallOutcome) -> &'static str {
    match Seen::of(result) {
        Some(Seen::Output { .. }) => "output",
        Some(Seen::ReplyToModel { .. }) => "reply",
        Some(Seen::ReportedError { .. }) => "reported",
        None => "unreported failure",
    }
}

impl ToolCallListener for Recording {
    type Context = String;

    fn before_call(&self, call: &ToolCallInfo<'_>) -> String {
        self.maybe_panic("before_call");
        let ctx = format!(
            "{}#{}",
            call.call_id,
            self.seq.fetch_add(1, Ordering::SeqCst)
        );
        self.push(format!(
            "before {} {} {}",
            call.call_id, call.tool_name, call.input
        ));
        ctx
    }
    fn after_call(&self, ctx: &mut String, call: &ToolCallInfo<'_>, result: &CallOutcome) {
        self.push(format!(
            "after {ctx} {} {} {}",
            call.call_id,
            kind(result),
            result.model_text().unwrap_or_default()
        ));
        self.maybe_panic("after_call");
    }
    fn on_error(
        &self,
        ctx: &mut String,
        call: &ToolCallInfo<'_>,
        error: &ToolCallError,
    ) -> Option<String> {
        self.push(format!("error {ctx} {} {error}", call.call_id));
        self.maybe_panic("on_error");
        self.report.map(str::to_string)
    }
    fn after_completion(&self, ctx: String, call: &ToolCallInfo<'_>) {
        self.push(format!("completion {ctx} {}", call.call_id));
    }
}

fn count(lines: &[String], prefix: &str) -> usize {
    lines.iter().filter(|l| l.starts_with(prefix)).count()
}

// --- Correlation context -------------------------------------------------------------------

#[tokio::test]
async fn the_context_of_before_call_is_handed_back_to_after_call_and_after_completion() {
    let (app, _) = app();
    let rec = Arc::new(Recording::default());
    let cb = ToolCallListeners::wrap(echo(&app), Arc::clone(&rec));
    let out = cb.call(inv("c1", &text("hi"))).await.settle().unwrap();
    assert_eq!(
        out,
        Seen::Output {
            content: text("echo:hi"),
            truncated: false
        }
    );
    assert_eq!(
        rec.lines(),
        [
            format!("before c1 lsn-echo-tool {}", text("hi")),
            format!("after c1#0 c1 output {}", text("echo:hi")),
            "completion c1#0 c1".to_string(),
        ]
    );
}

#[tokio::test]
async fn the_context_is_handed_back_to_on_error() {
    let (app, _) = app();
    let rec = Arc::new(Recording::default());
    let cb = ToolCallListeners::wrap(echo(&app), Arc::clone(&rec));
    cb.call(inv("c2", &text("fail")))
        .await
        .settle()
        .unwrap_err();
    let lines = rec.lines();
    assert!(lines[1].starts_with("error c2#0 c2 tool `lsn-echo-tool` failed: disk on fire"));
    assert_eq!(lines[2], "completion c2#0 c2");
}

#[tokio::test]
async fn after_completion_runs_once_after_success() {
    let (app, _) = app();
    let rec = Arc::new(Recording::default());
    let cb = ToolCallListeners::wrap(echo(&app), Arc::clone(&rec));
    cb.call(inv("s", &text("ok"))).await.settle().unwrap();
    let lines = rec.lines();
    assert_eq!(count(&lines, "completion"), 1);
    assert_eq!(lines.last().unwrap(), "completion s#0 s");
}

#[tokio::test]
async fn after_completion_runs_once_after_failure_handling_reported_or_propagated() {
    let (app, _) = app();
    for listener in [Recording::default(), Recording::reporting("it failed")] {
        let rec = Arc::new(listener);
        let cb = ToolCallListeners::wrap(echo(&app), Arc::clone(&rec));
        let _ = cb.call(inv("f", &text("fail"))).await;
        let lines = rec.lines();
        assert_eq!(count(&lines, "completion"), 1, "{lines:?}");
        // After the failure handling, not before.
        assert!(lines[1].starts_with("error"));
        assert_eq!(lines[2], "completion f#0 f");
    }
}

#[tokio::test]
async fn after_completion_is_not_called_when_before_call_panics() {
    let (app, runs) = app();
    let rec = Arc::new(Recording::panicking_in("before_call"));
    let cb = ToolCallListeners::wrap(echo(&app), Arc::clone(&rec));
    let caught = AssertUnwindSafe(cb.call(inv("p", &text("hi"))))
        .catch_unwind()
        .await;
    assert!(caught.is_err(), "the panic propagates");
    assert!(rec.lines().is_empty(), "{:?}", rec.lines());
    assert_eq!(runs.get(), 0, "the tool did not run");
}

struct Nop;
impl ToolCallListener for Nop {
    type Context = ();
}

#[tokio::test]
async fn all_listener_methods_have_no_op_defaults() {
    let (app, _) = app();
    let plain = echo(&app);
    let wrapped = ToolCallListeners::wrap(echo(&app), Nop);
    for t in ["hi", "reply"] {
        assert_eq!(
            wrapped.call(inv("n", &text(t))).await.settle().unwrap(),
            plain.call(inv("n", &text(t))).await.settle().unwrap()
        );
    }
    // The default `on_error` propagates the error.
    let err = wrapped
        .call(inv("n", &text("fail")))
        .await
        .settle()
        .unwrap_err();
    assert!(matches!(err, ToolCallError::ToolFailed { .. }), "{err:?}");
}

// --- Error policy ----------------------------------------------------------------------------

#[tokio::test]
async fn on_error_returning_some_reports_the_failure_to_the_model_as_the_result() {
    let (app, _) = app();
    let rec = Arc::new(Recording::reporting("Tool failed, try later"));
    let cb = ToolCallListeners::wrap(echo(&app), Arc::clone(&rec));
    let out = cb.call(inv("r", &text("fail"))).await.settle().unwrap();
    assert_eq!(
        out,
        Seen::ReportedError {
            message: "Tool failed, try later".into()
        }
    );
    assert!(out.is_error());
    assert_eq!(out.content(), "Tool failed, try later");
}

#[tokio::test]
async fn on_error_returning_none_propagates_the_error() {
    let (app, _) = app();
    let cb = ToolCallListeners::wrap(echo(&app), Recording::default());
    let err = cb
        .call(inv("r", &text("panic")))
        .await
        .settle()
        .unwrap_err();
    assert!(
        matches!(&err, ToolCallError::ToolPanicked { message, .. } if message == "tool exploded"),
        "{err:?}"
    );
}

// --- Transparent decoration ------------------------------------------------------------------

/// A user's own callback, not made from a `#[tool]`.
struct UpperCallback {
    definition: ToolDefinition,
    metadata: ToolMetadata,
}

impl UpperCallback {
    fn new() -> Self {
        Self {
            definition: ToolDefinition::new(
                "upper",
                "Upper-cases",
                serde_json::json!({"type": "object"}),
            ),
            metadata: ToolMetadata {
                source: ToolSource::Custom,
                tool: None,
                max_result_size: Some(99),
                path: vec!["somewhere"],
                idempotent: false,
                policy_digest: "".into(),
            },
        }
    }
}

impl ToolCallback for UpperCallback {
    fn definition(&self) -> &ToolDefinition {
        &self.definition
    }
    fn metadata(&self) -> &ToolMetadata {
        &self.metadata
    }
    fn call<'a>(&'a self, invocation: ToolInvocation<'a>) -> BoxFuture<'a, CallOutcome> {
        Box::pin(async move {
            CallOutcome::Ran(Rendered {
                text: invocation.arguments.to_uppercase(),
                truncated: false,
            })
        })
    }
}

#[tokio::test]
async fn definition_and_metadata_are_delegated_untouched_for_every_source() {
    let (app, _) = app();
    let inner: Vec<SharedToolCallback> = vec![echo(&app), Arc::new(UpperCallback::new())];
    let wrapped = ToolCallListeners::wrap_all(inner.clone(), Recording::default());
    assert_eq!(wrapped.len(), 2);
    for (w, i) in wrapped.iter().zip(&inner) {
        assert!(std::ptr::eq(w.definition(), i.definition()));
        assert!(std::ptr::eq(w.metadata(), i.metadata()));
    }
    assert_eq!(wrapped[1].metadata().source, ToolSource::Custom);
    assert_eq!(wrapped[1].metadata().max_result_size, Some(99));
    let out = wrapped[1].call(inv("u", "abc")).await.settle().unwrap();
    assert_eq!(out.content(), "ABC");
}

#[tokio::test]
async fn wrapping_twice_nests() {
    let (app, _) = app();
    let log = Arc::new(Mutex::new(Vec::<String>::new()));
    struct Named(&'static str, Arc<Mutex<Vec<String>>>, Option<&'static str>);
    impl ToolCallListener for Named {
        type Context = ();
        fn before_call(&self, _: &ToolCallInfo<'_>) {
            self.1.lock().unwrap().push(format!("{} before", self.0));
        }
        fn after_call(&self, _: &mut (), _: &ToolCallInfo<'_>, result: &CallOutcome) {
            self.1
                .lock()
                .unwrap()
                .push(format!("{} after {}", self.0, kind(result)));
        }
        fn on_error(&self, _: &mut (), _: &ToolCallInfo<'_>, _: &ToolCallError) -> Option<String> {
            self.1.lock().unwrap().push(format!("{} error", self.0));
            self.2.map(str::to_string)
        }
        fn after_completion(&self, _: (), _: &ToolCallInfo<'_>) {
            self.1
                .lock()
                .unwrap()
                .push(format!("{} completion", self.0));
        }
    }
    let inner = ToolCallListeners::wrap_all(
        vec![echo(&app)],
        Named("inner", Arc::clone(&log), Some("reported by inner")),
    );
    let outer = ToolCallListeners::wrap_all(inner, Named("outer", Arc::clone(&log), None));
    outer[0].call(inv("n", &text("hi"))).await.settle().unwrap();
    assert_eq!(
        *log.lock().unwrap(),
        [
            "outer before",
            "inner before",
            "inner after output",
            "inner completion",
            "outer after output",
            "outer completion"
        ]
    );
    log.lock().unwrap().clear();
    // The outer listener sees what the inner one made of the failure.
    let out = outer[0]
        .call(inv("n", &text("fail")))
        .await
        .settle()
        .unwrap();
    assert_eq!(out.content(), "reported by inner");
    assert_eq!(
        *log.lock().unwrap(),
        [
            "outer before",
            "inner before",
            "inner error",
            "inner completion",
            "outer after reported",
            "outer completion"
        ]
    );
}

// --- Listener methods are not guarded --------------------------------------------------------

#[tokio::test]
async fn a_panicking_after_call_discards_a_result_whose_side_effects_happened() {
    let (app, runs) = app();
    let rec = Arc::new(Recording::panicking_in("after_call"));
    let cb = ToolCallListeners::wrap(echo(&app), Arc::clone(&rec));
    let caught = AssertUnwindSafe(cb.call(inv("a", &text("hi"))))
        .catch_unwind()
        .await;
    let payload = caught.expect_err("the panic propagates");
    assert_eq!(
        payload.downcast_ref::<String>().map(String::as_str),
        Some("listener after_call exploded")
    );
    assert_eq!(runs.get(), 1, "the tool ran");
    // `after_completion` still ran, once (a `finally`), before the panic went on.
    assert_eq!(count(&rec.lines(), "completion"), 1);
}

#[tokio::test]
async fn a_panicking_on_error_replaces_the_tool_error() {
    let (app, _) = app();
    let rec = Arc::new(Recording::panicking_in("on_error"));
    let cb = ToolCallListeners::wrap(echo(&app), Arc::clone(&rec));
    let caught = AssertUnwindSafe(cb.call(inv("e", &text("fail"))))
        .catch_unwind()
        .await;
    let payload = caught.expect_err("the listener's panic, not the tool's error");
    assert_eq!(
        payload.downcast_ref::<String>().map(String::as_str),
        Some("listener on_error exploded")
    );
    assert_eq!(count(&rec.lines(), "completion"), 1);
}

// --- How a listener sees our outcomes --------------------------------------------------------

#[tokio::test]
async fn a_reply_to_model_is_a_result_the_listener_can_tell_from_a_tool_output() {
    let (app, runs) = app();
    let seen = Arc::new(Mutex::new(None));
    struct Catch(Arc<Mutex<Option<Seen>>>);
    impl ToolCallListener for Catch {
        type Context = ();
        fn after_call(&self, _: &mut (), _: &ToolCallInfo<'_>, result: &CallOutcome) {
            *self.0.lock().unwrap() = Seen::of(result);
        }
    }
    let cb = ToolCallListeners::wrap(echo(&app), Catch(Arc::clone(&seen)));
    let out = cb.call(inv("r", &text("reply"))).await.settle().unwrap();
    let expected = Seen::ReplyToModel {
        message: "use another text".into(),
        interceptor: "lsn-guard-tool-interceptor",
    };
    assert_eq!(out, expected);
    assert_eq!(seen.lock().unwrap().as_ref(), Some(&expected));
    assert!(expected.is_error());
    assert_eq!(runs.get(), 0);
}

#[tokio::test]
async fn a_block_is_seen_by_on_error_but_never_softened() {
    let (app, runs) = app();
    let rec = Arc::new(Recording::reporting("nothing to see"));
    let cb = ToolCallListeners::wrap(echo(&app), Arc::clone(&rec));
    let err = cb
        .call(inv("b", &text("block")))
        .await
        .settle()
        .unwrap_err();
    let blocked = err.as_blocked().expect("still a block");
    assert_eq!(blocked.interceptor, "lsn-guard-tool-interceptor");
    assert_eq!(
        blocked.kind,
        BlockKind::Block {
            reason: "not allowed".into()
        }
    );
    let lines = rec.lines();
    assert!(lines[1].starts_with("error b#0 b tool `lsn-echo-tool` (call b) was blocked"));
    assert_eq!(lines[2], "completion b#0 b");
    assert_eq!(runs.get(), 0);
}

#[tokio::test]
async fn an_invalid_input_goes_to_on_error_with_the_field_errors() {
    let (app, runs) = app();
    let rec = Arc::new(Recording::reporting("fix `text`"));
    let cb = ToolCallListeners::wrap(echo(&app), Arc::clone(&rec));
    let out = cb.call(inv("i", r#"{"text": 42}"#)).await.settle().unwrap();
    assert_eq!(out.content(), "fix `text`");
    assert!(rec.lines()[1].starts_with("error i#0 i invalid input for tool `lsn-echo-tool`"));
    assert_eq!(runs.get(), 0);
}

#[tokio::test]
async fn a_timeout_goes_to_on_error() {
    let (app, _) = app();
    let slow = app
        .callbacks()
        .into_iter()
        .find(|c| c.definition().name == "lsn-slow-tool")
        .unwrap();
    let rec = Arc::new(Recording::default());
    let cb = ToolCallListeners::wrap(slow, Arc::clone(&rec));
    let err = cb.call(inv("t", &text("x"))).await.settle().unwrap_err();
    assert!(
        matches!(err, ToolCallError::Timeout { timeout_ms: 20, .. }),
        "{err:?}"
    );
    assert!(rec.lines()[1].starts_with("error t#0 t tool `lsn-slow-tool` timed out"));
}

#[tokio::test]
async fn a_cancelled_call_drops_the_context_without_more_calls() {
    let (app, _) = app();
    let dropped = Arc::new(AtomicUsize::new(0));
    #[derive(Default)]
    struct Guard(Option<Arc<AtomicUsize>>);
    impl Drop for Guard {
        fn drop(&mut self) {
            if let Some(d) = &self.0 {
                d.fetch_add(1, Ordering::SeqCst);
            }
        }
    }
    struct L(Arc<AtomicUsize>, Arc<AtomicUsize>);
    impl ToolCallListener for L {
        type Context = Guard;
        fn before_call(&self, _: &ToolCallInfo<'_>) -> Guard {
            Guard(Some(Arc::clone(&self.0)))
        }
        fn after_completion(&self, _: Guard, _: &ToolCallInfo<'_>) {
            self.1.fetch_add(1, Ordering::SeqCst);
        }
    }
    let completions = Arc::new(AtomicUsize::new(0));
    let cb = ToolCallListeners::wrap(
        echo(&app),
        L(Arc::clone(&dropped), Arc::clone(&completions)),
    );
    let args = text("sleep");
    {
        let mut fut = cb.call(inv("c", &args));
        // Poll once: `before_call` ran, the tool is sleeping.
        assert!(futures::poll!(&mut fut).is_pending());
    }
    assert_eq!(dropped.load(Ordering::SeqCst), 1);
    assert_eq!(completions.load(Ordering::SeqCst), 0);
}

// --- App and agent listeners -----------------------------------------------------------------

#[tokio::test]
async fn listeners_attach_to_a_whole_app_and_to_one_agent() {
    let log = Arc::new(Mutex::new(Vec::<String>::new()));
    struct Tag(&'static str, Arc<Mutex<Vec<String>>>);
    impl ToolCallListener for Tag {
        type Context = ();
        fn before_call(&self, call: &ToolCallInfo<'_>) {
            self.1
                .lock()
                .unwrap()
                .push(format!("{} {}", self.0, call.tool_name));
        }
    }
    let app = App::builder()
        .agent::<LsnEchoAgent>()
        .tool_call_listener(Tag("app-1", Arc::clone(&log)))
        .tool_call_listener(Tag("app-2", Arc::clone(&log)))
        .agent_tool_call_listener("lsn-echo-agent", Tag("agent", Arc::clone(&log)))
        .agent_tool_call_listener("other-agent", Tag("other", Arc::clone(&log)))
        .provide(LsnRuns::default())
        .build()
        .unwrap();
    let agent = app.agent::<LsnEchoAgent>().unwrap();
    let callbacks = app.agent_callbacks(agent);
    assert_eq!(callbacks.len(), 1);
    callbacks[0]
        .call(inv("x", &text("hi")))
        .await
        .settle()
        .unwrap();
    assert_eq!(
        *log.lock().unwrap(),
        [
            "app-1 lsn-echo-tool",
            "app-2 lsn-echo-tool",
            "agent lsn-echo-tool"
        ]
    );
    // The agent's path is untouched by decoration.
    assert_eq!(callbacks[0].metadata().path, ["app", "lsn-echo-agent"]);
    log.lock().unwrap().clear();
    // Direct callbacks get the app-wide listeners only.
    app.callbacks()[0]
        .call(inv("y", &text("hi")))
        .await
        .settle()
        .unwrap();
    assert_eq!(
        *log.lock().unwrap(),
        ["app-1 lsn-echo-tool", "app-2 lsn-echo-tool"]
    );
}

// --- Concurrency -----------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_concurrent_calls_each_get_their_own_context_back() {
    struct Correlating {
        mismatches: AtomicUsize,
        completions: AtomicUsize,
    }
    impl ToolCallListener for Correlating {
        type Context = (String, String);
        fn before_call(&self, call: &ToolCallInfo<'_>) -> (String, String) {
            (call.call_id.to_string(), call.input.to_string())
        }
        fn after_call(
            &self,
            ctx: &mut (String, String),
            call: &ToolCallInfo<'_>,
            result: &CallOutcome,
        ) {
            let expected: serde_json::Value = serde_json::from_str(&ctx.1).unwrap();
            let got: serde_json::Value =
                serde_json::from_str(result.model_text().unwrap()).unwrap();
            if ctx.0 != call.call_id
                || got["text"] != format!("echo:{}", expected["text"].as_str().unwrap())
            {
                self.mismatches.fetch_add(1, Ordering::SeqCst);
            }
        }
        fn after_completion(&self, ctx: (String, String), call: &ToolCallInfo<'_>) {
            if ctx.0 != call.call_id {
                self.mismatches.fetch_add(1, Ordering::SeqCst);
            }
            self.completions.fetch_add(1, Ordering::SeqCst);
        }
    }
    let (app, runs) = app();
    let listener = Arc::new(Correlating {
        mismatches: AtomicUsize::new(0),
        completions: AtomicUsize::new(0),
    });
    let cb = ToolCallListeners::wrap(echo(&app), Arc::clone(&listener));
    let tasks: Vec<_> = (0..1000)
        .map(|i| {
            let cb = Arc::clone(&cb);
            tokio::spawn(async move {
                let id = format!("call-{i}");
                let args = text(&format!("n{i}"));
                // Yield between calls so that they interleave.
                tokio::task::yield_now().await;
                cb.call(inv(&id, &args)).await.settle().map(|r| (i, r))
            })
        })
        .collect();
    for task in futures::future::join_all(tasks).await {
        let (i, result) = task.unwrap().unwrap();
        assert_eq!(result.content(), text(&format!("echo:n{i}")));
    }
    assert_eq!(runs.get(), 1000);
    assert_eq!(listener.completions.load(Ordering::SeqCst), 1000);
    assert_eq!(listener.mismatches.load(Ordering::SeqCst), 0);
}
