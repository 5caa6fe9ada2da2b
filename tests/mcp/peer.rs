//! The real MCP client of the server tests: `tests/mcp/client.py` on the Python `mcp` package
//! of `AGBOSS_TEST_MCP_PYTHON` (`bash scripts/mcp-peers.sh install` prints it; `scripts/test.sh`
//! sets it). Without it a test fails when `CI` is set and is skipped otherwise.
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// The venv's python, or `None` (skip) outside CI.
pub fn python() -> Option<PathBuf> {
    super::env::peer_var("AGBOSS_TEST_MCP_PYTHON").map(PathBuf::from)
}

/// Runs the client on `spec` (see `tests/mcp/client.py`) and returns what it printed, as JSON.
/// Blocking: call it from `spawn_blocking` while a server runs on the runtime.
pub fn run_client(python: &std::path::Path, spec: &Value) -> Value {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/mcp/client.py");
    let mut child = Command::new(python)
        .arg(script)
        .arg(spec.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the Python MCP client starts");
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if child.try_wait().expect("try_wait").is_some() {
            break;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("the Python MCP client did not finish in 60 s (spec {spec})");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().expect("the client's output");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "the Python MCP client failed ({}):\n{stderr}\nstdout: {stdout}",
        out.status
    );
    serde_json::from_str(stdout.trim())
        .unwrap_or_else(|e| panic!("the client printed no JSON ({e}):\n{stdout}\nstderr: {stderr}"))
}

/// The `results` of a client run, which must not have been refused.
pub fn results(out: &Value) -> &Vec<Value> {
    out["results"]
        .as_array()
        .unwrap_or_else(|| panic!("no results (refused?): {out}"))
}

/// The one text of a call result.
pub fn text(result: &Value) -> &str {
    result["texts"][0]
        .as_str()
        .unwrap_or_else(|| panic!("no text content: {result}"))
}
