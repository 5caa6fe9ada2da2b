//! Served calls as MCP tasks (issue 30, item 4), with rmcp's client declaring the tasks
//! extension and polling: a call that waits for approval is answered with a task whose id is
//! its approval ticket's; approved, the task completes with the tool's result and the tool ran
//! once (however often it is polled, from whichever server instance over the same store);
//! rejected, it fails and the tool never ran; cancelled before a decision, the ticket is
//! withdrawn. Another tenant reads none of it. A `#[tool(long_running)]` call is a task too
//! (over HTTP, per request's tenant).
#[path = "mcp/raw_http.rs"]
#[allow(dead_code)]
mod raw_http;

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use agboss_core::engine::Decision;
use agboss_core::mcp::server::{BearerTokens, McpServe};
use agboss_core::prelude::*;
use agboss_core::store::{MemoryStore, Ticket};
use rmcp::ServiceExt as _;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, ClientCapabilities, ClientConfig,
    GetTaskParams, Implementation, TaskPayload, TaskStatus,
};
use rmcp::service::{RoleClient, RunningService};
use serde_json::{Value, json};

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct PayDto {
    #[integer(prompt = "Cents", min = 1)]
    pub cents: i64,
}

/// How often each tool ran.
#[injectable(provided)]
pub struct Runs {
    pays: AtomicUsize,
    reports: AtomicUsize,
    /// Opened to let a report finish.
    gate: tokio::sync::Semaphore,
}

impl Default for Runs {
    fn default() -> Self {
        Self {
            pays: AtomicUsize::new(0),
            reports: AtomicUsize::new(0),
            gate: tokio::sync::Semaphore::new(0),
        }
    }
}

#[channel(name = "boss-channel", description = "The boss approves payments")]
pub struct BossChannel;

impl ApprovalChannel for BossChannel {
    async fn notify(&self, _ticket: &Ticket) -> Result<(), ChannelError> {
        Ok(())
    }
    async fn authorize(&self, approver: &Approver, _ticket: &Ticket) -> Result<bool, ChannelError> {
        Ok(approver.id == "boss")
    }
}

#[tool(name = "pay-tool", description = "Pays", input = PayDto, output = PayDto,
       approval = BossChannel, deps = [Runs])]
pub struct PayTool {
    runs: Arc<Runs>,
}

impl ToolHandler<PayDto, PayDto> for PayTool {
    async fn run(&self, input: PayDto) -> Result<PayDto, ToolError> {
        self.runs.pays.fetch_add(1, Ordering::SeqCst);
        Ok(input)
    }
}

#[tool(name = "report-tool", description = "Builds a long report", input = PayDto,
       output = PayDto, long_running, deps = [Runs])]
pub struct ReportTool {
    runs: Arc<Runs>,
}

impl ToolHandler<PayDto, PayDto> for ReportTool {
    async fn run(&self, input: PayDto) -> Result<PayDto, ToolError> {
        // Each opening of the gate lets one report through.
        self.runs
            .gate
            .acquire()
            .await
            .map_err(|e| ToolError::msg(e.to_string()))?
            .forget();
        self.runs.reports.fetch_add(1, Ordering::SeqCst);
        Ok(input)
    }
}

fn app(runs: &Arc<Runs>) -> App {
    App::builder()
        .name("pay-desk")
        .tool::<PayTool>()
        .tool::<ReportTool>()
        .store(MemoryStore::new())
        .provide_arc(Arc::clone(runs))
        .build()
        .expect("app")
}

type Client = RunningService<RoleClient, ClientConfig>;

