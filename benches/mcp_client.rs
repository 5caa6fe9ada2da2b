//! One remote call through `#[mcp_tool]` with 4 allowing interceptors (input validation, the
//! chain, output decoding, rendering) against the same call made with rmcp's client alone, on
//! the same server-everything over stdio (`echo`), one connection each. The ratio is the
//! framework's overhead on a real round trip.
//!
//! Needs server-everything (`bash scripts/mcp-peers.sh install`, or `AGBOSS_MCP_EVERYTHING`
//! naming its `dist/index.js`). Run with `cargo bench -p agboss-e2e --bench mcp_client`.
use std::path::PathBuf;
use std::time::Duration;

use agboss_core::mcp::client::{McpServer, McpServerConfig};
use agboss_core::prelude::*;
use criterion::{Criterion, criterion_group, criterion_main};
use rmcp::ServiceExt as _;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::TokioChildProcess;

macro_rules! allowing {
    ($($ty:ident $name:literal),*) => {$(
        #[tool_interceptor(name = $name, description = "Allows every call")]
        pub struct $ty;
        impl BeforeToolCall for $ty {
            async fn before_tool_call(
                &self,
                call: &ToolCallContext<'_>,
            ) -> Result<ToolCallDecision, InterceptorError> {
                std::hint::black_box(call.tool_name());
                Ok(ToolCallDecision::allow())
            }
        }
    )*};
}
allowing!(AToolInterceptor "a-tool-interceptor", BToolInterceptor "b-tool-interceptor",
          CToolInterceptor "c-tool-interceptor", DToolInterceptor "d-tool-interceptor");

#[mcp_tool(name = "echo-tool", description = "Echoes", server = "everything", remote = "echo",
           tool_interceptors = [AToolInterceptor, BToolInterceptor, CToolInterceptor, DToolInterceptor])]
pub struct EchoTool;

fn entry() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("AGBOSS_MCP_EVERYTHING") {
        return Some(PathBuf::from(p));
    }
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(
        "target/mcp-peers/node/node_modules/@modelcontextprotocol/server-everything/dist/index.js",
    );
    p.exists().then_some(p)
}

fn bench(c: &mut Criterion) {
    let Some(entry) = entry() else {
        eprintln!("mcp_client bench skipped: run `bash scripts/mcp-peers.sh install` first");
        return;
    };
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let (app, raw) = rt.block_on(async {
        let server = McpServer::connect(
            McpServerConfig::stdio("everything", "node")
                .args([entry.as_os_str(), "stdio".as_ref()]),
        )
        .await
        .expect("server-everything connects");
        let app = App::builder()
            .mcp_server(server)
            .tool::<EchoTool>()
            .build()
            .expect("app");
        let mut cmd = tokio::process::Command::new("node");
        cmd.arg(&entry).arg("stdio");
        let (process, _) = TokioChildProcess::builder(cmd)
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("node");
        let raw = ().serve(process).await.expect("rmcp client connects");
        (app, raw)
    });
    let args = serde_json::json!({"message": "hello"});
    let mut g = c.benchmark_group("mcp_client_call");
    g.sample_size(30).measurement_time(Duration::from_secs(8));
    g.bench_function("rmcp_client_alone", |b| {
        b.to_async(&rt).iter(|| async {
            let params = CallToolRequestParams::new("echo")
                .with_arguments(args.as_object().cloned().unwrap_or_default());
            std::hint::black_box(raw.peer().call_tool(params).await.expect("echo"))
        });
    });
    g.bench_function("mcp_tool_4_interceptors", |b| {
        b.to_async(&rt).iter(|| async {
            std::hint::black_box(
                app.tool_by_name("echo-tool")
                    .expect("echo-tool")
                    .invoke_json(r#"{"message":"hello"}"#)
                    .await
                    .expect("echo"),
            )
        });
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
