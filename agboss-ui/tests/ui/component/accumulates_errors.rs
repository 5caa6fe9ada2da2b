use agboss_core::dto::Dto;
use agboss_core::prelude::*;

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct InDto {
    #[text(prompt = "Text")]
    pub text: String,
}

#[tool(name = "GetOrder", description = "", input = InDto, output = InDto)]
pub struct GetOrder;

impl ToolHandler<InDto, InDto> for GetOrder {
    async fn run(&self, input: InDto) -> Result<InDto, ToolError> {
        Ok(input)
    }
}
fn main() {}
