//! `App::serve_mcp` against a real MCP client, the Python `mcp` package (pinned in
//! `scripts/mcp/requirements.txt`; `tests/mcp/client.py` drives it), over stdio (the client
//! starts `src/bin/mcp-crm-server.rs`) and over streamable HTTP (a server this test binds on
//! an ephemeral loopback port): the listed schemas, a passing call, a `reply_to_model` and a
//! block whose tool did not run, a safe failure, PII masking, a tenant ACL decided from the
//! bearer token, and requests refused without valid credentials before any hook ran.
#[path = "mcp/env.rs"]
mod env;
#[path = "mcp/peer.rs"]
mod peer;

use std::io::{Read as _, Write as _};
use std::path::PathBuf;
use std::sync::Arc;

use agboss_core::dto::Dto;
use agboss_core::mcp::server::{BearerTokens, McpServerError};
use agboss_core::{App, ToolError, ToolHandler, tool};
use agboss_e2e::mcp_desk::{
    CrmRunLog, CustomerQueryDto, EXPORT_FAILURE, ExportRequestDto, crm_app,
};
use peer::{python, results, run_client, text};
use serde_json::{Value, json};

const SERVER: &str = env!("CARGO_BIN_EXE_mcp-crm-server");

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("agboss-mcp-server-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let path = dir.join(name);
    let _ = std::fs::remove_file(&path);
    path
}

fn lines(path: &PathBuf) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

fn call(name: &str, arguments: Value) -> Value {
    json!({ "op": "call", "name": name, "arguments": arguments })
}

fn stdio(args: &[&str], mode: &str, ops: Vec<Value>) -> Value {
    json!({ "stdio": { "command": SERVER, "args": args }, "mode": mode, "ops": ops })
}

#[test]
fn stdio_lists_the_schemas_and_every_call_runs_the_pipeline() {
    let Some(python) = python() else { return };
    let runs = scratch("stdio-runs.txt");
    let runs_arg = runs.to_str().expect("utf-8 path");
    let out = run_client(
        &python,
        &stdio(
            &["--tenant", "acme", "--runs-file", runs_arg],
            "auto",
            vec![
                json!({ "op": "list" }),
                call("get-customer-tool", json!({ "customerId": "ACME-7" })),
                call("get-customer-tool", json!({ "customerId": "GLOBEX-7" })),
                call("export-customers-tool", json!({ "format": "csv" })),
                call("get-customer-tool", json!({ "customerId": 7 })),
                call("no-such-tool", json!({})),
            ],
        ),
    );
    // The 2026-07-28 discovery (the client's default) is what rmcp negotiated.
    assert_eq!(out["protocol"], "2026-07-28", "{out}");
    let r = results(&out);

    // tools/list: every tool of the direct chains with its input DTO's schema.
    let tools = r[0]["tools"].as_array().expect("tools");
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "get-customer-tool",
            "delete-customer-tool",
            "export-customers-tool"
        ]
    );
    assert_eq!(tools[0]["description"], "Loads a customer record by ID");
    assert_eq!(tools[0]["inputSchema"], CustomerQueryDto::json_schema());
    assert_eq!(tools[2]["inputSchema"], ExportRequestDto::json_schema());
    // Every path masks e-mails, so no tool promises its output DTO's shape.
    assert!(
        tools.iter().all(|t| t["outputSchema"].is_null()),
        "{tools:?}"
    );

    // A passing call: the record, its e-mail masked by the application's PII policy.
    assert_eq!(r[1]["isError"], false, "{}", r[1]);
    assert_eq!(r[1]["structured"]["customerId"], "ACME-7");
    assert_eq!(r[1]["structured"]["email"], "[REDACTED:email]");
    assert!(!text(&r[1]).contains("ann@example.com"));
    assert_eq!(
        serde_json::from_str::<Value>(text(&r[1])).unwrap(),
        r[1]["structured"]
    );

    // reply_to_model: an error result with the interceptor's message.
    assert_eq!(r[2]["isError"], true);
    assert_eq!(
        text(&r[2]),
        "Customer GLOBEX-7 does not belong to tenant acme. Ask the user to confirm the customer ID."
    );
    // A tool's own failure: a safe text, nothing of the error.
    assert_eq!(r[3]["isError"], true);
    assert!(
        text(&r[3]).starts_with("The tool `export-customers-tool` failed (tool error)."),
        "{}",
        r[3]
    );
    for secret in ["s3cret", "postgres://", "10.0.0.5", EXPORT_FAILURE] {
        assert!(!text(&r[3]).contains(secret), "{}", r[3]);
    }
    // Invalid arguments: rejected before any hook, with the field's path.
    assert_eq!(r[4]["isError"], true);
    assert!(
        text(&r[4]).contains("$.customerId: expected a string"),
        "{}",
        r[4]
    );
    // An unknown tool is a JSON-RPC error.
    assert_eq!(r[5]["jsonrpcError"]["code"], -32602, "{}", r[5]);

    // In the server's process: the lookup ran once (not for the reply), the export once, and
    // the invalid call reached no hook.
    assert_eq!(
        lines(&runs),
        [
            "hook:customer-ownership-tool-interceptor",
            "run:get-customer-tool",
            "hook:customer-ownership-tool-interceptor",
            "hook:customer-ownership-tool-interceptor",
            "run:export-customers-tool",
        ]
    );
}

