//! Both HTTP clients against fakellm, a third-party mock server speaking OpenAI's and
//! Anthropic's formats with scripted tool calls (rules: `scripts/fakellm/fakellm.yaml`):
//! plain answers, a whole agent run with a tool-call round trip, streamed and not, and HTTP
//! 400 / 429 / 500. Needs `AGBOSS_TEST_FAKELLM_URL` (`bash scripts/test.sh` starts fakellm
//! through `scripts/fakellm.sh`); without it the tests fail under `CI` and skip elsewhere.
//! Edge cases fakellm cannot produce (byte splits, cut streams, `Retry-After`, error events
//! mid-stream) are in `openai_client/` and `anthropic_client.rs`, on local servers.
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use agboss_core::dto::Dto;
use agboss_core::engine::{RunContext, RunEvent, Target};
use agboss_core::model::{
    AnthropicModel, ChatModel, Message, ModelError, ModelRequest, OpenAiCompatibleModel,
    SharedChatModel, collect_stream,
};
use agboss_core::prelude::*;

/// fakellm's URL (`http://127.0.0.1:PORT`); a missing one fails the test in CI and skips it
/// elsewhere.
fn fakellm_url() -> Option<String> {
    match std::env::var("AGBOSS_TEST_FAKELLM_URL") {
        Ok(url) if !url.trim().is_empty() => Some(url.trim().trim_end_matches('/').to_owned()),
        _ if std::env::var_os("CI").is_some() => {
            panic!(
                "AGBOSS_TEST_FAKELLM_URL is not set: CI runs the fakellm tests (bash scripts/test.sh)"
            )
        }
        _ => {
            eprintln!("skipped: AGBOSS_TEST_FAKELLM_URL not set (run bash scripts/test.sh)");
            None
        }
    }
}

/// A prompt fakellm has not seen: it keys conversations on the first user message.
fn prompt(keyword: &str) -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!(
        "{keyword} (run {}-{nanos}-{})",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

#[derive(Clone, Copy, Debug)]
enum Provider {
    OpenAi,
    Anthropic,
}

fn model(url: &str, provider: Provider, streaming: bool) -> SharedChatModel {
    let fast = Duration::from_millis(20);
    match provider {
        Provider::OpenAi => Arc::new(
            OpenAiCompatibleModel::builder()
                .base_url(format!("{url}/v1"))
                .model("gpt-4o-mini")
                .streaming(streaming)
                .max_retries(1)
                .backoff_base(fast)
                .build()
                .expect("valid config"),
        ),
        Provider::Anthropic => Arc::new(
            AnthropicModel::builder()
                .base_url(url)
                .model("claude-sonnet-4-5")
                .streaming(streaming)
                .max_retries(1)
                .backoff_base(fast)
                .build()
                .expect("valid config"),
        ),
    }
}

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct OrderInputDto {
    #[text(prompt = "Order ID")]
    pub order_id: String,
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
            status: "shipped".into(),
        })
    }
}

#[agent(name = "fakellm-agent", description = "Answers order questions",
        instructions = "Use get-order-tool.", tools = [GetOrderTool])]
pub struct FakellmAgent;

#[tokio::test]
async fn plain_answers_from_both_providers_streamed_and_not() {
    let Some(url) = fakellm_url() else { return };
    for provider in [Provider::OpenAi, Provider::Anthropic] {
        for streaming in [false, true] {
            let model = model(&url, provider, streaming);
            let req = ModelRequest::new([Message::user(prompt("fakellm-hello"))]);
            let response = collect_stream(model.stream(&req).await.expect("answers"))
                .await
                .unwrap_or_else(|e| panic!("{provider:?} streaming={streaming}: {e}"));
            assert_eq!(
                response.message.content.as_deref(),
                Some("Hello from fakellm."),
                "{provider:?} streaming={streaming}"
            );
            assert!(response.message.tool_calls.is_empty());
            // fakellm's OpenAI stream sends no usage chunk; every other answer counts tokens.
            let counted = !(matches!(provider, Provider::OpenAi) && streaming);
            assert_eq!(
                response.usage.completion_tokens > 0,
                counted,
                "{provider:?} streaming={streaming}: {:?}",
                response.usage
            );
        }
    }
}

