//! Errors of the runtime.
//!
//! The error types form one hierarchy, so that code which handles a failed step also catches a
//! blocked tool and can tell which it was:
//!
//! ```
//! use agboss_core::{StepFailedError, ToolBlockedError, BlockKind};
//!
//! fn describe(err: &StepFailedError) -> String {
//!     match err {
//!         StepFailedError::ToolBlocked(blocked) => format!("blocked by {}", blocked.interceptor),
//!         other => format!("failed: {other}"),
//!     }
//! }
//! let blocked = ToolBlockedError {
//!     tool_name: "get-order-tool".into(),
//!     call_id: "call_1".into(),
//!     interceptor: "tenant-order-tool-interceptor",
//!     kind: BlockKind::Block { reason: "tenant mismatch".into() },
//! };
//! let step: StepFailedError = blocked.into();
//! assert_eq!(describe(&step), "blocked by tenant-order-tool-interceptor");
//! assert!(step.as_blocked().is_some());
//! ```
use std::fmt;

use crate::dto::ValidationError;

/// A boxed error, what [`ToolError`] and [`InterceptorError`] carry.
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

macro_rules! handler_error {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        pub struct $name(BoxError);

        impl $name {
            /// An error with a plain message.
            pub fn msg(message: impl Into<String>) -> Self {
                Self(message.into().into())
            }
            /// The underlying error.
            pub fn source_error(&self) -> &(dyn std::error::Error + Send + Sync + 'static) {
                &*self.0
            }
            /// Unwraps the underlying error.
            pub fn into_inner(self) -> BoxError {
                self.0
            }
        }

        impl<E: std::error::Error + Send + Sync + 'static> From<E> for $name {
            fn from(err: E) -> Self {
                Self(Box::new(err))
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Debug::fmt(&self.0, f)
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Display::fmt(&self.0, f)
            }
        }

        impl std::ops::Deref for $name {
            type Target = dyn std::error::Error + Send + Sync + 'static;
            fn deref(&self) -> &Self::Target {
                &*self.0
            }
        }

        impl AsRef<dyn std::error::Error + Send + Sync + 'static> for $name {
            fn as_ref(&self) -> &(dyn std::error::Error + Send + Sync + 'static) {
                &*self.0
            }
        }

        impl From<$name> for BoxError {
            fn from(err: $name) -> Self {
                err.0
            }
        }
    };
}

handler_error! {
    /// The error a tool's `run` returns. Any `std::error::Error` converts into it with `?`;
    /// [`ToolError::msg`] makes one from a message.
    ///
    /// Like `anyhow::Error` and `Box<dyn Error>`, it is not itself a `std::error::Error` (that
    /// impl would collide with the blanket `From` that makes `?` work on every error); it
    /// dereferences to `dyn Error + Send + Sync`, converts into a [`BoxError`], and is the
    /// [`source()`](std::error::Error::source) of [`ToolCallError::ToolFailed`]:
    ///
    /// ```
    /// use std::error::Error as _;
    /// use agboss_core::{ToolCallError, ToolError};
    /// let io = std::io::Error::other("disk on fire");
    /// let err = ToolCallError::ToolFailed { tool_name: "save-tool".into(), error: ToolError::from(io) };
    /// assert_eq!(err.source().unwrap().to_string(), "disk on fire");
    /// let tool_error = ToolError::msg("late");
    /// let as_dyn: &(dyn std::error::Error + Send + Sync) = &*tool_error;
    /// assert_eq!(as_dyn.to_string(), "late");
    /// ```
    ToolError
}

handler_error! {
    /// The error a `before_tool_call` / `after_tool_call` hook returns. The call fails closed:
    /// the tool does not run (or its output is discarded). Like [`ToolError`], it dereferences
    /// to `dyn Error + Send + Sync` and is the `source()` of
    /// [`ToolCallError::InterceptorFailed`].
    InterceptorError
}

handler_error! {
    /// The error an input or output guardrail's check returns. The step fails closed with a
    /// [`GuardrailBlockedError`] of kind [`GuardrailBlockKind::Failed`]. Like [`ToolError`], it
    /// dereferences to `dyn Error + Send + Sync`.
    GuardrailError
}

handler_error! {
    /// The error an approval channel's `notify` or `authorize` returns. It never lets a call
    /// through: a failed `notify` leaves the ticket pending, a failed `authorize` refuses the
    /// approver. Like [`ToolError`], it dereferences to `dyn Error + Send + Sync`.
    ChannelError
}

