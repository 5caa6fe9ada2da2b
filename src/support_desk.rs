//! A support desk: an application with a workflow, a router in front of two agents, four tools,
//! interceptors at every level of the cascade (one of them excluded below), and a human approval
//! channel on refunds.
//!
//! ```text
//! support-desk-application          audit, pii-redaction
//! └─ support-workflow               support-hours
//!    └─ support-router
//!       ├─ billing-agent            refund-limit           tools: lookup-order, refund-order
//!       └─ shipping-agent                                  tools: lookup-order, track-shipment
//!                                                          (track-shipment excludes support-hours)
//! lookup-order-tool                 order-ownership
//! refund-order-tool                 order-ownership        approval: manager-channel, above 100.00
//! ```
//!
//! Refunds have two limits:
//!
//! - **Manager approval** ([`ManagerChannel`]): a refund above
//!   [`REFUND_APPROVAL_LIMIT_CENTS`] (100.00) does not run on the model's word. Once every
//!   `before_tool_call` of its chain allowed it, a ticket bound to the exact call is stored, the
//!   channel is told (it puts the ticket in the [`ManagerInbox`]) and the run waits; a
//!   `manager` of the ticket's tenant approves (or rejects, or edits) it and the run is resumed:
//!   the approved call goes through its whole chain again and runs once.
//! - **Hard block** ([`RefundLimitToolInterceptor`], on the billing agent): what no manager may
//!   approve. A refund above what is left to refund on the order (its total minus what was
//!   refunded already, see [`OrderStore`]) or above the [`REFUND_HARD_CAP_CENTS`] (1,000.00)
//!   hard cap is blocked. The before chain runs before the approval point, so a blocked call
//!   never creates a ticket and never wakes a manager. (The hard block is the billing agent's:
//!   a direct call of `refund-order-tool`, outside the agent, only has the approval.)
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use agboss_core::dto::Dto;
use agboss_core::store::Ticket;
use agboss_core::{
    AfterToolCall, ApprovalChannel, Approver, BeforeToolCall, ChannelError, GuardrailContext,
    GuardrailError, GuardrailVerdict, InputGuardrail, InterceptorError, OutputGuardrail,
    TenantContext, ToolCallContext, ToolCallDecision, ToolCallResultContext, ToolError,
    ToolHandler, ToolOutput, agent, application, channel, injectable, input_guardrail,
    output_guardrail, router, tool, tool_interceptor, workflow,
};

/// Refunds above this (100.00) wait for a manager's approval.
pub const REFUND_APPROVAL_LIMIT_CENTS: i64 = 10_000;
/// Refunds above this (1,000.00) are blocked, whoever would approve them.
pub const REFUND_HARD_CAP_CENTS: i64 = 100_000;

/// Cents as money: `12500` is `"125.00"`, `240000` is `"2,400.00"`, `-50` is `"-0.50"`.
pub fn money(cents: i64) -> String {
    let sign = if cents < 0 { "-" } else { "" };
    let cents = cents.unsigned_abs();
    let units = (cents / 100).to_string();
    let mut grouped = String::new();
    for (i, c) in units.chars().enumerate() {
        if i > 0 && (units.len() - i).is_multiple_of(3) {
            grouped.push(',');
        }
        grouped.push(c);
    }
    format!("{sign}{grouped}.{:02}", cents % 100)
}

// ---------------------------------------------------------------- DTOs

/// An order reference.
#[derive(Dto, Debug, Clone, PartialEq)]
pub struct OrderRefDto {
    /// The order.
    #[text(prompt = "Order ID, e.g. ACME-42", pattern = "^[A-Z]+-[0-9]+$")]
    pub order_id: String,
}

/// An order as support staff see it.
#[derive(Dto, Debug, Clone, PartialEq)]
pub struct OrderDto {
    /// The order.
    #[text(prompt = "Order ID")]
    pub order_id: String,
    /// Customer e-mail.
    #[text(prompt = "Customer e-mail")]
    pub customer_email: String,
    /// Total in cents.
    #[integer(prompt = "Total in cents", min = 0)]
    pub amount_cents: i64,
    /// Order status.
    #[text(prompt = "Status", choices = ["paid", "shipped", "refunded"])]
    pub status: String,
}

