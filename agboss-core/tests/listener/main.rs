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
use agboss_core::contract::outcome::Rendered;
use agboss_core::dto::Dto;
use agboss_core::model::ToolDefinition;
use agboss_core::prelude::*;
use futures::FutureExt as _;
use futures::future::BoxFuture;

mod context;
mod in_runs;
mod on_error;
mod wrapping;

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
            CallOutcome::ReplyToModel {
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

struct Nop;
impl ToolCallListener for Nop {
    type Context = ();
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
