//! The connected servers of an app (held in its services) and the tools of whole servers.
use std::borrow::Cow;
use std::sync::Arc;

use super::McpToolMeta;
use super::connection::McpServer;
use super::dto::{McpArguments, McpResult};
use super::remote::{McpRemote, check_declaration};
use crate::cascade::RemoteServer;
use crate::contract::handler_error::ToolError;
use crate::contract::tool::{ErasedToolType, Tool, ToolHandler, ToolMeta};
use crate::contract::{Built, MetaRef};
use crate::di::BuildError;
use crate::di::{DiError, Resolver, Services};
use crate::dto::{Dto, ValidationError};
use crate::pipeline::{ErasedToolSlot, ToolSlot};

/// The longest tool name the model APIs accept.
const MAX_TOOL_NAME: usize = 64;

impl RemoteServer for McpServer {
    fn name(&self) -> &'static str {
        McpServer::name(self)
    }

    fn check(&self, meta: &ToolMeta) -> Result<(), BuildError> {
        let Some(remote) = McpToolMeta::of(meta) else {
            return Ok(());
        };
        check_declaration(
            meta,
            remote,
            self.tool(&remote.remote),
            self.tools().map(|t| t.name.clone()),
        )
        .map_err(|problem| BuildError::Mcp {
            server: remote.server,
            tool: Some(meta.name.clone()),
            problem,
        })
    }

    fn server_tools(&self) -> Result<Vec<MetaRef<ToolMeta>>, BuildError> {
        let server = McpServer::name(self);
        self.tools()
            .map(|t| server_tool_meta(server, &t.name, &t.description))
            .collect()
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    fn account_channel(&self) -> Option<(&'static str, bool)> {
        let config = self.config();
        Some((config.account_channel?, config.per_tenant.is_some()))
    }
}

/// The model-facing name of a whole server's tool: `<server>__<remote>`, every character
/// outside `[A-Za-z0-9_-]` replaced by `_`. Native tool names are kebab-case and never hold
/// `__`, so the two never collide; two remote names that differ only in replaced characters
/// are a build error.
///
/// ```
/// use agboss_core::mcp::client::server_tool_name;
/// assert_eq!(server_tool_name("everything", "get-sum"), "everything__get-sum");
/// assert_eq!(server_tool_name("files", "read.file"), "files__read_file");
/// ```
pub fn server_tool_name(server: &str, remote: &str) -> String {
    let clean = |s: &str| -> String {
        s.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .collect()
    };
    format!("{}__{}", clean(server), clean(remote))
}

/// The registration data of one tool of a whole server, made from the server's listing each
/// time an app is built and owned by that app (its bound tools and slots hold it): dropping
/// the app frees it.
fn server_tool_meta(
    server: &'static str,
    remote: &str,
    description: &str,
) -> Result<MetaRef<ToolMeta>, BuildError> {
    let name = server_tool_name(server, remote);
    if name.len() > MAX_TOOL_NAME {
        return Err(BuildError::Mcp {
            server,
            tool: None,
            problem: format!(
                "its tool `{remote}` would be named `{name}`, over the {MAX_TOOL_NAME} characters models accept; declare it with `#[mcp_tool(name = .., remote = \"{remote}\")]` instead"
            ),
        });
    }
    let mut remote_end = McpToolMeta::new(server, "", false, false);
    remote_end.remote = Cow::Owned(remote.to_owned());
    // The type's registration data, with this tool's name, description and remote end.
    let mut meta = server_tool("", "");
    meta.name = Cow::Owned(name);
    meta.description = Cow::Owned(description.to_owned());
    meta.mcp = Some(MetaRef::Shared(Arc::new(remote_end)));
    Ok(MetaRef::Shared(Arc::new(meta)))
}

/// One tool of a whole server: the remote schemas in and out.
pub(crate) struct McpServerTool {
    remote: McpRemote,
}

impl ToolHandler<McpArguments, McpResult> for McpServerTool {
    async fn run(&self, input: McpArguments) -> Result<McpResult, ToolError> {
        self.remote.call(input).await
    }
}

/// The registration data of a whole server's tool named `name`: the type's, built in one
/// place (the placeholder below and each listed tool).
const fn server_tool(name: &'static str, description: &'static str) -> ToolMeta {
    ToolMeta::new(
        name,
        description,
        "McpServerTool",
        std::any::TypeId::of::<McpServerTool>,
        || &ServerToolType,
    )
    .with_schemas(McpArguments::json_schema, McpResult::json_schema)
}

/// Placeholder registration of the type: each instance runs under its own tool's meta.
const SERVER_TOOL: &ToolMeta = &server_tool("mcp-server-tool", "a tool of a whole MCP server");

impl Tool for McpServerTool {
    type Input = McpArguments;
    type Output = McpResult;
    const META: &'static ToolMeta = SERVER_TOOL;
    const META_PER_SLOT: bool = true;
    fn construct(_: &Resolver<'_>) -> Result<Self, DiError> {
        Err(DiError::Failed(
            "a whole MCP server's tool is built by the app's MCP registry".into(),
        ))
    }
    fn check_input(&self, input: &McpArguments) -> Result<(), ValidationError> {
        self.remote.check_input(input)
    }
    fn model_input_schema(&self) -> Option<serde_json::Value> {
        self.remote.model_input_schema()
    }
}

struct ServerToolType;

impl ErasedToolType for ServerToolType {
    fn build_slot(&self, meta: &MetaRef<ToolMeta>, services: &Services) -> Result<Built, DiError> {
        let remote = McpRemote::from_services(services, meta)?;
        let slot: Arc<dyn ErasedToolSlot> = Arc::new(ToolSlot::of_instance(
            McpServerTool { remote },
            meta.clone(),
        ));
        Ok(Built::new(slot))
    }
}
