//! The desk's four tools.
use std::sync::Arc;

use agboss_core::prelude::*;

use super::*;

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