/// A refund request.
#[derive(Dto, Debug, Clone, PartialEq)]
pub struct RefundInputDto {
    /// The order.
    #[text(prompt = "Order ID to refund", pattern = "^[A-Z]+-[0-9]+$")]
    pub order_id: String,
    /// Amount to refund in cents.
    #[integer(prompt = "Amount to refund, in cents", min = 1)]
    pub amount_cents: i64,
    /// Why.
    #[text(prompt = "Reason given by the customer", min_length = 3)]
    pub reason: String,
}

/// A refund receipt.
#[derive(Dto, Debug, Clone, PartialEq)]
pub struct RefundReceiptDto {
    /// The order.
    #[text(prompt = "Order ID")]
    pub order_id: String,
    /// Refunded amount.
    #[integer(prompt = "Refunded cents", min = 1)]
    pub refunded_cents: i64,
}

/// Tracking information.
#[derive(Dto, Debug, Clone, PartialEq)]
pub struct ShipmentDto {
    /// The order.
    #[text(prompt = "Order ID")]
    pub order_id: String,
    /// Carrier and status.
    #[text(prompt = "Where the parcel is")]
    pub status: String,
}

/// A question for the FAQ.
#[derive(Dto, Debug, Clone, PartialEq)]
pub struct FaqQueryDto {
    /// The question.
    #[text(prompt = "The customer's question", min_length = 2, max_length = 500)]
    pub question: String,
}

/// An FAQ answer.
#[derive(Dto, Debug, Clone, PartialEq)]
pub struct FaqAnswerDto {
    /// The answer.
    #[text(prompt = "The answer")]
    pub answer: String,
}

// ---------------------------------------------------------------- services

/// Records what the audit interceptor saw (an app-wide singleton).
#[injectable(default)]
#[derive(Default)]
pub struct AuditLog {
    entries: Mutex<Vec<String>>,
}

impl AuditLog {
    /// Appends an entry.
    pub fn record(&self, entry: String) {
        self.entries.lock().expect("audit log lock").push(entry);
    }
    /// Every entry so far.
    pub fn entries(&self) -> Vec<String> {
        self.entries.lock().expect("audit log lock").clone()
    }
}

/// The order store (in memory, an app-wide singleton): every order `TENANT-n` exists and totals
/// 125.00, except order 7 of each tenant, a 2,400.00 sofa. It remembers what was refunded.
#[injectable(default)]
#[derive(Default)]
pub struct OrderStore {
    refunded: Mutex<HashMap<String, i64>>,
}

impl OrderStore {
    /// An order by id.
    pub fn find(&self, order_id: &str) -> Option<OrderDto> {
        let (tenant, number) = order_id.split_once('-')?;
        let amount_cents = if number == "7" { 240_000 } else { 12_500 };
        let refunded = self.refunded(order_id);
        Some(OrderDto {
            order_id: order_id.to_string(),
            customer_email: format!("jane.doe@{}.example", tenant.to_lowercase()),
            amount_cents,
            status: if refunded >= amount_cents {
                "refunded"
            } else {
                "paid"
            }
            .into(),
        })
    }
    /// What was refunded on an order so far, in cents.
    pub fn refunded(&self, order_id: &str) -> i64 {
        let refunded = self.refunded.lock().expect("order store lock");
        refunded.get(order_id).copied().unwrap_or(0)
    }
    /// Records a refund.
    pub fn record_refund(&self, order_id: &str, cents: i64) {
        let mut refunded = self.refunded.lock().expect("order store lock");
        *refunded.entry(order_id.to_string()).or_insert(0) += cents;
    }
}

/// The managers' inbox (an app-wide singleton): every ticket [`ManagerChannel`] was told of, in
/// order. A real desk would page someone; the demo and the tests read it.
#[injectable(default)]
#[derive(Default)]
pub struct ManagerInbox {
    tickets: Mutex<Vec<Ticket>>,
}

impl ManagerInbox {
    /// Every ticket the channel was told of, in order.
    pub fn tickets(&self) -> Vec<Ticket> {
        self.tickets.lock().expect("manager inbox lock").clone()
    }
    fn push(&self, ticket: &Ticket) {
        self.tickets
            .lock()
            .expect("manager inbox lock")
            .push(ticket.clone());
    }
}

// ---------------------------------------------------------------- approval

/// Billing managers approve large refunds: told of a ticket, it puts it in the
/// [`ManagerInbox`]; only an approver with role `manager` of the ticket's own tenant may decide
/// one.
#[channel(name = "manager-channel", description = "Billing managers approve refunds above 100.00",
          deps = [ManagerInbox])]
