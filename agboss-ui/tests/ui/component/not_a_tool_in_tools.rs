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

#[agent(name = "billing-agent", description = "Bills", tools = [EchoTool, InDto])]
pub struct BillingAgent;

fn main() {}
