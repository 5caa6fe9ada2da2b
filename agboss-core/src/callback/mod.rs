//! Layer 4, callbacks: a tool as a model sees it, behind `dyn` ([`ToolCallback`]): a definition
//! (name, description, input schema), metadata, and a call with JSON text that ends with a
//! [`CallOutcome`]. Every source of tools (our `#[tool]`s bound to a path, MCP tools, a user's
//! own callback) is a `ToolCallback`, so decorators such as [`listener`]s compose with all of
//! them; `stack` is the one place that builds the decorated callbacks an agent loop or a
//! workflow step calls. A callback made from a [`BoundTool`] runs the tool's whole guarded
//! pipeline on its path.
//!
//! Uses [`crate::cascade`], [`crate::pipeline`] and [`crate::contract`].
use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;

use crate::cascade::BoundTool;
use crate::contract::MetaRef;
use crate::contract::channel::ApprovalGrant;
use crate::contract::outcome::{CallOutcome, Rendered};
use crate::contract::tool::{CallProgress, ToolMeta};
use crate::di::{CallId, TenantContext};
use crate::model::ToolDefinition;
use crate::pii::MaskReport;
use crate::pipeline::CallEnv;

pub mod listener;
pub(crate) mod stack;

pub use stack::{CallbackWrapper, ToolCallListenerSet};

/// Before 0.2, how a call through a callback ended; every path now ends with one
/// [`CallOutcome`] (`Ran` for `Output`, `Replied` for `ReplyToModel`,
/// `Failed` for the rest).
#[deprecated(
    since = "0.2.0",
    note = "renamed: every call ends with `agboss_core::CallOutcome` (Output → Ran, ReplyToModel → Replied, ReportedError → Failed)"
)]
pub type ToolResult = crate::contract::outcome::CallOutcome;

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
    /// The registration data of a native tool (or of a whole MCP server's tool, owned by the
    /// app).
    pub tool: Option<MetaRef<ToolMeta>>,
    /// The effective `max_result_size`.
    pub max_result_size: Option<usize>,
    /// The scope path the tool is bound on (application, workflow, agent).
    pub path: Vec<&'static str>,
    /// Whether a call may run again with the same idempotency key when a resumed run finds
    /// its end unrecorded (`#[tool(idempotent)]` for a native tool).
    pub idempotent: bool,
    /// A digest of the policy the call runs under (its path, its resolved chain, its PII
    /// policies, its approval channel): an approval ticket made under another one is not
    /// applied.
    pub policy_digest: Arc<str>,
}

/// One invocation of a callback.
///
/// ```
/// use std::time::Duration;
/// use agboss_core::callback::ToolInvocation;
/// let call = ToolInvocation::new("call_1", r#"{"orderId":"ACME-42"}"#)
///     .with_run_timeout(Duration::from_secs(5));
/// assert_eq!(call.call_id, "call_1");
/// assert!(call.tenant.is_none());
/// ```
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct ToolInvocation<'a> {
    /// The call id (the model's, or generated).
    pub call_id: &'a str,
    /// The arguments, as JSON text exactly as the model sent them.
    pub arguments: &'a str,
    /// The tenant of the run.
    pub tenant: Option<&'a TenantContext>,
    /// Bounds the tool's own work (a native tool's `run`, on top of its `timeout_ms`); a
    /// callback of another source should honour it. Interceptors have their own bound.
    pub run_timeout: Option<Duration>,
    /// Where the pipeline records how far the call got (set by listeners, to tell a cancelled
    /// call whose tool already ran from one whose tool never did).
    pub progress: Option<&'a CallProgress>,
    /// The call's idempotency key: the same on every attempt of the call (set by journaled
    /// runs); tools read it from their `ExecutionContext`.
    pub idempotency_key: Option<&'a str>,
    /// A human decision for this very call (set by a run resumed with a decided ticket).
    pub approval: Option<&'a ApprovalGrant>,
}

