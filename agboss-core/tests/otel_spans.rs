//! The spans of whole runs, exported through `tracing-opentelemetry` to the OpenTelemetry
//! SDK's in-memory exporter: the tree (run → router turn, agent step → model turns and parallel
//! tool calls), the GenAI attributes, one decision field per call, and content only when
//! opted in, PII-masked.
use std::collections::HashMap;
use std::sync::Arc;

use agboss_core::dto::Dto;
use agboss_core::engine::{RunContext, Target};
use agboss_core::model::{ModelResponse, ToolCallRequest, Usage};
use agboss_core::prelude::*;
use agboss_core::telemetry;
use agboss_testing::scripted::{ScriptedModel, Turn};
use futures::StreamExt as _;
use opentelemetry::trace::SpanId;
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use tracing_subscriber::layer::SubscriberExt as _;

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct OrderInputDto {
    #[text(prompt = "Order ID")]
    pub order_id: String,
    #[text(prompt = "Contact e-mail")]
    pub email: Option<String>,
}

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct OrderDto {
    #[text(prompt = "Order ID")]
    pub order_id: String,
    #[text(prompt = "Status")]
    pub status: String,
}

#[tool(name = "get-order-tool", description = "Loads an order", input = OrderInputDto,
       output = OrderDto)]
pub struct GetOrderTool;

impl ToolHandler<OrderInputDto, OrderDto> for GetOrderTool {
    async fn run(&self, input: OrderInputDto) -> Result<OrderDto, ToolError> {
        Ok(OrderDto {
            order_id: input.order_id,
            status: "shipped, receipt sent to ann@example.com".into(),
        })
    }
}

#[tool_interceptor(name = "acme-only-tool-interceptor", description = "Only ACME orders")]
pub struct AcmeOnlyToolInterceptor;

impl BeforeToolCall for AcmeOnlyToolInterceptor {
    async fn before_tool_call(
        &self,
        call: &ToolCallContext<'_>,
    ) -> Result<ToolCallDecision, InterceptorError> {
        Ok(
            if call.input()["orderId"]
                .as_str()
                .is_some_and(|o| o.starts_with("ACME-"))
            {
                ToolCallDecision::allow()
            } else {
                ToolCallDecision::reply_to_model("Not an ACME order; ask again.")
            },
        )
    }
}

#[pii_policy(name = "span-email-pii-policy", description = "Masks e-mails", detectors = [email])]
pub struct SpanEmailPiiPolicy;

#[agent(name = "span-agent", description = "Answers order questions", instructions = "Help.",
        tools = [GetOrderTool], tool_interceptors = [AcmeOnlyToolInterceptor],
        pii_policies = [SpanEmailPiiPolicy])]
pub struct SpanAgent;

#[agent(name = "span-other-agent", description = "Anything else")]
pub struct SpanOtherAgent;

#[router(name = "span-router", description = "Routes", routes = [SpanAgent, SpanOtherAgent],
         fallback = SpanOtherAgent)]
pub struct SpanRouter;

#[workflow(name = "span-workflow", description = "Routes, then answers", routers = [SpanRouter])]
pub struct SpanWorkflow;

/// `set_capture_content` is process-wide: the tests of this binary take turns.
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

fn app(turns: Vec<Turn>) -> App {
    App::builder()
        .router::<SpanRouter>()
        .model(Arc::new(ScriptedModel::new(turns)))
        .build()
        .expect("app builds")
}

fn agent_turns() -> Vec<Turn> {
    vec![
        Turn::response(
            ModelResponse::tool_calls([
                ToolCallRequest::new(
                    "c1",
                    "get-order-tool",
                    r#"{"orderId":"ACME-1","email":"bob@example.com"}"#,
                ),
                ToolCallRequest::new("c2", "get-order-tool", r#"{"orderId":"OTHER-9"}"#),
            ])
            .with_usage(Usage::new(10, 5)),
        ),
        Turn::text("ACME-1 has shipped.").with_usage(Usage::new(20, 7)),
    ]
}

/// Runs `f` with an OpenTelemetry layer over an in-memory exporter; returns the finished spans.
async fn spans_of<F: std::future::Future<Output = ()>>(f: F) -> Vec<SpanData> {
    let exporter = InMemorySpanExporter::default();
    let provider = SdkTracerProvider::builder()
        .with_simple_exporter(exporter.clone())
        .build();
    let subscriber = tracing_subscriber::registry().with(telemetry::otel::layer(&provider));
    {
        let _guard = tracing::subscriber::set_default(subscriber);
        f.await;
    }
    provider.force_flush().expect("flushed");
    exporter.get_finished_spans().expect("spans")
}

/// The attributes of a span, by key (a key set twice would show as its last value; see
/// `keys_once`).
fn attrs(span: &SpanData) -> HashMap<String, String> {
    span.attributes
        .iter()
        .map(|kv| (kv.key.as_str().to_string(), kv.value.as_str().into_owned()))
        .collect()
}

fn keys_once(span: &SpanData) {
    let mut seen = std::collections::HashSet::new();
    for kv in &span.attributes {
        assert!(
            seen.insert(kv.key.as_str().to_string()),
            "{} has {} twice",
            span.name,
            kv.key
        );
    }
}

fn by_name<'a>(spans: &'a [SpanData], name: &str) -> Vec<&'a SpanData> {
    spans.iter().filter(|s| s.name == name).collect()
}

