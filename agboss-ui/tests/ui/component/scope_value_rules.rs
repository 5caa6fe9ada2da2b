use agboss_core::dto::Dto;
use agboss_core::prelude::*;

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct InDto {
    #[text(prompt = "Text")]
    pub text: String,
}

#[tool(name = "echo-tool", description = "Echoes", input = InDto, output = InDto)]
pub struct EchoTool;

impl ToolHandler<InDto, InDto> for EchoTool {
    async fn run(&self, input: InDto) -> Result<InDto, ToolError> {
        Ok(input)
    }
}

#[tool_interceptor(name = "audit-tool-interceptor", description = "Audits")]
pub struct AuditToolInterceptor;

impl BeforeToolCall for AuditToolInterceptor {
    async fn before_tool_call(&self, _call: &ToolCallContext<'_>) -> Result<ToolCallDecision, InterceptorError> {
        Ok(ToolCallDecision::allow())
    }
}

#[agent(name = "billing-agent", description = "Bills", tools = [EchoTool, EchoTool], max_turns = 0, tool_errors = "ignore")]
pub struct BillingAgent;

#[application(name = "shop-application", description = "Shop", tool_interceptors = [AuditToolInterceptor],
              exclude_tool_interceptors = [AuditToolInterceptor])]
pub struct ShopApplication;


#[tool_interceptor(name = "slow-tool-interceptor", description = "Never ends", timeout_ms = 0)]
pub struct SlowToolInterceptor;

impl BeforeToolCall for SlowToolInterceptor {
    async fn before_tool_call(&self, _call: &ToolCallContext<'_>) -> Result<ToolCallDecision, InterceptorError> {
        Ok(ToolCallDecision::allow())
    }
}

fn main() {}
