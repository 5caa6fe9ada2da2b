//! Human approval channels: a gated call waits for a ticket that is written before its channel
//! is told, only after every `before_tool_call` allowed; decisions are bound to the exact call
//! and consumed once; parallel siblings run once; a changed policy asks again.
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agboss_core::dto::Dto;
use agboss_core::engine::{Decision, RunContext, RunError, RunEvent, Target};
use agboss_core::model::SharedChatModel;
use agboss_core::prelude::*;
use agboss_core::store;
use agboss_core::store::{
    MemoryStore, NewThread, SharedStore, StoreError, Ticket, TicketState, TicketStore as _,
};
use agboss_testing::scripted::{ScriptedModel, Turn};
use serde_json::json;

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct ApRefundDto {
    #[text(prompt = "Order id")]
    pub order_id: String,
    #[integer(prompt = "Amount in cents", min = 1)]
    pub amount_cents: i64,
    #[text(prompt = "Reason")]
    pub reason: String,
}

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct ApDoneDto {
    #[text(prompt = "What was done")]
    pub done: String,
}

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct ApOrderDto {
    #[text(prompt = "Order id")]
    pub order_id: String,
}

/// What happened, outside the app.
#[injectable(provided)]
#[derive(Default)]
pub struct ApLog {
    notified: Mutex<Vec<Ticket>>,
    refunds: Mutex<Vec<i64>>,
    lookups: AtomicUsize,
}

impl ApLog {
    fn notified(&self) -> Vec<Ticket> {
        self.notified.lock().unwrap().clone()
    }
    fn refunds(&self) -> Vec<i64> {
        self.refunds.lock().unwrap().clone()
    }
}

#[channel(name = "ap-manager-channel", description = "Managers approve large refunds",
          deps = [ApLog])]
pub struct ApManagerChannel {
    log: Arc<ApLog>,
}

impl ApprovalChannel for ApManagerChannel {
    async fn notify(&self, ticket: &store::Ticket) -> Result<(), ChannelError> {
        self.log.notified.lock().unwrap().push(ticket.clone());
        Ok(())
    }
    async fn authorize(
        &self,
        approver: &Approver,
        _ticket: &store::Ticket,
    ) -> Result<bool, ChannelError> {
        Ok(approver.has_role("manager"))
    }
}

#[channel(
    name = "ap-hasty-channel",
    description = "Tickets expire at once",
    ttl_ms = 1
)]
pub struct ApHastyChannel;

impl ApprovalChannel for ApHastyChannel {
    async fn notify(&self, _ticket: &store::Ticket) -> Result<(), ChannelError> {
        Ok(())
    }
    async fn authorize(
        &self,
        _approver: &Approver,
        _ticket: &store::Ticket,
    ) -> Result<bool, ChannelError> {
        Ok(true)
    }
}

fn over_limit(input: &ApRefundDto) -> bool {
    input.amount_cents > 10_000
}

/// Replies, blocks or fails on demand (by the refund's reason); allows the rest.
#[tool_interceptor(name = "ap-guard-tool-interceptor", description = "Checks refunds")]
pub struct ApGuardToolInterceptor;

impl BeforeToolCall for ApGuardToolInterceptor {
    async fn before_tool_call(
        &self,
        call: &ToolCallContext<'_>,
    ) -> Result<ToolCallDecision, InterceptorError> {
        Ok(match call.input()["reason"].as_str() {
            Some("reply") => ToolCallDecision::reply_to_model("give a reason"),
            Some("block") => ToolCallDecision::block("refunds are frozen"),
            Some("fail") => return Err(InterceptorError::msg("acl down")),
            _ => ToolCallDecision::allow(),
        })
    }
}

#[tool(name = "ap-refund-tool", description = "Refunds an order", input = ApRefundDto,
       output = ApDoneDto, deps = [ApLog], tool_interceptors = [ApGuardToolInterceptor],
       approval = ApManagerChannel, approval_when = over_limit)]
pub struct ApRefundTool {
    log: Arc<ApLog>,
}

impl ToolHandler<ApRefundDto, ApDoneDto> for ApRefundTool {
    async fn run(&self, input: ApRefundDto) -> Result<ApDoneDto, ToolError> {
        self.log.refunds.lock().unwrap().push(input.amount_cents);
        Ok(ApDoneDto {
            done: format!("refunded {} on {}", input.amount_cents, input.order_id),
        })
    }
}

#[tool(name = "ap-lookup-tool", description = "Looks an order up", input = ApOrderDto,
       output = ApOrderDto, deps = [ApLog])]
pub struct ApLookupTool {
    log: Arc<ApLog>,
}

impl ToolHandler<ApOrderDto, ApOrderDto> for ApLookupTool {
    async fn run(&self, input: ApOrderDto) -> Result<ApOrderDto, ToolError> {
        self.log.lookups.fetch_add(1, Ordering::SeqCst);
        Ok(input)
    }
}

#[tool(name = "ap-quick-tool", description = "Needs a fast decision", input = ApOrderDto,
       output = ApOrderDto, approval = ApHastyChannel)]
pub struct ApQuickTool;

impl ToolHandler<ApOrderDto, ApOrderDto> for ApQuickTool {
    async fn run(&self, input: ApOrderDto) -> Result<ApOrderDto, ToolError> {
        Ok(input)
    }
}

#[agent(name = "ap-desk-agent", description = "Refunds", instructions = "Help.",
        tools = [ApRefundTool, ApLookupTool, ApQuickTool])]
pub struct ApDeskAgent;

#[tool_interceptor(
    name = "ap-audit-tool-interceptor",
    description = "A policy added later"
)]
pub struct ApAuditToolInterceptor;

impl BeforeToolCall for ApAuditToolInterceptor {
    async fn before_tool_call(
        &self,
        _call: &ToolCallContext<'_>,
    ) -> Result<ToolCallDecision, InterceptorError> {
        Ok(ToolCallDecision::allow())
    }
}

struct Fixture {
    store: SharedStore,
    log: Arc<ApLog>,
}

impl Fixture {
    fn new() -> Self {
        Self {
            store: SharedStore::new(MemoryStore::new()),
            log: Arc::new(ApLog::default()),
        }
    }
    fn app(&self, model: &Arc<ScriptedModel>, worker: &str) -> App {
        self.builder(model, worker).build().unwrap()
    }
    fn builder(&self, model: &Arc<ScriptedModel>, worker: &str) -> AppBuilder {
        App::builder()
            .agent::<ApDeskAgent>()
            .provide_arc(Arc::clone(&self.log))
            .shared_model(Arc::clone(model) as SharedChatModel)
            .store(self.store.clone())
            .worker_id(worker)
    }
}

fn refund(amount: i64, reason: &str) -> Turn {
    Turn::tool_call(
        "ap-refund-tool",
        json!({ "orderId": "ACME-42", "amountCents": amount, "reason": reason }),
    )
}

fn manager() -> Approver {
    Approver::new("maria").tenant("acme").role("manager")
}

fn target() -> Target {
    Target::agent::<ApDeskAgent>()
}

async fn paused(app: &App, ctx: RunContext) -> Vec<Ticket> {
    match app
        .execute(target(), "refund ACME-42", ctx)
        .await
        .map_err(RunError::from)
    {
        Err(RunError::AwaitingApproval { tickets, .. }) => tickets,
        other => panic!("expected the run to wait for approval, got {other:?}"),
    }
}

mod agent_loop;
mod paths;
