//! The remote of the per-tenant credential tests: a small streamable-HTTP MCP server (this
//! crate's own `serve_mcp`, on rmcp's server side) whose authenticator takes any bearer token
//! as the tenant named by the token itself, and whose `whoami-tool` answers the token it saw;
//! the client's `#[mcp_tool]` of it, and helpers.
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use agboss_core::dto::Dto;
use agboss_core::error::ToolCallErrorKind;
use agboss_core::mcp::client::McpError;
use agboss_core::mcp::server::{McpAuthError, McpAuthenticator, McpHttpServer, McpRequestMeta};
use agboss_core::{App, TenantContext, ToolCallError, ToolError, ToolHandler, mcp_tool, tool};

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct NoteDto {
    #[text(prompt = "A note")]
    pub note: String,
}

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct SeenDto {
    #[text(prompt = "The bearer token the server saw")]
    pub seen: String,
    #[text(prompt = "The note")]
    pub note: String,
}

/// On the remote: answers the tenant its authenticator gave the call, i.e. the token.
#[tool(name = "whoami-tool", description = "Says which token it saw", input = NoteDto,
       output = SeenDto, deps = [TenantContext])]
pub struct WhoamiTool {
    tenant: TenantContext,
}

impl ToolHandler<NoteDto, SeenDto> for WhoamiTool {
    async fn run(&self, input: NoteDto) -> Result<SeenDto, ToolError> {
        Ok(SeenDto {
            seen: self.tenant.tenant_id().to_owned(),
            note: input.note,
        })
    }
}

/// Any bearer token is accepted, as the tenant named by the token itself; counts requests.
pub struct EchoTokens(Arc<AtomicUsize>);

impl McpAuthenticator for EchoTokens {
    async fn authenticate(
        &self,
        request: &McpRequestMeta<'_>,
    ) -> Result<Option<TenantContext>, McpAuthError> {
        self.0.fetch_add(1, Ordering::SeqCst);
        let token = request
            .bearer_token()
            .ok_or(McpAuthError::MissingCredentials)?;
        Ok(Some(TenantContext::new(token)))
    }
}

pub async fn echo_server() -> (McpHttpServer, Arc<AtomicUsize>) {
    let requests = Arc::new(AtomicUsize::new(0));
    let app = App::builder()
        .tool::<WhoamiTool>()
        .build()
        .expect("remote app");
    let server = app
        .serve_mcp()
        .direct_chains()
        .authenticator(EchoTokens(Arc::clone(&requests)))
        .http("127.0.0.1:0")
        .await
        .expect("serves");
    (server, requests)
}

/// On the client: the remote tool.
#[mcp_tool(name = "remote-whoami-tool", description = "Asks the remote which token it saw",
           server = "echo", remote = "whoami-tool", input = NoteDto, output = SeenDto)]
pub struct RemoteWhoamiTool;

pub async fn seen(app: &App, tenant: &str, note: &str) -> Result<SeenDto, ToolCallError> {
    app.tool::<RemoteWhoamiTool>()
        .tenant(tenant)
        .invoke(NoteDto { note: note.into() })
        .await
}

pub fn mcp_error(error: &ToolCallError) -> &McpError {
    let ToolCallErrorKind::ToolFailed { error, .. } = error.kind() else {
        panic!("{error:?}")
    };
    error
        .source_error()
        .downcast_ref::<McpError>()
        .unwrap_or_else(|| panic!("{error:?}"))
}
