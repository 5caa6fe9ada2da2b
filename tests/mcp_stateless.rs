//! Stateless MCP serving across instances: two instances of the CRM desk (`serve_mcp` over
//! HTTP, one app each, nothing shared) serve one client that alternates between them request
//! by request, as a load balancer without sticky sessions would, with the 2026-07-28 protocol
//! (no `initialize`, no session id): every request stands alone, authenticated on its own.
//! A pre-2026 client's session lives on the instance that opened it: the other answers `404`
//! (such clients need sticky sessions, see the guide). The real Python client, behind a TCP
//! balancer that sends each connection to the next instance, gets every call answered.
#[path = "mcp/env.rs"]
mod env;
#[path = "mcp/peer.rs"]
#[allow(dead_code)]
mod peer;
#[path = "mcp/raw_http.rs"]
#[allow(dead_code)]
mod raw_http;

use std::net::SocketAddr;
use std::sync::Arc;

use agboss_core::mcp::server::{BearerTokens, McpHttpServer};
use agboss_e2e::mcp_desk::{CrmRunLog, crm_app};
use serde_json::{Value, json};

async fn instance() -> (Arc<CrmRunLog>, McpHttpServer) {
    let log = Arc::new(CrmRunLog::new());
    let server = crm_app(Arc::clone(&log))
        .expect("app")
        .serve_mcp()
        .direct_chains()
        .authenticator(
            BearerTokens::new()
                .token("t-acme", "acme")
                .token("t-globex", "globex"),
        )
        .http("127.0.0.1:0")
        .await
        .expect("serves");
    (log, server)
}

/// One stateless 2026-07-28 request (`method`, `params`; `name` for `Mcp-Name`) to `addr`: its
/// JSON-RPC answer.
async fn stateless(
    addr: SocketAddr,
    token: &str,
    id: u64,
    method: &str,
    name: Option<&str>,
    params: Value,
) -> Value {
    raw_http::stateless_rpc(addr, token, id, method, name, params, json!({})).await
}

fn get(customer: &str) -> Value {
    json!({ "name": "get-customer-tool", "arguments": { "customerId": customer } })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_client_alternating_between_two_instances_needs_no_sticky_session() {
    let ((log_a, a), (log_b, b)) = (instance().await, instance().await);
    let (a_addr, b_addr) = (a.local_addr(), b.local_addr());

    let listed = stateless(a_addr, "t-acme", 1, "tools/list", None, json!({})).await;
    assert_eq!(
        listed["result"]["tools"].as_array().unwrap().len(),
        3,
        "{listed}"
    );
    let mut id = 2;
    for round in 0..3 {
        for (addr, log_of) in [(b_addr, "b"), (a_addr, "a")] {
            let answer = stateless(
                addr,
                "t-acme",
                id,
                "tools/call",
                Some("get-customer-tool"),
                get("ACME-7"),
            )
            .await;
            id += 1;
            let result = &answer["result"];
            assert_eq!(
                result["isError"], false,
                "round {round} on {log_of}: {answer}"
            );
            assert_eq!(result["structuredContent"]["customerId"], "ACME-7");
        }
    }
    // Each instance ran its half, as the tenant of each request's own token.
    assert_eq!(log_a.runs_of("get-customer-tool"), 3);
    assert_eq!(log_b.runs_of("get-customer-tool"), 3);
    let refused = stateless(
        b_addr,
        "t-globex",
        id,
        "tools/call",
        Some("get-customer-tool"),
        get("ACME-7"),
    )
    .await;
    assert_eq!(refused["result"]["isError"], true, "{refused}");
    assert_eq!(
        log_b.runs_of("get-customer-tool"),
        3,
        "globex's call did not run"
    );

    // A pre-2026 session opened on `a` is unknown on `b`.
    let answer = tokio::task::spawn_blocking(move || {
        let session = raw_http::initialize(a_addr, "t-acme");
        let list = json!({ "jsonrpc": "2.0", "id": 9, "method": "tools/list" }).to_string();
        let on = |addr| {
            raw_http::request(
                addr,
                "POST",
                &[
                    ("Authorization", "Bearer t-acme".to_owned()),
                    ("Mcp-Session-Id", session.clone()),
                    ("MCP-Protocol-Version", "2025-06-18".to_owned()),
                ],
                Some(&list),
            )
        };
        (on(a_addr), on(b_addr))
    })
    .await
    .unwrap();
    assert_eq!(answer.0.status, 200, "{:?}", answer.0);
    assert_eq!(answer.1.status, 404, "{:?}", answer.1);
    a.shutdown().await.expect("a shuts down");
    b.shutdown().await.expect("b shuts down");
}

/// A TCP balancer on loopback: each accepted connection goes to the next backend in turn (no
/// stickiness of any kind).
async fn round_robin(backends: [SocketAddr; 2]) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let mut next = 0usize;
        while let Ok((mut inbound, _)) = listener.accept().await {
            let backend = backends[next % 2];
            next += 1;
            tokio::spawn(async move {
                if let Ok(mut outbound) = tokio::net::TcpStream::connect(backend).await {
                    let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                }
            });
        }
    });
    addr
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_client_behind_a_round_robin_balancer() {
    let Some(python) = peer::python() else { return };
    let ((log_a, a), (log_b, b)) = (instance().await, instance().await);
    let balancer = round_robin([a.local_addr(), b.local_addr()]).await;
    let call = json!({ "op": "call", "name": "get-customer-tool", "arguments": { "customerId": "ACME-7" } });
    let spec = json!({ "http": { "url": format!("http://{balancer}/mcp"), "token": "t-acme" },
                       "mode": "auto", "ops": vec![call; 8] });
    let out = tokio::task::spawn_blocking(move || peer::run_client(&python, &spec))
        .await
        .unwrap();
    assert_eq!(out["protocol"], "2026-07-28", "{out}");
    for result in peer::results(&out) {
        assert_eq!(result["isError"], false, "{out}");
    }
    let (on_a, on_b) = (
        log_a.runs_of("get-customer-tool"),
        log_b.runs_of("get-customer-tool"),
    );
    assert_eq!(on_a + on_b, 8);
    // The client opened several connections, so both instances served some of its calls.
    assert!(on_a > 0 && on_b > 0, "a ran {on_a}, b ran {on_b}");
    a.shutdown().await.expect("a shuts down");
    b.shutdown().await.expect("b shuts down");
}
