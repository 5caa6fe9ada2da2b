//! MCP servers as tools of the app, against real peers: npm
//! `@modelcontextprotocol/server-everything` over stdio (installed at a pinned version by
//! `scripts/mcp-peers.sh`; `AGBOSS_TEST_MCP_EVERYTHING` names its entry script). The faults
//! of a misbehaving server are in `mcp_faults.rs`. With `CI` set and the peers missing, these
//! tests fail instead of skipping.
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use agboss_core::dto::Dto;
use agboss_core::mcp::client::{McpError, McpResult, McpServer, McpServerConfig};
use agboss_core::prelude::*;
use agboss_testing::ScriptedModel;
use agboss_testing::scripted::{ScriptedToolCall, Turn};
use serde_json::json;

#[path = "../mcp/env.rs"]
mod env;

mod agents;
mod owned_metas;
mod remote_tools;
mod servers;

// ---- the app's components ------------------------------------------------------------------

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct SumDto {
    #[number(prompt = "First number")]
    pub a: f64,
    #[number(prompt = "Second number")]
    pub b: f64,
}

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct SumTextDto {
    #[text(prompt = "The sentence")]
    pub text: String,
}

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct WeatherDto {
    #[number(prompt = "Degrees")]
    pub temperature: f64,
    #[text(prompt = "Conditions")]
    pub conditions: String,
    #[number(prompt = "Percent")]
    pub humidity: f64,
}

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct CityDto {
    #[text(prompt = "City")]
    pub location: String,
}

/// Counts every before-hook it runs.
#[injectable(provided)]
#[derive(Default)]
pub struct Hooks(AtomicUsize);

/// Tenant ACL: `evil` is blocked from every remote tool; sums over 1000 are sent back to the
/// model to repair.
#[tool_interceptor(name = "mcp-acl-tool-interceptor", description = "Tenant ACL",
                   deps = [TenantContext, Hooks])]
pub struct McpAclToolInterceptor {
    tenant: TenantContext,
    hooks: Arc<Hooks>,
}

impl BeforeToolCall for McpAclToolInterceptor {
    async fn before_tool_call(
        &self,
        call: &ToolCallContext<'_>,
    ) -> Result<ToolCallDecision, InterceptorError> {
        self.hooks.0.fetch_add(1, Ordering::SeqCst);
        if self.tenant.tenant_id() == "evil" {
            return Ok(ToolCallDecision::block(
                "tenant evil may not call remote tools",
            ));
        }
        if let Some(a) = call.input()["a"].as_f64()
            && a > 1000.0
        {
            return Ok(ToolCallDecision::reply_to_model(
                "`a` must be at most 1000; ask for a smaller number",
            ));
        }
        Ok(ToolCallDecision::allow())
    }
}

/// Upper-cases the remote text on the way back.
#[tool_interceptor(
    name = "shout-tool-interceptor",
    description = "Upper-cases echo results"
)]
pub struct ShoutToolInterceptor;

impl AfterToolCall for ShoutToolInterceptor {
    async fn after_tool_call(
        &self,
        call: ToolCallResultContext<'_>,
    ) -> Result<ToolOutput, InterceptorError> {
        let mut out: McpResult = call.into_output()?;
        out.text = out.text.to_uppercase();
        Ok(out.into())
    }
}

#[mcp_tool(name = "get-sum-tool", description = "Adds two numbers", server = "everything",
           remote = "get-sum", input = SumDto, output = SumTextDto,
           tool_interceptors = [McpAclToolInterceptor])]
pub struct GetSumTool;

#[mcp_tool(name = "echo-tool", description = "Echoes a message", server = "everything",
           remote = "echo", tool_interceptors = [McpAclToolInterceptor, ShoutToolInterceptor])]
pub struct EchoTool;

#[mcp_tool(name = "weather-tool", description = "Weather of a city", server = "everything",
           remote = "get-structured-content", input = CityDto, output = WeatherDto)]
pub struct WeatherTool;

#[mcp_tool(
    name = "raw-weather-tool",
    description = "Weather of a city, remote schemas",
    server = "everything",
    remote = "get-structured-content"
)]
pub struct RawWeatherTool;

#[mcp_tool(
    name = "slow-tool",
    description = "A long operation",
    server = "everything",
    remote = "trigger-long-running-operation",
    timeout_ms = 5000
)]
pub struct SlowTool;

#[agent(name = "mcp-agent", description = "Uses remote tools", instructions = "Use the tools.",
        tools = [GetSumTool], mcp_servers = ["everything"],
        tool_interceptors = [McpAclToolInterceptor])]
pub struct McpAgent;

fn app(server: &McpServer, hooks: &Arc<Hooks>) -> App {
    App::builder()
        .mcp_server(server.clone())
        .provide_arc(Arc::clone(hooks))
        .tool::<GetSumTool>()
        .tool::<EchoTool>()
        .tool::<WeatherTool>()
        .tool::<RawWeatherTool>()
        .tool::<SlowTool>()
        .build()
        .expect("the app builds")
}
