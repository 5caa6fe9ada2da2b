//! Raw HTTP/1.1 against an MCP server on loopback (blocking; call it from `spawn_blocking`):
//! one request per connection, the answer read to its end.
use std::io::{Read as _, Write as _};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

/// An answer: its status, its headers (names lowercase) and its body as sent (SSE frames,
/// chunked encoding and all).
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Answer {
    /// The first value of header `name` (lowercase).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// One request to `/mcp` with `headers` (and the JSON `body`), on a new connection.
pub fn request(
    addr: SocketAddr,
    method: &str,
    headers: &[(&str, String)],
    body: Option<&str>,
) -> Answer {
    let mut stream = TcpStream::connect(addr).expect("connects");
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("read timeout");
    let mut head = format!(
        "{method} /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: application/json, text/event-stream\r\nConnection: close\r\n"
    );
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    if let Some(body) = body {
        head.push_str(&format!(
            "Content-Type: application/json\r\nContent-Length: {}\r\n",
            body.len()
        ));
    }
    head.push_str("\r\n");
    head.push_str(body.unwrap_or_default());
    stream.write_all(head.as_bytes()).expect("writes");
    read_answer(&mut stream)
}

/// Reads an answer to its end (or until the read timeout).
pub fn read_answer(stream: &mut TcpStream) -> Answer {
    let mut raw = Vec::new();
    let _ = stream.read_to_end(&mut raw);
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status line: {text:?}"));
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_lowercase(), v.trim().to_owned()))
        .collect();
    Answer {
        status,
        headers,
        body: body.to_owned(),
    }
}

/// Opens a session (the pre-2026 `initialize` handshake) as `token`: its id.
pub fn initialize(addr: SocketAddr, token: &str) -> String {
    let auth = ("Authorization", format!("Bearer {token}"));
    let init = serde_json::json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": { "protocolVersion": "2025-06-18", "capabilities": {},
                    "clientInfo": { "name": "raw", "version": "0" } } })
    .to_string();
    let answer = request(addr, "POST", std::slice::from_ref(&auth), Some(&init));
    assert_eq!(answer.status, 200, "{answer:?}");
    let session = answer
        .header("mcp-session-id")
        .unwrap_or_else(|| panic!("no session id: {answer:?}"))
        .to_owned();
    let initialized =
        serde_json::json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }).to_string();
    let answer = request(
        addr,
        "POST",
        &[
            auth,
            ("Mcp-Session-Id", session.clone()),
            ("MCP-Protocol-Version", "2025-06-18".to_owned()),
        ],
        Some(&initialized),
    );
    assert_eq!(answer.status, 202, "{answer:?}");
    session
}

/// One stateless 2026-07-28 JSON-RPC request (`method`, `params`; `name` for `Mcp-Name`) to
/// `addr` with bearer `token`, declaring `capabilities`: its JSON-RPC answer (the body is JSON
/// or one SSE event). Asserts `200`.
#[allow(dead_code)] // not every test that includes this file makes stateless requests
pub async fn stateless_rpc(
    addr: SocketAddr,
    token: &str,
    id: u64,
    method: &str,
    name: Option<&str>,
    mut params: serde_json::Value,
    capabilities: serde_json::Value,
) -> serde_json::Value {
    params["_meta"] = serde_json::json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": capabilities });
    let body =
        serde_json::json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params })
            .to_string();
    let mut headers = vec![
        ("Authorization", format!("Bearer {token}")),
        ("MCP-Protocol-Version", "2026-07-28".to_owned()),
        ("Mcp-Method", method.to_owned()),
    ];
    headers.extend(name.map(|n| ("Mcp-Name", n.to_owned())));
    let answer = tokio::task::spawn_blocking(move || request(addr, "POST", &headers, Some(&body)))
        .await
        .unwrap();
    assert_eq!(answer.status, 200, "{answer:?}");
    let json = answer
        .body
        .lines()
        .find_map(|l| {
            l.strip_prefix("data: ")
                .or(Some(l).filter(|l| l.starts_with('{')))
        })
        .unwrap_or_else(|| panic!("no JSON-RPC answer: {answer:?}"));
    serde_json::from_str(json).unwrap_or_else(|e| panic!("{e}: {json}"))
}