pub struct ManagerChannel {
    inbox: Arc<ManagerInbox>,
}

impl ApprovalChannel for ManagerChannel {
    async fn notify(&self, ticket: &Ticket) -> Result<(), ChannelError> {
        self.inbox.push(ticket);
        Ok(())
    }
    async fn authorize(&self, approver: &Approver, ticket: &Ticket) -> Result<bool, ChannelError> {
        Ok(approver.has_role("manager") && approver.tenant.as_deref() == Some(&*ticket.tenant))
    }
}

/// When a refund needs a manager: above [`REFUND_APPROVAL_LIMIT_CENTS`].
pub fn needs_manager_approval(refund: &RefundInputDto) -> bool {
    refund.amount_cents > REFUND_APPROVAL_LIMIT_CENTS
}

// ---------------------------------------------------------------- tools

/// Loads an order.
#[tool(name = "lookup-order-tool", description = "Loads an order by ID",
       input = OrderRefDto, output = OrderDto,
       tool_interceptors = [OrderOwnershipToolInterceptor], deps = [OrderStore])]
pub struct LookupOrderTool {
    store: Arc<OrderStore>,
}

impl ToolHandler<OrderRefDto, OrderDto> for LookupOrderTool {
    async fn run(&self, input: OrderRefDto) -> Result<OrderDto, ToolError> {
        self.store
            .find(&input.order_id)
            .ok_or_else(|| ToolError::msg(format!("no order {}", input.order_id)))
    }
}

/// Refunds (part of) an order. Above 100.00 it waits for a manager ([`ManagerChannel`]).
#[tool(name = "refund-order-tool", description = "Refunds an order, fully or in part",
       input = RefundInputDto, output = RefundReceiptDto, deps = [OrderStore],
       tool_interceptors = [OrderOwnershipToolInterceptor],
       approval = ManagerChannel, approval_when = needs_manager_approval)]
pub struct RefundOrderTool {
    store: Arc<OrderStore>,
}

impl ToolHandler<RefundInputDto, RefundReceiptDto> for RefundOrderTool {
    async fn run(&self, input: RefundInputDto) -> Result<RefundReceiptDto, ToolError> {
        self.store
            .record_refund(&input.order_id, input.amount_cents);
        Ok(RefundReceiptDto {
            order_id: input.order_id,
            refunded_cents: input.amount_cents,
        })
    }
}

/// Tracks a parcel. Available around the clock: it opts out of the support-hours guard.
#[tool(name = "track-shipment-tool", description = "Tells where an order's parcel is",
       input = OrderRefDto, output = ShipmentDto,
       tool_interceptors = [OrderOwnershipToolInterceptor],
       exclude_tool_interceptors = [SupportHoursToolInterceptor])]
pub struct TrackShipmentTool;

impl ToolHandler<OrderRefDto, ShipmentDto> for TrackShipmentTool {
    async fn run(&self, input: OrderRefDto) -> Result<ShipmentDto, ToolError> {
        Ok(ShipmentDto {
            order_id: input.order_id,
            status: "in transit with ParcelCo, due tomorrow".into(),
        })
    }
}

/// Answers from the FAQ.
#[tool(name = "search-faq-tool", description = "Searches the help-centre FAQ",
       input = FaqQueryDto, output = FaqAnswerDto, max_result_size = 400)]
pub struct SearchFaqTool;

impl ToolHandler<FaqQueryDto, FaqAnswerDto> for SearchFaqTool {
    async fn run(&self, input: FaqQueryDto) -> Result<FaqAnswerDto, ToolError> {
        let answer = if input.question.to_lowercase().contains("refund") {
            "Refunds reach your account within 5 business days."
        } else {
            "Please describe your problem and a person will answer within a day."
        };
        Ok(FaqAnswerDto {
            answer: answer.into(),
        })
    }
}

// ---------------------------------------------------------------- interceptors

/// Application level: records every call and its outcome.
#[tool_interceptor(name = "audit-tool-interceptor", description = "Records every tool call and its result",
                   deps = [AuditLog])]
pub struct AuditToolInterceptor {
    log: Arc<AuditLog>,
}

impl BeforeToolCall for AuditToolInterceptor {
    async fn before_tool_call(
        &self,
        call: &ToolCallContext<'_>,
    ) -> Result<ToolCallDecision, InterceptorError> {
        self.log.record(format!(
            "tool_use {} {} {}",
            call.call_id(),
            call.tool_name(),
            call.input()
        ));
        Ok(ToolCallDecision::allow())
    }
}