/// A dependency that could not be provided.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DiError {
    /// The call was made without a tenant, but a component needs `TenantContext`.
    #[error("no TenantContext for this invocation: pass a tenant (e.g. `.tenant(\"acme\")`)")]
    NoTenant,
    /// The service is not in the app.
    #[error("service `{0}` is not provided")]
    MissingService(&'static str),
    /// The constructor failed.
    #[error("{0}")]
    Failed(String),
}

/// Why a tool call was stopped by an interceptor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BlockKind {
    /// `ToolCallDecision::block(reason)`: a hard abort.
    Block {
        /// The reason the interceptor gave.
        reason: String,
    },
    /// `ToolCallDecision::reply_to_model(message)` on a direct invoke, where no model can read it.
    ReplyToModel {
        /// The message meant for the model.
        message: String,
    },
}

/// A tool call that an interceptor stopped. A subclass of [`StepFailedError`] in the seed's terms:
/// it converts into `StepFailedError::ToolBlocked`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("tool `{tool_name}` (call {call_id}) was blocked by `{interceptor}`: {}", self.text())]
pub struct ToolBlockedError {
    /// The tool's registered name.
    pub tool_name: String,
    /// The call id of the blocked call.
    pub call_id: String,
    /// The name of the interceptor that stopped the call.
    pub interceptor: &'static str,
    /// Block or reply-to-model.
    pub kind: BlockKind,
}

impl ToolBlockedError {
    /// The reason (for a block) or the message (for a reply to the model).
    pub fn text(&self) -> &str {
        match &self.kind {
            BlockKind::Block { reason } => reason,
            BlockKind::ReplyToModel { message } => message,
        }
    }
}

/// Every way a single tool call can fail.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ToolCallError {
    /// The input failed its DTO: every failing field with its JSON path.
    #[error("invalid input for tool `{tool_name}`: {source}")]
    InvalidInput {
        /// The tool's registered name.
        tool_name: String,
        /// The field errors.
        #[source]
        source: ValidationError,
    },
    /// An interceptor blocked the call (or replied to the model on a direct invoke).
    #[error(transparent)]
    Blocked(#[from] ToolBlockedError),
    /// An interceptor returned an error: the call failed closed.
    #[error("interceptor `{interceptor}` failed on tool `{tool_name}`: {error}")]
    InterceptorFailed {
        /// The tool's registered name.
        tool_name: String,
        /// The interceptor's registered name.
        interceptor: &'static str,
        /// What it returned.
        #[source]
        error: InterceptorError,
    },
    /// An interceptor's hook ran past its time limit (`#[tool_interceptor(timeout_ms = ..)]`, or
    /// the app's [`interceptor_timeout`](crate::AppBuilder::interceptor_timeout)): the call
    /// failed closed, like any other guard failure.
    #[error("interceptor `{interceptor}` timed out on tool `{tool_name}` after {timeout_ms} ms")]
    InterceptorTimeout {
        /// The tool's registered name.
        tool_name: String,
        /// The interceptor's registered name.
        interceptor: &'static str,
        /// The limit.
        timeout_ms: u64,
    },
    /// An interceptor panicked: the call failed closed.
    #[error("interceptor `{interceptor}` panicked on tool `{tool_name}`: {message}")]
    InterceptorPanicked {
        /// The tool's registered name.
        tool_name: String,
        /// The interceptor's registered name.
        interceptor: &'static str,
        /// The panic payload, when it was a string.
        message: String,
    },
    /// The tool's `run` returned an error.
    #[error("tool `{tool_name}` failed: {error}")]
    ToolFailed {
        /// The tool's registered name.
        tool_name: String,
        /// What it returned.
        #[source]
        error: ToolError,
    },
    /// The tool's `run` panicked.
    #[error("tool `{tool_name}` panicked: {message}")]
    ToolPanicked {
        /// The tool's registered name.
        tool_name: String,
        /// The panic payload, when it was a string.
        message: String,
    },
    /// The tool's `run` ran past its time limit (`#[tool(timeout_ms = ..)]`, or the run's
    /// `tool_timeout`). A tool failure: interceptors have their own bound
    /// ([`ToolCallError::InterceptorTimeout`]).
    #[error("tool `{tool_name}` timed out after {timeout_ms} ms")]
    Timeout {
        /// The tool's registered name.
        tool_name: String,
        /// The limit.
        timeout_ms: u64,
    },
    /// The output (after the after-hooks) failed the tool's output DTO.
    #[error("invalid output of tool `{tool_name}`: {source}")]
    InvalidOutput {
        /// The tool's registered name.
        tool_name: String,
        /// The field errors.
        #[source]
        source: ValidationError,
    },
    /// A component's dependency could not be provided for this invocation (for example a
    /// `TenantContext` on a call made without a tenant).
    #[error("cannot build `{component}` for tool `{tool_name}`: {source}")]
    Dependency {
        /// The tool's registered name.
        tool_name: String,
        /// The component being built.
        component: &'static str,
        /// What was missing.
        #[source]
        source: DiError,
    },
    /// The tool is not part of this app.
    #[error("tool `{tool_name}` is not registered in this app")]
    NotInApp {
        /// The tool's registered name (or type name).
        tool_name: String,
    },
    /// Every `before_tool_call` allowed; the call needs a human decision through the tool's
    /// approval channel and did not run. In a run with a store, a ticket is made for it (see
    /// `RunError::AwaitingApproval`); a direct call carries the ticket in `ticket_id`.
    #[error("tool `{tool_name}` needs approval through `{channel}`{}", ticket_id.as_deref().map(|t| format!(" (ticket {t})")).unwrap_or_default())]
    ApprovalRequired {
        /// The tool's registered name.
        tool_name: String,
        /// The approval channel.
        channel: &'static str,
        /// Canonical JSON of the validated input.
        input: String,
        /// SHA-256 of `input`, hex.
        fingerprint: String,
        /// The ticket made for the call, when there is one.
        ticket_id: Option<String>,
    },
    /// The output could not be serialized.
    #[error("cannot serialize the output of tool `{tool_name}`: {message}")]
    Serialize {
        /// The tool's registered name.
        tool_name: String,
        /// serde_json's message.
        message: String,
    },
}