#[tokio::test]
async fn an_agent_run_with_a_tool_call_round_trip_streamed_and_not() {
    let Some(url) = fakellm_url() else { return };
    for provider in [Provider::OpenAi, Provider::Anthropic] {
        for streaming in [false, true] {
            let what = format!("{provider:?} streaming={streaming}");
            let app = App::builder()
                .agent::<FakellmAgent>()
                .model(model(&url, provider, streaming))
                .build()
                .expect("app builds");
            let (events, out) = app
                .stream(
                    Target::agent::<FakellmAgent>(),
                    prompt("fakellm-order"),
                    RunContext::new(),
                )
                .collect_all()
                .await;
            let out = out.unwrap_or_else(|e| panic!("{what}: {e}"));
            assert_eq!(out.text, "Order ACME-42 has shipped.", "{what}");
            assert_eq!(out.model_turns, 2, "{what}");
            assert_eq!(out.tool_calls, 1, "{what}");
            let requested: Vec<_> = events
                .iter()
                .filter_map(|e| match e {
                    RunEvent::ToolCallRequested {
                        tool, arguments, ..
                    } => Some((tool.as_str(), arguments.as_str())),
                    _ => None,
                })
                .collect();
            assert_eq!(requested.len(), 1, "{what}: {events:?}");
            assert_eq!(requested[0].0, "get-order-tool");
            let args: serde_json::Value = serde_json::from_str(requested[0].1).unwrap();
            assert_eq!(args, serde_json::json!({"orderId": "ACME-42"}), "{what}");
            let result = events
                .iter()
                .find_map(|e| match e {
                    RunEvent::ToolResult {
                        content, is_error, ..
                    } => Some((content.as_str(), *is_error)),
                    _ => None,
                })
                .unwrap_or_else(|| panic!("{what}: no tool result"));
            assert_eq!(
                result,
                (r#"{"orderId":"ACME-42","status":"shipped"}"#, false),
                "{what}"
            );
            if streaming {
                assert!(
                    events
                        .iter()
                        .any(|e| matches!(e, RunEvent::TextDelta { delta, .. } if delta.contains("shipped"))),
                    "{what}: the answer streams"
                );
            }
        }
    }
}

#[agent(name = "typed-fakellm-agent", description = "Answers typed", output = OrderDto)]
pub struct TypedFakellmAgent;

#[tokio::test]
async fn a_typed_answer_in_each_providers_structured_mode_streamed_and_not() {
    let Some(url) = fakellm_url() else { return };
    for provider in [Provider::OpenAi, Provider::Anthropic] {
        for streaming in [false, true] {
            let what = format!("{provider:?} streaming={streaming}");
            let app = App::builder()
                .agent::<TypedFakellmAgent>()
                .model(model(&url, provider, streaming))
                .build()
                .expect("app builds");
            let (events, out) = app
                .stream(
                    Target::agent::<TypedFakellmAgent>(),
                    prompt("fakellm-typed"),
                    RunContext::new(),
                )
                .collect_all()
                .await;
            let out = out.unwrap_or_else(|e| panic!("{what}: {e}"));
            let order: OrderDto = out.value().unwrap_or_else(|e| panic!("{what}: {e}"));
            assert_eq!(order.order_id, "ACME-42", "{what}");
            assert_eq!(order.status, "shipped", "{what}");
            assert_eq!(out.model_turns, 1, "{what}: no correction was needed");
            assert!(
                !events
                    .iter()
                    .any(|e| matches!(e, RunEvent::OutputRejected { .. })),
                "{what}"
            );
            // Nothing of the output tool reaches the run as a call.
            assert_eq!(out.tool_calls, 0, "{what}");
        }
    }
}

#[tokio::test]
async fn http_400_429_and_500_are_typed_with_the_servers_message() {
    let Some(url) = fakellm_url() else { return };
    for provider in [Provider::OpenAi, Provider::Anthropic] {
        let model = model(&url, provider, false);
        let ask = |keyword: &str| ModelRequest::new([Message::user(prompt(keyword))]);

        let err = model.complete(&ask("fakellm-400")).await.unwrap_err();
        assert!(
            matches!(&err, ModelError::Http { status: 400, message, error_type: Some(t), .. }
                if message == "Invalid request (mock)" && t == "mock_error"),
            "{provider:?}: {err:?}"
        );
        assert!(!err.is_retryable());

        let err = model.complete(&ask("fakellm-429")).await.unwrap_err();
        assert!(
            matches!(&err, ModelError::RateLimited { message: Some(m), .. }
                if m == "Rate limit exceeded (mock)"),
            "{provider:?}: {err:?}"
        );
        assert!(
            err.to_string().contains("Rate limit exceeded (mock)"),
            "the message is in the Display: {err}"
        );

        let err = model.complete(&ask("fakellm-500")).await.unwrap_err();
        assert!(
            matches!(&err, ModelError::Http { status: 500, message, .. }
                if message == "Internal error (mock)"),
            "{provider:?}: {err:?}"
        );
        assert_eq!(
            err.to_string(),
            "model provider returned HTTP 500: Internal error (mock)"
        );
    }
}

#[tokio::test]
async fn from_env_style_config_reaches_a_keyless_server() {
    let Some(url) = fakellm_url() else { return };
    let openai = OpenAiCompatibleModel::from_lookup(|name| match name {
        "AGBOSS_OPENAI_BASE_URL" => Some(format!("{url}/v1")),
        _ => None,
    })
    .expect("a base URL without a key");
    let anthropic = AnthropicModel::from_lookup(|name| match name {
        "AGBOSS_ANTHROPIC_BASE_URL" => Some(url.clone()),
        "AGBOSS_ANTHROPIC_STREAM" => Some("false".into()),
        _ => None,
    })
    .expect("a base URL without a key");
    for model in [
        Arc::new(openai) as SharedChatModel,
        Arc::new(anthropic) as SharedChatModel,
    ] {
        let req = ModelRequest::new([Message::user(prompt("fakellm-hello"))]);
        let response = collect_stream(model.stream(&req).await.unwrap())
            .await
            .unwrap();
        assert_eq!(
            response.message.content.as_deref(),
            Some("Hello from fakellm.")
        );
    }
}
