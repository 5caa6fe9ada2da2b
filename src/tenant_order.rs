//! The `@ToolInterceptor` reference example, in Rust: a tenant ACL before the call and a
//! redaction of internal notes after it.
use std::sync::Arc;

use agboss_core::prelude::*;

/// Input of `get-order-tool`.
#[derive(Dto, Debug, Clone, PartialEq)]
pub struct OrderInputDto {
    /// The order to load.
    #[text(prompt = "Order ID to inspect or refund")]
    pub order_id: String,
}

/// An order record.
#[derive(Dto, Debug, Clone, PartialEq)]
pub struct OrderRecordDto {
    /// The order id.
    #[text(prompt = "Order ID")]
    pub order_id: String,
    /// The total.
    #[integer(prompt = "Total in cents")]
    pub amount_cents: i64,
    /// Notes never meant for the model.
    #[text(prompt = "Internal merchant notes")]
    pub internal_note: String,
}

/// Knows which orders belong to which tenant.
#[injectable]
pub struct OrderAclService;

impl OrderAclService {
    /// True when the order belongs to the tenant (`ACME-42` belongs to `acme`).
    pub async fn belongs_to_tenant(&self, tenant_id: &str, order_id: &str) -> bool {
        order_id.starts_with(&format!("{}-", tenant_id.to_uppercase()))
    }
}

/// Loads an order record by id.
#[tool(
    name = "get-order-tool",
    description = "Loads an order record by ID",
    input = OrderInputDto,
    output = OrderRecordDto
)]
pub struct GetOrderTool;

impl ToolHandler<OrderInputDto, OrderRecordDto> for GetOrderTool {
    async fn run(&self, input: OrderInputDto) -> Result<OrderRecordDto, ToolError> {
        Ok(OrderRecordDto {
            order_id: input.order_id,
            amount_cents: 12_500,
            internal_note: "VIP margin tier A".into(),
        })
    }
}

/// Verifies order ownership before running a tool and strips internal notes after.
#[tool_interceptor(
    name = "tenant-order-tool-interceptor",
    description = "Verifies order ownership before running a tool and strips internal notes after",
    deps = [TenantContext, OrderAclService]
)]
pub struct TenantOrderToolInterceptor {
    tenant_context: TenantContext,
    order_acl: Arc<OrderAclService>,
}

impl BeforeToolCall for TenantOrderToolInterceptor {
    async fn before_tool_call(
        &self,
        call: &ToolCallContext<'_>,
    ) -> Result<ToolCallDecision, InterceptorError> {
        let order_id = call.input()["orderId"].as_str().unwrap_or("");
        let tenant_id = self.tenant_context.tenant_id();
        let allowed = self.order_acl.belongs_to_tenant(tenant_id, order_id).await;
        if !allowed {
            return Ok(ToolCallDecision::reply_to_model(format!(
                "Order {order_id} does not belong to tenant {tenant_id}. Ask the user to confirm their order ID."
            )));
        }
        Ok(ToolCallDecision::allow())
    }
}

impl AfterToolCall for TenantOrderToolInterceptor {
    async fn after_tool_call(
        &self,
        call: ToolCallResultContext<'_>,
    ) -> Result<ToolOutput, InterceptorError> {
        let record: OrderRecordDto = call.into_output()?;
        Ok(OrderRecordDto {
            internal_note: "[REDACTED]".into(),
            ..record
        }
        .into())
    }
}
