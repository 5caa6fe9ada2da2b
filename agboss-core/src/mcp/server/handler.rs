//! The rmcp [`ServerHandler`] of a served app: `tools/list` lists the served callbacks'
//! definitions, `tools/call` runs one callback (its whole guarded pipeline) and maps its
//! [`CallOutcome`] through the one observation policy ([`crate::pipeline::observe`]) to a
//! `CallToolResult`.
use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

use futures::future::BoxFuture;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CancelTaskParams, ContentBlock,
    GetTaskParams, GetTaskResult, Implementation, ListToolsResult, PaginatedRequestParams,
    ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::Value;

use super::arguments::{RawArguments, RawByRequest};
use super::auth::Caller;
use super::tasks::{ClaimedCall, ServedTasks, approval_task};
use super::tools::{Served, ServedTools};
use crate::callback::ToolInvocation;
use crate::contract::agent::ToolErrorPolicy;
use crate::contract::channel::ApprovalGrant;
use crate::contract::outcome::{CallDecision, CallOutcome, FailureKind, Rendered};
use crate::contract::outcome::{ToolCallError, ToolCallErrorKind};
use crate::di::TenantContext;
use crate::pipeline::observe::{Reader, observe};

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
    tasks: ServedTasks,
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
        tasks: ServedTasks,
    ) -> Self {
        // The tasks extension is declared when a call can become a task.
        let capabilities =
            if tasks.approvals.is_some() || tools.tools.iter().any(|t| t.long_running) {
                ServerCapabilities::builder()
                    .enable_tools()
                    .enable_tasks()
                    .build()
            } else {
                ServerCapabilities::builder().enable_tools().build()
            };
        let mut info = ServerConfig::new(capabilities).with_server_info(implementation);
        if let Some(instructions) = instructions {
            info = info.with_instructions(instructions);
        }
        Self {
            tools,
            tenant,
            info: Arc::new(info),
            tasks,
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
    /// let server = app.serve_mcp().direct_chains().tenant("acme").handler().unwrap();
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
    ) -> Result<CallToolResponse, ErrorData> {
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
            return Ok(error_result("The request is not authenticated.".into()).into());
        };
        let arguments = match (raw, &request.arguments) {
            (Some(raw), _) => raw.0.to_string(),
            (None, Some(arguments)) => serde_json::to_string(arguments)
                .map_err(|e| ErrorData::invalid_params(format!("arguments: {e}"), None))?,
            (None, None) => "{}".to_string(),
        };
        let call_id = format!("mcp-{}", context.id);
        let as_task = context
            .client_capabilities()
            .is_some_and(|c| c.supports_tasks());
        let tenant_id = tenant
            .as_ref()
            .map_or("", TenantContext::tenant_id)
            .to_string();
        if as_task && served.long_running {
            let tools = Arc::clone(&self.tools);
            let call = async move {
                let outcome = run_once(&tools, index, tenant.as_ref(), &call_id, &arguments, None);
                to_result(&tools.tools[index], &call_id, outcome.await)
            };
            return Ok(CallToolResponse::Task(
                self.tasks.spawn(&tenant_id, Box::pin(call)),
            ));
        }
        let outcome = tokio::select! {
            biased;
            outcome = run_once(&self.tools, index, tenant.as_ref(), &call_id, &arguments, None) => outcome,
            () = context.ct.cancelled() => {
                // The client cancelled: the call's future is dropped (listeners hear
                // `on_cancelled`); the answer is not read.
                return Ok(error_result("The call was cancelled.".into()).into());
            }
        };
        // A call that waits for approval, of a client that can poll: its ticket is its task.
        let outcome = match (outcome, &self.tasks.approvals) {
            (CallOutcome::Failed(failure), Some(approvals))
                if as_task && failure.kind() == FailureKind::Approval =>
            {
                let error = approvals
                    .open(&request.name, &tenant_id, &call_id, failure.into_error())
                    .await;
                if let ToolCallErrorKind::ApprovalRequired {
                    channel,
                    ticket_id: Some(ticket),
                    ..
                } = error.kind()
                {
                    return Ok(CallToolResponse::Task(approval_task(ticket, channel)));
                }
                CallOutcome::failed(FailureKind::Approval, error)
            }
            (outcome, _) => outcome,
        };
        Ok(to_result(served, &call_id, outcome).into())
    }

    /// Runs a claimed call (approved, or edited: its input is the approver's) once, on the
    /// served path, and records its result.
    fn run_claimed(
        &self,
        tenant: Option<TenantContext>,
        claimed: ClaimedCall,
    ) -> BoxFuture<'static, ()> {
        let tools = Arc::clone(&self.tools);
        let approvals = self.tasks.approvals.clone();
        Box::pin(async move {
            let Some(approvals) = approvals else { return };
            let (label, result) = match tools.by_name.get(claimed.tool.as_str()) {
                Some(&index) => {
                    let outcome = run_once(
                        &tools,
                        index,
                        tenant.as_ref(),
                        &claimed.call_id,
                        &claimed.input,
                        Some(&claimed.grant),
                    )
                    .await;
                    let label = outcome.decision().label();
                    let result = to_result(&tools.tools[index], &claimed.call_id, outcome);
                    let text = result
                        .content
                        .iter()
                        .filter_map(|c| c.as_text().map(|t| t.text.as_str()))
                        .collect::<String>();
                    let result = if result.is_error == Some(true) {
                        Err(text)
                    } else {
                        Ok(text)
                    };
                    (label, result)
                }
                None => (
                    CallDecision::Rejected {
                        reason: String::new(),
                    }
                    .label(),
                    Err(format!("`{}` is not served here.", claimed.tool)),
                ),
            };
            approvals.finish(claimed, label, result).await;
        })
    }
}

/// Runs served tool `index` once through its callback.
async fn run_once(
    tools: &ServedTools,
    index: usize,
    tenant: Option<&TenantContext>,
    call_id: &str,
    arguments: &str,
    grant: Option<&ApprovalGrant>,
) -> CallOutcome<Rendered> {
    let invocation = ToolInvocation::new(call_id, arguments)
        .with_tenant(tenant)
        .with_approval(grant);
    tools.tools[index].callback.call(invocation).await
}

fn unknown_task(task_id: &str) -> ErrorData {
    ErrorData::invalid_params(format!("unknown task: {task_id}"), None)
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
        self.call(request, context).await
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        let Ok(tenant) = self.tenant_of(&context) else {
            return Err(unknown_task(&request.task_id));
        };
        let tenant_id = tenant.as_ref().map_or("", TenantContext::tenant_id);
        let run = |claimed| self.run_claimed(tenant.clone(), claimed);
        match self.tasks.get(tenant_id, &request.task_id, run).await? {
            Some(task) => Ok(GetTaskResult::new(task)),
            None => Err(unknown_task(&request.task_id)),
        }
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let Ok(tenant) = self.tenant_of(&context) else {
            return Err(unknown_task(&request.task_id));
        };
        let tenant_id = tenant.as_ref().map_or("", TenantContext::tenant_id);
        if self.tasks.cancel(tenant_id, &request.task_id).await? {
            Ok(())
        } else {
            Err(unknown_task(&request.task_id))
        }
    }
}
