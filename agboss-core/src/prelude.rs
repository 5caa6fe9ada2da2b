//! What an application needs, in one import: `use agboss_core::prelude::*;`.
//!
//! The macros, the traits a component implements (a tool's handler, the interceptors' hooks,
//! guardrails, approval channels, listeners, DTOs), the app and its builder, the per-call
//! contexts, the decisions and verdicts the hooks return, the approval ticket a channel reads
//! and the decision a human gives, the run API and the errors a caller matches on. Everything else lives in its module (`agboss_core::store`,
//! `agboss_core::model`, `agboss_core::engine`, …).
//!
//! ```
//! use agboss_core::prelude::*;
//!
//! #[derive(Dto, Debug, Clone, PartialEq)]
//! pub struct OrderDto {
//!     #[text(prompt = "Order ID")]
//!     pub order_id: String,
//! }
//!
//! #[tool(name = "get-order-tool", description = "Loads an order", input = OrderDto, output = OrderDto,
//!        tool_interceptors = [AcmeOnlyToolInterceptor])]
//! pub struct GetOrderTool;
//! impl ToolHandler<OrderDto, OrderDto> for GetOrderTool {
//!     async fn run(&self, input: OrderDto) -> Result<OrderDto, ToolError> {
//!         Ok(input)
//!     }
//! }
//!
//! #[tool_interceptor(name = "acme-only-tool-interceptor", description = "Only ACME orders")]
//! pub struct AcmeOnlyToolInterceptor;
//! impl BeforeToolCall for AcmeOnlyToolInterceptor {
//!     async fn before_tool_call(&self, call: &ToolCallContext<'_>) -> Result<ToolCallDecision, InterceptorError> {
//!         Ok(match call.input()["orderId"].as_str() {
//!             Some(id) if id.starts_with("ACME-") => ToolCallDecision::allow(),
//!             _ => ToolCallDecision::reply_to_model("Ask for an ACME order ID."),
//!         })
//!     }
//! }
//!
//! let app = App::builder().tool::<GetOrderTool>().build().unwrap();
//! futures::executor::block_on(async {
//!     let order = app.tool::<GetOrderTool>().invoke(OrderDto { order_id: "ACME-1".into() }).await.unwrap();
//!     assert_eq!(order.order_id, "ACME-1");
//!     let refused = app.tool::<GetOrderTool>().invoke(OrderDto { order_id: "X-1".into() }).await;
//!     assert!(refused.unwrap_err().as_blocked().is_some());
//! });
//! ```

pub use agboss_macros::{
    agent, application, channel, injectable, input_guardrail, mcp_tool, output_guardrail,
    pii_policy, router, tool, tool_interceptor, workflow,
};

pub use crate::app::{App, AppBuilder, ToolHandle};
pub use crate::callback::listener::{ToolCallInfo, ToolCallListener};
pub use crate::contract::channel::{ApprovalChannel, Approver};
pub use crate::contract::guardrail::{
    GuardrailContext, GuardrailVerdict, InputGuardrail, OutputGuardrail,
};
pub use crate::contract::interceptor::{
    AfterToolCall, BeforeToolCall, ToolCallContext, ToolCallDecision, ToolCallResultContext,
    ToolOutput,
};
pub use crate::contract::ticket::Ticket;
pub use crate::contract::tool::ToolHandler;
pub use crate::di::{ExecutionContext, TenantContext};
pub use crate::dto::Dto;
pub use crate::engine::{Decision, RunContext, RunError, RunEvent, RunFailed, RunOutput, Target};
// How a call ended and the errors a caller matches on.
pub use crate::contract::handler_error::{
    ChannelError, GuardrailError, InterceptorError, ToolError,
};
pub use crate::contract::outcome::{CallDecision, CallOutcome, ToolBlockedError, ToolCallError};
pub use crate::engine::StepFailedError;
