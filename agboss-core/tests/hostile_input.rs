//! Hostile input, each reproducer a regression test: error amplification, token-usage
//! overflow, streams without an end, a tool name split across deltas, duplicate keys, errors
//! that would quote a megabyte of the input.

mod support;

use std::time::Duration;

use agboss_core::callback::ToolInvocation;
use agboss_core::dto::{Dto, MAX_REPORTED_ERRORS, code};
use agboss_core::model::{
    ChatModel, Message, ModelError, ModelRequest, ModelStreamEvent, OpenAiCompatibleModel,
    StreamLimits, collect_stream,
};
use agboss_core::*;
use futures::StreamExt as _;
use serde_json::json;
use support::{End, MockServer, Reply};

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

// --- 1. Error amplification ---------------------------------------------------------------------

#[test]
fn a_list_over_max_items_reports_the_limit_first_and_checks_few_items() {
    let err = HiOrderDto::from_json_str(&empty_objects(200_000)).unwrap_err();
    assert_eq!(err.errors[0].code, code::MAX_ITEMS, "{err}");
    assert!(err.errors.len() <= MAX_REPORTED_ERRORS);
    // Only the first items were looked at (200,000 would be 200,000 errors).
    assert!(err.errors.iter().skip(1).all(|e| {
        let index: usize = e.path["$.lines[".len()..]
            .split(']')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        index < 50 + MAX_REPORTED_ERRORS
    }));
}

