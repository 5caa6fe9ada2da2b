use agboss_core::dto::Dto;
use agboss_core::prelude::*;

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct InDto {
    #[text(prompt = "Text")]
    pub text: String,
}

#[tool_interceptor(name = "audit-tool-interceptor", description = "Audits")]
pub struct AuditToolInterceptor;

impl BeforeToolCall for AuditToolInterceptor {
    async fn before_tool_call(&self, _call: &ToolCallContext<'_>) -> Result<ToolCallDecision, InterceptorError> {
        Ok(ToolCallDecision::allow())
    }
}

#[tool(name = "get-order-tool", description = "Loads", input = InDto, output = InDto,
       tool_interceptors = [AuditToolInterceptor], exclude_tool_interceptors = [AuditToolInterceptor])]
pub struct GetOrderTool;

impl ToolHandler<InDto, InDto> for GetOrderTool {
    async fn run(&self, input: InDto) -> Result<InDto, ToolError> {
        Ok(input)
    }
}

fn main() {}
