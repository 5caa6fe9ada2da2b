//! Tools: the [`ToolHandler`] a user implements and the [`Tool`] registration `#[tool]`
//! generates, with the [`ErasedToolType`] its meta points at (the pipeline implements it for
//! every tool type; the call contract behind it is the pipeline's).
use std::any::{Any, TypeId};
use std::borrow::Cow;
use std::fmt;
use std::future::Future;

use serde_json::Value;

use super::built::Built;
use super::channel::ChannelMeta;
use super::interceptor_meta::InterceptorMeta;
use super::meta_ref::MetaRef;
use super::pii_policy::PiiPolicyMeta;
use crate::contract::handler_error::ToolError;
use crate::di::{DepMeta, DiError, Resolver, Services};
use crate::dto::{Dto, ValidationError};

/// The body of a tool: `run(input) -> output`. Write it with `async fn`.
///
/// ```
/// use agboss_core::{tool, ToolError, ToolHandler};
/// use agboss_core::dto::Dto;
///
/// #[derive(Dto, Debug, Clone, PartialEq)]
/// pub struct EchoInputDto {
///     #[text(prompt = "Text to echo")]
///     pub text: String,
/// }
///
/// #[tool(name = "echo-tool", description = "Echoes its input", input = EchoInputDto, output = EchoInputDto)]
/// pub struct EchoTool;
///
/// impl ToolHandler<EchoInputDto, EchoInputDto> for EchoTool {
///     async fn run(&self, input: EchoInputDto) -> Result<EchoInputDto, ToolError> {
///         Ok(input)
///     }
/// }
/// ```
#[diagnostic::on_unimplemented(
    message = "[tool.missing-handler] `{Self}` does not implement `ToolHandler<{I}, {O}>`",
    label = "this tool has no `run`",
    note = "add `impl ToolHandler<{I}, {O}> for {Self} {{ async fn run(&self, input: {I}) -> Result<{O}, ToolError> {{ .. }} }}`"
)]
pub trait ToolHandler<I, O>: Send + Sync {
    /// Runs the tool on a validated input.
    fn run(&self, input: I) -> impl Future<Output = Result<O, ToolError>> + Send;
}

/// Registration data of a `#[tool]` (and of an `#[mcp_tool]`). Built once per tool, by the
/// macros, through [`ToolMeta::new`] and its `with_*` methods (const, so the data is a constant
/// of the program): a new field is written in one place, with its default. Read its fields;
/// `#[non_exhaustive]`: it cannot be written as a struct literal outside this crate.
///
/// A tool known only at run time (each tool of a whole MCP server) has data of its own, made
/// from the same constructor with an owned name, description and remote end, owned by the app
/// that listed it (see [`MetaRef`]); the runtime lends it to hooks for the time of a call
/// (`ToolCallContext::tool` is a `&'a ToolMeta`).
///
/// ```
/// use agboss_core::contract::tool::ToolMeta;
/// use agboss_core::{tool, ToolError, ToolHandler};
/// use agboss_core::dto::Dto;
///
/// #[derive(Dto, Debug, Clone, PartialEq)]
/// pub struct EchoDto {
///     #[text(prompt = "Text")]
///     pub text: String,
/// }
///
/// #[tool(name = "echo-tool", description = "Echoes", input = EchoDto, output = EchoDto, timeout_ms = 500)]
/// pub struct EchoTool;
/// impl ToolHandler<EchoDto, EchoDto> for EchoTool {
///     async fn run(&self, input: EchoDto) -> Result<EchoDto, ToolError> { Ok(input) }
/// }
///
/// let meta: &ToolMeta = <EchoTool as agboss_core::contract::tool::Tool>::META;
/// assert_eq!(meta.name, "echo-tool");
/// assert_eq!((meta.timeout_ms, meta.max_result_size), (Some(500), None));
/// ```
#[non_exhaustive]
pub struct ToolMeta {
    /// Unique kebab-case name ending in `-tool` (`<server>__<tool>` for a tool of a whole MCP
    /// server, owned by the app then).
    pub name: Cow<'static, str>,
    /// What the tool does (the model reads it).
    pub description: Cow<'static, str>,
    /// The struct's type name.
    pub type_name: &'static str,
    /// The struct's `TypeId`.
    pub type_id: fn() -> TypeId,
    /// The input DTO's JSON Schema.
    pub input_schema: fn() -> Value,
    /// The output DTO's JSON Schema.
    pub output_schema: fn() -> Value,
    /// Upper bound, in bytes, of the serialized result the model sees.
    pub max_result_size: Option<usize>,
    /// Upper bound, in bytes, of the JSON argument text a call may send (checked before it is
    /// decoded); `None`: [`DEFAULT_MAX_INPUT_SIZE`].
    pub max_input_size: Option<usize>,
    /// Time limit of the tool's `run`, in milliseconds (interceptors have their own bound).
    pub timeout_ms: Option<u64>,
    /// `#[tool(idempotent)]`: running the tool twice with the same idempotency key
    /// ([`ExecutionContext::idempotency_key`](crate::ExecutionContext::idempotency_key)) does
    /// its work once, so a resumed run may rerun a call whose end was never recorded.
    pub idempotent: bool,
    /// `#[tool(long_running)]`: served over MCP to a client that supports the tasks extension,
    /// a call is answered at once with a task to poll instead of holding the request open.
    pub long_running: bool,
    /// `#[tool(approval = SomeChannel)]`: a call that every `before_tool_call` allowed waits
    /// for a human decision through this channel before it runs.
    pub approval: Option<&'static ChannelMeta>,
    /// `#[tool(approval_when = path::to::fn)]`: the approval is needed only when this returns
    /// `true` for the call's typed input (given as `&dyn Any`; an input of another type needs
    /// approval). `None`: every call of a tool with a channel needs it.
    pub approval_when: Option<fn(&dyn Any) -> bool>,
    /// Interceptors attached at the tool.
    pub tool_interceptors: &'static [&'static InterceptorMeta],
    /// Inherited interceptors removed at the tool.
    pub exclude_tool_interceptors: &'static [&'static InterceptorMeta],
    /// PII policies attached at the tool.
    pub pii_policies: &'static [&'static PiiPolicyMeta],
    /// The tool's dependencies.
    pub deps: &'static [DepMeta],
    /// Where a remote tool lives (`#[mcp_tool]`, or a tool of a whole MCP server); `None` for a
    /// `#[tool]`.
    pub mcp: Option<MetaRef<dyn RemoteMeta>>,
    #[doc(hidden)]
    pub erased: fn() -> &'static dyn ErasedToolType,
}

