//! Faults of MCP servers, against a misbehaving one (`tests/mcp/fault_server.py`, Python's
//! standard library only): a server that cannot start or initialize, `isError` results, a
//! process that dies mid-call, hangs, and writes what is not JSON-RPC. Each is a typed error,
//! and the next call is served on a new connection; and the real server-everything killed
//! mid-call over streamable HTTP.
#[path = "mcp/env.rs"]
mod env;

use std::sync::Arc;
use std::time::{Duration, Instant};

use agboss_core::error::ToolCallErrorKind;
use agboss_core::mcp::client::{McpError, McpServer, McpServerConfig};
use agboss_core::prelude::*;
use agboss_testing::ScriptedModel;
use agboss_testing::scripted::{ScriptedToolCall, Turn};
use serde_json::json;

/// The venv's python when the peers are installed, else the system's (the fault server needs
/// nothing else).
fn python() -> String {
    std::env::var("AGBOSS_TEST_MCP_PYTHON").unwrap_or_else(|_| "python3".into())
}

fn fault_config(extra: &[&str]) -> McpServerConfig {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/mcp/fault_server.py");
    McpServerConfig::stdio("faults", python())
        .arg(script)
        .args(extra.iter().copied())
        .call_timeout(Duration::from_secs(10))
        .connect_timeout(Duration::from_secs(10))
}

#[tokio::test]
async fn a_server_that_cannot_start_or_initialize_is_an_error_naming_it() {
    let err = McpServer::connect(McpServerConfig::stdio("ghost", "/no/such/mcp-server"))
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            McpError::Start {
                server: "ghost",
                ..
            }
        ),
        "{err}"
    );

    let err = McpServer::connect(fault_config(&["exit-at-start"]))
        .await
        .unwrap_err();
    let text = err.to_string();
    assert!(
        matches!(
            err,
            McpError::Initialize {
                server: "faults",
                ..
            }
        ),
        "{text}"
    );
    assert!(
        text.contains("refusing to start"),
        "the server's stderr is in the error: {text}"
    );
}

#[mcp_tool(
    name = "fault-ok-tool",
    description = "Answers",
    server = "faults",
    remote = "ok"
)]
pub struct FaultOkTool;
#[mcp_tool(
    name = "fault-fail-tool",
    description = "isError",
    server = "faults",
    remote = "fail"
)]
pub struct FaultFailTool;
#[mcp_tool(
    name = "fault-die-tool",
    description = "Dies",
    server = "faults",
    remote = "die"
)]
pub struct FaultDieTool;
#[mcp_tool(
    name = "fault-hang-tool",
    description = "Hangs",
    server = "faults",
    remote = "hang",
    timeout_ms = 300
)]
pub struct FaultHangTool;
#[mcp_tool(
    name = "fault-garbage-tool",
    description = "Not JSON-RPC",
    server = "faults",
    remote = "garbage",
    timeout_ms = 300
)]
pub struct FaultGarbageTool;

#[agent(name = "fault-agent", description = "Meets every fault", instructions = "Go.",
        tools = [FaultOkTool, FaultFailTool, FaultDieTool, FaultHangTool, FaultGarbageTool])]
pub struct FaultAgent;

fn pid_of(text: &str) -> String {
    text.split("pid ")
        .nth(1)
        .unwrap()
        .trim_end_matches(|c: char| !c.is_ascii_digit())
        .to_owned()
}

