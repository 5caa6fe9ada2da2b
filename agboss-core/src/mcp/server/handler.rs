//! The rmcp [`ServerHandler`] of a served app: `tools/list` lists the served callbacks'
//! definitions, `tools/call` runs one callback (its whole guarded pipeline) and maps its
//! [`CallOutcome`] through the one observation policy ([`crate::pipeline::observe`]) to a
//! `CallToolResult`.
use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

use foldhash::HashMap;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{Map, Value};

use super::arguments::{RawArguments, RawByRequest};
use super::auth::Caller;
use crate::callback::{SharedToolCallback, ToolInvocation};
use crate::cascade::BoundTool;
use crate::contract::agent::ToolErrorPolicy;
use crate::contract::outcome::{CallOutcome, Rendered};
use crate::contract::outcome::{ToolCallError, ToolCallErrorKind};
use crate::di::TenantContext;
use crate::pipeline::observe::{Reader, observe};

/// One served tool: its callback and its MCP definition (built once).
struct Served {
    callback: SharedToolCallback,
    /// Whether `tools/list` declares an output schema: then every successful result carries
    /// structured content that matches it.
    has_output_schema: bool,
}

/// The tools a server exposes, with their MCP definitions built once.
pub(crate) struct ServedTools {
    tools: Vec<Served>,
    by_name: HashMap<String, usize>,
    listed: Arc<[Tool]>,
}

impl fmt::Debug for ServedTools {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.tools.iter().map(|t| &t.callback.definition().name))
            .finish()
    }
}

impl ServedTools {
    /// The callbacks to serve; `bound` are the app's tools on the same path, which tell whose
    /// results keep their output DTO's shape (no PII policy can turn a number into a mask, no
    /// `max_result_size` can cut the JSON): only those declare an output schema. A name served
    /// twice is refused (`Err(name)`).
    pub(crate) fn new<'b>(
        callbacks: Vec<SharedToolCallback>,
        bound: impl IntoIterator<Item = &'b BoundTool>,
    ) -> Result<Self, String> {
        let keeps_shape: HashMap<&'b str, &'b BoundTool> = bound
            .into_iter()
            .filter(|b| b.chain().pii().is_empty() && b.max_result_size().is_none())
            .map(|b| (&*b.meta().name, b))
            .collect();
        let mut tools = Vec::with_capacity(callbacks.len());
        let mut by_name = HashMap::default();
        let mut listed = Vec::with_capacity(callbacks.len());
        for callback in callbacks {
            let definition = callback.definition();
            if by_name
                .insert(definition.name.clone(), tools.len())
                .is_some()
            {
                return Err(definition.name.clone());
            }
            let input_schema = match &definition.parameters {
                Value::Object(map) => map.clone(),
                _ => Map::from_iter([("type".to_string(), Value::from("object"))]),
            };
            let mut tool = Tool::new(
                definition.name.clone(),
                definition.description.clone(),
                Arc::new(input_schema),
            );
            let output_schema = keeps_shape
                .get(definition.name.as_str())
                .filter(|b| {
                    callback
                        .metadata()
                        .tool
                        .as_deref()
                        .is_some_and(|m| std::ptr::eq(m, b.meta()))
                })
                .and_then(|b| match (b.meta().output_schema)() {
                    Value::Object(map) if map.get("type") == Some(&Value::from("object")) => {
                        Some(map)
                    }
                    _ => None,
                });
            let has_output_schema = output_schema.is_some();
            if let Some(schema) = output_schema {
                tool = tool.with_raw_output_schema(Arc::new(schema));
            }
            listed.push(tool);
            tools.push(Served {
                callback,
                has_output_schema,
            });
        }
        Ok(Self {
            tools,
            by_name,
            listed: listed.into(),
        })
    }

    /// The served tools' names, in order.
    pub(crate) fn names(&self) -> impl Iterator<Item = &str> {
        self.tools
            .iter()
            .map(|t| t.callback.definition().name.as_str())
    }
}

