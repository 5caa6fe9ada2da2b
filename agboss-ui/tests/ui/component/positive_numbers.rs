use agboss_core::dto::Dto;
use agboss_core::prelude::*;

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct InDto {
    #[text(prompt = "Text")]
    pub text: String,
}

#[tool(name = "get-order-tool", description = "Loads", input = InDto, output = InDto,
       max_result_size = 0, max_input_size = 0, timeout_ms = 0)]
pub struct GetOrderTool;

impl ToolHandler<InDto, InDto> for GetOrderTool {
    async fn run(&self, input: InDto) -> Result<InDto, ToolError> {
        Ok(input)
    }
}
fn main() {}
