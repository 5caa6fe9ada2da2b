use agboss_core::dto::Dto;
use agboss_core::prelude::*;

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct InDto {
    #[text(prompt = "Text")]
    pub text: String,
}

#[tool(name = "get-order-tool", description = "Loads", input = InDto, output = InDto)]
pub enum GetOrderTool {
    A,
}
fn main() {}
