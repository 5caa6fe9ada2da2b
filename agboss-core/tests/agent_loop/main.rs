//! The agent loop: self-correction after `reply_to_model`, blocks, fail-closed guards, invalid and
//! unknown calls, parallel calls, tool-error policies, max_turns, streaming, routers.
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agboss_core::dto::Dto;
use agboss_core::engine::{
    CallDecision, CancelToken, RouteReason, RunContext, RunError, RunEvent, StepOutcome, Target,
};
use agboss_core::model::{
    Message, ModelError, ModelRequest, ModelResponse, ToolCallRequest, Usage,
};
use agboss_core::prelude::*;
use agboss_testing::scripted::{ScriptedModel, Turn};
use futures::StreamExt as _;
use serde_json::json;
use tokio::sync::Notify;

mod errors;
mod interceptors;
mod routers;
mod streaming;
mod tool_calls;

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct OrderInputDto {
    #[text(prompt = "Order ID", min_length = 3)]
    pub order_id: String,
}

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct OrderDto {
    #[text(prompt = "Order ID")]
    pub order_id: String,
    #[text(prompt = "Status")]
    pub status: String,
}

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct LabelDto {
    #[text(prompt = "Label")]
    pub label: String,
}

/// What ran, per app.
#[injectable(provided)]
pub struct Log {
    entries: Mutex<Vec<String>>,
    /// The `first` label waits for this; the `second` notifies it.
    turn: Notify,
    /// Never notified: `stuck-tool` waits forever.
    never: Notify,
    /// `count` calls in flight now, and the most seen at once.
    in_flight: AtomicUsize,
    max_in_flight: AtomicUsize,
}

impl Log {
    fn new() -> Arc<Self> {
        Arc::new(Self {
            entries: Mutex::new(Vec::new()),
            turn: Notify::new(),
            never: Notify::new(),
            in_flight: AtomicUsize::new(0),
            max_in_flight: AtomicUsize::new(0),
        })
    }
    fn push(&self, s: impl Into<String>) {
        self.entries.lock().unwrap().push(s.into());
    }
    fn entries(&self) -> Vec<String> {
        self.entries.lock().unwrap().clone()
    }
}

#[tool(name = "get-order-tool", description = "Loads an order", input = OrderInputDto,
       output = OrderDto, deps = [Log])]
pub struct GetOrderTool {
    log: Arc<Log>,
}

impl ToolHandler<OrderInputDto, OrderDto> for GetOrderTool {
    async fn run(&self, input: OrderInputDto) -> Result<OrderDto, ToolError> {
        self.log.push(format!("run:{}", input.order_id));
        if input.order_id.ends_with("FAIL") {
            return Err(ToolError::msg(
                "connection to db://admin:s3cret@10.0.0.5 refused",
            ));
        }
        Ok(OrderDto {
            order_id: input.order_id,
            status: "shipped".into(),
        })
    }
}

/// `first` waits until `second` finished: proves concurrency and that order is the model's.
#[tool(name = "ordered-tool", description = "Answers its label", input = LabelDto,
       output = LabelDto, deps = [Log])]
pub struct OrderedTool {
    log: Arc<Log>,
}

impl ToolHandler<LabelDto, LabelDto> for OrderedTool {
    async fn run(&self, input: LabelDto) -> Result<LabelDto, ToolError> {
        match input.label.as_str() {
            "count" => {
                let now = self.log.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
                self.log.max_in_flight.fetch_max(now, Ordering::SeqCst);
                for _ in 0..3 {
                    tokio::task::yield_now().await;
                }
                self.log.in_flight.fetch_sub(1, Ordering::SeqCst);
            }
            "first" => {
                // `notify_one` stores a permit, so the order of the two calls does not matter.
                self.log.turn.notified().await;
                self.log.push("first:done");
            }
            _ => {
                self.log.push(format!("{}:done", input.label));
                self.log.turn.notify_one();
            }
        }
        Ok(input)
    }
}

#[tool(name = "stuck-tool", description = "Never finishes", input = LabelDto,
       output = LabelDto, deps = [Log])]
pub struct StuckTool {
    log: Arc<Log>,
}

impl ToolHandler<LabelDto, LabelDto> for StuckTool {
    async fn run(&self, input: LabelDto) -> Result<LabelDto, ToolError> {
        self.log.push("stuck:start");
        self.log.never.notified().await;
        self.log.push("stuck:end");
        Ok(input)
    }
}

/// Orders must start with the tenant's prefix (reply); `EVIL-` is blocked; `ERR-` makes the
/// interceptor fail; `BOOM-` makes it panic.
#[tool_interceptor(name = "tenant-guard-tool-interceptor", description = "Tenant ACL",
                   deps = [TenantContext])]