fn one<'a>(spans: &'a [SpanData], name: &str) -> &'a SpanData {
    let found = by_name(spans, name);
    assert_eq!(found.len(), 1, "one span {name}: {:?}", names(spans));
    found[0]
}

fn names(spans: &[SpanData]) -> Vec<String> {
    spans.iter().map(|s| s.name.to_string()).collect()
}

fn id(span: &SpanData) -> SpanId {
    span.span_context.span_id()
}

#[tokio::test]
async fn a_streamed_routed_run_is_one_tree_with_genai_attributes() {
    let _serial = SERIAL.lock().await;
    telemetry::set_capture_content(false);
    let mut turns = vec![Turn::text("span-agent")];
    turns.extend(agent_turns());
    let app = app(turns);
    let spans = spans_of(async {
        let mut events = app.stream(
            Target::router::<SpanRouter>(),
            "Where is ACME-1?",
            RunContext::new().run_id("run-otel-1"),
        );
        while let Some(event) = events.next().await {
            event.expect("the run succeeds");
        }
    })
    .await;
    for span in &spans {
        keys_once(span);
    }

    let run = one(&spans, "invoke_agent span-router");
    assert_eq!(run.parent_span_id, SpanId::INVALID, "the run is the root");
    let a = attrs(run);
    assert_eq!(a["gen_ai.operation.name"], "invoke_agent");
    assert_eq!(a["gen_ai.agent.name"], "span-router");
    assert_eq!(a["agboss.run_id"], "run-otel-1");
    assert_eq!(a["agboss.outcome"], "ok");
    assert_eq!(a["gen_ai.usage.input_tokens"], "30");
    assert_eq!(a["gen_ai.usage.output_tokens"], "12");

    let step = one(&spans, "invoke_agent span-agent");
    assert_eq!(step.parent_span_id, id(run));
    assert_eq!(attrs(step)["agboss.outcome"], "ok");

    let chats = by_name(&spans, "chat scripted");
    assert_eq!(chats.len(), 3, "{:?}", names(&spans));
    let router_turn = chats
        .iter()
        .find(|c| attrs(c)["agboss.step"] == "span-router")
        .expect("the router's turn");
    assert_eq!(router_turn.parent_span_id, id(run));
    let agent_turns: Vec<_> = chats
        .iter()
        .filter(|c| attrs(c)["agboss.step"] == "span-agent")
        .collect();
    assert_eq!(agent_turns.len(), 2);
    for chat in &agent_turns {
        assert_eq!(chat.parent_span_id, id(step));
        let a = attrs(chat);
        assert_eq!(a["gen_ai.operation.name"], "chat");
        assert_eq!(a["gen_ai.provider.name"], "agboss.scripted");
        assert_eq!(a["gen_ai.request.model"], "scripted");
        assert!(
            !a.contains_key("gen_ai.input.messages"),
            "no content unless opted in"
        );
    }
    let (first, second) = if attrs(agent_turns[0])["gen_ai.usage.input_tokens"] == "10" {
        (agent_turns[0], agent_turns[1])
    } else {
        (agent_turns[1], agent_turns[0])
    };
    assert_eq!(attrs(first)["gen_ai.usage.output_tokens"], "5");
    assert_eq!(attrs(first)["gen_ai.response.finish_reasons"], "tool_calls");
    assert_eq!(attrs(second)["gen_ai.usage.input_tokens"], "20");
    assert_eq!(attrs(second)["gen_ai.response.finish_reasons"], "stop");

    // Both calls of the turn are children of the agent step, not of each other.
    let calls = by_name(&spans, "execute_tool get-order-tool");
    assert_eq!(calls.len(), 2);
    let call = |id: &str| {
        *calls
            .iter()
            .find(|c| attrs(c)["gen_ai.tool.call.id"] == id)
            .expect("the call")
    };
    for c in &calls {
        assert_eq!(c.parent_span_id, self::id(step));
        let a = attrs(c);
        assert_eq!(a["gen_ai.operation.name"], "execute_tool");
        assert_eq!(a["gen_ai.tool.name"], "get-order-tool");
        assert!(!a.contains_key("gen_ai.tool.call.arguments"));
    }
    let allowed = attrs(call("c1"));
    assert_eq!(allowed["agboss.decision"], "allowed");
    assert_eq!(allowed["agboss.outcome"], "ok");
    assert!(!allowed.contains_key("agboss.interceptor"));
    assert_eq!(allowed["agboss.path"], "app/span-agent");
    let replied = attrs(call("c2"));
    assert_eq!(replied["agboss.decision"], "replied_to_model");
    assert_eq!(replied["agboss.interceptor"], "acme-only-tool-interceptor");
}

