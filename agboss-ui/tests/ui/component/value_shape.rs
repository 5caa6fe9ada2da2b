use agboss_core::dto::Dto;
use agboss_core::prelude::*;

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct InDto {
    #[text(prompt = "Text")]
    pub text: String,
}

#[tool(name = get_order_tool, description = "Loads", input = "InDto", output = InDto, tool_interceptors = AuditToolInterceptor)]
pub struct GetOrderTool;

impl ToolHandler<InDto, InDto> for GetOrderTool {
    async fn run(&self, input: InDto) -> Result<InDto, ToolError> {
        Ok(input)
    }
}
fn main() {}