/// Where a call's tenant comes from.
#[derive(Debug, Clone)]
pub(crate) enum TenantSource {
    /// Fixed for the whole server (stdio, or HTTP without authentication).
    Fixed(Option<TenantContext>),
    /// The authenticated caller of each HTTP request ([`Caller`] in its extensions); a request
    /// without one is refused.
    PerRequest,
}

/// The rmcp handler of a served app. Cheap to clone (rmcp's HTTP service makes one per
/// session).
#[derive(Clone)]
pub struct McpToolServer {
    tools: Arc<ServedTools>,
    tenant: TenantSource,
    info: Arc<ServerConfig>,
    /// Over stdio: the raw arguments of the calls whose line held a key twice.
    raw: Option<Arc<RawByRequest>>,
}

impl fmt::Debug for McpToolServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpToolServer")
            .field("tools", &self.tools)
            .field("server", &self.info.server_info.name)
            .finish()
    }
}

impl McpToolServer {
    pub(crate) fn new(
        tools: Arc<ServedTools>,
        tenant: TenantSource,
        implementation: Implementation,
        instructions: Option<String>,
    ) -> Self {
        let mut info = ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(implementation);
        if let Some(instructions) = instructions {
            info = info.with_instructions(instructions);
        }
        Self {
            tools,
            tenant,
            info: Arc::new(info),
            raw: None,
        }
    }

    /// Reads the raw arguments of stdio calls from `raw` (see [`ScreenedLines`]).
    ///
    /// [`ScreenedLines`]: super::arguments::ScreenedLines
    pub(crate) fn with_raw_arguments(mut self, raw: Arc<RawByRequest>) -> Self {
        self.raw = Some(raw);
        self
    }

    /// The names of the tools it serves, in `tools/list` order.
    ///
    /// ```
    /// # use agboss_core::{tool, App, ToolError, ToolHandler};
    /// # use agboss_core::dto::Dto;
    /// # #[derive(Dto, Debug, Clone, PartialEq)]
    /// # pub struct EchoDto { #[text(prompt = "Text")] pub text: String }
    /// # #[tool(name = "echo-tool", description = "Echoes", input = EchoDto, output = EchoDto)]
    /// # pub struct EchoTool;
    /// # impl ToolHandler<EchoDto, EchoDto> for EchoTool {
    /// #     async fn run(&self, input: EchoDto) -> Result<EchoDto, ToolError> { Ok(input) }
    /// # }
    /// let app = App::builder().tool::<EchoTool>().build().unwrap();
    /// let server = app.serve_mcp().tenant("acme").handler().unwrap();
    /// assert_eq!(server.tool_names().collect::<Vec<_>>(), ["echo-tool"]);
    /// ```
    pub fn tool_names(&self) -> impl Iterator<Item = &str> {
        self.tools.names()
    }

    /// The tenant of one request, or the refusal.
    fn tenant_of(&self, context: &RequestContext<RoleServer>) -> Result<Option<TenantContext>, ()> {
        match &self.tenant {
            TenantSource::Fixed(tenant) => Ok(tenant.clone()),
            TenantSource::PerRequest => context
                .extensions
                .get::<axum::http::request::Parts>()
                .and_then(|parts| parts.extensions.get::<Caller>())
                .map(|caller| caller.tenant.clone())
                .ok_or(()),
        }
    }

