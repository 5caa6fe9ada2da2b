use agboss_core::mcp_tool;

// [mcp-tool.unit-struct]: the macro adds the connection itself.
#[mcp_tool(name = "fields-tool", description = "Has fields", server = "everything", remote = "echo")]
pub struct FieldsTool {
    pub client: u32,
}

// [mcp-tool.server] and [mcp-tool.remote]: empty names; [mcp-tool.timeout-ms]: not positive.
#[mcp_tool(name = "empty-tool", description = "Empty names", server = "", remote = " ", timeout_ms = 0)]
pub struct EmptyTool;

// A required key missing.
#[mcp_tool(name = "no-server-tool", description = "No server", remote = "echo")]
pub struct NoServerTool;

// [name.kind-suffix]: the same naming rules as #[tool].
#[mcp_tool(name = "echo-thing", description = "Wrong suffix", server = "everything", remote = "echo")]
pub struct EchoThing;

fn main() {}
