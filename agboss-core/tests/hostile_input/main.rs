//! Hostile input, each reproducer a regression test: error amplification, token-usage
//! overflow, streams without an end, a tool name split across deltas, duplicate keys, errors
//! that would quote a megabyte of the input.

#[path = "../support/mod.rs"]
mod support;

use std::time::Duration;

use agboss_core::callback::ToolInvocation;
use agboss_core::contract::outcome::FailureKind;
use agboss_core::dto::{Dto, MAX_REPORTED_ERRORS, code};
use agboss_core::model::{
    ChatModel, Message, ModelError, ModelRequest, ModelStreamEvent, OpenAiCompatibleModel,
    StreamLimits, collect_stream,
};
use agboss_core::*;
use futures::StreamExt as _;
use serde_json::json;
use support::{End, MockServer, Reply};

mod cancellation;
mod decoding;
mod streams;

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct HiLineDto {
    #[text(prompt = "SKU")]
    pub sku: String,
}

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct HiOrderDto {
    #[text(prompt = "Order ID")]
    pub order_id: String,
    #[nested(prompt = "Lines", max_items = 50)]
    pub lines: Vec<HiLineDto>,
}

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct HiBulkDto {
    #[nested(prompt = "Lines, no limit")]
    pub lines: Vec<HiLineDto>,
}

#[tool(name = "hi-order-tool", description = "Takes an order", input = HiOrderDto,
       output = HiOrderDto)]
pub struct HiOrderTool;

impl ToolHandler<HiOrderDto, HiOrderDto> for HiOrderTool {
    async fn run(&self, input: HiOrderDto) -> Result<HiOrderDto, ToolError> {
        Ok(input)
    }
}

#[tool(name = "hi-small-tool", description = "Takes little", input = HiLineDto,
       output = HiLineDto, max_input_size = 64)]
pub struct HiSmallTool;

impl ToolHandler<HiLineDto, HiLineDto> for HiSmallTool {
    async fn run(&self, input: HiLineDto) -> Result<HiLineDto, ToolError> {
        Ok(input)
    }
}

fn empty_objects(n: usize) -> String {
    let items = vec!["{}"; n].join(",");
    format!(r#"{{"orderId":"A-1","lines":[{items}]}}"#)
}

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct HiTaggedDto {
    #[text(prompt = "Tags by name")]
    pub tags: std::collections::HashMap<String, String>,
    #[json(prompt = "Anything")]
    pub extra: serde_json::Value,
}

#[tool(name = "hi-tagged-tool", description = "Takes tags", input = HiTaggedDto,
       output = HiTaggedDto)]
pub struct HiTaggedTool;

impl ToolHandler<HiTaggedDto, HiTaggedDto> for HiTaggedTool {
    async fn run(&self, input: HiTaggedDto) -> Result<HiTaggedDto, ToolError> {
        Ok(input)
    }
}

/// The one `duplicate` error of `text` decoded as `T`, at `path`.
fn assert_duplicate<T: Dto + std::fmt::Debug>(text: &str, path: &str) {
    let err = T::from_json_str(text).unwrap_err();
    assert_eq!(err.errors.len(), 1, "{text}: {err}");
    assert_eq!(err.errors[0].code, code::DUPLICATE, "{text}: {err}");
    assert_eq!(err.errors[0].path, path, "{text}: {err}");
}

// --- Providers: 2. usage overflow, 3. streams without an end, 4. split tool names ------------------

fn model(server: &MockServer, limits: StreamLimits) -> OpenAiCompatibleModel {
    OpenAiCompatibleModel::builder()
        .base_url(server.base_url())
        .api_key("sk-test")
        .model("test-model")
        .timeout(Duration::from_secs(5))
        .max_retries(0)
        .stream_limits(limits)
        .build()
        .expect("valid config")
}

fn hello() -> ModelRequest {
    ModelRequest::new([Message::user("Hello?")])
}

fn chunk(delta: serde_json::Value, finish_reason: Option<&str>) -> serde_json::Value {
    json!({"choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}]})
}

// --- 6. Cancellation never loses the audit ----------------------------------------------------------

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct HiStepDto {
    #[text(prompt = "Where to stop")]
    pub stop: String,
}

#[tool(name = "hi-effect-tool", description = "Has a side effect", input = HiStepDto,
       output = HiStepDto, tool_interceptors = [HiSlowAfterToolInterceptor])]
pub struct HiEffectTool;

impl ToolHandler<HiStepDto, HiStepDto> for HiEffectTool {
    async fn run(&self, input: HiStepDto) -> Result<HiStepDto, ToolError> {
        if input.stop == "in-run" {
            std::future::pending::<()>().await;
        }
        Ok(input)
    }
}

/// Its after-hook never ends when asked to stop there.
#[tool_interceptor(
    name = "hi-slow-after-tool-interceptor",
    description = "Stalls after the tool"
)]
pub struct HiSlowAfterToolInterceptor;

impl AfterToolCall for HiSlowAfterToolInterceptor {
    async fn after_tool_call(
        &self,
        call: ToolCallResultContext<'_>,
    ) -> Result<ToolOutput, InterceptorError> {
        if call.input()["stop"] == "after-run" {
            std::future::pending::<()>().await;
        }
        Ok(call.keep())
    }
}

#[derive(Default)]
struct Audit(std::sync::Mutex<Vec<String>>);

impl agboss_core::callback::listener::ToolCallListener for Audit {
    type Context = ();
    fn after_completion(&self, _: (), call: &ToolCallInfo<'_>) {
        self.0
            .lock()
            .unwrap()
            .push(format!("completed {}", call.call_id));
    }
    fn on_cancelled(&self, _: (), call: &ToolCallInfo<'_>, tool_ran: bool) {
        self.0
            .lock()
            .unwrap()
            .push(format!("cancelled {} tool_ran={tool_ran}", call.call_id));
    }
}

// --- 6. Errors that would quote a megabyte -------------------------------------------------------

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct HiStockDto {
    #[nested(prompt = "Lines by key")]
    pub lines: std::collections::BTreeMap<String, HiLineDto>,
}

/// The most an error text may be here: a few short quotes of the input, never the input.
const ERROR_TEXT_BOUND: usize = 2_000;