impl<'a> ToolInvocation<'a> {
    /// An invocation without tenant or time limit.
    pub fn new(call_id: &'a str, arguments: &'a str) -> Self {
        Self {
            call_id,
            arguments,
            tenant: None,
            run_timeout: None,
            progress: None,
            idempotency_key: None,
            approval: None,
        }
    }
    /// With a human decision for this call (none leaves it unset).
    pub fn with_approval(mut self, grant: Option<&'a ApprovalGrant>) -> Self {
        self.approval = grant;
        self
    }
    /// With this idempotency key (none leaves it unset).
    pub fn with_idempotency_key(mut self, key: Option<&'a str>) -> Self {
        self.idempotency_key = key;
        self
    }
    /// For a tenant.
    pub fn with_tenant(mut self, tenant: Option<&'a TenantContext>) -> Self {
        self.tenant = tenant;
        self
    }
    /// Records the call's progress here.
    pub fn with_progress(mut self, progress: &'a CallProgress) -> Self {
        self.progress = Some(progress);
        self
    }
    /// Bounds the tool's run: the shorter of this and any limit already set.
    pub fn with_run_timeout(mut self, limit: Duration) -> Self {
        self.run_timeout = Some(self.run_timeout.map_or(limit, |l| l.min(limit)));
        self
    }
}

/// A tool as the model sees it, callable with JSON text.
pub trait ToolCallback: Send + Sync {
    /// Name, description and input schema.
    fn definition(&self) -> &ToolDefinition;
    /// The definition, shared: what a model request carries (a run does not copy the schema).
    /// Default: a copy of [`ToolCallback::definition`]; decorators delegate it.
    fn shared_definition(&self) -> Arc<ToolDefinition> {
        Arc::new(self.definition().clone())
    }
    /// Source, limits, path.
    fn metadata(&self) -> &ToolMetadata;
    /// Runs one call to its [`CallOutcome`] (use [`CallOutcome::from_error`] for a failure
    /// known only as a `ToolCallError`).
    fn call<'a>(&'a self, invocation: ToolInvocation<'a>) -> BoxFuture<'a, CallOutcome<Rendered>>;
    /// Masks a text this tool's call sends to the model besides its result (an error text a
    /// listener or an agent's error policy reports, the input a listener records) with the PII
    /// policies of the tool's path. Default: unchanged. Decorators delegate it.
    fn mask_for_model<'t>(&self, text: &'t str) -> Cow<'t, str> {
        Cow::Borrowed(text)
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
    definition: Arc<ToolDefinition>,
    metadata: ToolMetadata,
}

impl fmt::Debug for BoundToolCallback {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BoundToolCallback")
            .field("tool", &self.tool)
            .finish()
    }
}

impl BoundToolCallback {
    /// Wraps a bound tool.
    pub fn new(tool: BoundTool) -> Self {
        let definition = Arc::new(tool.definition());
        let metadata = ToolMetadata {
            source: ToolSource::Native,
            tool: Some(tool.meta_ref().clone()),
            max_result_size: tool.max_result_size(),
            idempotent: tool.meta().idempotent,
            policy_digest: tool.policy_digest(),
            path: tool.chain().path().to_vec(),
        };
        Self {
            tool,
            definition,
            metadata,
        }
    }
    /// Wraps a bound tool, shared.
    pub fn shared(tool: &BoundTool) -> SharedToolCallback {
        Arc::new(Self::new(tool.clone()))
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
    fn shared_definition(&self) -> Arc<ToolDefinition> {
        Arc::clone(&self.definition)
    }
    fn metadata(&self) -> &ToolMetadata {
        &self.metadata
    }
    fn mask_for_model<'t>(&self, text: &'t str) -> Cow<'t, str> {
        let mut report = MaskReport::default();
        self.tool.chain().pii().mask_text(text, &mut report)
    }
    fn call<'a>(&'a self, invocation: ToolInvocation<'a>) -> BoxFuture<'a, CallOutcome<Rendered>> {
        Box::pin(async move {
            let env = CallEnv {
                services: &self.tool.services,
                tenant: invocation.tenant,
                call_id: CallId::new(invocation.call_id),
                run_timeout: invocation.run_timeout,
                progress: invocation.progress,
                idempotency_key: invocation.idempotency_key,
                approval: invocation.approval,
            };
            self.tool.call_with(env, invocation.arguments).await
        })
    }
}
