//! Soak (a bench, not a test): many guarded calls, many agent runs, many runs cancelled at
//! random points; prints throughput and resident memory before and after each phase, so that a
//! leak or a slowdown under load shows. `cargo bench -p agboss-testing --bench soak`
//! (`SOAK_SCALE=10` for ten times the work).
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use agboss_core::dto::Dto;
use agboss_core::model::{
    ChatModel, Message, ModelError, ModelRequest, ModelResponse, ToolCallRequest,
};
use agboss_core::prelude::*;

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct SoakOrderDto {
    #[text(prompt = "Order ID")]
    pub order_id: String,
}

#[tool(name = "soak-order-tool", description = "Loads an order", input = SoakOrderDto,
       output = SoakOrderDto, tool_interceptors = [SoakTenantToolInterceptor])]
pub struct SoakOrderTool;

impl ToolHandler<SoakOrderDto, SoakOrderDto> for SoakOrderTool {
    async fn run(&self, input: SoakOrderDto) -> Result<SoakOrderDto, ToolError> {
        tokio::task::yield_now().await;
        Ok(input)
    }
}

/// Checks the order belongs to the call's tenant: a mismatch would be a leak.
#[tool_interceptor(name = "soak-tenant-tool-interceptor", description = "Tenant check",
                   deps = [TenantContext])]
pub struct SoakTenantToolInterceptor {
    tenant: TenantContext,
}

static MISMATCHES: AtomicU64 = AtomicU64::new(0);

impl BeforeToolCall for SoakTenantToolInterceptor {
    async fn before_tool_call(
        &self,
        call: &ToolCallContext<'_>,
    ) -> Result<ToolCallDecision, InterceptorError> {
        let order = call.input()["orderId"].as_str().unwrap_or_default();
        if !order.starts_with(self.tenant.tenant_id()) {
            MISMATCHES.fetch_add(1, Ordering::Relaxed);
        }
        Ok(ToolCallDecision::allow())
    }
}

#[agent(name = "soak-agent", description = "Looks orders up", tools = [SoakOrderTool])]
pub struct SoakAgent;

/// Calls the tool for the tenant named in the user's message, then answers.
struct SoakModel;

impl ChatModel for SoakModel {
    async fn complete(&self, req: &ModelRequest) -> Result<ModelResponse, ModelError> {
        Ok(match req.messages.last() {
            Some(Message::User { content }) => ModelResponse::tool_calls([ToolCallRequest::new(
                "call_1",
                "soak-order-tool",
                format!(r#"{{"orderId":"{content}-42"}}"#),
            )]),
            _ => ModelResponse::text("done"),
        })
    }
}

fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1)?.parse::<u64>().ok())
        .map_or(0, |pages| pages * 4)
}

fn report(phase: &str, n: u64, took: Duration, before: u64) {
    println!(
        "{phase}: {n} in {:.2} s = {:.0}/s; RSS {before} KiB -> {} KiB",
        took.as_secs_f64(),
        n as f64 / took.as_secs_f64(),
        rss_kib()
    );
}

fn main() {
    let scale: u64 = std::env::var("SOAK_SCALE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let app = App::builder()
        .agent::<SoakAgent>()
        .model(SoakModel)
        .build()
        .expect("app");

    // 1. Guarded calls over 1,000 tenants.
    let n = 200_000 * scale;
    let before = rss_kib();
    let started = Instant::now();
    rt.block_on(async {
        let tasks: Vec<_> = (0..8)
            .map(|w| {
                let app = app.clone();
                tokio::spawn(async move {
                    for i in (w..n).step_by(8) {
                        let tenant = format!("t{}", i % 1_000);
                        let args = format!(r#"{{"orderId":"{tenant}-1"}}"#);
                        let _ = app
                            .tool::<SoakOrderTool>()
                            .tenant(tenant.as_str())
                            .invoke_json(&args)
                            .await;
                    }
                })
            })
            .collect();
        futures::future::join_all(tasks).await;
    });
    report("calls", n, started.elapsed(), before);

    // 2. Whole agent runs.
    let n = 50_000 * scale;
    let before = rss_kib();
    let started = Instant::now();
    rt.block_on(async {
        for i in 0..n {
            let tenant = format!("t{}", i % 100);
            let ctx = RunContext::new().tenant(tenant.as_str());
            let _ = app.execute(Target::agent::<SoakAgent>(), tenant, ctx).await;
        }
    });
    report("runs", n, started.elapsed(), before);

    // 3. Runs cancelled at varying points.
    let n = 50_000 * scale;
    let before = rss_kib();
    let started = Instant::now();
    rt.block_on(async {
        for i in 0..n {
            let token = agboss_core::engine::CancelToken::new();
            let tenant = format!("t{}", i % 100);
            let ctx = RunContext::new()
                .tenant(tenant.as_str())
                .cancel_token(token.clone());
            let app = app.clone();
            let run = tokio::spawn(async move {
                app.execute(Target::agent::<SoakAgent>(), tenant, ctx).await
            });
            for _ in 0..(i % 4) {
                tokio::task::yield_now().await;
            }
            token.cancel();
            let _ = run.await;
        }
    });
    report("cancelled runs", n, started.elapsed(), before);
    println!("tenant mismatches: {}", MISMATCHES.load(Ordering::Relaxed));
}
