//! A dep that is not `#[injectable]` is one error, at the service type, saying how to fix it.
use agboss_core::dto::Dto;
use agboss_core::prelude::*;
use std::sync::Arc;

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct InDto {
    #[text(prompt = "Text")]
    pub text: String,
}

pub struct Orders;

#[tool(name = "get-order-tool", description = "Loads", input = InDto, output = InDto, deps = [Orders])]
pub struct GetOrderTool {
    orders: Arc<Orders>,
}

impl ToolHandler<InDto, InDto> for GetOrderTool {
    async fn run(&self, input: InDto) -> Result<InDto, ToolError> {
        let _ = &self.orders;
        Ok(input)
    }
}
fn main() {}
