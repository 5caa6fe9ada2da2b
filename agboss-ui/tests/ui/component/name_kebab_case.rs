use agboss_core::dto::Dto;
use agboss_core::prelude::*;

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct InDto {
    #[text(prompt = "Text")]
    pub text: String,
}

#[tool(name = "Get_Order-tool", description = "Loads", input = InDto, output = InDto)]
pub struct GetOrderTool;

impl ToolHandler<InDto, InDto> for GetOrderTool {
    async fn run(&self, input: InDto) -> Result<InDto, ToolError> {
        Ok(input)
    }
}
fn main() {}
