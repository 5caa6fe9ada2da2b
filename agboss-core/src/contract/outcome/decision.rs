//! [`ToolCallDecision`]: what a `before_tool_call` hook decides (the spec's `allow()`,
//! `block(reason)`, `replyToModel(message)`), the first word of the outcome vocabulary.

/// What a `before_tool_call` hook decides.
///
/// ```
/// use agboss_core::ToolCallDecision;
/// assert_eq!(ToolCallDecision::allow(), ToolCallDecision::Allow);
/// assert_eq!(
///     ToolCallDecision::reply_to_model("fix the order id"),
///     ToolCallDecision::ReplyToModel { message: "fix the order id".into() },
/// );
/// assert!(ToolCallDecision::block("no").is_block());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[must_use = "a decision does nothing unless the hook returns it"]
pub enum ToolCallDecision {
    /// Go on to the next `before_tool_call` (or run the tool once all allowed).
    Allow,
    /// Self-correcting feedback: the tool does not run; in an agent loop the message is the
    /// call's observation; on a direct invoke it is a [`ToolBlockedError`](crate::error::ToolBlockedError).
    ReplyToModel {
        /// What the model reads.
        message: String,
    },
    /// Hard abort: the tool does not run and the step fails with `ToolBlockedError`.
    Block {
        /// Why (for logs and the error).
        reason: String,
    },
}

impl ToolCallDecision {
    /// Proceed.
    pub fn allow() -> Self {
        Self::Allow
    }
    /// Tell the model what to fix; the tool does not run.
    pub fn reply_to_model(message: impl Into<String>) -> Self {
        Self::ReplyToModel {
            message: message.into(),
        }
    }
    /// Abort the step; the tool does not run.
    pub fn block(reason: impl Into<String>) -> Self {
        Self::Block {
            reason: reason.into(),
        }
    }
    /// True for `allow()`.
    pub fn is_allow(&self) -> bool {
        matches!(self, Self::Allow)
    }
    /// True for `block(..)`.
    pub fn is_block(&self) -> bool {
        matches!(self, Self::Block { .. })
    }
    /// True for `reply_to_model(..)`.
    pub fn is_reply_to_model(&self) -> bool {
        matches!(self, Self::ReplyToModel { .. })
    }
}