#[test]
fn reported_errors_stop_at_the_cap() {
    let text = empty_objects(100_000).replacen(r#""orderId":"A-1","#, "", 1);
    let err = HiBulkDto::from_json_str(&text).unwrap_err();
    assert_eq!(err.errors.len(), MAX_REPORTED_ERRORS);
    assert!(err.more);
    let shown = err.to_string();
    assert!(shown.contains("or more errors"), "{shown}");
    assert!(
        shown.contains("checking stopped after 20 errors"),
        "{shown}"
    );
    assert!(shown.len() < 2_000, "{} bytes", shown.len());
}

#[tokio::test]
async fn arguments_over_the_input_size_are_refused_before_decoding() {
    let app = App::builder()
        .tool::<HiOrderTool>()
        .tool::<HiSmallTool>()
        .build()
        .unwrap();
    // The default bound: 1 MiB.
    let big = empty_objects(400_000);
    assert!(big.len() > 1 << 20);
    let outcome = app.tool::<HiOrderTool>().call(&big).await;
    let failure = outcome.failure().expect("refused");
    assert_eq!(failure.kind(), FailureKind::Rejected);
    assert!(
        failure
            .error()
            .to_string()
            .contains("over this tool's limit of 1048576 bytes"),
        "{}",
        failure.error()
    );
    // A tool's own bound.
    let args = json!({ "sku": "x".repeat(100) }).to_string();
    let err = app
        .tool::<HiSmallTool>()
        .invoke_json(&args)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("limit of 64 bytes"), "{err}");
    assert!(
        app.tool::<HiSmallTool>()
            .invoke_json(r#"{"sku":"ok"}"#)
            .await
            .is_ok()
    );
}

// --- 5. Duplicate keys ----------------------------------------------------------------------------

#[tokio::test]
async fn duplicate_keys_are_refused_with_the_key_named() {
    let err = HiLineDto::from_json_str(r#"{"sku":"not a valid id!","sku":"AB-1"}"#).unwrap_err();
    assert_eq!(err.errors[0].code, code::DUPLICATE);
    assert_eq!(err.errors[0].path, "$.sku");
    assert!(
        err.errors[0]
            .message
            .contains("`sku` appears more than once")
    );
    // In a nested object too, at its path.
    let err = HiOrderDto::from_json_str(r#"{"orderId":"A","lines":[{"sku":"a","sku":"b"}]}"#)
        .unwrap_err();
    assert_eq!(err.errors[0].code, code::DUPLICATE);
    assert!(err.errors[0].path.starts_with("$.lines[0]"), "{err}");
    // Through the pipeline: a rejected input, the tool never runs.
    let app = App::builder().tool::<HiOrderTool>().build().unwrap();
    let outcome = app
        .tool::<HiOrderTool>()
        .call(r#"{"orderId":"A","orderId":"B","lines":[]}"#)
        .await;
    assert_eq!(outcome.failure().unwrap().kind(), FailureKind::Rejected);
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

#[tokio::test]
async fn duplicate_keys_are_refused_after_a_null_and_in_maps_and_raw_values() {
    // The first occurrence null or of the wrong type, the second valid: not "the last wins".
    assert_duplicate::<HiOrderDto>(
        r#"{"orderId":null,"orderId":"AB-1","lines":[]}"#,
        "$.orderId",
    );
    assert_duplicate::<HiOrderDto>(r#"{"orderId":7,"orderId":"AB-1","lines":[]}"#, "$.orderId");
    assert_duplicate::<HiOrderDto>(
        r#"{"orderId":"A","lines":[{"sku":null,"sku":"b"}]}"#,
        "$.lines[0].sku",
    );
    // Inside a map field and a raw `Value` field, at any depth; an escaped spelling is the
    // same key.
    assert_duplicate::<HiTaggedDto>(r#"{"tags":{"a":"1","a":"2"},"extra":{}}"#, "$.tags.a");
    assert_duplicate::<HiTaggedDto>(
        r#"{"tags":{},"extra":{"x":[1,{"k":1,"k":2}]}}"#,
        "$.extra.x[1].k",
    );
    assert_duplicate::<HiTaggedDto>(
        r#"{"tags":{"a b":"1","a b":"2"},"extra":0}"#,
        r#"$.tags["a b"]"#,
    );
    // The same key in two objects is no duplicate.
    let ok =
        HiTaggedDto::from_json_str(r#"{"tags":{"a":"1"},"extra":{"a":1,"b":{"a":2}}}"#).unwrap();
    assert_eq!(ok.extra["b"]["a"], 2);
    // Through the pipeline: rejected, the tool never runs.
    let app = App::builder()
        .tool::<HiOrderTool>()
        .tool::<HiTaggedTool>()
        .build()
        .unwrap();
    let outcome = app
        .tool::<HiOrderTool>()
        .call(r#"{"orderId":null,"orderId":"AB-1","lines":[]}"#)
        .await;
    assert_eq!(outcome.failure().unwrap().kind(), FailureKind::Rejected);
    let outcome = app
        .tool::<HiTaggedTool>()
        .call(r#"{"tags":{"to":"ann","to":"eve"},"extra":null}"#)
        .await;
    assert_eq!(outcome.failure().unwrap().kind(), FailureKind::Rejected);
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

#[tokio::test]
async fn token_usage_that_would_overflow_saturates() {
    let huge = json!({"prompt_tokens": u64::MAX, "completion_tokens": 1});
    let server = MockServer::start(vec![
        Reply::json(
            200,
            json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": "hi"},
                    "finish_reason": "stop"}], "usage": huge}),
        ),
        Reply::sse_events(
            &[
                chunk(json!({"content": "hi"}), Some("stop")),
                json!({"choices": [], "usage": huge}),
            ],
            true,
        ),
    ])
    .await;
    let m = model(&server, StreamLimits::default());
    let response = m.complete(&hello()).await.unwrap();
    assert_eq!(response.usage.total_tokens, u64::MAX);
    let response = collect_stream(m.stream(&hello()).await.unwrap())
        .await
        .unwrap();
    assert_eq!(response.usage.total_tokens, u64::MAX);
    let mut total = response.usage;
    total += response.usage;
    assert_eq!(total.prompt_tokens, u64::MAX);
}

#[tokio::test]
async fn keep_alives_forever_end_at_the_response_deadline() {
    let keep_alives: Vec<String> = (0..30).map(|_| ": keep-alive\n\n".to_owned()).collect();
    let server = MockServer::start(vec![Reply::sse(keep_alives, End::Hang)]).await;
    let limits = StreamLimits {
        deadline: Duration::from_millis(300),
        ..StreamLimits::default()
    };
    let mut stream = model(&server, limits).stream(&hello()).await.unwrap();
    let error = loop {
        match stream.next().await {
            Some(Ok(_)) => {}
            Some(Err(e)) => break e,
            None => panic!("the stream ended without an error"),
        }
    };
    // The whole response's deadline fired, not the 5 s per-chunk timeout.
    assert!(
        matches!(error, ModelError::Timeout { after } if after == Duration::from_millis(300)),
        "{error:?}"
    );
}

#[tokio::test]
async fn an_event_without_an_end_is_bounded() {
    let big: Vec<String> = std::iter::once("data: ".to_owned())
        .chain((0..8).map(|_| "a".repeat(16 * 1024)))
        .collect();
    let server = MockServer::start(vec![Reply::sse(big, End::Hang)]).await;
    let limits = StreamLimits {
        max_event_bytes: 64 * 1024,
        ..StreamLimits::default()
    };
    let error = collect_stream(model(&server, limits).stream(&hello()).await.unwrap())
        .await
        .unwrap_err();
    assert!(
        matches!(
            error,
            ModelError::TooLarge {
                what: "one event",
                limit: 65536
            }
        ),
        "{error:?}"
    );
}

#[tokio::test]
async fn a_response_without_an_end_is_bounded() {
    let events: Vec<serde_json::Value> = (0..2_000)
        .map(|_| chunk(json!({"content": "0123456789"}), None))
        .collect();
    let server = MockServer::start(vec![Reply::sse_events(&events, false)]).await;
    let limits = StreamLimits {
        max_response_bytes: 64 * 1024,
        ..StreamLimits::default()
    };
    let error = collect_stream(model(&server, limits).stream(&hello()).await.unwrap())
        .await
        .unwrap_err();
    assert!(
        matches!(
            error,
            ModelError::TooLarge {
                what: "the response",
                ..
            }
        ),
        "{error:?}"
    );
}

#[tokio::test]
async fn a_tool_name_split_across_deltas_after_the_id_is_kept_whole() {
    let server = MockServer::start(vec![Reply::sse_events(
        &[
            chunk(
                json!({"tool_calls": [{"index": 0, "id": "call_1", "function": {"name": "soak-order"}}]}),
                None,
            ),
            chunk(
                json!({"tool_calls": [{"index": 0, "function": {"name": "-tool"}}]}),
                None,
            ),
            chunk(
                json!({"tool_calls": [{"index": 0, "function": {"arguments": "{}"}}]}),
                Some("tool_calls"),
            ),
        ],
        true,
    )])
    .await;
    let mut stream = model(&server, StreamLimits::default())
        .stream(&hello())
        .await
        .unwrap();
    let mut started = Vec::new();
    let mut finished = None;
    while let Some(event) = stream.next().await {
        match event.unwrap() {
            ModelStreamEvent::ToolCallStarted { name, .. } => started.push(name),
            ModelStreamEvent::Finished(r) => finished = Some(r),
            _ => {}
        }
    }
    assert_eq!(started, ["soak-order-tool"]);
    assert_eq!(
        finished.unwrap().message.tool_calls[0].name,
        "soak-order-tool"
    );
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

#[tokio::test]
async fn a_cancelled_call_tells_the_listener_whether_the_tool_had_run() {
    let audit = std::sync::Arc::new(Audit::default());
    let app = App::builder()
        .tool::<HiEffectTool>()
        .tool_call_listener(std::sync::Arc::clone(&audit))
        .build()
        .unwrap();
    let callback = app.callbacks().remove(0);
    for (call_id, stop) in [("c1", "after-run"), ("c2", "in-run")] {
        let args = json!({ "stop": stop }).to_string();
        let call = callback.call(ToolInvocation::new(call_id, &args));
        // The call stalls (in the after-hook, or in the tool); the caller gives up.
        let gave_up = tokio::time::timeout(Duration::from_millis(50), call).await;
        assert!(gave_up.is_err(), "{call_id} should stall");
    }
    let done = callback
        .call(ToolInvocation::new("c3", r#"{"stop":"nowhere"}"#))
        .await;
    assert!(matches!(done, CallOutcome::Ran(_)));
    assert_eq!(
        *audit.0.lock().unwrap(),
        [
            "cancelled c1 tool_ran=true",
            "cancelled c2 tool_ran=false",
            "completed c3"
        ]
    );
}

// --- 6. Errors that would quote a megabyte -------------------------------------------------------

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct HiStockDto {
    #[nested(prompt = "Lines by key")]
    pub lines: std::collections::BTreeMap<String, HiLineDto>,
}

/// The most an error text may be here: a few short quotes of the input, never the input.
const ERROR_TEXT_BOUND: usize = 2_000;

#[tokio::test]
async fn an_error_quotes_at_most_a_short_prefix_of_the_input() {
    // A 1 MB string followed by junk: serde's message of the typed decode quotes the string.
    let args = format!("\"{}\" junk", "a".repeat(1_000_000));
    let err = HiOrderDto::from_json_str(&args).unwrap_err();
    assert_eq!(err.errors[0].code, code::JSON);
    let shown = err.to_string();
    assert!(shown.len() < ERROR_TEXT_BOUND, "{} bytes", shown.len());
    assert!(shown.contains("not valid JSON"), "{shown}");
    assert!(shown.contains("\"aaaa"), "a short prefix is kept: {shown}");
    assert!(
        shown.contains("expected"),
        "so is the end of serde's message: {shown}"
    );
    // What a listener records (the JSON report) is bounded too.
    assert!(serde_json::to_string(&err).unwrap().len() < ERROR_TEXT_BOUND);
    // And what the caller (a model, through the agent loop) reads.
    let app = App::builder().tool::<HiOrderTool>().build().unwrap();
    let outcome = app.tool::<HiOrderTool>().call(&args).await;
    let failure = outcome.failure().expect("refused");
    assert_eq!(failure.kind(), FailureKind::Rejected);
    let shown = failure.error().to_string();
    assert!(shown.len() < ERROR_TEXT_BOUND, "{} bytes", shown.len());

    // A map key of a megabyte in an error's path.
    let key = "k".repeat(1_000_000);
    let err = HiStockDto::from_json_str(&format!(r#"{{"lines":{{"{key}":{{}}}}}}"#)).unwrap_err();
    assert_eq!(
        err.errors[0].code,
        code::REQUIRED,
        "{:.200}",
        err.to_string()
    );
    assert!(
        err.errors[0].path.starts_with("$.lines[\"kkkk"),
        "{:.200}",
        err.errors[0].path
    );
    assert!(
        err.errors[0].path.ends_with("].sku"),
        "{:.200}",
        err.errors[0].path
    );
    assert!(
        err.to_string().len() < ERROR_TEXT_BOUND,
        "{} bytes",
        err.to_string().len()
    );
}
