//! `RUST_LOG=agboss_core=info cargo run --example tracing`: the spans of one agent run, printed
//! by `tracing-subscriber`'s `fmt` layer when each span closes. The model (an embedded script)
//! asks for two calls in one turn, one for an order of the tenant (allowed) and one for another
//! tenant's (`reply_to_model`), then answers; every run, model turn and tool call is a span
//! (see `agboss_core::telemetry`). `RUST_LOG=agboss_core=debug` adds every interceptor decision.
use std::sync::Arc;

use agboss_core::model::{ModelResponse, ToolCallRequest, Usage};
use agboss_core::prelude::*;
use agboss_e2e::tenant_order::{GetOrderTool, TenantOrderToolInterceptor};
use agboss_testing::scripted::{ScriptedModel, Turn};
use tracing_subscriber::EnvFilter;
use tracing_subscriber::fmt::format::FmtSpan;

#[agent(name = "order-agent", description = "Looks up orders", tools = [GetOrderTool],
        tool_interceptors = [TenantOrderToolInterceptor])]
pub struct OrderAgent;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // The set-up the tracing guide (`agboss_core::guide::tracing`) shows: levels from RUST_LOG,
    // one line per span when it closes.
    tracing_subscriber::fmt()
        .with_env_filter(EnvFilter::from_default_env())
        .with_span_events(FmtSpan::CLOSE)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stdout()))
        .init();

    let model = ScriptedModel::new([
        Turn::response(
            ModelResponse::tool_calls([
                ToolCallRequest::new("call_1", "get-order-tool", r#"{"orderId":"ACME-42"}"#),
                ToolCallRequest::new("call_2", "get-order-tool", r#"{"orderId":"OTHER-99"}"#),
            ])
            .with_usage(Usage::new(120, 18)),
        ),
        Turn::text("ACME-42 is yours; OTHER-99 is not.").with_usage(Usage::new(190, 12)),
    ]);
    let app = App::builder()
        .agent::<OrderAgent>()
        .model(Arc::new(model))
        .build()?;
    let out = app
        .execute(
            Target::agent::<OrderAgent>(),
            "Where are ACME-42 and OTHER-99?",
            RunContext::new().tenant("acme").run_id("run-1"),
        )
        .await?;
    println!("answer: {out}");
    Ok(())
}
