//! The guarded pipeline: ordering, decisions, fail-closed handling, validation, truncation,
//! timeouts and per-invocation dependencies.
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use agboss_core::dto::Dto;
use agboss_core::pipeline::TRUNCATION_MARKER;
use agboss_core::*;
use serde_json::json;

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

#[tokio::test]
async fn before_runs_outer_to_inner_and_after_inner_to_outer() {
    let rec = Arc::new(Recorder::new());
    let out = app(&rec)
        .tool::<EchoTool>()
        .invoke(item("hi"))
        .await
        .unwrap();
    assert_eq!(out.text, "[outer][inner]hi");
    assert_eq!(out.length, 2);
    assert_eq!(
        rec.log(),
        [
            "before:outer",
            "before:inner",
            "run",
            "after:inner",
            "after:outer"
        ]
    );
}

#[tokio::test]
async fn the_resolved_chain_is_inspectable() {
    let rec = Arc::new(Recorder::new());
    let app = app(&rec);
    let chain = app.direct_chain::<EchoTool>().unwrap();
    assert_eq!(
        chain.before_order(),
        ["outer-tool-interceptor", "inner-tool-interceptor"]
    );
    assert_eq!(
        chain.after_order(),
        ["inner-tool-interceptor", "outer-tool-interceptor"]
    );
    assert_eq!(chain.path(), ["test-application"]);
}

#[tokio::test]
async fn block_stops_the_chain_and_the_tool() {
    let rec = Arc::new(Recorder::new());
    let err = app(&rec)
        .tool::<EchoTool>()
        .call_id("call_9")
        .invoke(item("outer-block"))
        .await
        .unwrap_err();
    let blocked = err.as_blocked().expect("a block");
    assert_eq!(blocked.interceptor, "outer-tool-interceptor");
    assert_eq!(blocked.call_id, "call_9");
    assert_eq!(
        blocked.kind,
        BlockKind::Block {
            reason: "outer says no".into()
        }
    );
    assert_eq!(rec.log(), ["before:outer"]);
    assert_eq!(rec.runs.load(Ordering::SeqCst), 0);

    // A step handler catches it as a StepFailedError and can tell it was a block.
    let step = StepFailedError::from_tool_call("echo-tool", err);
    assert!(matches!(step, StepFailedError::ToolBlocked(_)));
}

#[tokio::test]
async fn reply_to_model_is_an_outcome_for_a_model_and_a_blocked_error_on_direct_invoke() {
    let rec = Arc::new(Recorder::new());
    let app = app(&rec);
    let outcome = app.tool::<EchoTool>().call(r#"{"text":"reply"}"#).await;
    assert!(
        matches!(
            &outcome,
            CallOutcome::Replied { message, interceptor: "inner-tool-interceptor" }
                if message == "try another text"
        ),
        "{outcome:?}"
    );
    assert_eq!(
        outcome.decision(),
        CallDecision::RepliedToModel {
            interceptor: "inner-tool-interceptor".into(),
            message: "try another text".into()
        }
    );
    let err = app
        .tool::<EchoTool>()
        .invoke(item("reply"))
        .await
        .unwrap_err();
    assert_eq!(
        err.as_blocked().unwrap().kind,
        BlockKind::ReplyToModel {
            message: "try another text".into()
        }
    );
    assert_eq!(rec.runs.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn a_failing_interceptor_fails_closed() {
    let rec = Arc::new(Recorder::new());
    let err = app(&rec)
        .tool::<EchoTool>()
        .invoke(item("error"))
        .await
        .unwrap_err();
    match &err {
        ToolCallError::InterceptorFailed {
            interceptor, error, ..
        } => {
            assert_eq!(*interceptor, "inner-tool-interceptor");
            assert_eq!(error.to_string(), "acl backend down");
        }
        other => panic!("unexpected {other:?}"),
    }
    assert!(err.is_guard_failure());
    assert_eq!(rec.runs.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn a_panicking_interceptor_fails_closed() {
    let rec = Arc::new(Recorder::new());
    let err = app(&rec)
        .tool::<EchoTool>()
        .invoke(item("interceptor-panic"))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, ToolCallError::InterceptorPanicked { interceptor: "inner-tool-interceptor", message, .. } if message == "interceptor exploded"),
        "{err:?}"
    );
    assert_eq!(rec.runs.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn tool_errors_and_panics_are_typed() {
    let rec = Arc::new(Recorder::new());
    let app = app(&rec);
    let err = app
        .tool::<EchoTool>()
        .invoke(item("fail"))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, ToolCallError::ToolFailed { error, .. } if error.to_string() == "disk on fire")
    );
    let err = app
        .tool::<EchoTool>()
        .invoke(item("panic"))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, ToolCallError::ToolPanicked { message, .. } if message == "tool exploded")
    );
    // After-hooks did not run for failed tools.
    assert!(!rec.log().iter().any(|e| e.starts_with("after:")));
}

#[tokio::test]
async fn input_is_validated_before_any_interceptor() {
    let rec = Arc::new(Recorder::new());
    let app = app(&rec);
    let err = app
        .tool::<EchoTool>()
        .invoke_json(r#"{"text": 5}"#)
        .await
        .unwrap_err();
    match &err {
        ToolCallError::InvalidInput { source, .. } => {
            assert_eq!(source.errors[0].path, "$.text");
        }
        other => panic!("unexpected {other:?}"),
    }
    let long = "x".repeat(41);
    let err = app
        .tool::<EchoTool>()
        .invoke(item(&long))
        .await
        .unwrap_err();
    assert!(matches!(err, ToolCallError::InvalidInput { .. }));
    let err = app
        .tool::<EchoTool>()
        .invoke_json("not json")
        .await
        .unwrap_err();
    assert!(matches!(err, ToolCallError::InvalidInput { .. }));
    assert!(rec.log().is_empty(), "{:?}", rec.log());
}

#[tokio::test]
async fn output_is_revalidated_after_the_after_hooks() {
    let rec = Arc::new(Recorder::new());
    let app = app(&rec);
    // The tool's own output breaks `length >= 0`.
    let err = app
        .tool::<EchoTool>()
        .invoke(item("bad-output"))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, ToolCallError::InvalidOutput { source, .. } if source.errors[0].path == "$.length"),
        "{err:?}"
    );
    // An after-hook turns `length` into a string.
    let err = app
        .tool::<EchoTool>()
        .invoke(item("invalid-after"))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, ToolCallError::InvalidOutput { source, .. } if source.errors[0].path == "$.length"),
        "{err:?}"
    );
}

