use agboss_core::dto::Dto;
use agboss_core::prelude::*;

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct InDto {
    #[text(prompt = "Text")]
    pub text: String,
}

pub struct NotAService;

#[tool_interceptor(name = "acl-tool-interceptor", description = "Checks", deps = [NotAService])]
pub struct AclToolInterceptor {
    service: std::sync::Arc<NotAService>,
}

impl BeforeToolCall for AclToolInterceptor {
    async fn before_tool_call(&self, _call: &ToolCallContext<'_>) -> Result<ToolCallDecision, InterceptorError> {
        Ok(ToolCallDecision::allow())
    }
}
fn main() {}
