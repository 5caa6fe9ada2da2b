//! The stdio MCP server of the MCP server tests (`tests/mcp_server.rs`): the CRM desk of
//! `agboss_e2e::mcp_desk`, served on stdin/stdout to the client that started it.
//!
//! `mcp-crm-server [--tenant <id>] [--agent <name>] [--runs-file <path>]`: every call runs as
//! `<id>`; `--agent` serves that agent's tools; every tool run and hook is appended to
//! `<path>`, one line each, so the test can tell what ran in this process.
use std::process::ExitCode;
use std::sync::Arc;

use agboss_e2e::mcp_desk::{CrmRunLog, crm_app};

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let (mut tenant, mut agent, mut runs_file) = (None, None, None);
    while let Some(flag) = args.next() {
        let value = args.next();
        match (flag.as_str(), value) {
            ("--tenant", Some(v)) => tenant = Some(v),
            ("--agent", Some(v)) => agent = Some(v),
            ("--runs-file", Some(v)) => runs_file = Some(v),
            (other, _) => {
                eprintln!("mcp-crm-server: unknown or incomplete argument `{other}`");
                return ExitCode::from(2);
            }
        }
    }
    let log = Arc::new(runs_file.map_or_else(CrmRunLog::new, CrmRunLog::to_file));
    let app = match crm_app(log) {
        Ok(app) => app,
        Err(e) => {
            eprintln!("mcp-crm-server: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut serve = match agent {
        Some(agent) => app.serve_mcp().agent(agent),
        None => app.serve_mcp().direct_chains(),
    };
    if let Some(tenant) = tenant {
        serve = serve.tenant(tenant);
    }
    match serve.stdio().await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mcp-crm-server: {e}");
            ExitCode::FAILURE
        }
    }
}
