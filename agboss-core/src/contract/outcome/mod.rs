//! How one tool call ended: [`CallOutcome`], the one type every way of calling a tool returns,
//! carrying what the guard decided ([`CallOutcome::decision`]) and who decided it
//! ([`CallOutcome::decided_by`]).
//!
//! The vocabulary, one spelling per concept from the hook's decision to the run's error:
//!
//! | a hook decides ([`ToolCallDecision`]) | the call ends ([`CallOutcome`]) | the guard's decision ([`CallDecision`]) | the error |
//! |---|---|---|---|
//! | `Allow` (all of them) | `Ran(output)`, or `Failed` of [`FailureKind::Tool`] | `Allowed` | [`ToolCallError`] of the tool's failure |
//! | `ReplyToModel { message }` | `ReplyToModel { interceptor, message }` | `ReplyToModel { interceptor, message }` | where no model reads it: [`ToolBlockedError`] of kind `ReplyToModel` |
//! | `Block { reason }` | `Failed` of [`FailureKind::Blocked`] | `Blocked { interceptor, reason }` | [`ToolBlockedError`] of kind `Block`, `StepFailedError::ToolBlocked` |
//!
//! Who decided is always the field `interceptor` (a channel's name for `AwaitingApproval`).
//!
//! ```
//! use agboss_core::contract::outcome::{FailureKind, ToolCallErrorKind};
//! use agboss_core::{CallDecision, CallOutcome, ToolCallError};
//!
//! let replied: CallOutcome<String> = CallOutcome::ReplyToModel {
//!     interceptor: "tenant-order-tool-interceptor",
//!     message: "Ask for the order id".into(),
//! };
//! assert_eq!(replied.decided_by(), Some("tenant-order-tool-interceptor"));
//! assert_eq!(
//!     replied.decision(),
//!     CallDecision::ReplyToModel {
//!         interceptor: "tenant-order-tool-interceptor".into(),
//!         message: "Ask for the order id".into(),
//!     }
//! );
//! let failed: CallOutcome<String> = CallOutcome::failed(
//!     FailureKind::Guard,
//!     ToolCallError::new("x-tool", ToolCallErrorKind::NotInApp),
//! );
//! assert!(matches!(failed.decision(), CallDecision::GuardFailed { .. }));
//! assert!(failed.into_result().is_err());
//! ```
use std::fmt;

mod decision;
mod error;

pub use decision::ToolCallDecision;
pub use error::{ToolBlockedError, ToolCallError, ToolCallErrorKind};

/// A tool's output as the text a model reads: serialized, truncated to `max_result_size`, masked
/// (what [`CallOutcome::model_text`] and [`CallOutcome::is_truncated`] read; runtime internal,
/// named only by a hand-written [`ToolCallback`](crate::ToolCallback)).
#[doc(hidden)]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rendered {
    /// The text.
    pub text: String,
    /// Whether `max_result_size` cut it.
    pub truncated: bool,
}

/// What the guard (the interceptor chain, or the loop's own checks) decided about one call.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum CallDecision {
    /// Every `before_tool_call` allowed: the tool ran (it may still have failed).
    Allowed,
    /// An interceptor replied to the model; the tool did not run, the message is the observation.
    ReplyToModel {
        /// The interceptor.
        interceptor: String,
        /// The message the model reads.
        message: String,
    },
    /// An interceptor blocked the call: the step fails.
    Blocked {
        /// The interceptor.
        interceptor: String,
        /// Its reason.
        reason: String,
    },
    /// A guard failed (an interceptor errored, panicked or timed out, a dependency was missing):
    /// the call fails closed and the step fails.
    GuardFailed {
        /// The full error.
        error: String,
    },
    /// The call was rejected before any interceptor ran: unknown tool, arguments that are not
    /// JSON or that fail the input DTO. The model is told why.
    Rejected {
        /// Why.
        reason: String,
    },
    /// Every `before_tool_call` allowed; the call waits for a human decision through its
    /// approval channel (the tool did not run).
    AwaitingApproval {
        /// The channel.
        channel: String,
    },
}

