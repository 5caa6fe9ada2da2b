//! `App::serve_mcp` against hostile clients, in raw HTTP/1.1 on loopback and raw JSON-RPC
//! lines over stdio: a session is bound to the tenant and principal that opened it (another
//! tenant's valid token cannot use, read or end it); slow or idle clients are bounded (header
//! and body timeouts, a connection limit) so that a legitimate call still gets through; a key
//! twice in one object is refused, not decoded as one of the two.
#[path = "mcp/raw_http.rs"]
mod raw_http;

use std::io::{Read as _, Write as _};
use std::net::TcpStream;
use std::sync::Arc;
use std::time::{Duration, Instant};

use agboss_core::mcp::server::{BearerTokens, McpHttpServer};
use agboss_e2e::mcp_desk::{CrmRunLog, crm_app};
use raw_http::{Answer, initialize, read_answer, request};
use serde_json::json;

/// The CRM app over HTTP with three tokens: two of acme (two principals of one tenant) and
/// one of globex.
async fn crm_server() -> (Arc<CrmRunLog>, McpHttpServer) {
    let log = Arc::new(CrmRunLog::new());
    let server = crm_app(Arc::clone(&log))
        .expect("app")
        .serve_mcp()
        .direct_chains()
        .authenticator(
            BearerTokens::new()
                .token("t-acme", "acme")
                .token("t-acme-2", "acme")
                .token("t-globex", "globex"),
        )
        .http("127.0.0.1:0")
        .await
        .expect("serves");
    (log, server)
}

fn tools_call(id: u64, customer: &str) -> String {
    json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": { "name": "get-customer-tool", "arguments": { "customerId": customer } } })
    .to_string()
}

fn tools_list(id: u64) -> String {
    json!({ "jsonrpc": "2.0", "id": id, "method": "tools/list" }).to_string()
}

