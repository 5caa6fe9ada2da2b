//! The guarded pipeline: ordering, decisions, fail-closed handling, validation, truncation,
//! timeouts and per-invocation dependencies.
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use agboss_core::dto::Dto;
use agboss_core::error::BuildError;
use agboss_core::pipeline::TRUNCATION_MARKER;
use agboss_core::*;
use serde_json::json;

mod chain;
mod invocation;
mod limits;

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct ItemDto {
    #[text(prompt = "Item text", max_length = 40)]
    pub text: String,
}

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct EchoDto {
    #[text(prompt = "Echoed text")]
    pub text: String,
    #[integer(prompt = "Length", min = 0)]
    pub length: i64,
}

/// Records what ran, in order. Provided per app, so tests do not share state.
#[injectable(provided)]
pub struct Recorder {
    log: Mutex<Vec<String>>,
    runs: AtomicUsize,
}

impl Recorder {
    fn new() -> Self {
        Self {
            log: Mutex::new(Vec::new()),
            runs: AtomicUsize::new(0),
        }
    }
    fn push(&self, entry: impl Into<String>) {
        self.log.lock().unwrap().push(entry.into());
    }
    fn log(&self) -> Vec<String> {
        self.log.lock().unwrap().clone()
    }
}

#[tool(name = "echo-tool", description = "Echoes", input = ItemDto, output = EchoDto,
       tool_interceptors = [InnerToolInterceptor], deps = [Recorder])]
pub struct EchoTool {
    recorder: Arc<Recorder>,
}

impl ToolHandler<ItemDto, EchoDto> for EchoTool {
    async fn run(&self, input: ItemDto) -> Result<EchoDto, ToolError> {
        self.recorder.runs.fetch_add(1, Ordering::SeqCst);
        self.recorder.push("run");
        match input.text.as_str() {
            "fail" => Err(ToolError::msg("disk on fire")),
            "panic" => panic!("tool exploded"),
            "bad-output" => Ok(EchoDto {
                text: input.text,
                length: -1,
            }),
            _ => Ok(EchoDto {
                length: input.text.chars().count() as i64,
                text: input.text,
            }),
        }
    }
}

/// Attached at the tool; decides from the input text.
#[tool_interceptor(name = "inner-tool-interceptor", description = "Inner guard", deps = [Recorder])]
pub struct InnerToolInterceptor {
    recorder: Arc<Recorder>,
}

impl BeforeToolCall for InnerToolInterceptor {
    async fn before_tool_call(
        &self,
        call: &ToolCallContext<'_>,
    ) -> Result<ToolCallDecision, InterceptorError> {
        self.recorder.push("before:inner");
        let input: ItemDto = call.input_as()?;
        Ok(match input.text.as_str() {
            "block" => ToolCallDecision::block("inner says no"),
            "reply" => ToolCallDecision::reply_to_model("try another text"),
            "error" => return Err(InterceptorError::msg("acl backend down")),
            "interceptor-panic" => panic!("interceptor exploded"),
            _ => ToolCallDecision::allow(),
        })
    }
}

impl AfterToolCall for InnerToolInterceptor {
    async fn after_tool_call(
        &self,
        call: ToolCallResultContext<'_>,
    ) -> Result<ToolOutput, InterceptorError> {
        self.recorder.push("after:inner");
        let mut out: EchoDto = call.into_output()?;
        out.text = format!("[inner]{}", out.text);
        Ok(out.into())
    }
}

/// Attached at the application.
#[tool_interceptor(name = "outer-tool-interceptor", description = "Outer guard", deps = [Recorder])]
pub struct OuterToolInterceptor {
    recorder: Arc<Recorder>,
}

impl BeforeToolCall for OuterToolInterceptor {
    async fn before_tool_call(
        &self,
        call: &ToolCallContext<'_>,
    ) -> Result<ToolCallDecision, InterceptorError> {
        self.recorder.push("before:outer");
        Ok(if call.input()["text"] == "outer-block" {
            ToolCallDecision::block("outer says no")
        } else {
            ToolCallDecision::allow()
        })
    }
}

impl AfterToolCall for OuterToolInterceptor {
    async fn after_tool_call(
        &self,
        call: ToolCallResultContext<'_>,
    ) -> Result<ToolOutput, InterceptorError> {
        self.recorder.push("after:outer");
        // Works on JSON: the next step re-validates it against the output DTO.
        let mut json = call.output_json();
        let text = json["text"].as_str().unwrap_or_default().to_string();
        json["text"] = json!(format!("[outer]{text}"));
        if text.contains("invalid-after") {
            json["length"] = json!("not a number");
        }
        Ok(json.into())
    }
}

fn app(recorder: &Arc<Recorder>) -> App {
    App::builder()
        .name("test-application")
        .tool_interceptor::<OuterToolInterceptor>()
        .tool::<EchoTool>()
        .provide_arc(Arc::clone(recorder))
        .build()
        .expect("app builds")
}