impl CallDecision {
    /// A short stable name: `allowed`, `replied_to_model`, `blocked`, `guard_failed`,
    /// `rejected`, `awaiting_approval`. The run journal and the spans record it, so these
    /// strings are kept as they were stored by 0.1 (`replied_to_model` names
    /// [`CallDecision::ReplyToModel`]).
    ///
    /// ```
    /// use agboss_core::CallDecision;
    /// assert_eq!(CallDecision::Allowed.label(), "allowed");
    /// ```
    pub fn label(&self) -> &'static str {
        match self {
            Self::Allowed => "allowed",
            Self::ReplyToModel { .. } => "replied_to_model",
            Self::Blocked { .. } => "blocked",
            Self::GuardFailed { .. } => "guard_failed",
            Self::Rejected { .. } => "rejected",
            Self::AwaitingApproval { .. } => "awaiting_approval",
        }
    }
}

impl CallDecision {
    /// Who decided: the interceptor that replied or blocked, or the approval channel the call
    /// waits for. `None` when every guard allowed, or for a rejection or a guard failure (see
    /// [`CallOutcome::decided_by`] for the interceptor that failed).
    pub fn decided_by(&self) -> Option<&str> {
        match self {
            Self::ReplyToModel { interceptor, .. } | Self::Blocked { interceptor, .. } => {
                Some(interceptor)
            }
            Self::AwaitingApproval { channel } => Some(channel),
            Self::Allowed | Self::GuardFailed { .. } | Self::Rejected { .. } => None,
        }
    }
}

impl fmt::Display for CallDecision {
    /// `allowed`, `replied to the model by I: message`, `blocked by I: reason`, …
    ///
    /// ```
    /// use agboss_core::CallDecision;
    /// let replied = CallDecision::ReplyToModel {
    ///     interceptor: "tenant-order-tool-interceptor".into(),
    ///     message: "Ask for the order id".into(),
    /// };
    /// assert_eq!(
    ///     replied.to_string(),
    ///     "replied to the model by tenant-order-tool-interceptor: Ask for the order id"
    /// );
    /// ```
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Allowed => f.write_str("allowed"),
            Self::ReplyToModel {
                interceptor,
                message,
            } => write!(f, "replied to the model by {interceptor}: {message}"),
            Self::Blocked {
                interceptor,
                reason,
            } => write!(f, "BLOCKED by {interceptor}: {reason}"),
            Self::GuardFailed { error } => write!(f, "guard FAILED (fail closed): {error}"),
            Self::Rejected { reason } => write!(f, "rejected: {reason}"),
            Self::AwaitingApproval { channel } => {
                write!(f, "allowed by every guard, waits for approval by {channel}")
            }
        }
    }
}

/// Which part of a call failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum FailureKind {
    /// An interceptor blocked the call (`ToolCallDecision::block`), or replied to the model on a
    /// path no model reads. Never softened.
    Blocked,
    /// The input was refused before any interceptor ran.
    Rejected,
    /// Every guard allowed; the tool itself failed (error, panic, timeout, invalid output).
    Tool,
    /// A guard failed: an interceptor errored, panicked or timed out, or a component's
    /// dependency could not be built. Fail closed: never softened.
    Guard,
    /// Every `before_tool_call` allowed and the call waits for a human decision through the
    /// tool's approval channel ([`ToolCallErrorKind::ApprovalRequired`]); the tool did not run.
    /// Never softened.
    Approval,
}

/// A failed call: which part failed, the error (with its `source()` chain), and what a listener
/// chose to report to the model instead of failing (only for [`FailureKind::Rejected`] and
/// [`FailureKind::Tool`]: a guard failure or a block can never be turned into a soft result).
#[derive(Debug)]
pub struct CallFailure {
    kind: FailureKind,
    error: ToolCallError,
    report: Option<String>,
}