/// One request on `session` as `token`, off the runtime.
async fn on_session(
    addr: std::net::SocketAddr,
    method: &'static str,
    token: &'static str,
    session: &str,
    body: Option<String>,
) -> Answer {
    let session = session.to_owned();
    tokio::task::spawn_blocking(move || {
        let headers = [
            ("Authorization", format!("Bearer {token}")),
            ("Mcp-Session-Id", session),
            ("MCP-Protocol-Version", "2025-06-18".to_owned()),
        ];
        request(addr, method, &headers, body.as_deref())
    })
    .await
    .expect("client thread")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_is_bound_to_the_tenant_and_principal_that_opened_it() {
    let (log, server) = crm_server().await;
    let addr = server.local_addr();
    let session = tokio::task::spawn_blocking(move || initialize(addr, "t-acme"))
        .await
        .unwrap();

    // globex's valid token with acme's session id: refused as an unknown session (404), for
    // every method, and acme's session is untouched.
    for (method, body) in [
        ("DELETE", None),
        ("POST", Some(tools_call(2, "ACME-7"))),
        ("POST", Some(tools_list(3))),
        ("GET", None),
    ] {
        let answer = on_session(addr, method, "t-globex", &session, body).await;
        assert_eq!(answer.status, 404, "{method} as globex: {answer:?}");
    }
    // Another principal of the same tenant is refused too.
    let answer = on_session(addr, "DELETE", "t-acme-2", &session, None).await;
    assert_eq!(answer.status, 404, "{answer:?}");
    assert!(log.entries().is_empty(), "a hook ran: {:?}", log.entries());

    // acme's session still serves acme.
    let answer = on_session(
        addr,
        "POST",
        "t-acme",
        &session,
        Some(tools_call(4, "ACME-7")),
    )
    .await;
    assert_eq!(answer.status, 200, "{answer:?}");
    assert!(answer.body.contains("ACME-7"), "{answer:?}");
    assert_eq!(log.runs_of("get-customer-tool"), 1);

    // acme ends it; then it is gone for acme too.
    let answer = on_session(addr, "DELETE", "t-acme", &session, None).await;
    assert_eq!(answer.status, 202, "{answer:?}");
    let answer = on_session(addr, "POST", "t-acme", &session, Some(tools_list(5))).await;
    assert_eq!(answer.status, 404, "{answer:?}");
    server.shutdown().await.expect("shuts down");
}

/// Reads until the peer closes the connection (or `limit` passes): whether it closed.
fn closed_within(stream: &mut TcpStream, limit: Duration) -> bool {
    stream.set_read_timeout(Some(limit)).expect("read timeout");
    let mut buf = [0u8; 512];
    loop {
        match stream.read(&mut buf) {
            Ok(0) => return true,
            Ok(_) => continue,
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => return true,
            Err(_) => return false,
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_and_slow_clients_are_bounded_and_a_legitimate_call_still_succeeds() {
    const LIMIT: usize = 8;
    let log = Arc::new(CrmRunLog::new());
    let server = crm_app(Arc::clone(&log))
        .expect("app")
        .serve_mcp()
        .direct_chains()
        .authenticator(BearerTokens::new().token("t-acme", "acme"))
        .header_timeout(Duration::from_secs(1))
        .body_timeout(Duration::from_secs(1))
        .max_body_bytes(4096)
        .max_connections(LIMIT)
        .http("127.0.0.1:0")
        .await
        .expect("serves");
    let addr = server.local_addr();
    let started = Instant::now();
    let (call, mut idle) = tokio::task::spawn_blocking(move || {
        // Twice as many idle, unauthenticated connections as the server serves at once.
        let idle: Vec<TcpStream> = (0..2 * LIMIT)
            .map(|_| TcpStream::connect(addr).expect("connects"))
            .collect();
        // A legitimate client: a session and a call, each request on a new connection.
        let session = initialize(addr, "t-acme");
        let headers = [
            ("Authorization", "Bearer t-acme".to_owned()),
            ("Mcp-Session-Id", session),
            ("MCP-Protocol-Version", "2025-06-18".to_owned()),
        ];
        let call = request(addr, "POST", &headers, Some(&tools_call(2, "ACME-7")));
        (call, idle)
    })
    .await
    .unwrap();
    assert_eq!(call.status, 200, "{call:?}");
    assert!(call.body.contains("ACME-7"), "{call:?}");
    let waited = started.elapsed();
    assert!(waited < Duration::from_secs(6), "the call took {waited:?}");

    // Every idle connection was closed by the server after the header timeout.
    let all_closed = tokio::task::spawn_blocking(move || {
        idle.iter_mut()
            .all(|s| closed_within(s, Duration::from_secs(4)))
    })
    .await
    .unwrap();
    assert!(all_closed, "an idle connection is still open");

    // A body that trickles in slower than the body timeout: 408, connection closed.
    let slow = tokio::task::spawn_blocking(move || {
        let mut stream = TcpStream::connect(addr).expect("connects");
        let body = tools_call(3, "ACME-7");
        write!(
            stream,
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer t-acme\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n\r\n",
            body.len()
        )
        .expect("writes");
        let sent = Instant::now();
        for byte in body.as_bytes().iter().take(8) {
            if stream.write_all(&[*byte]).is_err() {
                break;
            }
            std::thread::sleep(Duration::from_millis(250));
        }
        (read_answer(&mut stream), sent.elapsed())
    })
    .await
    .unwrap();
    assert_eq!(slow.0.status, 408, "{:?}", slow.0);
    assert!(slow.1 < Duration::from_secs(4), "{:?}", slow.1);

    // A body over the size limit: 413, without reading it.
    let big = format!(
        r#"{{"jsonrpc":"2.0","id":4,"method":"tools/list","pad":"{}"}}"#,
        "x".repeat(8192)
    );
    let answer = tokio::task::spawn_blocking(move || {
        request(
            addr,
            "POST",
            &[("Authorization", "Bearer t-acme".to_owned())],
            Some(&big),
        )
    })
    .await
    .unwrap();
    assert_eq!(answer.status, 413, "{answer:?}");
    assert_eq!(
        log.runs_of("get-customer-tool"),
        1,
        "only the legitimate call ran"
    );
    server.shutdown().await.expect("shuts down");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_twice_in_the_arguments_is_refused_over_mcp() {
    let (log, server) = crm_server().await;
    let addr = server.local_addr();
    let session = tokio::task::spawn_blocking(move || initialize(addr, "t-acme"))
        .await
        .unwrap();
    // rmcp would keep the last `customerId`; the first is null, the second valid.
    let body = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get-customer-tool","arguments":{"customerId":null,"customerId":"ACME-7"}}}"#;
    let answer = on_session(addr, "POST", "t-acme", &session, Some(body.to_owned())).await;
    assert_eq!(answer.status, 200, "{answer:?}");
    assert!(answer.body.contains(r#""isError":true"#), "{answer:?}");
    assert!(
        answer
            .body
            .contains("$.customerId: the key `customerId` appears more than once"),
        "{answer:?}"
    );
    // A key twice elsewhere in the request: refused before rmcp reads it.
    let body = r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"get-customer-tool","arguments":{"customerId":"ACME-7"},"_meta":{"k":1,"k":2}}}"#;
    let answer = on_session(addr, "POST", "t-acme", &session, Some(body.to_owned())).await;
    assert_eq!(answer.status, 400, "{answer:?}");
    assert!(log.entries().is_empty(), "a hook ran: {:?}", log.entries());
    // The same call once: it runs.
    let answer = on_session(
        addr,
        "POST",
        "t-acme",
        &session,
        Some(tools_call(4, "ACME-7")),
    )
    .await;
    assert!(answer.body.contains(r#""isError":false"#), "{answer:?}");
    assert_eq!(log.runs_of("get-customer-tool"), 1);
    server.shutdown().await.expect("shuts down");
}

#[test]
fn a_key_twice_in_the_arguments_is_refused_over_stdio() {
    use std::io::{BufRead as _, BufReader};
    use std::process::{Command, Stdio};

    let mut child = Command::new(env!("CARGO_BIN_EXE_mcp-crm-server"))
        .args(["--tenant", "acme"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("the stdio server starts");
    let mut stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let init = json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": { "protocolVersion": "2025-06-18", "capabilities": {},
                    "clientInfo": { "name": "raw", "version": "0" } } });
    for line in [
        init.to_string(),
        json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }).to_string(),
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get-customer-tool","arguments":{"customerId":null,"customerId":"ACME-7"}}}"#.to_owned(),
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"get-customer-tool","arguments":{"customerId":"ACME-7"},"_meta":{"k":1,"k":2}}}"#.to_owned(),
        tools_call(4, "ACME-7"),
    ] {
        writeln!(stdin, "{line}").expect("writes");
    }
    let mut answers = std::collections::HashMap::new();
    while answers.len() < 4 {
        let line = rx
            .recv_timeout(Duration::from_secs(20))
            .unwrap_or_else(|_| panic!("no answer in 20 s; got {answers:?}"));
        let message: serde_json::Value = serde_json::from_str(&line).expect("JSON-RPC");
        if let Some(id) = message["id"].as_u64() {
            answers.insert(id, message);
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    let refused = &answers[&2]["result"];
    assert_eq!(refused["isError"], true, "{refused}");
    let text = refused["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains("$.customerId: the key `customerId` appears more than once"),
        "{text}"
    );
    assert_eq!(answers[&3]["error"]["code"], -32601, "{}", answers[&3]);
    assert_eq!(answers[&4]["result"]["isError"], false, "{}", answers[&4]);
}
