use agboss_core::dto::Dto;
use agboss_core::prelude::*;

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct InDto {
    #[text(prompt = "Text")]
    pub text: String,
}

#[tool_interceptor(name = "audit-interceptor", description = "Audits")]
pub struct AuditInterceptor;

impl BeforeToolCall for AuditInterceptor {
    async fn before_tool_call(&self, _call: &ToolCallContext<'_>) -> Result<ToolCallDecision, InterceptorError> {
        Ok(ToolCallDecision::allow())
    }
}
fn main() {}