impl AfterToolCall for AuditToolInterceptor {
    async fn after_tool_call(
        &self,
        call: ToolCallResultContext<'_>,
    ) -> Result<ToolOutput, InterceptorError> {
        self.log.record(format!(
            "tool_result {} {}",
            call.call_id(),
            call.tool_name()
        ));
        Ok(call.keep())
    }
}

/// Application level: masks customer e-mails in every output.
#[tool_interceptor(
    name = "pii-redaction-tool-interceptor",
    description = "Masks customer e-mail addresses in tool outputs"
)]
pub struct PiiRedactionToolInterceptor;

impl AfterToolCall for PiiRedactionToolInterceptor {
    async fn after_tool_call(
        &self,
        call: ToolCallResultContext<'_>,
    ) -> Result<ToolOutput, InterceptorError> {
        let mut json = call.output_json();
        if let Some(email) = json.get_mut("customerEmail") {
            *email = serde_json::Value::String("[email hidden]".into());
        }
        Ok(json.into())
    }
}

/// Workflow level: refuses work outside support hours (the clock is an injectable so tests and
/// the demo can pin it).
#[tool_interceptor(name = "support-hours-tool-interceptor", description = "Stops tool calls outside support hours",
                   deps = [SupportClock])]
pub struct SupportHoursToolInterceptor {
    clock: Arc<SupportClock>,
}

/// The hour of day (0–23) the desk believes it is.
#[injectable(default)]
pub struct SupportClock {
    hour: std::sync::atomic::AtomicU8,
}

impl Default for SupportClock {
    fn default() -> Self {
        Self::at(10)
    }
}

impl SupportClock {
    /// A clock pinned at `hour`.
    pub fn at(hour: u8) -> Self {
        Self {
            hour: std::sync::atomic::AtomicU8::new(hour),
        }
    }
    /// The hour.
    pub fn hour(&self) -> u8 {
        self.hour.load(std::sync::atomic::Ordering::Relaxed)
    }
}

impl BeforeToolCall for SupportHoursToolInterceptor {
    async fn before_tool_call(
        &self,
        _call: &ToolCallContext<'_>,
    ) -> Result<ToolCallDecision, InterceptorError> {
        Ok(if (8..20).contains(&self.clock.hour()) {
            ToolCallDecision::allow()
        } else {
            ToolCallDecision::block("the support desk is closed (08:00-20:00)")
        })
    }
}

/// Agent level (billing): the hard block no manager may approve. A refund above what is left to
/// refund on the order, or above the [`REFUND_HARD_CAP_CENTS`] (1,000.00) cap, is blocked;
/// anything else is allowed (above 100.00 it then waits for a manager).
#[tool_interceptor(name = "refund-limit-tool-interceptor",
                   description = "Blocks refunds above what was paid or above the 1,000.00 hard cap",
                   deps = [OrderStore])]
pub struct RefundLimitToolInterceptor {
    store: Arc<OrderStore>,
}

impl BeforeToolCall for RefundLimitToolInterceptor {
    async fn before_tool_call(
        &self,
        call: &ToolCallContext<'_>,
    ) -> Result<ToolCallDecision, InterceptorError> {
        let Some(refund) = call.input_ref::<RefundInputDto>() else {
            return Ok(ToolCallDecision::allow());
        };
        let Some(order) = self.store.find(&refund.order_id) else {
            return Ok(ToolCallDecision::block(format!(
                "there is no order {}",
                refund.order_id
            )));
        };
        let refunded = self.store.refunded(&order.order_id);
        let left = order.amount_cents - refunded;
        Ok(if refund.amount_cents > REFUND_HARD_CAP_CENTS {
            ToolCallDecision::block(format!(
                "a refund of {} is above the {} hard cap, which no manager can lift",
                money(refund.amount_cents),
                money(REFUND_HARD_CAP_CENTS)
            ))
        } else if refund.amount_cents > left {
            ToolCallDecision::block(format!(
                "a refund of {} on {} is more than the {} left of the {} paid",
                money(refund.amount_cents),
                order.order_id,
                money(left),
                money(order.amount_cents)
            ))
        } else {
            ToolCallDecision::allow()
        })
    }
}

/// Tool level: an order must belong to the caller's tenant; otherwise the model is asked to
/// check the id with the customer.
#[tool_interceptor(name = "order-ownership-tool-interceptor", description = "Checks that the order belongs to the tenant",
                   deps = [TenantContext])]
