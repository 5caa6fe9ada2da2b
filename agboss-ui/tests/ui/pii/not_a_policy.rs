use agboss_core::dto::Dto;
use agboss_core::{agent, tool, ToolError, ToolHandler};

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct NoteDto {
    #[text(prompt = "A note")]
    pub note: String,
}

pub struct NotAPiiPolicy;

#[tool(name = "note-tool", description = "Echoes", input = NoteDto, output = NoteDto,
       pii_policies = [NotAPiiPolicy])]
pub struct NoteTool;

impl ToolHandler<NoteDto, NoteDto> for NoteTool {
    async fn run(&self, input: NoteDto) -> Result<NoteDto, ToolError> {
        Ok(input)
    }
}

#[agent(name = "note-agent", description = "Notes", tools = [NoteTool],
        pii_policies = [NotAPiiPolicy])]
pub struct NoteAgent;

fn main() {}
