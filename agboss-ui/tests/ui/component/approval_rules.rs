use agboss_core::dto::Dto;
use agboss_core::prelude::*;

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct InDto {
    #[text(prompt = "Text")]
    pub text: String,
}

fn always(_input: &InDto) -> bool {
    true
}

// [tool.approval-when-without-approval]: a condition without a channel.
#[tool(name = "refund-tool", description = "Refunds", input = InDto, output = InDto, approval_when = always)]
pub struct RefundTool;

impl ToolHandler<InDto, InDto> for RefundTool {
    async fn run(&self, input: InDto) -> Result<InDto, ToolError> {
        Ok(input)
    }
}

// [tool.not-a-channel]: `approval` names something that is not a #[channel].
#[tool(name = "pay-tool", description = "Pays", input = InDto, output = InDto, approval = RefundTool)]
pub struct PayTool;

impl ToolHandler<InDto, InDto> for PayTool {
    async fn run(&self, input: InDto) -> Result<InDto, ToolError> {
        Ok(input)
    }
}

fn main() {}
