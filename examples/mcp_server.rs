//! Serves the CRM desk of `agboss_e2e::mcp_desk` as an MCP server: every inbound `tools/call`
//! runs the whole guarded pipeline (the tenant ACL's `reply_to_model`, the deletion ACL's
//! block, the e-mail PII policy).
//!
//! ```sh
//! cargo run --example mcp_server                              # stdio, as tenant acme
//! cargo run --example mcp_server -- --http 127.0.0.1:8080     # streamable HTTP at /mcp
//! cargo run --example mcp_server -- --http 127.0.0.1:8080 --agent crm-agent
//! ```
//!
//! Over HTTP each request runs as the tenant of its bearer token: `t-acme` (tenant `acme`) or
//! `t-globex` (tenant `globex`, which may not delete customers); a request without one is
//! refused with 401 before any hook runs. Over stdio, point an MCP client at the built binary
//! (`target/debug/examples/mcp_server`); it prints nothing on stdout but the protocol.
use std::process::ExitCode;
use std::sync::Arc;

use agboss_core::mcp::server::BearerTokens;
use agboss_e2e::mcp_desk::{CrmRunLog, crm_app};

#[tokio::main]
async fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let value_of = |flag: &str| {
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let app = match crm_app(Arc::new(CrmRunLog::new())) {
        Ok(app) => app,
        Err(e) => {
            eprintln!("mcp_server: {e}");
            return ExitCode::FAILURE;
        }
    };
    // Which chain a served tool runs is a choice: an agent's path, or the direct chains.
    let serve = match value_of("--agent") {
        Some(agent) => app.serve_mcp().agent(agent),
        None => app.serve_mcp().direct_chains(),
    };
    let result = match value_of("--http") {
        None => serve.tenant("acme").stdio().await,
        Some(addr) => {
            let tokens = BearerTokens::new()
                .token("t-acme", "acme")
                .token("t-globex", "globex");
            match serve.authenticator(tokens).http(addr).await {
                Ok(server) => {
                    // stderr: over stdio, stdout belongs to the protocol.
                    eprintln!(
                        "serving MCP at {} (Authorization: Bearer t-acme | t-globex); Ctrl-C stops",
                        server.url()
                    );
                    server.wait().await
                }
                Err(e) => Err(e),
            }
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mcp_server: {e}");
            ExitCode::FAILURE
        }
    }
}
