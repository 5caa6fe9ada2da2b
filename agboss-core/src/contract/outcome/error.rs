//! The error of one tool call: [`ToolCallError`] (the tool's name and a [`ToolCallErrorKind`]),
//! and [`ToolBlockedError`] for a call an interceptor stopped.
//!
//! ```
//! use std::error::Error as _;
//! use agboss_core::contract::outcome::ToolCallErrorKind;
//! use agboss_core::{ToolCallError, ToolError};
//!
//! let err = ToolCallError::new(
//!     "save-tool",
//!     ToolCallErrorKind::ToolFailed { error: ToolError::msg("disk on fire") },
//! );
//! assert_eq!(err.tool_name(), "save-tool");
//! assert_eq!(err.to_string(), "tool `save-tool` failed: disk on fire");
//! assert_eq!(err.source().unwrap().to_string(), "disk on fire");
//! assert!(matches!(err.kind(), ToolCallErrorKind::ToolFailed { .. }));
//! ```
use std::error::Error;
use std::fmt;

use super::decision::ToolCallDecision;
use crate::contract::handler_error::{InterceptorError, ToolError};
use crate::di::DiError;
use crate::dto::ValidationError;

/// A tool call that an interceptor stopped. A subclass of
/// [`StepFailedError`](crate::StepFailedError) in the seed's terms: it converts into
/// `StepFailedError::ToolBlocked`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("tool `{tool_name}` (call {call_id}) was blocked by `{interceptor}`: {}", self.text())]
pub struct ToolBlockedError {
    /// The tool's registered name.
    pub tool_name: String,
    /// The call id of the blocked call.
    pub call_id: String,
    /// The name of the interceptor that stopped the call.
    pub interceptor: &'static str,
    /// The decision that stopped it: [`ToolCallDecision::Block`], or
    /// [`ToolCallDecision::ReplyToModel`] on a path no model reads (a direct invoke, a
    /// workflow step).
    pub kind: ToolCallDecision,
}

impl ToolBlockedError {
    /// The reason (for a block) or the message (for a reply to the model).
    pub fn text(&self) -> &str {
        match &self.kind {
            ToolCallDecision::Block { reason } => reason,
            ToolCallDecision::ReplyToModel { message } => message,
            ToolCallDecision::Allow => "",
        }
    }
}

/// Why a tool call failed: the tool's name and what went wrong ([`ToolCallError::kind`]). Its
/// [`source()`](Error::source) is the error underneath (the tool's or interceptor's own error,
/// the DTO's field errors, the missing dependency).
#[derive(Debug)]
pub struct ToolCallError {
    // Boxed `str`, not `String`: the error stays as small as the enum it replaced (16 bytes
    // less), so neither `CallFailure` nor a direct call's `Result` grows.
    tool_name: Box<str>,
    kind: ToolCallErrorKind,
}