pub struct OrderOwnershipToolInterceptor {
    tenant: TenantContext,
}

impl BeforeToolCall for OrderOwnershipToolInterceptor {
    async fn before_tool_call(
        &self,
        call: &ToolCallContext<'_>,
    ) -> Result<ToolCallDecision, InterceptorError> {
        let order_id = call.input()["orderId"].as_str().unwrap_or_default();
        let prefix = format!("{}-", self.tenant.tenant_id().to_uppercase());
        Ok(if order_id.starts_with(&prefix) {
            ToolCallDecision::allow()
        } else {
            ToolCallDecision::reply_to_model(format!(
                "Order {order_id} does not belong to tenant {}. Ask the customer to confirm the order ID.",
                self.tenant.tenant_id()
            ))
        })
    }
}

// ---------------------------------------------------------------- agents, router, workflow, app

/// Handles money questions.
#[agent(name = "billing-agent", description = "Answers billing questions and issues refunds",
        instructions = "You are the billing desk. Look orders up before refunding; never refund more than was paid. Refunds above 100.00 wait for a manager's approval.",
        tools = [LookupOrderTool, RefundOrderTool],
        tool_interceptors = [RefundLimitToolInterceptor], max_turns = 6)]
pub struct BillingAgent;

/// Handles delivery questions.
#[agent(name = "shipping-agent", description = "Answers questions about deliveries",
        instructions = "You are the shipping desk. Look the order up, then track its parcel.",
        tools = [LookupOrderTool, TrackShipmentTool], max_turns = 6)]
pub struct ShippingAgent;

/// Sends each request to billing or shipping.
#[router(name = "support-router", description = "Routes a customer request to billing or shipping",
         routes = [BillingAgent, ShippingAgent], fallback = BillingAgent)]
pub struct SupportRouter;

/// The support workflow.
#[workflow(name = "support-workflow", description = "Routes a request and answers it",
           routers = [SupportRouter], tools = [SearchFaqTool],
           tool_interceptors = [SupportHoursToolInterceptor])]
pub struct SupportWorkflow;

/// Refuses requests that try to override the desk's instructions. `cheap`: a few substring
/// checks, run before any costlier input guardrail.
#[input_guardrail(
    name = "prompt-injection-input-guardrail",
    description = "Refuses requests that try to override the desk's instructions",
    cheap
)]
pub struct PromptInjectionInputGuardrail;

impl InputGuardrail for PromptInjectionInputGuardrail {
    async fn check_input(
        &self,
        input: &GuardrailContext<'_>,
    ) -> Result<GuardrailVerdict, GuardrailError> {
        const MARKERS: [&str; 4] = [
            "ignore previous instructions",
            "ignore all previous",
            "disregard your instructions",
            "reveal your system prompt",
        ];
        let text = input.text().to_lowercase();
        Ok(if MARKERS.iter().any(|m| text.contains(m)) {
            GuardrailVerdict::block("the request tries to override the desk's instructions")
        } else {
            GuardrailVerdict::pass()
        })
    }
}

/// Keeps the desk's internal notes (`[internal: ...]`) out of what customers read.
#[output_guardrail(
    name = "internal-note-output-guardrail",
    description = "Removes internal notes from answers"
)]
pub struct InternalNoteOutputGuardrail;

impl OutputGuardrail for InternalNoteOutputGuardrail {
    async fn check_output(
        &self,
        output: &GuardrailContext<'_>,
    ) -> Result<GuardrailVerdict, GuardrailError> {
        let text = output.text();
        if !text.contains("[internal:") {
            return Ok(GuardrailVerdict::pass());
        }
        let mut kept = String::new();
        let mut rest = text;
        while let Some(start) = rest.find("[internal:") {
            kept.push_str(&rest[..start]);
            rest = rest[start..]
                .find(']')
                .map_or("", |end| &rest[start + end + 1..]);
        }
        kept.push_str(rest);
        Ok(GuardrailVerdict::rewrite(kept.trim_end()))
    }
}

/// The application.
#[application(name = "support-desk-application", description = "A multi-tenant customer support desk",
              workflows = [SupportWorkflow], tools = [SearchFaqTool],
              tool_interceptors = [AuditToolInterceptor, PiiRedactionToolInterceptor],
              input_guardrails = [PromptInjectionInputGuardrail],
              output_guardrails = [InternalNoteOutputGuardrail])]
pub struct SupportDeskApplication;
