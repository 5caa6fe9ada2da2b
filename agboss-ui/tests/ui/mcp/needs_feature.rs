use agboss_core::mcp_tool;

// [mcp-tool.feature]: a valid `#[mcp_tool]` without agboss-core's `mcp` feature is one error
// naming the feature (this crate builds agboss-core without features).
#[mcp_tool(name = "get-sum-tool", description = "Adds two numbers", server = "everything", remote = "get-sum")]
pub struct GetSumTool;

fn main() {}
