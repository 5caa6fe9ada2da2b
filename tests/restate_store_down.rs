//! A run whose store goes down mid-run, on the pinned Restate server (`scripts/restate.sh`,
//! started by `bash scripts/test.sh`): Restate keeps retrying the run's attempt; an operator
//! pauses the invocation on the admin API (no attempt runs while it is paused, also once the
//! store is back) and resumes it: the run goes on from its journal, the tool that ran before
//! the failure does not run again, and the caller, still waiting, gets the reply. (The guide
//! page `agboss_core::guide::deployment` documents it.)
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use agboss_core::dto::Dto;
use agboss_core::store::{RunStatus, RunStore as _, SharedStore, SqliteStore};
use agboss_core::{App, ToolError, ToolHandler, agent, tool};
use agboss_restate::{RestateClient, RunReply, RunRequest};
use agboss_testing::flaky::FlakyStore;
use agboss_testing::scripted::{ScriptedModel, Turn};
use serde_json::json;

#[path = "restate/support.rs"]
#[allow(dead_code)]
mod support;

static REFUNDS: AtomicUsize = AtomicUsize::new(0);

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct SdOrderDto {
    #[text(prompt = "The order id")]
    pub order_id: String,
}

#[tool(name = "sd-refund-tool", description = "Refunds an order", input = SdOrderDto,
       output = SdOrderDto)]
pub struct SdRefundTool;

impl ToolHandler<SdOrderDto, SdOrderDto> for SdRefundTool {
    async fn run(&self, input: SdOrderDto) -> Result<SdOrderDto, ToolError> {
        REFUNDS.fetch_add(1, Ordering::SeqCst);
        Ok(input)
    }
}

#[agent(name = "sd-desk-agent", description = "Refunds orders", tools = [SdRefundTool])]
pub struct SdDeskAgent;

/// The invocation of `run_id`: its id, status and retry count.
async fn invocation(admin: &str, run_id: &str) -> Option<(String, String, u64)> {
    let sql = format!(
        "SELECT id, status, retry_count FROM sys_invocation WHERE idempotency_key = '{run_id}'"
    );
    let rows = support::query(admin, &sql).await;
    let row = rows.first()?;
    Some((
        row["id"].as_str()?.to_string(),
        row["status"].as_str()?.to_string(),
        row["retry_count"].as_u64().unwrap_or(0),
    ))
}

/// Polls the invocation until `done` holds (30 s at most).
async fn wait_for(
    admin: &str,
    run_id: &str,
    what: &str,
    done: impl Fn(&str, u64) -> bool,
) -> (String, u64) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Some((id, status, retries)) = invocation(admin, run_id).await
            && done(&status, retries)
        {
            return (id, retries);
        }
        assert!(Instant::now() < deadline, "the invocation was never {what}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn patch(admin: &str, id: &str, action: &str) {
    let response = reqwest::Client::new()
        .patch(format!("{admin}/invocations/{id}/{action}"))
        .send()
        .await
        .expect("the admin API");
    assert!(response.status().is_success(), "{action}: {response:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_whose_store_is_down_is_paused_and_resumed_by_an_operator() {
    let Some((ingress, admin)) = support::restate() else {
        return;
    };
    let (dir, nonce) = support::scratch("store-down");
    let sqlite = SqliteStore::open(dir.join("store.sqlite")).await.unwrap();
    let flaky = Arc::new(FlakyStore::new(SharedStore::new(sqlite)));
    let model = ScriptedModel::new([
        Turn::tool_call_with_id("c1", "sd-refund-tool", json!({"orderId": "SD-1"})),
        Turn::text("refunded"),
        // The answer's turn failed to be journaled: the resumed run asks again.
        Turn::text("refunded"),
    ]);
    let app = App::builder()
        .agent::<SdDeskAgent>()
        .model(Arc::new(model))
        .store(SharedStore::new(Arc::clone(&flaky)))
        .build()
        .unwrap();

    let client = RestateClient::new(&ingress, &admin);
    client.wait_ready(Duration::from_secs(30)).await.unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(agboss_restate::serve(
        Arc::new(app),
        listener,
        std::future::pending::<()>(),
    ));
    client
        .register(&format!("http://127.0.0.1:{port}"))
        .await
        .unwrap();

    // The model turn, the call's start and its end are journaled; the 4th append (the answer's
    // turn) and everything after fail: the store went down after the refund.
    flaky.fail_append_at(4);
    let (tenant, run_id) = (format!("acme-{nonce}"), format!("sd-{nonce}"));
    let call = tokio::spawn({
        let (client, tenant, run_id) = (client.clone(), tenant.clone(), run_id.clone());
        async move {
            let request = RunRequest::new(&run_id, "sd-desk-agent", "Refund SD-1");
            client.run(&tenant, "t1", &request).await
        }
    });

    // Restate retries the attempt while the store is down.
    let (id, _) = wait_for(&admin, &run_id, "retried", |status, retries| {
        status == "backing-off" && retries >= 3
    })
    .await;
    assert_eq!(REFUNDS.load(Ordering::SeqCst), 1, "the refund ran before");

    // Paused: no attempt runs, also once the store is back.
    patch(&admin, &id, "pause").await;
    let (_, paused_at) = wait_for(&admin, &run_id, "paused", |status, _| status == "paused").await;
    flaky.fail_all(false);
    tokio::time::sleep(Duration::from_secs(3)).await;
    let (_, status, retries) = invocation(&admin, &run_id).await.unwrap();
    assert_eq!((status.as_str(), retries), ("paused", paused_at));
    assert!(!call.is_finished(), "the caller still waits");
    let record = flaky.inner().run(&tenant, &run_id).await.unwrap();
    assert_eq!(record.status, RunStatus::Running);

    // Resumed: the run goes on from its journal and the caller gets the reply.
    patch(&admin, &id, "resume").await;
    let reply = tokio::time::timeout(Duration::from_secs(30), call)
        .await
        .expect("the reply after the resume")
        .unwrap()
        .expect("the run's invocation");
    let RunReply::Completed {
        text,
        replayed_steps,
        ..
    } = reply
    else {
        panic!("expected a completed run: {reply:?}");
    };
    assert_eq!((text.as_str(), replayed_steps), ("refunded", 3));
    assert_eq!(REFUNDS.load(Ordering::SeqCst), 1, "the refund ran once");
    let record = flaky.inner().run(&tenant, &run_id).await.unwrap();
    assert_eq!(record.status, RunStatus::Completed);
    let _ = std::fs::remove_dir_all(&dir);
}
