//! One inbound `tools/call` to `App::serve_mcp`'s handler against an rmcp-only server exposing
//! the same tool (target: ≤ 1.2×). Both are served by rmcp over the same in-process transport
//! (a tokio duplex pipe, newline-delimited JSON-RPC: what stdio carries) to the same rmcp
//! client on a current-thread runtime; both tools have the same body and return the same
//! result (the output as JSON text and as structured content):
//!
//! - `rmcp_only`: a plain rmcp `ServerHandler` that decodes the arguments with serde, runs the
//!   body and serializes the output;
//! - `agboss`: the guarded pipeline (DTO validation, no interceptor, rendering) behind
//!   `App::serve_mcp`;
//! - `agboss_1_interceptor`: the same with one allowing interceptor reading the tenant.
//!
//! After criterion, an interleaved loop (the three variants in turn, so the machine's load
//! hits them alike) prints each variant's mean per call and the ratios.
//!
//! Run with `cargo bench -p agboss-e2e --bench mcp_server`.
use std::time::{Duration, Instant};

use agboss_core::dto::Dto;
use agboss_core::{
    App, BeforeToolCall, InterceptorError, TenantContext, ToolCallContext, ToolCallDecision,
    ToolError, ToolHandler, tool, tool_interceptor,
};
use criterion::{Criterion, criterion_group, criterion_main};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RunningService};
use rmcp::{ErrorData, RoleClient, RoleServer, ServerHandler, ServiceExt as _};
use serde_json::{Map, Value, json};
use tokio::runtime::Runtime;

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct QuoteInputDto {
    #[text(prompt = "SKU to quote", min_length = 1)]
    pub sku: String,
    #[integer(prompt = "Quantity", min = 1, max = 1000)]
    pub quantity: i64,
}

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct QuoteDto {
    #[text(prompt = "SKU")]
    pub sku: String,
    #[integer(prompt = "Quantity")]
    pub quantity: i64,
    #[integer(prompt = "Total in cents")]
    pub total_cents: i64,
}

/// The tool body both servers run.
fn quote(input: QuoteInputDto) -> QuoteDto {
    QuoteDto {
        total_cents: input.quantity * 1_250,
        sku: input.sku,
        quantity: input.quantity,
    }
}

#[tool(name = "quote-tool", description = "Quotes a price", input = QuoteInputDto, output = QuoteDto)]
pub struct QuoteTool;

impl ToolHandler<QuoteInputDto, QuoteDto> for QuoteTool {
    async fn run(&self, input: QuoteInputDto) -> Result<QuoteDto, ToolError> {
        Ok(quote(input))
    }
}

#[tool(name = "guarded-quote-tool", description = "Quotes a price", input = QuoteInputDto,
       output = QuoteDto, tool_interceptors = [TenantSeenToolInterceptor])]
pub struct GuardedQuoteTool;

impl ToolHandler<QuoteInputDto, QuoteDto> for GuardedQuoteTool {
    async fn run(&self, input: QuoteInputDto) -> Result<QuoteDto, ToolError> {
        Ok(quote(input))
    }
}

#[tool_interceptor(name = "tenant-seen-tool-interceptor", description = "Allows calls with a tenant",
                   deps = [TenantContext])]
pub struct TenantSeenToolInterceptor {
    tenant: TenantContext,
}

impl BeforeToolCall for TenantSeenToolInterceptor {
    async fn before_tool_call(
        &self,
        _call: &ToolCallContext<'_>,
    ) -> Result<ToolCallDecision, InterceptorError> {
        Ok(if self.tenant.tenant_id().is_empty() {
            ToolCallDecision::block("no tenant")
        } else {
            ToolCallDecision::allow()
        })
    }
}

/// The same tool on rmcp alone.
#[derive(Clone)]
struct RmcpOnly {
    tool: Tool,
}

impl RmcpOnly {
    fn new() -> Self {
        let Value::Object(schema) = <QuoteInputDto as Dto>::json_schema() else {
            unreachable!("an object schema")
        };
        Self {
            tool: Tool::new("quote-tool", "Quotes a price", std::sync::Arc::new(schema)),
        }
    }
}