impl ToolCallError {
    /// The block, when an interceptor stopped the call.
    pub fn as_blocked(&self) -> Option<&ToolBlockedError> {
        match self {
            Self::Blocked(b) => Some(b),
            _ => None,
        }
    }

    /// True when the failure means the tool was kept from running or its output discarded by a
    /// guard (block, failing, panicking or hanging interceptor).
    pub fn is_guard_failure(&self) -> bool {
        matches!(
            self,
            Self::Blocked(_)
                | Self::InterceptorFailed { .. }
                | Self::InterceptorPanicked { .. }
                | Self::InterceptorTimeout { .. }
        )
    }
}

/// Which side of an agent's or router's text boundary a guardrail guards (also
/// `agboss_core::contract::guardrail::Boundary`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Boundary {
    /// The user's input, before the model reads it.
    Input,
    /// The answer, before the caller reads it.
    Output,
}

impl fmt::Display for Boundary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Input => "input",
            Self::Output => "output",
        })
    }
}

/// How a guardrail stopped a step.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum GuardrailBlockKind {
    /// The guardrail returned `GuardrailVerdict::block(reason)`.
    Block {
        /// Why.
        reason: String,
    },
    /// The guardrail returned an error (or could not be built for the run): failed closed.
    Failed {
        /// The error's message.
        message: String,
    },
    /// The guardrail panicked: failed closed.
    Panicked,
    /// The guardrail ran past its time limit: failed closed.
    TimedOut {
        /// The limit, in milliseconds.
        after_ms: u64,
    },
}

/// A text that a guardrail stopped at the boundary of an agent or router. A kind of
/// [`StepFailedError`] (`StepFailedError::GuardrailBlocked`), so a flow's `on_error` catches it
/// like a [`ToolBlockedError`].
///
/// ```
/// use agboss_core::{contract::guardrail::Boundary, GuardrailBlockKind, GuardrailBlockedError, StepFailedError};
/// let blocked = GuardrailBlockedError {
///     step: "support-agent".into(),
///     guardrail: "injection-input-guardrail",
///     boundary: Boundary::Input,
///     kind: GuardrailBlockKind::Block { reason: "prompt injection".into() },
/// };
/// assert!(!blocked.is_failure());
/// let step: StepFailedError = blocked.into();
/// assert_eq!(step.as_guardrail_blocked().unwrap().guardrail, "injection-input-guardrail");
/// assert_eq!(
///     step.to_string(),
///     "input of `support-agent` was blocked by `injection-input-guardrail`: prompt injection"
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{boundary} of `{step}` was blocked by `{guardrail}`: {}", self.text())]
pub struct GuardrailBlockedError {
    /// The agent or router.
    pub step: String,
    /// The guardrail's registered name.
    pub guardrail: &'static str,
    /// Input or output.
    pub boundary: Boundary,
    /// Block, or the failure that failed the step closed.
    pub kind: GuardrailBlockKind,
}