    /// Runs one `tools/call`.
    async fn call(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        // The raw text when it holds a key twice (rmcp's map kept one of the two); taken first,
        // so that no request leaves its text behind.
        let raw = match &self.raw {
            Some(by_request) => serde_json::to_string(&context.id)
                .ok()
                .and_then(|id| by_request.take(&id)),
            None => context
                .extensions
                .get::<axum::http::request::Parts>()
                .and_then(|parts| parts.extensions.get::<RawArguments>())
                .cloned(),
        };
        let Some(&index) = self.tools.by_name.get(request.name.as_ref()) else {
            return Err(ErrorData::invalid_params(
                format!("Unknown tool: {}", request.name),
                None,
            ));
        };
        let served = &self.tools.tools[index];
        let Ok(tenant) = self.tenant_of(&context) else {
            // Unreachable behind the authentication layer; refused all the same.
            return Ok(error_result("The request is not authenticated.".into()));
        };
        let arguments = match (raw, &request.arguments) {
            (Some(raw), _) => raw.0.to_string(),
            (None, Some(arguments)) => serde_json::to_string(arguments)
                .map_err(|e| ErrorData::invalid_params(format!("arguments: {e}"), None))?,
            (None, None) => "{}".to_string(),
        };
        let call_id = format!("mcp-{}", context.id);
        let invocation = ToolInvocation::new(&call_id, &arguments).with_tenant(tenant.as_ref());
        let outcome = tokio::select! {
            biased;
            outcome = served.callback.call(invocation) => outcome,
            () = context.ct.cancelled() => {
                // The client cancelled: the call's future is dropped (listeners hear
                // `on_cancelled`); the answer is not read.
                return Ok(error_result("The call was cancelled.".into()));
            }
        };
        Ok(to_result(served, &call_id, outcome))
    }
}

/// What a caller reads of one outcome: the observation policy of a model reader that reports
/// a tool's own failures ([`ToolErrorPolicy::Report`]: a safe text naming the error class), a
/// `reply_to_model` as an error result with its message, a block as an error result with its
/// reason; a failing guard or a call awaiting approval as a safe text without internals. Every
/// text built here is masked by the PII policies of the tool's path.
fn to_result(served: &Served, call_id: &str, outcome: CallOutcome<Rendered>) -> CallToolResult {
    let callback = &served.callback;
    let tool_name = callback.definition().name.as_str();
    let mask: &dyn Fn(&str) -> Cow<'_, str> = &|text| callback.mask_for_model(text);
    let observed = observe(
        tool_name,
        call_id,
        outcome,
        Reader::Model(ToolErrorPolicy::Report),
        mask,
    );
    if let Some(full) = &observed.tool_error {
        tracing::warn!(tool = tool_name, call_id, error = %full, "MCP tool call failed");
    }
    match observed.verdict {
        Ok(observation) if observation.is_error => error_result(observation.content),
        Ok(observation) => {
            let structured = if observation.truncated {
                None
            } else {
                match serde_json::from_str::<Value>(&observation.content) {
                    Ok(value @ Value::Object(_)) => Some(value),
                    _ => None,
                }
            };
            let mut result = CallToolResult::success(vec![ContentBlock::text(observation.content)]);
            if served.has_output_schema || structured.is_some() {
                result.structured_content = structured;
            }
            result
        }
        Err(error) => {
            tracing::warn!(tool = tool_name, call_id, error = %error, "MCP tool call refused");
            error_result(mask(&refusal_text(tool_name, &error)).into_owned())
        }
    }
}

/// The text of a call that fails closed: a block's reason (written for whoever called), else
/// a fixed text naming what happened and nothing of the error.
fn refusal_text(tool_name: &str, error: &ToolCallError) -> String {
    if let Some(blocked) = error.as_blocked() {
        return blocked.text().to_string();
    }
    match error.kind() {
        ToolCallErrorKind::ApprovalRequired {
            channel, ticket_id, ..
        } => match ticket_id {
            Some(ticket) => format!(
                "The call of `{tool_name}` waits for a human approval through `{channel}` (ticket {ticket}); it did not run."
            ),
            None => format!(
                "The call of `{tool_name}` needs a human approval through `{channel}`; it did not run."
            ),
        },
        _ => format!(
            "The call of `{tool_name}` was refused: a guard failed. The details were logged for the operator."
        ),
    }
}

fn error_result(text: String) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(text)])
}

impl ServerHandler for McpToolServer {
    fn get_info(&self) -> ServerConfig {
        (*self.info).clone()
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools.listed.to_vec()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        let index = *self.tools.by_name.get(name)?;
        Some(self.tools.listed[index].clone())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        self.call(request, context)
            .await
            .map(CallToolResponse::from)
    }
}