#[test]
fn stdio_blocks_and_serves_an_agents_path() {
    let Some(python) = python() else { return };
    // As globex, over the pre-2026 initialize handshake: the deletion is blocked.
    let runs = scratch("stdio-block-runs.txt");
    let out = run_client(
        &python,
        &stdio(
            &["--tenant", "globex", "--runs-file", runs.to_str().unwrap()],
            "legacy",
            vec![call(
                "delete-customer-tool",
                json!({ "customerId": "GLOBEX-7" }),
            )],
        ),
    );
    assert_ne!(out["protocol"], "2026-07-28", "{out}");
    let r = results(&out);
    assert_eq!(r[0]["isError"], true);
    assert_eq!(text(&r[0]), "Tenant globex may not delete customers.");
    assert_eq!(
        lines(&runs),
        [
            "hook:customer-ownership-tool-interceptor",
            "hook:deletion-acl-tool-interceptor",
        ],
        "the blocked tool did not run"
    );

    // `--agent crm-agent`: only the agent's tools, on its path (its phone policy masks too).
    let out = run_client(
        &python,
        &stdio(
            &["--tenant", "acme", "--agent", "crm-agent"],
            "auto",
            vec![
                json!({ "op": "list" }),
                call("get-customer-tool", json!({ "customerId": "ACME-7" })),
                call("delete-customer-tool", json!({ "customerId": "ACME-7" })),
            ],
        ),
    );
    let r = results(&out);
    let names: Vec<&str> = r[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["get-customer-tool"]);
    assert_eq!(r[1]["isError"], false, "{}", r[1]);
    assert_eq!(r[1]["structured"]["email"], "[REDACTED:email]");
    assert_eq!(r[1]["structured"]["phone"], "[REDACTED:phone]");
    assert_eq!(r[2]["jsonrpcError"]["code"], -32602, "not the agent's tool");
}

