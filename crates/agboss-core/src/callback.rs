//! [`ToolCallback`]: a tool as a model sees it, behind `dyn`: a definition (name, description,
//! input schema), metadata, and a call with JSON text. Every source of tools (our `#[tool]`s
//! bound to a path, MCP tools, a user's own callback) is a `ToolCallback`, so decorators such as
//! listeners compose with all of them. A callback made from a [`BoundTool`] runs the tool's whole
//! guarded pipeline on its path.
use std::fmt;
use std::sync::Arc;

use futures::future::BoxFuture;

use crate::cascade::BoundTool;
use crate::di::TenantContext;
use crate::error::ToolCallError;
use crate::model::ToolDefinition;
use crate::pipeline::JsonOutcome;

/// Where a callback's tool comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ToolSource {
    /// A `#[tool]` of this app.
    Native,
    /// A tool of an MCP server.
    Mcp,
    /// A user's own callback.
    Custom,
}

/// What is known about a callback's tool besides its definition.
#[derive(Debug, Clone)]
pub struct ToolMetadata {
    /// Native, MCP or custom.
    pub source: ToolSource,
    /// The registration data of a native tool.
    pub tool: Option<&'static crate::tool::ToolMeta>,
    /// The effective `max_result_size`.
    pub max_result_size: Option<usize>,
    /// The scope path the tool is bound on (application, workflow, agent).
    pub path: Vec<&'static str>,
}

/// One invocation of a callback.
#[derive(Debug, Clone, Copy)]
pub struct ToolInvocation<'a> {
    /// The call id (the model's, or generated).
    pub call_id: &'a str,
    /// The arguments, as JSON text exactly as the model sent them.
    pub arguments: &'a str,
    /// The tenant of the run.
    pub tenant: Option<&'a TenantContext>,
}

/// What a call produced for the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolResult {
    /// The tool ran: its serialized output (after every after-hook and truncation).
    Output {
        /// The text the model reads.
        content: String,
        /// Whether `max_result_size` cut it.
        truncated: bool,
    },
    /// An interceptor replied to the model; the tool did not run.
    ReplyToModel {
        /// The text the model reads.
        message: String,
        /// Who replied.
        interceptor: &'static str,
    },
    /// A failure reported to the model as the call's result (by a listener's `on_error`, or an
    /// agent's error policy); the tool's error is not propagated.
    ReportedError {
        /// The text the model reads.
        message: String,
    },
}

impl ToolResult {
    /// The text the model reads as the call's observation.
    pub fn content(&self) -> &str {
        match self {
            Self::Output { content, .. } => content,
            Self::ReplyToModel { message, .. } | Self::ReportedError { message } => message,
        }
    }
    /// True when the observation reports an error or a refusal rather than a tool output.
    pub fn is_error(&self) -> bool {
        !matches!(self, Self::Output { .. })
    }
}

impl From<JsonOutcome> for ToolResult {
    fn from(outcome: JsonOutcome) -> Self {
        match outcome {
            JsonOutcome::Ran { text, truncated } => Self::Output {
                content: text,
                truncated,
            },
            JsonOutcome::ReplyToModel {
                message,
                interceptor,
            } => Self::ReplyToModel {
                message,
                interceptor,
            },
        }
    }
}

/// A tool as the model sees it, callable with JSON text.
pub trait ToolCallback: Send + Sync {
    /// Name, description and input schema.
    fn definition(&self) -> &ToolDefinition;
    /// Source, limits, path.
    fn metadata(&self) -> &ToolMetadata;
    /// Runs one call. A block (and any failure no one reported) is an `Err`.
    fn call<'a>(
        &'a self,
        invocation: ToolInvocation<'a>,
    ) -> BoxFuture<'a, Result<ToolResult, ToolCallError>>;
    /// Masks a text this tool's call sends to the model besides its result (an error text a
    /// listener or an agent's error policy reports) with the PII policies of the tool's path.
    /// Default: unchanged. Decorators delegate it.
    fn mask_for_model<'t>(&self, text: &'t str) -> std::borrow::Cow<'t, str> {
        std::borrow::Cow::Borrowed(text)
    }
}

impl fmt::Debug for dyn ToolCallback {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolCallback")
            .field("name", &self.definition().name)
            .finish()
    }
}

/// A shared callback.
pub type SharedToolCallback = Arc<dyn ToolCallback>;

/// The callback of a tool bound to a path: runs its guarded pipeline.
pub struct BoundToolCallback {
    tool: BoundTool,
    definition: ToolDefinition,
    metadata: ToolMetadata,
}

impl BoundToolCallback {
    /// Wraps a bound tool.
    pub fn new(tool: BoundTool) -> Self {
        let definition = tool.definition();
        let metadata = ToolMetadata {
            source: ToolSource::Native,
            tool: Some(tool.meta()),
            max_result_size: tool.max_result_size(),
            path: tool.chain().path().to_vec(),
        };
        Self {
            tool,
            definition,
            metadata,
        }
    }
    /// The bound tool.
    pub fn bound(&self) -> &BoundTool {
        &self.tool
    }
}

impl ToolCallback for BoundToolCallback {
    fn definition(&self) -> &ToolDefinition {
        &self.definition
    }
    fn metadata(&self) -> &ToolMetadata {
        &self.metadata
    }
    fn mask_for_model<'t>(&self, text: &'t str) -> std::borrow::Cow<'t, str> {
        let mut report = crate::pii::MaskReport::default();
        self.tool.chain().pii().mask_text(text, &mut report)
    }
    fn call<'a>(
        &'a self,
        invocation: ToolInvocation<'a>,
    ) -> BoxFuture<'a, Result<ToolResult, ToolCallError>> {
        Box::pin(async move {
            self.tool
                .call(invocation.call_id, invocation.tenant, invocation.arguments)
                .await
                .map(ToolResult::from)
        })
    }
}

impl BoundTool {
    /// This tool as a [`ToolCallback`].
    pub fn callback(&self) -> SharedToolCallback {
        Arc::new(BoundToolCallback::new(self.clone()))
    }
}

impl crate::cascade::ResolvedAgent {
    /// The agent's tools as callbacks, in declaration order.
    pub fn callbacks(&self) -> Vec<SharedToolCallback> {
        self.tools.iter().map(BoundTool::callback).collect()
    }
}
