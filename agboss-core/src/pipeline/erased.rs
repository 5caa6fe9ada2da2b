//! The call slot: a built tool behind `dyn`, callable with JSON text ([`ErasedToolSlot`]),
//! the per-call inputs it takes ([`CallEnv`]) and its future, inline when it fits
//! ([`CallFuture`]). The contract's [`ErasedToolType`](crate::contract::tool::ErasedToolType)
//! builds one, opaque to the contract; [`slot_of`] reads it back.
use std::any::Any;
use std::sync::Arc;

use serde_json::Value;

use super::chain::Chain;
use crate::contract::Built;
use crate::contract::channel::ApprovalGrant;
use crate::contract::outcome::{CallOutcome, Rendered};
use crate::contract::tool::{CallProgress, ToolMeta};
use crate::di::{CallId, DiError, Services, TenantContext};

/// The per-call inputs of the pipeline besides the tool input.
#[doc(hidden)]
pub struct CallEnv<'a> {
    /// The app's services.
    pub services: &'a Services,
    /// The tenant of the call.
    pub tenant: Option<&'a TenantContext>,
    /// The call id.
    pub call_id: CallId,
    /// Bounds the tool's `run` (on top of its own `timeout_ms`).
    pub run_timeout: Option<std::time::Duration>,
    /// Where the pipeline records how far the call got.
    pub progress: Option<&'a CallProgress>,
    /// The call's idempotency key, when its run is journaled.
    pub idempotency_key: Option<&'a str>,
    /// A human decision for this very call (a gated tool's approval point checks it).
    pub approval: Option<&'a ApprovalGrant>,
}

/// A built tool behind `dyn`, callable with JSON text: the call contract every by-name path
/// (agent loops, callbacks, workflow steps) goes through.
#[doc(hidden)]
pub trait ErasedToolSlot: Send + Sync {
    /// The slot as `Any` (typed handles downcast it).
    fn as_any(&self) -> &dyn Any;
    /// The input JSON Schema a model sees when it is not the tool's DTO's
    /// ([`Tool::model_input_schema`](crate::contract::tool::Tool::model_input_schema)).
    fn model_input_schema(&self) -> Option<Value> {
        None
    }
    /// Decodes and validates JSON text arguments against the input DTO without calling
    /// anything (an approver's edit is checked when it is decided). `Ok` where the slot has no
    /// DTO of its own (a remote tool: its server checks).
    fn check_input(
        &self,
        meta: &ToolMeta,
        args: &str,
    ) -> Result<(), crate::contract::outcome::ToolCallError> {
        let _ = (meta, args);
        Ok(())
    }
    /// One guarded call with JSON text arguments.
    fn call_json<'a>(
        &'a self,
        chain: &'a Chain,
        env: CallEnv<'a>,
        args: &'a str,
        max_result_size: Option<usize>,
    ) -> CallFuture<'a>;
}

/// Bytes a call's future may take at the dyn boundary before it is boxed: a call of a tool
/// whose `run` holds little across its awaits fits, so a call by name (or from an agent loop)
/// allocates nothing for its future.
pub(crate) const CALL_FUTURE_INLINE: usize = 1280;

/// The future of one call behind `dyn` ([`ErasedToolSlot::call_json`]): inline when it fits
/// (see [`CALL_FUTURE_INLINE`]), boxed otherwise.
#[doc(hidden)]
pub type CallFuture<'a> = stackfuture::StackFuture<'a, CallOutcome<Rendered>, CALL_FUTURE_INLINE>;

/// The call slot an [`ErasedToolType`](crate::contract::tool::ErasedToolType) built.
pub(crate) fn slot_of(slot: Built) -> Result<Arc<dyn ErasedToolSlot>, DiError> {
    slot.downcast::<Arc<dyn ErasedToolSlot>>()
        .ok_or_else(|| DiError::Failed("a tool type built no call slot of this runtime".into()))
}
