//! How one tool call ended: [`CallOutcome`], the one type every way of calling a tool returns,
//! carrying what the guard decided ([`CallOutcome::decision`]) and who decided it.
//!
//! ```
//! use agboss_core::{CallDecision, CallOutcome, FailureKind, ToolCallError};
//!
//! let replied: CallOutcome<String> = CallOutcome::Replied {
//!     interceptor: "tenant-order-tool-interceptor",
//!     message: "Ask for the order id".into(),
//! };
//! assert_eq!(
//!     replied.decision(),
//!     CallDecision::RepliedToModel {
//!         interceptor: "tenant-order-tool-interceptor".into(),
//!         message: "Ask for the order id".into(),
//!     }
//! );
//! let failed: CallOutcome<String> = CallOutcome::failed(
//!     FailureKind::Guard,
//!     ToolCallError::NotInApp { tool_name: "x-tool".into() },
//! );
//! assert!(matches!(failed.decision(), CallDecision::GuardFailed { .. }));
//! assert!(failed.into_result().is_err());
//! ```
use std::fmt;

use crate::error::{BlockKind, ToolBlockedError, ToolCallError};

/// A tool's output as the text a model reads: serialized, truncated to `max_result_size`, masked.
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
    RepliedToModel {
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
    /// `rejected`, `awaiting_approval` (what the run journal records).
    ///
    /// ```
    /// use agboss_core::CallDecision;
    /// assert_eq!(CallDecision::Allowed.label(), "allowed");
    /// ```
    pub fn label(&self) -> &'static str {
        match self {
            Self::Allowed => "allowed",
            Self::RepliedToModel { .. } => "replied_to_model",
            Self::Blocked { .. } => "blocked",
            Self::GuardFailed { .. } => "guard_failed",
            Self::Rejected { .. } => "rejected",
            Self::AwaitingApproval { .. } => "awaiting_approval",
        }
    }
}

impl fmt::Display for CallDecision {
    /// `allowed`, `replied to the model by I: message`, `blocked by I: reason`, …
    ///
    /// ```
    /// use agboss_core::CallDecision;
    /// let replied = CallDecision::RepliedToModel {
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
            Self::RepliedToModel {
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
    /// tool's approval channel ([`ToolCallError::ApprovalRequired`]); the tool did not run.
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
    Replied {
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
        let kind = match &error {
            ToolCallError::Blocked(_) => FailureKind::Blocked,
            ToolCallError::InvalidInput { .. } | ToolCallError::NotInApp { .. } => {
                FailureKind::Rejected
            }
            ToolCallError::ToolFailed { .. }
            | ToolCallError::ToolPanicked { .. }
            | ToolCallError::Timeout { .. }
            | ToolCallError::InvalidOutput { .. }
            | ToolCallError::Serialize { .. } => FailureKind::Tool,
            // Interceptor failures, dependencies, anything unforeseen: fail closed.
            _ => FailureKind::Guard,
        };
        Self::failed(kind, error)
    }

    /// What the guard decided, and who.
    pub fn decision(&self) -> CallDecision {
        match self {
            Self::Ran(_) => CallDecision::Allowed,
            Self::Replied {
                interceptor,
                message,
            } => CallDecision::RepliedToModel {
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
                    channel: match &f.error {
                        ToolCallError::ApprovalRequired { channel, .. } => (*channel).to_string(),
                        _ => String::new(),
                    },
                },
                FailureKind::Guard => CallDecision::GuardFailed {
                    error: f.error.to_string(),
                },
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
            Self::Replied {
                interceptor,
                message,
            } => CallOutcome::Replied {
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
            Self::Replied {
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
/// [`BlockKind::ReplyToModel`].
pub(crate) fn reply_as_block(
    tool_name: &str,
    call_id: &str,
    interceptor: &'static str,
    message: String,
) -> ToolCallError {
    ToolCallError::Blocked(ToolBlockedError {
        tool_name: tool_name.to_string(),
        call_id: call_id.to_string(),
        interceptor,
        kind: BlockKind::ReplyToModel { message },
    })
}

impl CallOutcome<Rendered> {
    /// The text the model reads when the call produced one for it: the output, a reply, or a
    /// failure a listener reported. `None` for a failure nobody reported.
    pub fn model_text(&self) -> Option<&str> {
        match self {
            Self::Ran(r) => Some(&r.text),
            Self::Replied { message, .. } => Some(message),
            Self::Failed(f) => f.report(),
        }
    }
    /// True unless the tool ran: a reply, a rejection or a failure (reported or not).
    pub fn is_error(&self) -> bool {
        !matches!(self, Self::Ran(_))
    }
}