impl ToolMeta {
    /// A tool's registration data with every option at its default: no size or time limit of
    /// its own, not idempotent, no approval, nothing attached at the tool, no dependency, not
    /// remote, and empty input and output schemas (set them with [`ToolMeta::with_schemas`]).
    pub const fn new(
        name: &'static str,
        description: &'static str,
        type_name: &'static str,
        type_id: fn() -> TypeId,
        erased: fn() -> &'static dyn ErasedToolType,
    ) -> Self {
        Self {
            name: Cow::Borrowed(name),
            description: Cow::Borrowed(description),
            type_name,
            type_id,
            input_schema: empty_schema,
            output_schema: empty_schema,
            max_result_size: None,
            max_input_size: None,
            timeout_ms: None,
            idempotent: false,
            long_running: false,
            approval: None,
            approval_when: None,
            tool_interceptors: &[],
            exclude_tool_interceptors: &[],
            pii_policies: &[],
            deps: &[],
            mcp: None,
            erased,
        }
    }
    /// The input and output DTOs' JSON Schemas.
    pub const fn with_schemas(mut self, input: fn() -> Value, output: fn() -> Value) -> Self {
        self.input_schema = input;
        self.output_schema = output;
        self
    }
    /// `max_result_size`, `max_input_size` (bytes) and `timeout_ms`.
    pub const fn with_limits(
        mut self,
        max_result_size: Option<usize>,
        max_input_size: Option<usize>,
        timeout_ms: Option<u64>,
    ) -> Self {
        self.max_result_size = max_result_size;
        self.max_input_size = max_input_size;
        self.timeout_ms = timeout_ms;
        self
    }
    /// `idempotent`.
    pub const fn with_idempotent(mut self, idempotent: bool) -> Self {
        self.idempotent = idempotent;
        self
    }
    /// `long_running`.
    pub const fn with_long_running(mut self, long_running: bool) -> Self {
        self.long_running = long_running;
        self
    }
    /// `approval` and `approval_when`.
    pub const fn with_approval(
        mut self,
        channel: Option<&'static ChannelMeta>,
        when: Option<fn(&dyn Any) -> bool>,
    ) -> Self {
        self.approval = channel;
        self.approval_when = when;
        self
    }
    /// What the tool's own scope attaches and excludes.
    pub const fn with_cascade(
        mut self,
        tool_interceptors: &'static [&'static InterceptorMeta],
        exclude_tool_interceptors: &'static [&'static InterceptorMeta],
        pii_policies: &'static [&'static PiiPolicyMeta],
    ) -> Self {
        self.tool_interceptors = tool_interceptors;
        self.exclude_tool_interceptors = exclude_tool_interceptors;
        self.pii_policies = pii_policies;
        self
    }
    /// The tool's dependencies.
    pub const fn with_deps(mut self, deps: &'static [DepMeta]) -> Self {
        self.deps = deps;
        self
    }
    /// Where a remote tool lives.
    pub const fn with_mcp(mut self, mcp: &'static dyn RemoteMeta) -> Self {
        // `None` before (a `const fn` cannot run the destructor an assignment would).
        std::mem::forget(self.mcp.replace(MetaRef::Static(mcp)));
        self
    }
}