/// A client of `serve`'s handler (one server instance), declaring the tasks extension or not.
async fn client(serve: McpServe, tasks: bool) -> Client {
    let handler = serve.handler().expect("handler");
    let (server_io, client_io) = tokio::io::duplex(64 * 1024);
    tokio::spawn(async move {
        if let Ok(running) = handler.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    let capabilities = if tasks {
        ClientCapabilities::builder().enable_tasks().build()
    } else {
        ClientCapabilities::default()
    };
    ClientConfig::new(capabilities, Implementation::new("poller", "1"))
        .serve(client_io)
        .await
        .expect("the client connects")
}

fn pay(cents: i64) -> CallToolRequestParams {
    let Value::Object(arguments) = json!({ "cents": cents }) else {
        unreachable!()
    };
    CallToolRequestParams::new("pay-tool").with_arguments(arguments)
}

/// Calls `pay-tool`: the task's id.
async fn pay_task(client: &Client, cents: i64) -> String {
    match client.call_tool_once(pay(cents)).await.expect("answers") {
        CallToolResponse::Task(created) => {
            assert_eq!(created.task.status, TaskStatus::Working);
            created.task.task_id
        }
        other => panic!("not a task: {other:?}"),
    }
}

/// Polls `task_id` until it is terminal.
async fn settle(client: &Client, task_id: &str) -> TaskPayload {
    for _ in 0..200 {
        let got = client
            .get_task(GetTaskParams::new(task_id))
            .await
            .expect("tasks/get");
        if got.task.status().is_terminal() {
            return got.task.payload;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("task {task_id} did not settle");
}

fn completed_text(payload: &TaskPayload) -> String {
    let TaskPayload::Completed { result } = payload else {
        panic!("not completed: {payload:?}")
    };
    assert_eq!(
        result.get("isError"),
        Some(&Value::Bool(false)),
        "{result:?}"
    );
    result["content"][0]["text"]
        .as_str()
        .expect("text")
        .to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approved_task_completes_with_the_result_and_the_tool_ran_once() {
    let runs = Arc::new(Runs::default());
    let app = app(&runs);
    let acme = client(app.serve_mcp().direct_chains().tenant("acme"), true).await;
    let task_id = pay_task(&acme, 500).await;

    // The task's handle is the approval ticket's id.
    let ticket = app.tickets("acme").get(&task_id).await.expect("the ticket");
    assert_eq!(ticket.tool, "pay-tool");
    let waiting = acme
        .get_task(GetTaskParams::new(&task_id))
        .await
        .expect("tasks/get");
    assert_eq!(waiting.task.status(), TaskStatus::Working);
    assert_eq!(
        waiting.task.task.status_message.as_deref(),
        Some("waits for a human approval through `boss-channel`")
    );

    // Another tenant (another server instance over the same store) cannot read or cancel it.
    let globex = client(app.serve_mcp().direct_chains().tenant("globex"), true).await;
    let err = globex
        .get_task(GetTaskParams::new(&task_id))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("unknown task"), "{err}");
    assert!(
        globex
            .cancel_task(CancelTaskParams::new(&task_id))
            .await
            .is_err()
    );
    assert!(app.tickets("globex").get(&task_id).await.is_err());

    app.decide(
        "acme",
        Decision::approve(&task_id).by(Approver::new("boss")),
    )
    .await
    .expect("approved");
    let done = settle(&acme, &task_id).await;
    assert_eq!(
        serde_json::from_str::<Value>(&completed_text(&done)).unwrap(),
        json!({ "cents": 500 })
    );
    // Polled again, here and from another instance of acme: the same result, no second run.
    let again = client(app.serve_mcp().direct_chains().tenant("acme"), true).await;
    for c in [&acme, &again] {
        let payload = settle(c, &task_id).await;
        assert_eq!(completed_text(&payload), completed_text(&done));
    }
    assert_eq!(runs.pays.load(Ordering::SeqCst), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rejected_task_fails_and_the_tool_never_runs() {
    let runs = Arc::new(Runs::default());
    let app = app(&runs);
    let acme = client(app.serve_mcp().direct_chains().tenant("acme"), true).await;
    let task_id = pay_task(&acme, 900).await;
    app.decide(
        "acme",
        Decision::reject(&task_id, "too much").by(Approver::new("boss")),
    )
    .await
    .expect("rejected");
    let TaskPayload::Failed { error } = settle(&acme, &task_id).await else {
        panic!("not failed")
    };
    let message = error["message"].as_str().expect("message");
    assert!(message.contains("too much"), "{message}");
    assert_eq!(runs.pays.load(Ordering::SeqCst), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_task_withdraws_its_ticket() {
    let runs = Arc::new(Runs::default());
    let app = app(&runs);
    let acme = client(app.serve_mcp().direct_chains().tenant("acme"), true).await;
    let task_id = pay_task(&acme, 700).await;
    acme.cancel_task(CancelTaskParams::new(&task_id))
        .await
        .expect("cancelled");
    assert_eq!(settle(&acme, &task_id).await, TaskPayload::Cancelled);
    // Nobody can approve it any more.
    let late = app
        .decide(
            "acme",
            Decision::approve(&task_id).by(Approver::new("boss")),
        )
        .await;
    assert!(late.is_err(), "{late:?}");
    assert_eq!(settle(&acme, &task_id).await, TaskPayload::Cancelled);
    assert_eq!(runs.pays.load(Ordering::SeqCst), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_without_tasks_gets_the_refusal_and_no_ticket() {
    let runs = Arc::new(Runs::default());
    let app = app(&runs);
    let plain = client(app.serve_mcp().direct_chains().tenant("acme"), false).await;
    let result = plain.call_tool(pay(100)).await.expect("answers");
    assert_eq!(result.is_error, Some(true));
    let text = result.content[0].as_text().expect("text").text.clone();
    assert!(
        text.contains("needs a human approval through `boss-channel`"),
        "{text}"
    );
    // No ticket nobody could ever collect the result of.
    let page = app
        .tickets("acme")
        .list(&Default::default())
        .await
        .expect("list");
    assert!(page.tickets.is_empty(), "{:?}", page.tickets);
    assert_eq!(runs.pays.load(Ordering::SeqCst), 0);
}

/// One stateless 2026-07-28 request over HTTP, declaring the tasks extension: its JSON-RPC
/// answer.
async fn rpc(addr: SocketAddr, token: &str, id: u64, method: &str, params: Value) -> Value {
    let name = params["name"].as_str().or(params["taskId"].as_str());
    let name = name.map(str::to_owned);
    let tasks = json!({ "extensions": { "io.modelcontextprotocol/tasks": {} } });
    raw_http::stateless_rpc(addr, token, id, method, name.as_deref(), params, tasks).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_running_call_is_a_task_of_its_tenant() {
    let runs = Arc::new(Runs::default());
    let app = app(&runs);
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
    let addr = server.local_addr();
    let call = json!({ "name": "report-tool", "arguments": { "cents": 3 } });
    // Answered at once, while the report waits on its gate.
    let created = rpc(addr, "t-acme", 1, "tools/call", call.clone()).await;
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    let task_id = created["result"]["taskId"].as_str().expect("id").to_owned();
    let get = json!({ "taskId": task_id });
    let working = rpc(addr, "t-acme", 2, "tasks/get", get.clone()).await;
    assert_eq!(working["result"]["status"], "working", "{working}");
    // globex's token reads it as unknown, and cannot cancel it.
    for method in ["tasks/get", "tasks/cancel"] {
        let refused = rpc(addr, "t-globex", 3, method, get.clone()).await;
        assert_eq!(refused["error"]["code"], -32602, "{refused}");
    }
    runs.gate.add_permits(1);
    let mut last = Value::Null;
    for id in 4..200 {
        last = rpc(addr, "t-acme", id, "tasks/get", get.clone()).await;
        if last["result"]["status"] != "working" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert_eq!(last["result"]["status"], "completed", "{last}");
    assert_eq!(
        last["result"]["result"]["structuredContent"],
        json!({ "cents": 3 })
    );
    assert_eq!(runs.reports.load(Ordering::SeqCst), 1);

    // Cancelled while it works: the call's future is dropped, the report never finishes.
    let created = rpc(addr, "t-acme", 300, "tools/call", call).await;
    let get = json!({ "taskId": created["result"]["taskId"] });
    let ack = rpc(addr, "t-acme", 301, "tasks/cancel", get.clone()).await;
    assert!(ack.get("error").is_none(), "{ack}");
    let mut status = Value::Null;
    for id in 302..400 {
        status =
            rpc(addr, "t-acme", id, "tasks/get", get.clone()).await["result"]["status"].clone();
        if status != "working" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert_eq!(status, "cancelled");
    runs.gate.add_permits(1);
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(runs.reports.load(Ordering::SeqCst), 1);
}
