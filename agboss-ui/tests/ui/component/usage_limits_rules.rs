use agboss_core::prelude::*;

#[derive(Dto, Debug, Clone)]
pub struct NoteDto {
    #[text(prompt = "A note")]
    pub note: String,
}

#[tool(name = "note-tool", description = "Notes", input = NoteDto, output = NoteDto)]
pub struct NoteTool;
impl ToolHandler<NoteDto, NoteDto> for NoteTool {
    async fn run(&self, input: NoteDto) -> Result<NoteDto, ToolError> {
        Ok(input)
    }
}

pub struct Plain;

// [usage-limits.positive]: 0 admits no call; every error of the list is reported.
#[agent(name = "zero-agent", description = "Bounded at zero", tools = [NoteTool],
        usage_limits(tool_calls = 0, model_requests = 0, tool_calls_per_tool(NoteTool = 0)))]
pub struct ZeroAgent;

// [usage-limits.empty]
#[workflow(name = "empty-workflow", description = "Bounds nothing", usage_limits())]
pub struct EmptyWorkflow;

// [usage-limits.duplicate-tool]
#[application(name = "twice-application", description = "Bounds a tool twice",
              usage_limits(tool_calls_per_tool(NoteTool = 1, NoteTool = 2)))]
pub struct TwiceApplication;

// Not a tool: the Tool trait's own message, at the path.
#[agent(name = "plain-agent", description = "Bounds a plain type",
        usage_limits(tool_calls_per_tool(Plain = 1)))]
pub struct PlainAgent;

fn main() {}