impl CallFailure {
    /// A failure of `kind`.
    pub fn new(kind: FailureKind, error: ToolCallError) -> Self {
        Self {
            kind,
            error,
            report: None,
        }
    }
    /// Which part failed.
    pub fn kind(&self) -> FailureKind {
        self.kind
    }
    /// The error.
    pub fn error(&self) -> &ToolCallError {
        &self.error
    }
    /// Takes the error.
    pub fn into_error(self) -> ToolCallError {
        self.error
    }
    /// What a listener reported to the model, if it did.
    pub fn report(&self) -> Option<&str> {
        self.report.as_deref()
    }
    /// True when a listener may report this failure to the model (a rejected input or a tool's
    /// own failure); false for blocks and guard failures.
    pub fn is_reportable(&self) -> bool {
        matches!(self.kind, FailureKind::Rejected | FailureKind::Tool)
    }
    /// Reports the failure to the model with `message` (report and continue). Refused, returning
    /// `false`, for a block or a guard failure: those always fail the step.
    pub fn set_report(&mut self, message: String) -> bool {
        if self.is_reportable() {
            self.report = Some(message);
            true
        } else {
            false
        }
    }
}

/// How one tool call ended. `O` is the output: the tool's typed output on a typed invoke,
/// [`Rendered`] text everywhere a model reads it.
#[derive(Debug)]
#[must_use = "an outcome says whether the tool ran, was refused or failed"]
pub enum CallOutcome<O = Rendered> {
    /// Every `before_tool_call` allowed and the tool ran: its output (after the after-hooks,
    /// re-validated; as text: truncated and masked).
    Ran(O),
    /// An interceptor replied to the model: the tool did not run.
    ReplyToModel {
        /// The interceptor that replied.
        interceptor: &'static str,
        /// The message for the model (masked by the path's PII policies).
        message: String,
    },
    /// The call failed: blocked, rejected, the tool failed, or a guard failed (boxed: the
    /// outcome a call moves through the pipeline stays small on the paths that did not fail).
    Failed(Box<CallFailure>),
}

impl<O> CallOutcome<O> {
    /// A failed outcome.
    pub fn failed(kind: FailureKind, error: ToolCallError) -> Self {
        Self::Failed(Box::new(CallFailure::new(kind, error)))
    }

    /// A failed outcome classified by its error: the mapping for callbacks that only have a
    /// [`ToolCallError`] (the pipeline itself names the kind where the failure happens).
    pub fn from_error(error: ToolCallError) -> Self {
        use ToolCallErrorKind as K;
        let kind = match error.kind() {
            K::Blocked(_) => FailureKind::Blocked,
            K::InvalidInput { .. } | K::NotInApp => FailureKind::Rejected,
            K::ToolFailed { .. }
            | K::ToolPanicked { .. }
            | K::Timeout { .. }
            | K::InvalidOutput { .. }
            | K::Serialize { .. } => FailureKind::Tool,
            // Interceptor failures, dependencies, anything unforeseen: fail closed.
            _ => FailureKind::Guard,
        };
        Self::failed(kind, error)
    }

    /// What the guard decided, and who.
    pub fn decision(&self) -> CallDecision {
        match self {
            Self::Ran(_) => CallDecision::Allowed,
            Self::ReplyToModel {
                interceptor,
                message,
            } => CallDecision::ReplyToModel {
                interceptor: (*interceptor).to_string(),
                message: message.clone(),
            },
            Self::Failed(f) => match f.kind {
                FailureKind::Tool => CallDecision::Allowed,
                FailureKind::Rejected => CallDecision::Rejected {
                    reason: f.report.clone().unwrap_or_else(|| f.error.to_string()),
                },
                FailureKind::Blocked => match f.error.as_blocked() {
                    Some(b) => CallDecision::Blocked {
                        interceptor: b.interceptor.to_string(),
                        reason: b.text().to_string(),
                    },
                    None => CallDecision::GuardFailed {
                        error: f.error.to_string(),
                    },
                },
                FailureKind::Approval => CallDecision::AwaitingApproval {
                    channel: match f.error.kind() {
                        ToolCallErrorKind::ApprovalRequired { channel, .. } => {
                            (*channel).to_string()
                        }
                        _ => String::new(),
                    },
                },
                FailureKind::Guard => CallDecision::GuardFailed {
                    error: f.error.to_string(),
                },
            },
        }
    }

