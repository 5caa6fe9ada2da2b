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

#[agent(name = "billing", description = "Bills", tools = [EchoTool])]
pub struct Billing;

#[router(name = "support-agent", description = "Routes", routes = [Billing])]
pub struct SupportRouter;

#[workflow(name = "support-workflow", description = "Flows")]
pub struct SupportFlow;

#[application(name = "shop-app", description = "Shop")]
pub struct ShopApplication;

fn main() {}