#[tokio::test]
async fn faults_are_typed_errors_and_the_connection_is_re_established() {
    let server = McpServer::connect(fault_config(&[]))
        .await
        .expect("the fault server connects");
    let app = App::builder()
        .mcp_server(server.clone())
        .agent::<FaultAgent>()
        .build()
        .unwrap();
    let ok = || async {
        app.tool_by_name("fault-ok-tool")
            .unwrap()
            .invoke_json("{}")
            .await
    };
    let first = pid_of(&ok().await.unwrap());

    // isError: a tool error carrying the remote text.
    let err = app
        .tool_by_name("fault-fail-tool")
        .unwrap()
        .invoke_json("{}")
        .await
        .unwrap_err();
    let ToolCallErrorKind::ToolFailed { error, .. } = err.kind() else {
        panic!("{err:?}")
    };
    let mcp = error.source_error().downcast_ref::<McpError>().unwrap();
    assert!(
        matches!(mcp, McpError::ToolFailed { message, .. } if message == "the database is down"),
        "{mcp}"
    );

    // The process dies mid-call: a typed error, then a new process serves the next call.
    let err = app
        .tool_by_name("fault-die-tool")
        .unwrap()
        .invoke_json("{}")
        .await
        .unwrap_err();
    assert!(
        matches!(err.kind(), ToolCallErrorKind::ToolFailed { .. }),
        "{err:?}"
    );
    assert!(!server.is_connected(), "the lost session is dropped");
    let second = pid_of(&ok().await.unwrap());
    assert!(server.is_connected());
    assert_ne!(first, second, "the connection was re-established");

    // It hangs past the tool's time limit; then not JSON-RPC at all.
    for tool in ["fault-hang-tool", "fault-garbage-tool"] {
        let err = app
            .tool_by_name(tool)
            .unwrap()
            .invoke_json("{}")
            .await
            .unwrap_err();
        assert!(
            matches!(
                err.kind(),
                ToolCallErrorKind::Timeout { .. } | ToolCallErrorKind::ToolFailed { .. }
            ),
            "{tool}: {err:?}"
        );
        let next = pid_of(&ok().await.unwrap());
        assert!(!next.is_empty(), "{tool}: the next call is served");
    }

    // In an agent loop, every fault is an observation the model reads and the loop goes on.
    let model = Arc::new(ScriptedModel::new([
        Turn::tool_calls([ScriptedToolCall::new("fault-die-tool", json!({})).with_id("d")]),
        Turn::tool_calls([ScriptedToolCall::new("fault-fail-tool", json!({})).with_id("f")]),
        Turn::tool_calls([ScriptedToolCall::new("fault-ok-tool", json!({})).with_id("o")]),
        Turn::text("recovered"),
    ]));
    let app = App::builder()
        .mcp_server(server)
        .agent::<FaultAgent>()
        .shared_model(model)
        .build()
        .unwrap();
    let (events, out) = app
        .stream(Target::agent::<FaultAgent>(), "go", RunContext::new())
        .collect_all()
        .await;
    assert_eq!(out.unwrap().text, "recovered");
    let errors = events
        .iter()
        .filter(|e| matches!(e, RunEvent::ToolResult { is_error: true, .. }))
        .count();
    assert_eq!(errors, 2);
}

#[mcp_tool(
    name = "http-slow-tool",
    description = "A long operation, over HTTP",
    server = "everything-http",
    remote = "trigger-long-running-operation"
)]
pub struct HttpSlowTool;

#[tokio::test]
async fn a_killed_http_server_is_a_lost_connection_within_seconds() {
    let Some(entry) = env::everything_entry() else {
        return;
    };
    let (mut child, url) = env::everything_over_http(&entry).await;
    let server = McpServer::connect(
        McpServerConfig::http("everything-http", &url).call_timeout(Duration::from_secs(20)),
    )
    .await
    .expect("connects over HTTP");
    let app = App::builder()
        .mcp_server(server.clone())
        .tool::<HttpSlowTool>()
        .build()
        .unwrap();
    let started = Instant::now();
    let tool = app.tool_by_name("http-slow-tool").unwrap();
    let call = tool.invoke_json(r#"{"duration": 15, "steps": 15}"#);
    let kill = async {
        tokio::time::sleep(Duration::from_secs(1)).await;
        child.start_kill().expect("kills server-everything");
    };
    let (result, ()) = tokio::join!(call, kill);
    let elapsed = started.elapsed();
    let err = result.unwrap_err();
    let ToolCallErrorKind::ToolFailed { error, .. } = err.kind() else {
        panic!("{err:?} after {elapsed:?}")
    };
    let mcp = error.source_error().downcast_ref::<McpError>().unwrap();
    assert!(
        matches!(
            mcp,
            McpError::ConnectionLost {
                server: "everything-http",
                ..
            }
        ),
        "{mcp} after {elapsed:?}"
    );
    // Killed after 1 s; the reconnection gives up after a few seconds, not the 20 s limit.
    eprintln!("the kill was noticed after {elapsed:?}");
    assert!(
        elapsed < Duration::from_secs(8),
        "noticed after {elapsed:?}"
    );
    assert!(!server.is_connected(), "the lost session is dropped");
}
