//! The interceptors, one per level of the cascade.
use std::sync::Arc;

use agboss_core::prelude::*;

use super::*;

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