impl GuardrailBlockedError {
    /// The reason of a block, or what went wrong.
    pub fn text(&self) -> String {
        match &self.kind {
            GuardrailBlockKind::Block { reason } => reason.clone(),
            GuardrailBlockKind::Failed { message } => format!("the guardrail failed: {message}"),
            GuardrailBlockKind::Panicked => "the guardrail panicked".to_string(),
            GuardrailBlockKind::TimedOut { after_ms } => {
                format!("the guardrail timed out after {after_ms} ms")
            }
        }
    }
    /// True when the guardrail did not decide (it failed, panicked or timed out) and the step
    /// failed closed.
    pub fn is_failure(&self) -> bool {
        !matches!(self.kind, GuardrailBlockKind::Block { .. })
    }
}

/// A step of an agent run or a workflow failed. A blocked tool is one kind of failed step:
/// handlers of `StepFailedError` catch `ToolBlockedError` too, and can tell it apart with
/// [`StepFailedError::as_blocked`] or a `match`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StepFailedError {
    /// An interceptor blocked a tool call.
    #[error(transparent)]
    ToolBlocked(#[from] ToolBlockedError),
    /// A guardrail blocked the input or the output of an agent or router (or failed closed).
    #[error(transparent)]
    GuardrailBlocked(#[from] GuardrailBlockedError),
    /// A tool call failed in another way that fails the step.
    #[error("step `{step}` failed: {source}")]
    ToolCall {
        /// The step (agent, tool or workflow name).
        step: String,
        /// The tool call's error.
        #[source]
        source: Box<ToolCallError>,
    },
    /// Any other failure of a step (model errors, turn limits...).
    #[error("step `{step}` failed: {message}")]
    Other {
        /// The step (agent, tool or workflow name).
        step: String,
        /// What went wrong.
        message: String,
    },
}

impl StepFailedError {
    /// The block, when the step failed because a tool was blocked.
    pub fn as_blocked(&self) -> Option<&ToolBlockedError> {
        match self {
            Self::ToolBlocked(b) => Some(b),
            Self::ToolCall { source, .. } => source.as_blocked(),
            Self::GuardrailBlocked(_) | Self::Other { .. } => None,
        }
    }

    /// The guardrail's block, when a guardrail stopped the step.
    pub fn as_guardrail_blocked(&self) -> Option<&GuardrailBlockedError> {
        match self {
            Self::GuardrailBlocked(b) => Some(b),
            _ => None,
        }
    }

    /// Wraps a tool-call error as a step failure (a block stays a `ToolBlocked`).
    pub fn from_tool_call(step: impl Into<String>, err: ToolCallError) -> Self {
        match err {
            ToolCallError::Blocked(b) => Self::ToolBlocked(b),
            other => Self::ToolCall {
                step: step.into(),
                source: Box::new(other),
            },
        }
    }
}

/// An error found when an app is built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// Two components of one kind share a name.
    #[error(
        "duplicate {kind} name `{name}`: registered by `{first}` and `{second}`; names must be unique"
    )]
    DuplicateName {
        /// tool, tool-interceptor...
        kind: &'static str,
        /// The shared name.
        name: &'static str,
        /// First type.
        first: &'static str,
        /// Second type.
        second: &'static str,
    },
    /// A dependency that nothing provides.
    #[error("`{component}` depends on `{dependency}`, which nothing provides: {hint}")]
    MissingProvider {
        /// The component that needs it.
        component: &'static str,
        /// The type it needs.
        dependency: &'static str,
        /// How to fix it.
        hint: &'static str,
    },
    /// Services that depend on each other.
    #[error("dependency cycle between services: {0}")]
    DependencyCycle(String),
    /// A service asked for a per-invocation context.
    #[error(
        "service `{service}` depends on `{context}`, a per-invocation context; services are app-wide singletons, so take the context in the tool or interceptor that calls the service"
    )]
    ContextInService {
        /// The service.
        service: &'static str,
        /// The context type.
        context: &'static str,
    },
    /// A service's constructor failed.
    #[error("cannot construct service `{service}`: {message}")]
    ServiceConstruction {
        /// The service.
        service: &'static str,
        /// What went wrong.
        message: String,
    },
    /// A tool is registered twice in one app, or another structural problem.
    #[error("{0}")]
    Invalid(String),
    /// An MCP server the app uses is not connected, lacks a tool an `#[mcp_tool]` names, or
    /// has a tool whose schema does not fit its declaration.
    #[error("{}MCP server `{server}`: {problem}", tool.map(|t| format!("tool `{t}`: ")).unwrap_or_default())]
    Mcp {
        /// The server's name.
        server: &'static str,
        /// The tool concerned, if one is.
        tool: Option<&'static str>,
        /// What is wrong and how to fix it.
        problem: String,
    },
}