/// The CRM app over HTTP on an ephemeral loopback port, with two tenants' tokens.
async fn crm_over_http() -> (Arc<CrmRunLog>, agboss_core::mcp::server::McpHttpServer) {
    let log = Arc::new(CrmRunLog::new());
    let app = crm_app(Arc::clone(&log)).expect("app");
    let server = app
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

fn http(url: &str, token: Option<&str>, mode: &str, ops: Vec<Value>) -> Value {
    json!({ "http": { "url": url, "token": token }, "mode": mode, "ops": ops })
}

async fn client(python: &std::path::Path, spec: Value) -> Value {
    let python = python.to_path_buf();
    tokio::task::spawn_blocking(move || run_client(&python, &spec))
        .await
        .expect("client thread")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_runs_each_call_as_the_tenant_of_its_bearer_token() {
    let Some(python) = python() else { return };
    let (log, server) = crm_over_http().await;
    let url = server.url();
    assert!(url.starts_with("http://127.0.0.1:"), "{url}");

    let acme = client(
        &python,
        http(
            &url,
            Some("t-acme"),
            "auto",
            vec![
                json!({ "op": "list" }),
                call("get-customer-tool", json!({ "customerId": "ACME-7" })),
                call("get-customer-tool", json!({ "customerId": "GLOBEX-7" })),
                call("delete-customer-tool", json!({ "customerId": "ACME-7" })),
                call("export-customers-tool", json!({ "format": "json" })),
            ],
        ),
    )
    .await;
    let r = results(&acme);
    assert_eq!(r[0]["tools"].as_array().unwrap().len(), 3);
    assert_eq!(r[1]["isError"], false, "{}", r[1]);
    assert_eq!(r[1]["structured"]["email"], "[REDACTED:email]");
    assert_eq!(r[2]["isError"], true);
    assert_eq!(
        text(&r[2]),
        "Customer GLOBEX-7 does not belong to tenant acme. Ask the user to confirm the customer ID."
    );
    // acme may delete.
    assert_eq!(r[3]["isError"], false, "{}", r[3]);
    assert_eq!(
        r[3]["structured"],
        json!({ "customerId": "ACME-7", "deleted": true })
    );
    assert_eq!(r[4]["isError"], true);
    assert!(!text(&r[4]).contains("s3cret"), "{}", r[4]);
    assert_eq!(log.runs_of("get-customer-tool"), 1, "not run for the reply");
    assert_eq!(log.runs_of("delete-customer-tool"), 1);

    // globex, over the initialize handshake (rmcp's sessions): its own customers pass, the
    // deletion is blocked by the ACL reading its TenantContext, and does not run.
    let globex = client(
        &python,
        http(
            &url,
            Some("t-globex"),
            "legacy",
            vec![
                call("get-customer-tool", json!({ "customerId": "GLOBEX-7" })),
                call("get-customer-tool", json!({ "customerId": "ACME-7" })),
                call("delete-customer-tool", json!({ "customerId": "GLOBEX-7" })),
            ],
        ),
    )
    .await;
    assert_ne!(globex["protocol"], "2026-07-28", "{globex}");
    let r = results(&globex);
    assert_eq!(r[0]["isError"], false, "{}", r[0]);
    assert_eq!(r[0]["structured"]["customerId"], "GLOBEX-7");
    assert_eq!(
        text(&r[1]),
        "Customer ACME-7 does not belong to tenant globex. Ask the user to confirm the customer ID."
    );
    assert_eq!(r[2]["isError"], true);
    assert_eq!(text(&r[2]), "Tenant globex may not delete customers.");
    assert_eq!(log.runs_of("get-customer-tool"), 2);
    assert_eq!(
        log.runs_of("delete-customer-tool"),
        1,
        "the block kept it from running"
    );

    server.shutdown().await.expect("shuts down");
}

/// One raw HTTP/1.1 request: the status line and the headers of the answer.
fn raw_post(addr: std::net::SocketAddr, authorization: Option<&str>, body: &str) -> String {
    let mut stream = std::net::TcpStream::connect(addr).expect("connects");
    let auth = authorization.map_or(String::new(), |a| format!("Authorization: {a}\r\n"));
    write!(
        stream,
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n{auth}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .expect("writes");
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    answer
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_refuses_calls_without_valid_credentials_before_any_hook() {
    let Some(python) = python() else { return };
    let (log, server) = crm_over_http().await;
    let url = server.url();
    let ops = || {
        vec![call(
            "delete-customer-tool",
            json!({ "customerId": "ACME-7" }),
        )]
    };

    for token in [None, Some("t-wrong")] {
        for mode in ["auto", "legacy"] {
            let out = client(&python, http(&url, token, mode, ops())).await;
            // The client could not even connect: every request it made was answered 401,
            // with a JSON-RPC error it shows.
            let statuses = out["statuses"].as_array().expect("statuses");
            assert!(!statuses.is_empty(), "{out}");
            assert!(statuses.iter().all(|s| s == 401), "{token:?} {mode}: {out}");
            let error = out["refused"]["error"].as_str().expect("refused");
            assert!(error.contains("Unauthorized: the "), "{error}");
        }
    }
    // A bare tools/call, not even a session: refused by the authentication layer too.
    let addr = server.local_addr();
    let body = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": { "name": "delete-customer-tool", "arguments": { "customerId": "ACME-7" } } })
    .to_string();
    let answers = tokio::task::spawn_blocking(move || {
        [
            raw_post(addr, None, &body),
            raw_post(addr, Some("Bearer t-wrong"), &body),
            raw_post(addr, Some("Basic dC1hY21lOg=="), &body),
        ]
    })
    .await
    .unwrap();
    for answer in &answers {
        assert!(answer.starts_with("HTTP/1.1 401"), "{answer}");
        assert!(
            answer.to_lowercase().contains("www-authenticate: bearer"),
            "{answer}"
        );
    }
    assert!(log.entries().is_empty(), "a hook ran: {:?}", log.entries());

    // The same client with the right token gets through.
    let out = client(&python, http(&url, Some("t-acme"), "auto", ops())).await;
    assert_eq!(results(&out)[0]["isError"], false, "{out}");
    assert_eq!(log.runs_of("delete-customer-tool"), 1);
    server.shutdown().await.expect("shuts down");
}

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct SumInputDto {
    #[integer(prompt = "First addend")]
    pub a: i64,
    #[integer(prompt = "Second addend")]
    pub b: i64,
}

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct SumDto {
    #[integer(prompt = "The sum")]
    pub sum: i64,
}

#[tool(name = "sum-tool", description = "Adds two integers", input = SumInputDto, output = SumDto)]
pub struct SumTool;

impl ToolHandler<SumInputDto, SumDto> for SumTool {
    async fn run(&self, input: SumInputDto) -> Result<SumDto, ToolError> {
        Ok(SumDto {
            sum: input.a + input.b,
        })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unmasked_tool_declares_its_output_schema_and_the_client_validates_it() {
    let Some(python) = python() else { return };
    let app = App::builder().tool::<SumTool>().build().expect("app");
    let server = app
        .serve_mcp()
        .direct_chains()
        .allow_unauthenticated()
        .http("127.0.0.1:0")
        .await
        .expect("serves");
    let out = client(
        &python,
        http(
            &server.url(),
            None,
            "auto",
            vec![
                json!({ "op": "list" }),
                call("sum-tool", json!({ "a": 2, "b": 40 })),
            ],
        ),
    )
    .await;
    let r = results(&out);
    assert_eq!(r[0]["tools"][0]["outputSchema"], SumDto::json_schema());
    // The client checks structuredContent against the output schema: it passed.
    assert_eq!(r[1]["structured"], json!({ "sum": 42 }), "{}", r[1]);
    server.shutdown().await.expect("shuts down");
}

#[tokio::test]
async fn http_binds_loopback_and_needs_an_authenticator_unless_told_otherwise() {
    let app = crm_app(Arc::new(CrmRunLog::new())).expect("app");
    let tokens = || BearerTokens::new().token("t-acme", "acme");
    let err = app
        .serve_mcp()
        .direct_chains()
        .authenticator(tokens())
        .http("0.0.0.0:0")
        .await
        .unwrap_err();
    assert!(matches!(err, McpServerError::NotLoopback { .. }), "{err}");
    let err = app
        .serve_mcp()
        .direct_chains()
        .http("127.0.0.1:0")
        .await
        .unwrap_err();
    assert!(matches!(err, McpServerError::NoAuthenticator), "{err}");
    let err = app
        .serve_mcp()
        .agent("no-such-agent")
        .authenticator(tokens())
        .http("127.0.0.1:0")
        .await
        .unwrap_err();
    assert!(matches!(err, McpServerError::UnknownAgent { .. }), "{err}");
    // Binding elsewhere is explicit.
    let server = app
        .serve_mcp()
        .direct_chains()
        .authenticator(tokens())
        .allow_non_loopback()
        .http("0.0.0.0:0")
        .await
        .expect("binds when asked");
    assert!(server.local_addr().ip().is_unspecified());
    server.shutdown().await.expect("shuts down");
}
