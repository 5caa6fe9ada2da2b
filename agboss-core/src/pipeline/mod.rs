//! Layer 2, the guarded pipeline every tool call runs through, whatever calls it:
//!
//! input DTO validation → `before_tool_call`s outer→inner → the approval point → `run` →
//! `after_tool_call`s inner→outer → output DTO re-validation → PII masking and
//! `max_result_size` truncation of the text a model reads ([`render`]).
//!
//! It runs on a resolved [`Chain`] and ends with one
//! [`CallOutcome`](crate::CallOutcome) that names the decision where it was taken. Fail closed:
//! an interceptor that errors, panics or runs past its time limit, or a dependency that cannot be
//! built, stops the call ([`FailureKind::Guard`](crate::contract::outcome::FailureKind::Guard)); the tool does not
//! run (or its output is discarded when an after-hook fails). What a reader makes of an outcome
//! is [`observe`].
//!
//! Uses only [`crate::contract`] and the leaves. It owns the runtime side of the contract's
//! erased forms (what a meta's build function returns as an opaque `Built`): the resolved
//! [`Chain`] a call runs on, the call slot of a tool type ([`ErasedToolSlot`], its
//! [`CallEnv`] and inline [`CallFuture`]), the hook table of an interceptor type (`typed`), a
//! guardrail and an approval channel behind `dyn` (`guardrail`, `channel`), and a path's PII
//! maskers ([`pii`]).
mod approval;
mod chain;
mod channel;
mod erased;
pub mod guard;
mod guardrail;
pub(crate) mod harness;
mod hooks;
pub mod observe;
pub mod pii;
pub mod render;
mod run;
mod slot;
pub mod trace;
pub(crate) mod typed;

pub(crate) use chain::Link;
pub use chain::{Chain, ChainEntry, Exclusion};
pub(crate) use channel::channel_of;
#[doc(hidden)]
pub use channel::{ErasedChannel, build_channel};
pub(crate) use erased::slot_of;
#[doc(hidden)]
pub use erased::{CallEnv, CallFuture, ErasedToolSlot};
pub(crate) use guardrail::guardrail_of;
#[doc(hidden)]
pub use guardrail::{ErasedGuardrail, build_input_guardrail, build_output_guardrail};
pub(crate) use hooks::bounded;
pub use render::{TRUNCATION_MARKER, truncate_result};
pub use run::decode_input;
pub(crate) use run::{ToolSlot, run_typed};
pub(crate) use slot::call_json_typed;
#[doc(hidden)]
pub use slot::erased_tool;
pub(crate) use typed::interceptor_of;
#[doc(hidden)]
pub use typed::{AfterFuture, BeforeFuture, ErasedInterceptor, HookError};