fn empty_schema() -> Value {
    Value::Object(serde_json::Map::new())
}

/// Where a remote tool lives, as the contract sees it: the server it is called on (the cascade
/// checks the server is connected) and a name for messages; the rest is its transport's (an
/// MCP tool's [`mcp::client::McpToolMeta`](crate::mcp::client::McpToolMeta), feature `mcp`),
/// which reads it back through [`RemoteMeta::as_any`].
pub trait RemoteMeta: fmt::Display + Send + Sync + 'static {
    /// The server's name.
    fn server(&self) -> &'static str;
    /// The transport's own data.
    fn as_any(&self) -> &dyn Any;
}

impl fmt::Debug for ToolMeta {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolMeta")
            .field("name", &self.name)
            .field("type_name", &self.type_name)
            .finish()
    }
}

/// Implemented by `#[tool]`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a tool [tool.not-a-tool]",
    label = "expected a `#[tool]` struct",
    note = "only structs annotated with `#[tool(...)]` can be used here"
)]
pub trait Tool: ToolHandler<Self::Input, Self::Output> + Sized + Send + Sync + 'static {
    /// The input DTO (`Clone`, so that after-hooks can still read the input the tool consumed).
    type Input: Dto + Clone;
    /// The output DTO.
    type Output: Dto;
    /// Registration data.
    const META: &'static ToolMeta;
    /// Builds the tool from its dependencies.
    fn construct(resolver: &Resolver<'_>) -> Result<Self, DiError>;

    /// Whether one type serves several tools, each slot with its own registration data (the
    /// tools of a whole MCP server); `false` for every tool whose data is [`Tool::META`], so
    /// that the pipeline reads it as a constant.
    #[doc(hidden)]
    const META_PER_SLOT: bool = false;

    /// Checks a decoded input beyond its DTO's own rules, before any interceptor runs (an MCP
    /// tool without an input DTO checks the remote input schema here). A `#[tool]` has nothing
    /// more to check.
    #[inline]
    fn check_input(&self, input: &Self::Input) -> Result<(), ValidationError> {
        let _ = input;
        Ok(())
    }

    /// The input JSON Schema a model sees, when it is not the DTO's (an MCP tool without an
    /// input DTO gives the remote schema). `None`: [`ToolMeta::input_schema`].
    fn model_input_schema(&self) -> Option<Value> {
        None
    }
}

/// The largest JSON argument text a tool accepts when it sets no `max_input_size`: 1 MiB.
pub const DEFAULT_MAX_INPUT_SIZE: usize = 1 << 20;

/// How far one call got, shared by whoever made the call and the pipeline that runs it: a
/// listener whose call is cancelled learns whether the tool's side effects may have happened.
///
/// ```
/// use agboss_core::contract::tool::CallProgress;
/// let progress = CallProgress::default();
/// assert!(!progress.tool_ran());
/// ```
#[derive(Debug, Default)]
pub struct CallProgress {
    tool_ran: std::sync::atomic::AtomicBool,
}

impl CallProgress {
    /// True once the tool's `run` returned `Ok` (its after-hooks may not have run yet).
    pub fn tool_ran(&self) -> bool {
        self.tool_ran.load(std::sync::atomic::Ordering::Acquire)
    }
    pub(crate) fn mark_tool_ran(&self) {
        self.tool_ran
            .store(true, std::sync::atomic::Ordering::Release);
    }
}

/// Builds the slot of one tool type (referenced from [`ToolMeta::erased`]; implemented by the
/// pipeline for every `T: Tool`).
#[doc(hidden)]
pub trait ErasedToolType: Send + Sync {
    /// Builds the slot of the tool `meta` describes against the app's services.
    fn build_slot(&self, meta: &MetaRef<ToolMeta>, services: &Services) -> Result<Built, DiError>;
}