fn item(text: &str) -> ItemDto {
    ItemDto { text: text.into() }
}

// ---- truncation ----

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct BigDto {
    #[text(prompt = "Lots of text")]
    pub body: String,
}

#[tool(name = "big-tool", description = "Returns a big body", input = ItemDto, output = BigDto, max_result_size = 64)]
pub struct BigTool;

impl ToolHandler<ItemDto, BigDto> for BigTool {
    async fn run(&self, input: ItemDto) -> Result<BigDto, ToolError> {
        Ok(BigDto {
            body: input.text.repeat(50),
        })
    }
}

#[tool(name = "echo-no-deps-tool", description = "Echoes", input = ItemDto, output = EchoDto, max_result_size = 4096)]
pub struct PlainEchoTool;

impl ToolHandler<ItemDto, EchoDto> for PlainEchoTool {
    async fn run(&self, input: ItemDto) -> Result<EchoDto, ToolError> {
        Ok(EchoDto {
            length: input.text.chars().count() as i64,
            text: input.text,
        })
    }
}

// ---- timeouts ----

#[tool(name = "slow-tool", description = "Sleeps", input = ItemDto, output = ItemDto, timeout_ms = 50)]
pub struct SlowTool;

impl ToolHandler<ItemDto, ItemDto> for SlowTool {
    async fn run(&self, input: ItemDto) -> Result<ItemDto, ToolError> {
        tokio::time::sleep(std::time::Duration::from_secs(30)).await;
        Ok(input)
    }
}

// ---- per-invocation contexts ----

#[tool(name = "whoami-tool", description = "Tells the tenant", input = ItemDto, output = ItemDto,
       deps = [TenantContext, ExecutionContext])]
pub struct WhoamiTool {
    tenant: TenantContext,
    execution: ExecutionContext,
}

impl ToolHandler<ItemDto, ItemDto> for WhoamiTool {
    async fn run(&self, input: ItemDto) -> Result<ItemDto, ToolError> {
        // Yield so that concurrent calls interleave.
        tokio::task::yield_now().await;
        Ok(ItemDto {
            text: format!(
                "{}|{}|{}|{}",
                self.tenant.tenant_id(),
                self.execution.call_id(),
                self.execution.tool_name(),
                input.text
            ),
        })
    }
}

// ---- cascade basics available in the foundation ----

#[tool(name = "excluding-tool", description = "Opts out of the outer guard", input = ItemDto, output = ItemDto,
       exclude_tool_interceptors = [OuterToolInterceptor], deps = [Recorder])]
pub struct ExcludingTool {
    recorder: Arc<Recorder>,
}

impl ToolHandler<ItemDto, ItemDto> for ExcludingTool {
    async fn run(&self, input: ItemDto) -> Result<ItemDto, ToolError> {
        self.recorder.push("run");
        Ok(input)
    }
}

#[tool(name = "twice-tool", description = "Attaches the app's guard again", input = ItemDto, output = ItemDto,
       tool_interceptors = [OuterToolInterceptor], deps = [Recorder])]
pub struct TwiceTool {
    recorder: Arc<Recorder>,
}

impl ToolHandler<ItemDto, ItemDto> for TwiceTool {
    async fn run(&self, input: ItemDto) -> Result<ItemDto, ToolError> {
        self.recorder.push("run");
        Ok(input)
    }
}

// ---- hook futures larger than the inline buffer are boxed, not refused ----

#[tool_interceptor(
    name = "big-future-tool-interceptor",
    description = "Holds a large buffer across an await"
)]
pub struct BigFutureToolInterceptor;

impl BeforeToolCall for BigFutureToolInterceptor {
    async fn before_tool_call(
        &self,
        call: &ToolCallContext<'_>,
    ) -> Result<ToolCallDecision, InterceptorError> {
        let buffer = [7u8; 4096];
        tokio::task::yield_now().await;
        let sum: u32 = buffer.iter().map(|b| u32::from(*b)).sum();
        Ok(if sum == 7 * 4096 && call.input()["text"] != "deny" {
            ToolCallDecision::allow()
        } else {
            ToolCallDecision::block("denied")
        })
    }
}

// ---- hooks see the validated input, not a second reading of the raw text ----

#[tool_interceptor(
    name = "input-shape-tool-interceptor",
    description = "Reports the keys it sees"
)]
pub struct InputShapeToolInterceptor;

impl BeforeToolCall for InputShapeToolInterceptor {
    async fn before_tool_call(
        &self,
        call: &ToolCallContext<'_>,
    ) -> Result<ToolCallDecision, InterceptorError> {
        let keys: Vec<&str> = call
            .input()
            .as_object()
            .map(|o| o.keys().map(String::as_str).collect())
            .unwrap_or_default();
        Ok(ToolCallDecision::reply_to_model(keys.join(",")))
    }
}
