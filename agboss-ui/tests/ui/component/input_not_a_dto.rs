use agboss_core::dto::Dto;
use agboss_core::prelude::*;

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct InDto {
    #[text(prompt = "Text")]
    pub text: String,
}

pub struct Plain;

#[tool(name = "get-order-tool", description = "Loads", input = Plain, output = InDto)]
pub struct GetOrderTool;

impl ToolHandler<Plain, InDto> for GetOrderTool {
    async fn run(&self, _input: Plain) -> Result<InDto, ToolError> {
        Ok(InDto { text: String::new() })
    }
}
fn main() {}
