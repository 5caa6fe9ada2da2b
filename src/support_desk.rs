//! A support desk: an application with a workflow, a router in front of two agents, four tools,
//! and interceptors at every level of the cascade (one of them excluded below).
//!
//! ```text
//! support-desk-application          audit, pii-redaction
//! └─ support-workflow               support-hours
//!    └─ support-router
//!       ├─ billing-agent            refund-limit           tools: lookup-order, refund-order
//!       └─ shipping-agent                                  tools: lookup-order, track-shipment
//!                                                          (track-shipment excludes support-hours)
//! lookup-order-tool                 order-ownership
//! ```
use std::sync::{Arc, Mutex};

use agboss_core::dto::Dto;
use agboss_core::{
    AfterToolCall, BeforeToolCall, InterceptorError, TenantContext, ToolCallContext,
    ToolCallDecision, ToolCallResultContext, ToolError, ToolHandler, ToolOutput, agent,
    application, injectable, router, tool, tool_interceptor, workflow,
};

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

/// The order store (in memory).
#[injectable]
pub struct OrderStore;

impl OrderStore {
    /// An order by id.
    pub fn find(&self, order_id: &str) -> Option<OrderDto> {
        let (tenant, _) = order_id.split_once('-')?;
        Some(OrderDto {
            order_id: order_id.to_string(),
            customer_email: format!("jane.doe@{}.example", tenant.to_lowercase()),
            amount_cents: 12_500,
            status: "paid".into(),
        })
    }
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

/// Refunds (part of) an order.
#[tool(name = "refund-order-tool", description = "Refunds an order, fully or in part",
       input = RefundInputDto, output = RefundReceiptDto,
       tool_interceptors = [OrderOwnershipToolInterceptor])]
pub struct RefundOrderTool;

impl ToolHandler<RefundInputDto, RefundReceiptDto> for RefundOrderTool {
    async fn run(&self, input: RefundInputDto) -> Result<RefundReceiptDto, ToolError> {
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

/// Agent level (billing): refunds above 100.00 are a hard block.
#[tool_interceptor(
    name = "refund-limit-tool-interceptor",
    description = "Blocks refunds above 100.00"
)]
pub struct RefundLimitToolInterceptor;

impl BeforeToolCall for RefundLimitToolInterceptor {
    async fn before_tool_call(
        &self,
        call: &ToolCallContext<'_>,
    ) -> Result<ToolCallDecision, InterceptorError> {
        let Some(refund) = call.input_ref::<RefundInputDto>() else {
            return Ok(ToolCallDecision::allow());
        };
        Ok(if refund.amount_cents > 10_000 {
            ToolCallDecision::block(format!(
                "refund of {} cents exceeds the 10000 cents limit",
                refund.amount_cents
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
        instructions = "You are the billing desk. Look orders up before refunding; never refund more than was paid.",
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

/// The application.
#[application(name = "support-desk-application", description = "A multi-tenant customer support desk",
              workflows = [SupportWorkflow], tools = [SearchFaqTool],
              tool_interceptors = [AuditToolInterceptor, PiiRedactionToolInterceptor])]
pub struct SupportDeskApplication;