    /// Who decided how the call ended: the interceptor that replied to the model or blocked it,
    /// the interceptor that failed closed, or the approval channel the call waits for. `None`
    /// when every guard allowed (whether the tool then ran or failed) or the input was refused.
    pub fn decided_by(&self) -> Option<&'static str> {
        match self {
            Self::Ran(_) => None,
            Self::ReplyToModel { interceptor, .. } => Some(interceptor),
            Self::Failed(f) => match f.error.kind() {
                ToolCallErrorKind::ApprovalRequired { channel, .. } => Some(channel),
                _ if f.kind == FailureKind::Tool => None,
                _ => f.error.interceptor(),
            },
        }
    }

    /// The failure, if the call failed.
    pub fn failure(&self) -> Option<&CallFailure> {
        match self {
            Self::Failed(f) => Some(&**f),
            _ => None,
        }
    }

    /// The error, if the call failed.
    pub fn error(&self) -> Option<&ToolCallError> {
        self.failure().map(CallFailure::error)
    }

    /// True when the call failed in a way that fails the step whatever anyone reports: a block
    /// or a guard failure.
    pub fn fails_closed(&self) -> bool {
        matches!(self, Self::Failed(f) if matches!(f.kind, FailureKind::Blocked | FailureKind::Guard))
    }

    /// Maps the output.
    pub fn map<U>(self, f: impl FnOnce(O) -> U) -> CallOutcome<U> {
        match self {
            Self::Ran(o) => CallOutcome::Ran(f(o)),
            Self::ReplyToModel {
                interceptor,
                message,
            } => CallOutcome::ReplyToModel {
                interceptor,
                message,
            },
            Self::Failed(failure) => CallOutcome::Failed(failure),
        }
    }

    /// The output, or the error, for a caller no model stands behind: a `reply_to_model` is a
    /// [`ToolBlockedError`] here (with the given tool name and call id), since no model reads it.
    pub fn into_direct(self, tool_name: &str, call_id: &str) -> Result<O, ToolCallError> {
        match self {
            Self::Ran(o) => Ok(o),
            Self::ReplyToModel {
                interceptor,
                message,
            } => Err(reply_as_block(tool_name, call_id, interceptor, message)),
            Self::Failed(f) => Err(f.error),
        }
    }

    /// The output, or the error; a `reply_to_model` is a [`ToolBlockedError`] without tool name
    /// or call id (see [`CallOutcome::into_direct`]).
    pub fn into_result(self) -> Result<O, ToolCallError> {
        self.into_direct("", "")
    }
}

/// A `reply_to_model` where no model reads it: a [`ToolBlockedError`] of kind
/// [`ToolCallDecision::ReplyToModel`].
pub(crate) fn reply_as_block(
    tool_name: &str,
    call_id: &str,
    interceptor: &'static str,
    message: String,
) -> ToolCallError {
    ToolCallError::from(ToolBlockedError {
        tool_name: tool_name.to_string(),
        call_id: call_id.to_string(),
        interceptor,
        kind: ToolCallDecision::ReplyToModel { message },
    })
}

impl CallOutcome<Rendered> {
    /// The text the model reads when the call produced one for it: the output, a reply, or a
    /// failure a listener reported. `None` for a failure nobody reported.
    pub fn model_text(&self) -> Option<&str> {
        match self {
            Self::Ran(r) => Some(&r.text),
            Self::ReplyToModel { message, .. } => Some(message),
            Self::Failed(f) => f.report(),
        }
    }
    /// True when `max_result_size` cut the output the model reads.
    pub fn is_truncated(&self) -> bool {
        matches!(self, Self::Ran(r) if r.truncated)
    }
    /// True unless the tool ran: a reply, a rejection or a failure (reported or not).
    pub fn is_error(&self) -> bool {
        !matches!(self, Self::Ran(_))
    }
}

#[cfg(test)]
mod tests;