#[tokio::test]
async fn content_is_recorded_only_when_opted_in_and_masked() {
    let _serial = SERIAL.lock().await;
    telemetry::set_capture_content(true);
    let app = app(agent_turns());
    let spans = spans_of(async {
        app.execute(
            Target::agent::<SpanAgent>(),
            "Mail me at carl@example.com",
            RunContext::new(),
        )
        .await
        .expect("the run succeeds");
    })
    .await;
    telemetry::set_capture_content(false);

    // The agent is the target: its run span is the only `invoke_agent`.
    let run = one(&spans, "invoke_agent span-agent");
    assert_eq!(run.parent_span_id, SpanId::INVALID);
    let calls = by_name(&spans, "execute_tool get-order-tool");
    let c1 = calls
        .iter()
        .map(|c| attrs(c))
        .find(|a| a["gen_ai.tool.call.id"] == "c1")
        .expect("c1");
    let args = &c1["gen_ai.tool.call.arguments"];
    assert!(args.contains("ACME-1"), "{args}");
    assert!(!args.contains("bob@example.com"), "masked: {args}");
    let result = &c1["gen_ai.tool.call.result"];
    assert!(result.contains("shipped"), "{result}");
    assert!(!result.contains("ann@example.com"), "masked: {result}");

    let chat = by_name(&spans, "chat scripted")
        .into_iter()
        .map(attrs)
        .find(|a| a["gen_ai.usage.input_tokens"] == "20")
        .expect("the last turn");
    let input = &chat["gen_ai.input.messages"];
    assert!(input.contains("Mail me at"), "{input}");
    assert!(!input.contains("carl@example.com"), "masked: {input}");
    assert!(chat["gen_ai.output.messages"].contains("ACME-1 has shipped."));
}

#[tokio::test]
async fn a_workflow_run_is_an_invoke_workflow_span_over_its_agent_steps() {
    let _serial = SERIAL.lock().await;
    telemetry::set_capture_content(false);
    let mut turns = vec![Turn::text("span-agent")];
    turns.extend(agent_turns());
    let app = App::builder()
        .workflow::<SpanWorkflow>()
        .model(Arc::new(ScriptedModel::new(turns)))
        .build()
        .expect("app builds");
    let spans = spans_of(async {
        app.execute("span-workflow", "Where is ACME-1?", RunContext::new())
            .await
            .expect("the run succeeds");
    })
    .await;
    let run = one(&spans, "invoke_workflow span-workflow");
    assert_eq!(run.parent_span_id, SpanId::INVALID);
    assert_eq!(attrs(run)["gen_ai.operation.name"], "invoke_workflow");
    assert_eq!(attrs(run)["agboss.outcome"], "ok");
    let step = one(&spans, "invoke_agent span-agent");
    assert_eq!(step.parent_span_id, id(run));
    let calls = by_name(&spans, "execute_tool get-order-tool");
    assert_eq!(calls.len(), 2);
    assert!(calls.iter().all(|c| c.parent_span_id == id(step)));
    assert_eq!(
        attrs(calls[0])["agboss.path"],
        "app/span-workflow/span-agent"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_otlp_provider_builds_in_a_runtime_and_survives_a_missing_collector() {
    // Nothing listens on port 9: the export fails, and that is all that happens.
    let provider =
        telemetry::otel::otlp_tracer_provider("agboss-test", Some("http://127.0.0.1:9/v1/traces"))
            .expect("the exporter builds");
    let subscriber = tracing_subscriber::registry().with(telemetry::otel::layer(&provider));
    tracing::subscriber::with_default(subscriber, || {
        tracing::info_span!("chat").in_scope(|| {});
    });
    let _ = provider.force_flush();
    let _ = provider.shutdown();
}
