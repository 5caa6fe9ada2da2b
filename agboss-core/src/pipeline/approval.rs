//! The approval hook point of the guarded pipeline (filled by the channel-approval feature).
//!
//! Per the spec, human approval of a tool call (an approval `#[channel]` on the tool) happens
//! after every `before_tool_call` interceptor allowed the call and before `run`, so unauthorized
//! or malformed calls never wake a human reviewer. [`approval_point`] is called exactly there, on
//! both paths of `super::run::run_guarded` (with and without interceptors). Today it approves every
//! call and costs nothing; the approval feature replaces its body (look up the tool's approval
//! channel, await the decision, return `ToolCallError::Blocked` on a rejection).
use crate::contract::tool::ToolMeta;
use crate::di::ExecutionContext;
use crate::error::ToolCallError;

/// Approves every call (no approval channels yet).
#[inline]
pub(crate) async fn approval_point(
    _tool: &'static ToolMeta,
    _execution: &ExecutionContext,
) -> Result<(), ToolCallError> {
    Ok(())
}
