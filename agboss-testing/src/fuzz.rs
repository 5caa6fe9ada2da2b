//! The bodies of the fuzz targets in `fuzz/` (cargo-fuzz), kept here so that a stable-toolchain
//! test replays their committed corpus in `cargo test`. Each takes arbitrary bytes and checks
//! the invariants that must hold for any input: no panic, no invalid input reaching a tool, a
//! typed error for everything refused.
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use agboss_core::dto::Dto;
use agboss_core::model::ModelStreamEvent;
use agboss_core::{
    App, BeforeToolCall, CallOutcome, InterceptorError, RunContext, Target, ToolCallContext,
    ToolCallDecision, ToolError, ToolHandler, agent, injectable, tool, tool_interceptor,
};

use crate::scripted::{ScriptedModel, ScriptedToolCall, Turn};

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct FuzzLineDto {
    #[text(prompt = "SKU", pattern = "^[A-Z]{3}-[0-9]+$")]
    pub sku: String,
    #[integer(prompt = "Quantity", min = 1, max = 99)]
    pub quantity: u32,
}

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct FuzzOrderDto {
    #[text(prompt = "Order ID", min_length = 3, max_length = 20)]
    pub order_id: String,
    #[nested(prompt = "Lines", min_items = 1, max_items = 8)]
    pub lines: Vec<FuzzLineDto>,
    #[text(prompt = "Speed", choices = ["standard", "express"])]
    pub speed: Option<String>,
    #[number(prompt = "Discount", min = 0.0, max = 0.5)]
    pub discount: Option<f64>,
}

/// Counts the tool's runs, and the runs on input that was not valid (must stay 0).
#[injectable(default)]
#[derive(Default)]
pub struct FuzzRuns {
    runs: AtomicUsize,
    invalid: AtomicUsize,
}

#[tool(name = "fuzz-order-tool", description = "Takes an order", input = FuzzOrderDto,
       output = FuzzOrderDto, deps = [FuzzRuns], tool_interceptors = [FuzzGuardToolInterceptor])]
pub struct FuzzOrderTool {
    runs: Arc<FuzzRuns>,
}

impl ToolHandler<FuzzOrderDto, FuzzOrderDto> for FuzzOrderTool {
    async fn run(&self, input: FuzzOrderDto) -> Result<FuzzOrderDto, ToolError> {
        self.runs.runs.fetch_add(1, Ordering::Relaxed);
        if input.validate().is_err() {
            self.runs.invalid.fetch_add(1, Ordering::Relaxed);
        }
        Ok(input)
    }
}

/// Reads the input (as JSON and typed) and replies to the model for one order id.
#[tool_interceptor(
    name = "fuzz-guard-tool-interceptor",
    description = "Reads every input"
)]
pub struct FuzzGuardToolInterceptor;

impl BeforeToolCall for FuzzGuardToolInterceptor {
    async fn before_tool_call(
        &self,
        call: &ToolCallContext<'_>,
    ) -> Result<ToolCallDecision, InterceptorError> {
        let typed = call.input_as::<FuzzOrderDto>()?;
        Ok(
            if call.input()["orderId"] == "REPLY" || typed.order_id == "REPLY" {
                ToolCallDecision::reply_to_model("use another order id")
            } else {
                ToolCallDecision::allow()
            },
        )
    }
}

#[agent(name = "fuzz-agent", description = "Calls the order tool", tools = [FuzzOrderTool],
        max_turns = 4)]
pub struct FuzzAgent;

fn app() -> &'static App {
    static APP: OnceLock<App> = OnceLock::new();
    APP.get_or_init(|| {
        App::builder()
            .agent::<FuzzAgent>()
            .build()
            .expect("the fuzz app builds")
    })
}

fn runs() -> Arc<FuzzRuns> {
    app().services().get::<FuzzRuns>().expect("provided")
}

/// Target `pipeline_call`: the bytes as the JSON argument text of one tool call.
pub fn pipeline_call(data: &[u8]) {
    let Ok(args) = std::str::from_utf8(data) else {
        return;
    };
    let outcome = futures::executor::block_on(app().tool::<FuzzOrderTool>().call(args));
    if let CallOutcome::Ran(rendered) = &outcome {
        // Whatever ran was a valid input, and its output is valid JSON of the DTO.
        assert!(
            FuzzOrderDto::from_json_str(&rendered.text).is_ok(),
            "{rendered:?}"
        );
    }
    assert_eq!(
        runs().invalid.load(Ordering::Relaxed),
        0,
        "a tool ran on invalid input"
    );
}

/// Target `openai_stream`: the bytes as a streamed chat completion body, cut into chunks at
/// positions the first bytes choose. Errors are fine; a panic or an event after `[DONE]` is not.
pub fn openai_stream(data: &[u8]) {
    let Some((&seed, body)) = data.split_first() else {
        return;
    };
    let step = usize::from(seed % 17) + 1;
    let chunks: Vec<Vec<u8>> = body.chunks(step).map(<[u8]>::to_vec).collect();
    if let (events, Ok(())) = agboss_core::__private::fuzz::decode_openai_chunks(chunks) {
        let finished = events
            .iter()
            .position(|e| matches!(e, ModelStreamEvent::Finished(_)));
        if let Some(at) = finished {
            assert_eq!(at, events.len() - 1, "events after Finished");
        }
    }
}

/// Target `agent_turns`: the bytes as the model's turns (tool calls with arbitrary names and
/// arguments, then text), run through the agent loop.
pub fn agent_turns(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let mut turns: Vec<Turn> = text
        .split('\u{1e}')
        .take(4)
        .map(|turn| {
            let calls: Vec<ScriptedToolCall> = turn
                .split('\u{1f}')
                .take(6)
                .enumerate()
                .map(|(i, call)| {
                    let (name, args) = call.split_once('|').unwrap_or(("fuzz-order-tool", call));
                    ScriptedToolCall::raw(name, args).with_id(format!("c{i}"))
                })
                .collect();
            Turn::tool_calls(calls)
        })
        .collect();
    turns.push(Turn::text("done"));
    let model = ScriptedModel::new(turns);
    let app = App::builder()
        .agent::<FuzzAgent>()
        .model(model)
        .build()
        .expect("the fuzz app builds");
    let result = futures::executor::block_on(app.execute(
        Target::agent::<FuzzAgent>(),
        "go",
        RunContext::new(),
    ));
    // Any outcome is fine but a panic; a run that ends names why.
    if let Err(e) = result {
        let _ = e.to_string();
    }
    let runs = app.services().get::<FuzzRuns>().expect("provided");
    assert_eq!(
        runs.invalid.load(Ordering::Relaxed),
        0,
        "a tool ran on invalid input"
    );
}
