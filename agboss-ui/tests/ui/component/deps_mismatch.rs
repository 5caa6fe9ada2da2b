use agboss_core::dto::Dto;
use agboss_core::prelude::*;

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct InDto {
    #[text(prompt = "Text")]
    pub text: String,
}

#[injectable]
pub struct AclService;

#[tool_interceptor(name = "acl-tool-interceptor", description = "Checks", deps = [TenantContext, AclService])]
pub struct AclToolInterceptor {
    acl: std::sync::Arc<AclService>,
    tenant: TenantContext,
    extra: u32,
}

impl BeforeToolCall for AclToolInterceptor {
    async fn before_tool_call(&self, _call: &ToolCallContext<'_>) -> Result<ToolCallDecision, InterceptorError> {
        Ok(ToolCallDecision::allow())
    }
}

#[tool(name = "plain-tool", description = "No deps", input = InDto, output = InDto, deps = [AclService])]
pub struct PlainTool;

impl ToolHandler<InDto, InDto> for PlainTool {
    async fn run(&self, input: InDto) -> Result<InDto, ToolError> {
        Ok(input)
    }
}
fn main() {}
