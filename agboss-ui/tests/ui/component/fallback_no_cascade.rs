//! A tool with a mistake in its attribute is still a tool where it is named: one error.
use agboss_core::dto::Dto;
use agboss_core::prelude::*;

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct InDto {
    #[text(prompt = "Text")]
    pub text: String,
}

#[tool(name = "GetOrder", description = "Loads", input = InDto, output = InDto)]
pub struct GetOrderTool;

impl ToolHandler<InDto, InDto> for GetOrderTool {
    async fn run(&self, input: InDto) -> Result<InDto, ToolError> {
        Ok(input)
    }
}

#[tool_interceptor(name = "audit-tool-interceptor", description = "Audits", timeout_ms = 0)]
pub struct AuditToolInterceptor;

impl BeforeToolCall for AuditToolInterceptor {
    async fn before_tool_call(&self, _call: &ToolCallContext<'_>) -> Result<ToolCallDecision, InterceptorError> {
        Ok(ToolCallDecision::allow())
    }
}

#[agent(name = "order-agent", description = "Orders", tools = [GetOrderTool],
        tool_interceptors = [AuditToolInterceptor])]
pub struct OrderAgent;
fn main() {}
