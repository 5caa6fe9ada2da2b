//! The remote end of an MCP tool ([`McpToolMeta`]): what a tool's meta names as its
//! [`RemoteMeta`].
use std::any::Any;
use std::borrow::Cow;
use std::fmt;

use crate::contract::tool::{RemoteMeta, ToolMeta};

/// The remote end of an MCP tool: the server it is called on (the name an
/// `McpServerConfig` gives it) and the tool's name there.
///
/// ```
/// use agboss_core::mcp::client::McpToolMeta;
/// let remote = McpToolMeta::new("everything", "get-sum", true, false);
/// assert_eq!(remote.to_string(), "`get-sum` on MCP server `everything`");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpToolMeta {
    /// The server's name.
    pub server: &'static str,
    /// The tool's name on the server (owned by the app for a tool of a whole server).
    pub remote: Cow<'static, str>,
    /// The input is a DTO of the app (`input = SomeDto`), checked at build against the remote
    /// input schema; otherwise the arguments are checked against the remote schema per call.
    pub typed_input: bool,
    /// The output is a DTO of the app (`output = SomeDto`); otherwise structured results are
    /// checked against the remote output schema.
    pub typed_output: bool,
}

impl fmt::Display for McpToolMeta {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}` on MCP server `{}`", self.remote, self.server)
    }
}

impl RemoteMeta for McpToolMeta {
    fn server(&self) -> &'static str {
        self.server
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

impl McpToolMeta {
    /// The remote end `remote` on server `server` (what `#[mcp_tool]` writes).
    pub const fn new(
        server: &'static str,
        remote: &'static str,
        typed_input: bool,
        typed_output: bool,
    ) -> Self {
        Self {
            server,
            remote: Cow::Borrowed(remote),
            typed_input,
            typed_output,
        }
    }
    /// The MCP end of a tool's meta, if it is an MCP tool.
    pub fn of(meta: &ToolMeta) -> Option<&McpToolMeta> {
        meta.mcp
            .as_deref()
            .and_then(|remote| remote.as_any().downcast_ref::<McpToolMeta>())
    }
}
