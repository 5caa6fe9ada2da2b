use agboss_core::dto::Dto;
use agboss_core::prelude::*;

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct InDto {
    #[text(prompt = "Text")]
    pub text: String,
}

#[tool_interceptor(name = "audit-tool-interceptor", description = "Audits")]
pub struct AuditToolInterceptor;
fn main() {}
