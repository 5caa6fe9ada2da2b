//! MCP tools under the app's guards: one remote tool declared with `#[mcp_tool]` (a DTO in, a
//! DTO out) and every tool of a server taken by an agent (`mcp_servers = [..]`), all of them
//! behind the same tenant ACL interceptor, on npm's `@modelcontextprotocol/server-everything`
//! over stdio.
//!
//! ```sh
//! bash scripts/mcp-peers.sh install     # once: the pinned server-everything (and the test peers)
//! cargo run --example mcp_tools
//! ```
//!
//! `AGBOSS_MCP_EVERYTHING` may name another copy of server-everything's `dist/index.js`.
use std::path::PathBuf;
use std::sync::Arc;

use agboss_core::dto::Dto;
use agboss_core::mcp::client::{McpServer, McpServerConfig};
use agboss_core::prelude::*;
use agboss_testing::ScriptedModel;
use agboss_testing::scripted::{ScriptedToolCall, Turn};
use serde_json::json;

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct SumDto {
    #[number(prompt = "First number")]
    pub a: f64,
    #[number(prompt = "Second number")]
    pub b: f64,
}

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct SentenceDto {
    #[text(prompt = "The answer as a sentence")]
    pub text: String,
}

/// Tenant `guest` may only echo; numbers above a million go back to the model.
#[tool_interceptor(name = "remote-acl-tool-interceptor", description = "Tenant ACL for remote tools",
                   deps = [TenantContext])]
pub struct RemoteAclToolInterceptor {
    tenant: TenantContext,
}

impl BeforeToolCall for RemoteAclToolInterceptor {
    async fn before_tool_call(
        &self,
        call: &ToolCallContext<'_>,
    ) -> Result<ToolCallDecision, InterceptorError> {
        if self.tenant.tenant_id() == "guest" && call.tool_name() != "everything__echo" {
            return Ok(ToolCallDecision::block(format!(
                "tenant guest may not call {}",
                call.tool_name()
            )));
        }
        if call.input()["a"].as_f64().is_some_and(|a| a > 1e6) {
            return Ok(ToolCallDecision::reply_to_model(
                "`a` is over a million: ask the user for a smaller number",
            ));
        }
        Ok(ToolCallDecision::allow())
    }
}

#[mcp_tool(name = "get-sum-tool", description = "Adds two numbers", server = "everything",
           remote = "get-sum", input = SumDto, output = SentenceDto, timeout_ms = 10_000)]
pub struct GetSumTool;

#[agent(name = "calculator-agent", description = "Adds numbers with remote tools",
        instructions = "Use the tools.", tools = [GetSumTool], mcp_servers = ["everything"])]
pub struct CalculatorAgent;

fn server_everything() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("AGBOSS_MCP_EVERYTHING") {
        return Some(PathBuf::from(path));
    }
    let default = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(
        "target/mcp-peers/node/node_modules/@modelcontextprotocol/server-everything/dist/index.js",
    );
    default.exists().then_some(default)
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let Some(entry) = server_everything() else {
        eprintln!(
            "server-everything is not installed: run `bash scripts/mcp-peers.sh install` (npm, pinned) \
             or set AGBOSS_MCP_EVERYTHING to its dist/index.js"
        );
        return Ok(());
    };
    let server = McpServer::connect(
        McpServerConfig::stdio("everything", "node").args([entry.as_os_str(), "stdio".as_ref()]),
    )
    .await?;
    println!(
        "== server `everything` lists {} tools",
        server.tools().count()
    );

    // A scripted model (no key, no network): one turn of three calls, then the answer.
    let model = Arc::new(ScriptedModel::new([
        Turn::tool_calls([
            ScriptedToolCall::new("get-sum-tool", json!({"a": 2, "b": 3})).with_id("c1"),
            ScriptedToolCall::new("get-sum-tool", json!({"a": 5e9, "b": 1})).with_id("c2"),
            ScriptedToolCall::new("everything__echo", json!({"message": "hello"})).with_id("c3"),
        ]),
        Turn::text("2 + 3 = 5, and the server says hello back."),
    ]));
    // The ACL at the application scope: the agent's calls and direct invokes run it.
    let app = App::builder()
        .tool_interceptor::<RemoteAclToolInterceptor>()
        .mcp_server(server)
        .agent::<CalculatorAgent>()
        .shared_model(model)
        .build()?;

    println!("\n== the agent's tool loop (tenant acme)");
    app.stream(
        Target::agent::<CalculatorAgent>(),
        "What is 2 + 3?",
        RunContext::new().tenant("acme"),
    )
    .print()
    .await?;

    println!("\n== direct invokes run the application's chain too");
    let sum = app
        .tool::<GetSumTool>()
        .tenant("acme")
        .invoke(SumDto { a: 40.0, b: 2.0 })
        .await?;
    println!("   acme: {}", sum.text);
    match app
        .tool::<GetSumTool>()
        .tenant("guest")
        .invoke(SumDto { a: 1.0, b: 1.0 })
        .await
    {
        Err(err) => println!("   guest: {err}"),
        Ok(out) => println!("   guest: unexpectedly ran: {}", out.text),
    }
    Ok(())
}