#[tokio::test]
async fn json_invocation_returns_wire_names() {
    let rec = Arc::new(Recorder::new());
    let out = app(&rec)
        .tool::<EchoTool>()
        .invoke_value(json!({"text": "héllo"}))
        .await
        .unwrap();
    assert_eq!(out, json!({"text": "[outer][inner]héllo", "length": 5}));
}

#[tokio::test]
async fn a_tool_outside_the_app_is_an_error_not_a_panic() {
    let app = App::builder().build().unwrap();
    let err = app.tool::<EchoTool>().invoke(item("hi")).await.unwrap_err();
    assert!(matches!(err, ToolCallError::NotInApp { .. }));
}

#[test]
fn a_provided_service_missing_is_a_build_error_naming_component_and_type() {
    let err = App::builder().tool::<EchoTool>().build().unwrap_err();
    assert_eq!(
        err,
        BuildError::MissingProvider {
            component: "EchoTool",
            dependency: "Recorder",
            hint: "it is `#[injectable(provided)]`: give the app an instance with `.provide(...)`",
        }
    );
    let text = err.to_string();
    assert!(text.contains("`EchoTool` depends on `Recorder`"), "{text}");
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

#[tokio::test]
async fn results_are_truncated_on_a_utf8_boundary_with_a_marker() {
    let app = App::builder().tool::<BigTool>().build().unwrap();
    let text = app
        .tool::<BigTool>()
        .invoke_json(r#"{"text":"é"}"#)
        .await
        .unwrap();
    assert!(text.len() <= 64, "{} bytes", text.len());
    assert!(text.ends_with(TRUNCATION_MARKER), "{text}");
    // A short result is untouched.
    let small = App::builder().tool::<PlainEchoTool>().build().unwrap();
    let text = small
        .tool::<PlainEchoTool>()
        .invoke_json(r#"{"text":"é"}"#)
        .await
        .unwrap();
    assert_eq!(text, r#"{"text":"é","length":1}"#);
}

#[test]
fn truncate_result_keeps_utf8_valid_for_every_cut() {
    let original = "aé😀b".repeat(30);
    for max in 0..original.len() + 2 {
        let mut s = original.clone();
        let cut = agboss_core::pipeline::truncate_result(&mut s, Some(max));
        assert_eq!(cut, original.len() > max);
        if cut && max >= TRUNCATION_MARKER.len() {
            assert!(s.len() <= max);
            assert!(s.ends_with(TRUNCATION_MARKER));
        }
        // `s` is a String: being here means it is valid UTF-8 at every cut.
        assert!(original.starts_with(s.trim_end_matches(TRUNCATION_MARKER)));
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

#[tokio::test]
async fn slow_tools_time_out() {
    let app = App::builder().tool::<SlowTool>().build().unwrap();
    let err = app
        .tool::<SlowTool>()
        .invoke(item("zzz"))
        .await
        .unwrap_err();
    assert!(
        matches!(err, ToolCallError::Timeout { timeout_ms: 50, .. }),
        "{err:?}"
    );
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

/// TARGETS.md: 100k concurrent calls over 1,000 tenants, zero cross-tenant leaks.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn contexts_never_leak_across_concurrent_calls() {
    let app = App::builder().tool::<WhoamiTool>().build().unwrap();
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..100_000u32 {
        let app = app.clone();
        tasks.spawn(async move {
            let tenant = format!("t{}", i % 1_000);
            let call_id = format!("c{i}");
            let out = app
                .tool::<WhoamiTool>()
                .tenant(tenant.as_str())
                .call_id(&call_id)
                .invoke(item(&i.to_string()))
                .await
                .unwrap();
            out.text == format!("{tenant}|{call_id}|whoami-tool|{i}")
        });
    }
    let mut checked = 0;
    while let Some(ok) = tasks.join_next().await {
        assert!(ok.unwrap(), "a call saw another call's context");
        checked += 1;
    }
    assert_eq!(checked, 100_000);
}

#[tokio::test]
async fn a_missing_tenant_is_a_typed_error() {
    let app = App::builder().tool::<WhoamiTool>().build().unwrap();
    let err = app
        .tool::<WhoamiTool>()
        .invoke(item("x"))
        .await
        .unwrap_err();
    assert!(matches!(err, ToolCallError::Dependency { .. }), "{err:?}");
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

#[tokio::test]
async fn an_interceptor_attached_twice_runs_once_and_exclusion_removes_it() {
    let rec = Arc::new(Recorder::new());
    let app = App::builder()
        .tool_interceptor::<OuterToolInterceptor>()
        .tool::<TwiceTool>()
        .tool::<ExcludingTool>()
        .provide_arc(Arc::clone(&rec))
        .build()
        .unwrap();
    app.tool::<TwiceTool>().invoke(item("a")).await.unwrap();
    assert_eq!(rec.log(), ["before:outer", "run", "after:outer"]);
    let chain = app.direct_chain::<TwiceTool>().unwrap();
    assert_eq!(chain.entries().len(), 1);
    assert_eq!(
        chain.entries()[0].origin.kind,
        agboss_core::ScopeKind::Application
    );

    rec.log.lock().unwrap().clear();
    app.tool::<ExcludingTool>().invoke(item("b")).await.unwrap();
    assert_eq!(rec.log(), ["run"]);
    let chain = app.direct_chain::<ExcludingTool>().unwrap();
    assert!(chain.entries().is_empty());
    assert_eq!(chain.exclusions().len(), 1);
}

#[test]
fn the_registry_lists_components_by_name() {
    assert!(agboss_core::contract::registry::find_tool("echo-tool").is_some());
    assert!(
        agboss_core::contract::registry::find_tool_interceptor("outer-tool-interceptor").is_some()
    );
    assert_eq!(
        agboss_core::contract::registry::find_tool("echo-tool")
            .unwrap()
            .type_name,
        "EchoTool"
    );
    let schema = (agboss_core::contract::registry::find_tool("echo-tool")
        .unwrap()
        .input_schema)();
    assert_eq!(schema["properties"]["text"]["description"], "Item text");
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

#[tokio::test]
async fn a_hook_with_a_large_future_runs_like_any_other() {
    let app = App::builder()
        .tool_interceptor::<BigFutureToolInterceptor>()
        .tool::<PlainEchoTool>()
        .build()
        .unwrap();
    let out = app
        .tool::<PlainEchoTool>()
        .invoke(item("ok"))
        .await
        .unwrap();
    assert_eq!(out.text, "ok");
    let err = app
        .tool::<PlainEchoTool>()
        .invoke(item("deny"))
        .await
        .unwrap_err();
    assert!(err.as_blocked().is_some());
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

#[tokio::test]
async fn hooks_see_the_dto_not_unknown_members_the_model_sent() {
    let app = App::builder()
        .tool_interceptor::<InputShapeToolInterceptor>()
        .tool::<PlainEchoTool>()
        .build()
        .unwrap();
    let outcome = app
        .tool::<PlainEchoTool>()
        .call(r#"{"text":"x","isAdmin":true,"tenant":"other"}"#)
        .await;
    assert!(
        matches!(
            &outcome,
            CallOutcome::Replied { message, interceptor: "input-shape-tool-interceptor" }
                if message == "text"
        ),
        "{outcome:?}"
    );
}