pub struct TenantGuardToolInterceptor {
    tenant: TenantContext,
}

impl BeforeToolCall for TenantGuardToolInterceptor {
    async fn before_tool_call(
        &self,
        call: &ToolCallContext<'_>,
    ) -> Result<ToolCallDecision, InterceptorError> {
        let Some(order_id) = call.input()["orderId"].as_str().map(str::to_string) else {
            return Ok(ToolCallDecision::allow());
        };
        let prefix = format!("{}-", self.tenant.tenant_id().to_uppercase());
        Ok(if order_id.starts_with("EVIL-") {
            ToolCallDecision::block(format!("order {order_id} is flagged"))
        } else if order_id.starts_with("ERR-") {
            return Err(InterceptorError::msg("acl backend down"));
        } else if order_id.starts_with("BOOM-") {
            panic!("acl exploded");
        } else if !order_id.starts_with(&prefix) {
            ToolCallDecision::reply_to_model(format!(
                "Order {order_id} does not belong to tenant {}. Ask the user to confirm their order ID.",
                self.tenant.tenant_id()
            ))
        } else {
            ToolCallDecision::allow()
        })
    }
}

#[agent(name = "support-agent", description = "Answers order questions",
        instructions = "You help with orders.",
        tools = [GetOrderTool, OrderedTool, StuckTool],
        tool_interceptors = [TenantGuardToolInterceptor])]
pub struct SupportAgent;

#[agent(name = "strict-agent", description = "Fails on tool errors", tools = [GetOrderTool],
        tool_errors = "fail-step", tool_interceptors = [TenantGuardToolInterceptor])]
pub struct StrictAgent;

#[agent(name = "short-agent", description = "Two turns at most", tools = [GetOrderTool],
        max_turns = 2, tool_interceptors = [TenantGuardToolInterceptor])]
pub struct ShortAgent;

#[agent(name = "serial-agent", description = "One call at a time", tools = [OrderedTool],
        max_parallel_tool_calls = 1)]
pub struct SerialAgent;

#[agent(name = "billing-agent", description = "Invoices, refunds and payments")]
pub struct BillingAgent;

#[agent(name = "shipping-agent", description = "Deliveries and tracking")]
pub struct ShippingAgent;

#[router(name = "desk-router", description = "Routes support requests",
         routes = [BillingAgent, ShippingAgent], fallback = ShippingAgent)]
pub struct DeskRouter;

#[router(name = "first-router", description = "Falls back to the first route",
         routes = [BillingAgent, ShippingAgent])]
pub struct FirstRouter;

struct Fixture {
    app: App,
    model: Arc<ScriptedModel>,
    log: Arc<Log>,
}

fn fixture(turns: impl IntoIterator<Item = Turn>) -> Fixture {
    let model = Arc::new(ScriptedModel::new(turns));
    let log = Log::new();
    let app = App::builder()
        .name("test-application")
        .agent::<SupportAgent>()
        .agent::<StrictAgent>()
        .agent::<ShortAgent>()
        .agent::<SerialAgent>()
        .router::<DeskRouter>()
        .router::<FirstRouter>()
        .provide_arc(Arc::clone(&log))
        .model(Arc::clone(&model))
        .build()
        .expect("app builds");
    Fixture { app, model, log }
}

fn acme() -> RunContext {
    RunContext::new().tenant("acme")
}

/// The tool messages of a request, as `(call_id, content, is_error)`.
fn observations(req: &ModelRequest) -> Vec<(String, String, bool)> {
    req.messages
        .iter()
        .filter_map(|m| match m {
            Message::Tool {
                call_id,
                content,
                is_error,
            } => Some((call_id.clone(), content.clone(), *is_error)),
            _ => None,
        })
        .collect()
}

fn calls(calls: &[(&str, &str, &str)]) -> Turn {
    Turn::response(ModelResponse::tool_calls(
        calls
            .iter()
            .map(|(id, name, args)| ToolCallRequest::new(*id, *name, *args)),
    ))
}

fn self_correction_script() -> Vec<Turn> {
    vec![
        Turn::tool_call_with_id("c1", "get-order-tool", json!({"orderId": "OTHER-9"}))
            .with_usage(Usage::new(10, 5)),
        // The model reads the reply and corrects its arguments.
        Turn::from_fn(|req| {
            let reply = req.last_tool_result().and_then(Message::text).unwrap_or("");
            if reply.contains("does not belong to tenant acme") {
                Turn::tool_call_with_id("c2", "get-order-tool", json!({"orderId": "ACME-42"}))
            } else {
                Turn::text("the reply never arrived")
            }
        }),
        Turn::text("Order ACME-42 has shipped."),
    ]
}
