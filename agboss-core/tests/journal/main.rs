//! Threads and the durable run journal, end to end through `App::execute` on the in-memory
//! store (the SQL backends pass the same store conformance suite): history across runs,
//! tenant isolation, resume without rerunning a completed tool, calls in doubt, idempotent
//! reruns with a stable key, store failures at the start and in the middle of a run.
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agboss_core::dto::Dto;
use agboss_core::engine::{InDoubtResolution, RunContext, RunError, RunEvent};
use agboss_core::model::{Message, SharedChatModel};
use agboss_core::prelude::*;
use agboss_core::store::{
    MemoryStore, NewThread, RunStatus, RunStore as _, SharedStore, StoreError, ThreadStore as _,
};
use agboss_testing::flaky::FlakyStore;
use agboss_testing::scripted::{ScriptedModel, Turn};
use serde_json::json;

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct JrOrderDto {
    #[text(prompt = "The order id")]
    pub order_id: String,
}

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct JrReceiptDto {
    #[text(prompt = "What was done")]
    pub done: String,
}

/// What the tools did: kept outside the app, as a payment system would.
#[injectable(provided)]
#[derive(Default)]
pub struct JrLedger {
    runs: AtomicUsize,
    keys: Mutex<Vec<String>>,
    /// Calls that hang forever before doing their work (a crash lands in the middle).
    hang_next: AtomicUsize,
}

impl JrLedger {
    fn runs(&self) -> usize {
        self.runs.load(Ordering::SeqCst)
    }
    fn keys(&self) -> Vec<String> {
        self.keys.lock().unwrap().clone()
    }
    async fn work(&self, key: &str, what: String) -> Result<JrReceiptDto, ToolError> {
        self.keys.lock().unwrap().push(key.to_string());
        if self
            .hang_next
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
            .is_ok()
        {
            std::future::pending::<()>().await;
        }
        self.runs.fetch_add(1, Ordering::SeqCst);
        Ok(JrReceiptDto { done: what })
    }
}

#[tool(name = "jr-refund-tool", description = "Refunds an order (not idempotent)",
       input = JrOrderDto, output = JrReceiptDto, deps = [JrLedger, ExecutionContext])]
pub struct JrRefundTool {
    ledger: Arc<JrLedger>,
    exec: ExecutionContext,
}

impl ToolHandler<JrOrderDto, JrReceiptDto> for JrRefundTool {
    async fn run(&self, input: JrOrderDto) -> Result<JrReceiptDto, ToolError> {
        let key = self.exec.idempotency_key().to_string();
        self.ledger
            .work(&key, format!("refunded {}", input.order_id))
            .await
    }
}

#[tool(name = "jr-charge-tool", description = "Charges an order (idempotent by key)",
       input = JrOrderDto, output = JrReceiptDto, deps = [JrLedger, ExecutionContext], idempotent)]
pub struct JrChargeTool {
    ledger: Arc<JrLedger>,
    exec: ExecutionContext,
}

impl ToolHandler<JrOrderDto, JrReceiptDto> for JrChargeTool {
    async fn run(&self, input: JrOrderDto) -> Result<JrReceiptDto, ToolError> {
        let key = self.exec.idempotency_key().to_string();
        self.ledger
            .work(&key, format!("charged {}", input.order_id))
            .await
    }
}

#[agent(name = "jr-desk-agent", description = "Refunds and charges",
        instructions = "Help the customer.", tools = [JrRefundTool, JrChargeTool])]
pub struct JrDeskAgent;

fn app(
    store: &SharedStore,
    ledger: &Arc<JrLedger>,
    model: &Arc<ScriptedModel>,
    worker: &str,
) -> App {
    App::builder()
        .agent::<JrDeskAgent>()
        .provide_arc(Arc::clone(ledger))
        .shared_model(Arc::clone(model) as SharedChatModel)
        .store(store.clone())
        .worker_id(worker)
        .lease_ttl(Duration::from_millis(150))
        .build()
        .unwrap()
}

fn refund(order: &str) -> Turn {
    Turn::tool_call("jr-refund-tool", json!({ "orderId": order }))
}

/// Runs until the model stalls (its script is spent), then drops the run: what a crash leaves.
async fn crash_at_stall(app: &App, input: &str, ctx: RunContext) {
    let run = app.execute(JrDeskAgent::target(), input, ctx);
    assert!(
        tokio::time::timeout(Duration::from_millis(300), run)
            .await
            .is_err(),
        "the run was meant to stall"
    );
}

trait AgentTarget {
    fn target() -> agboss_core::engine::Target;
}
impl AgentTarget for JrDeskAgent {
    fn target() -> agboss_core::engine::Target {
        agboss_core::engine::Target::agent::<JrDeskAgent>()
    }
}

mod resume;
mod threads;