/// What went wrong in a tool call (the kind of a [`ToolCallError`]).
#[derive(Debug)]
#[non_exhaustive]
pub enum ToolCallErrorKind {
    /// The input failed its DTO: every failing field with its JSON path.
    InvalidInput {
        /// The field errors.
        source: ValidationError,
    },
    /// An interceptor blocked the call (or replied to the model on a direct invoke).
    Blocked(ToolBlockedError),
    /// An interceptor returned an error: the call failed closed.
    InterceptorFailed {
        /// The interceptor's registered name.
        interceptor: &'static str,
        /// What it returned.
        error: InterceptorError,
    },
    /// An interceptor's hook ran past its time limit (`#[tool_interceptor(timeout_ms = ..)]`, or
    /// the app's [`interceptor_timeout`](crate::AppBuilder::interceptor_timeout)): the call
    /// failed closed, like any other guard failure.
    InterceptorTimeout {
        /// The interceptor's registered name.
        interceptor: &'static str,
        /// The limit.
        timeout_ms: u64,
    },
    /// An interceptor panicked: the call failed closed.
    InterceptorPanicked {
        /// The interceptor's registered name.
        interceptor: &'static str,
        /// The panic payload, when it was a string.
        message: String,
    },
    /// The tool's `run` returned an error.
    ToolFailed {
        /// What it returned.
        error: ToolError,
    },
    /// The tool's `run` panicked.
    ToolPanicked {
        /// The panic payload, when it was a string.
        message: String,
    },
    /// The tool's `run` ran past its time limit (`#[tool(timeout_ms = ..)]`, or the run's
    /// `tool_timeout`). A tool failure: interceptors have their own bound
    /// ([`ToolCallErrorKind::InterceptorTimeout`]).
    Timeout {
        /// The limit.
        timeout_ms: u64,
    },
    /// The output (after the after-hooks) failed the tool's output DTO.
    InvalidOutput {
        /// The field errors.
        source: ValidationError,
    },
    /// A component's dependency could not be provided for this invocation (for example a
    /// `TenantContext` on a call made without a tenant).
    Dependency {
        /// The component being built.
        component: &'static str,
        /// What was missing.
        source: DiError,
    },
    /// The tool is not part of this app.
    NotInApp,
    /// Every `before_tool_call` allowed; the call needs a human decision through the tool's
    /// approval channel and did not run. In a run with a store, a ticket is made for it (see
    /// `RunError::AwaitingApproval`); a direct call carries the ticket in `ticket_id`.
    ApprovalRequired {
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
    Serialize {
        /// serde_json's message.
        message: String,
    },
}

impl ToolCallError {
    /// The error of a call of `tool_name` (its registered name, or its type name for a tool
    /// that is not in the app).
    pub fn new(tool_name: impl Into<String>, kind: ToolCallErrorKind) -> Self {
        Self {
            tool_name: tool_name.into().into_boxed_str(),
            kind,
        }
    }
    /// The tool's registered name.
    pub fn tool_name(&self) -> &str {
        &self.tool_name
    }
    /// What went wrong.
    pub fn kind(&self) -> &ToolCallErrorKind {
        &self.kind
    }
    /// Takes what went wrong.
    pub fn into_kind(self) -> ToolCallErrorKind {
        self.kind
    }
    /// The tool's name and what went wrong.
    pub fn into_parts(self) -> (String, ToolCallErrorKind) {
        (self.tool_name.into_string(), self.kind)
    }
    /// The block, when an interceptor stopped the call.
    pub fn as_blocked(&self) -> Option<&ToolBlockedError> {
        match &self.kind {
            ToolCallErrorKind::Blocked(b) => Some(b),
            _ => None,
        }
    }
    /// The block, when an interceptor stopped the call; else the error itself.
    pub fn into_blocked(self) -> Result<ToolBlockedError, Self> {
        match self.kind {
            ToolCallErrorKind::Blocked(b) => Ok(b),
            kind => Err(Self { kind, ..self }),
        }
    }
    /// The interceptor that decided the call's end (it blocked, failed, panicked or timed
    /// out), if one did.
    pub fn interceptor(&self) -> Option<&'static str> {
        match &self.kind {
            ToolCallErrorKind::Blocked(b) => Some(b.interceptor),
            ToolCallErrorKind::InterceptorFailed { interceptor, .. }
            | ToolCallErrorKind::InterceptorTimeout { interceptor, .. }
            | ToolCallErrorKind::InterceptorPanicked { interceptor, .. } => Some(interceptor),
            _ => None,
        }
    }
    /// True when the failure means the tool was kept from running or its output discarded by a
    /// guard (block, failing, panicking or hanging interceptor).
    pub fn is_guard_failure(&self) -> bool {
        matches!(
            self.kind,
            ToolCallErrorKind::Blocked(_)
                | ToolCallErrorKind::InterceptorFailed { .. }
                | ToolCallErrorKind::InterceptorPanicked { .. }
                | ToolCallErrorKind::InterceptorTimeout { .. }
        )
    }
}

impl From<ToolBlockedError> for ToolCallError {
    fn from(blocked: ToolBlockedError) -> Self {
        Self {
            tool_name: blocked.tool_name.as_str().into(),
            kind: ToolCallErrorKind::Blocked(blocked),
        }
    }
}

impl fmt::Display for ToolCallError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use ToolCallErrorKind as K;
        let tool = &self.tool_name;
        match &self.kind {
            K::InvalidInput { source } => write!(f, "invalid input for tool `{tool}`: {source}"),
            K::Blocked(blocked) => fmt::Display::fmt(blocked, f),
            K::InterceptorFailed { interceptor, error } => {
                write!(
                    f,
                    "interceptor `{interceptor}` failed on tool `{tool}`: {error}"
                )
            }
            K::InterceptorTimeout {
                interceptor,
                timeout_ms,
            } => write!(
                f,
                "interceptor `{interceptor}` timed out on tool `{tool}` after {timeout_ms} ms"
            ),
            K::InterceptorPanicked {
                interceptor,
                message,
            } => write!(
                f,
                "interceptor `{interceptor}` panicked on tool `{tool}`: {message}"
            ),
            K::ToolFailed { error } => write!(f, "tool `{tool}` failed: {error}"),
            K::ToolPanicked { message } => write!(f, "tool `{tool}` panicked: {message}"),
            K::Timeout { timeout_ms } => write!(f, "tool `{tool}` timed out after {timeout_ms} ms"),
            K::InvalidOutput { source } => write!(f, "invalid output of tool `{tool}`: {source}"),
            K::Dependency { component, source } => {
                write!(f, "cannot build `{component}` for tool `{tool}`: {source}")
            }
            K::NotInApp => write!(f, "tool `{tool}` is not registered in this app"),
            K::ApprovalRequired {
                channel, ticket_id, ..
            } => {
                write!(f, "tool `{tool}` needs approval through `{channel}`")?;
                match ticket_id {
                    Some(ticket) => write!(f, " (ticket {ticket})"),
                    None => Ok(()),
                }
            }
            K::Serialize { message } => {
                write!(f, "cannot serialize the output of tool `{tool}`: {message}")
            }
        }
    }
}

impl Error for ToolCallError {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        use ToolCallErrorKind as K;
        match &self.kind {
            K::InvalidInput { source } | K::InvalidOutput { source } => Some(source),
            // A block is shown as itself (transparent), so its source is the block's.
            K::Blocked(blocked) => blocked.source(),
            K::InterceptorFailed { error, .. } => Some(error.source_error()),
            K::ToolFailed { error } => Some(error.source_error()),
            K::Dependency { source, .. } => Some(source),
            _ => None,
        }
    }
}
