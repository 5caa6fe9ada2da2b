//! The installed MCP peers of the tests (`bash scripts/mcp-peers.sh install` prints their
//! variables; `scripts/test.sh` sets them): a variable missing fails the test when `CI` is set
//! and skips it otherwise.

/// The value of `var`, or `None` (skip) outside CI.
pub fn peer_var(var: &str) -> Option<String> {
    match std::env::var(var) {
        Ok(value) if !value.trim().is_empty() => Some(value.trim().to_owned()),
        _ if std::env::var_os("CI").is_some() => panic!(
            "{var} is not set: CI runs the MCP tests against the installed peers (bash scripts/test.sh)"
        ),
        _ => {
            eprintln!(
                "skipped: {var} not set (run `eval \"$(bash scripts/mcp-peers.sh install)\"`, or bash scripts/test.sh)"
            );
            None
        }
    }
}

/// The entry script of the installed server-everything.
#[allow(dead_code)]
pub fn everything_entry() -> Option<String> {
    peer_var("AGBOSS_TEST_MCP_EVERYTHING")
}

/// server-everything over stdio, as the tests configure it.
#[allow(dead_code)]
pub fn everything_config(entry: &str) -> agboss_core::mcp::client::McpServerConfig {
    agboss_core::mcp::client::McpServerConfig::stdio("everything", "node")
        .args([entry, "stdio"])
        .call_timeout(std::time::Duration::from_secs(20))
}

/// server-everything, connected.
#[allow(dead_code)]
pub async fn everything() -> Option<agboss_core::mcp::client::McpServer> {
    let entry = everything_entry()?;
    Some(
        agboss_core::mcp::client::McpServer::connect(everything_config(&entry))
            .await
            .expect("server-everything connects"),
    )
}

/// server-everything over streamable HTTP on a free loopback port, killed when dropped.
#[allow(dead_code)]
pub async fn everything_over_http(entry: &str) -> (tokio::process::Child, String) {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let mut child = tokio::process::Command::new("node")
        .args([entry, "streamableHttp"])
        .env("PORT", port.to_string())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("node starts");
    for _ in 0..100 {
        if tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_ok()
        {
            return (child, format!("http://127.0.0.1:{port}/mcp"));
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let _ = child.kill().await;
    panic!("server-everything did not listen on {port}");
}