impl ServerHandler for RmcpOnly {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }
    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(vec![self.tool.clone()]))
    }
    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if request.name != "quote-tool" {
            return Err(ErrorData::invalid_params("unknown tool", None));
        }
        let arguments = Value::Object(request.arguments.unwrap_or_default());
        let input: QuoteInputDto = match serde_json::from_value(arguments) {
            Ok(input) => input,
            Err(e) => {
                return Ok(CallToolResult::error(vec![ContentBlock::text(e.to_string())]).into());
            }
        };
        let output = serde_json::to_value(quote(input))
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        let mut result = CallToolResult::success(vec![ContentBlock::text(output.to_string())]);
        result.structured_content = Some(output);
        Ok(result.into())
    }
}

type Client = RunningService<RoleClient, ()>;

/// A client connected over a duplex pipe to `server`, served on the runtime.
fn connect<S: ServerHandler>(rt: &Runtime, server: S) -> Client {
    rt.block_on(async {
        let (server_io, client_io) = tokio::io::duplex(64 * 1024);
        tokio::spawn(async move {
            if let Ok(running) = server.serve(server_io).await {
                let _ = running.waiting().await;
            }
        });
        ().serve(client_io).await.expect("the client connects")
    })
}

fn arguments() -> Map<String, Value> {
    let Value::Object(map) = json!({ "sku": "SKU-42", "quantity": 3 }) else {
        unreachable!()
    };
    map
}

async fn one_call(client: &Client, tool: &'static str) {
    let result = client
        .call_tool(CallToolRequestParams::new(tool).with_arguments(arguments()))
        .await
        .expect("the call answers");
    assert_ne!(result.is_error, Some(true), "{result:?}");
    std::hint::black_box(result);
}

struct Variants {
    rmcp: Client,
    agboss: Client,
    agboss_guarded: Client,
}

fn variants(rt: &Runtime) -> Variants {
    let app = App::builder()
        .tool::<QuoteTool>()
        .tool::<GuardedQuoteTool>()
        .build()
        .expect("app");
    let handler = app
        .serve_mcp()
        .direct_chains()
        .tenant("acme")
        .handler()
        .expect("handler");
    Variants {
        rmcp: connect(rt, RmcpOnly::new()),
        agboss: connect(rt, handler.clone()),
        agboss_guarded: connect(rt, handler),
    }
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let v = variants(&rt);
    let mut g = c.benchmark_group("mcp_server_call");
    g.sample_size(30)
        .measurement_time(Duration::from_secs(4))
        .warm_up_time(Duration::from_secs(1));
    g.bench_function("rmcp_only", |b| {
        b.to_async(&rt).iter(|| one_call(&v.rmcp, "quote-tool"))
    });
    g.bench_function("agboss", |b| {
        b.to_async(&rt).iter(|| one_call(&v.agboss, "quote-tool"))
    });
    g.bench_function("agboss_1_interceptor", |b| {
        b.to_async(&rt)
            .iter(|| one_call(&v.agboss_guarded, "guarded-quote-tool"))
    });
    g.finish();

    // Interleaved: rounds of 200 calls of each variant in turn.
    let mut totals = [Duration::ZERO; 3];
    let rounds = 20;
    let per_round = 200;
    rt.block_on(async {
        for _ in 0..rounds {
            for (i, (client, tool)) in [
                (&v.rmcp, "quote-tool"),
                (&v.agboss, "quote-tool"),
                (&v.agboss_guarded, "guarded-quote-tool"),
            ]
            .into_iter()
            .enumerate()
            {
                let start = Instant::now();
                for _ in 0..per_round {
                    one_call(client, tool).await;
                }
                totals[i] += start.elapsed();
            }
        }
    });
    let calls = f64::from(rounds * per_round);
    let mean = |d: Duration| d.as_secs_f64() * 1e6 / calls;
    let (rmcp, ours, guarded) = (mean(totals[0]), mean(totals[1]), mean(totals[2]));
    println!(
        "mcp_server interleaved: rmcp_only {rmcp:.1} µs/call, agboss {ours:.1} µs/call ({:.3}×), agboss_1_interceptor {guarded:.1} µs/call ({:.3}×); target ≤ 1.2×",
        ours / rmcp,
        guarded / rmcp
    );
}

criterion_group!(benches, bench);
criterion_main!(benches);
