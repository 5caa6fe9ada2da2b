//! Layer 2, the guarded pipeline every tool call runs through, whatever calls it:
//!
//! input DTO validation → `before_tool_call`s outer→inner → the approval point → `run` →
//! `after_tool_call`s inner→outer → output DTO re-validation → PII masking and
//! `max_result_size` truncation of the text a model reads ([`render`]).
//!
//! It runs on a resolved [`Chain`](crate::contract::chain::Chain) and ends with one
//! [`CallOutcome`](crate::CallOutcome) that names the decision where it was taken. Fail closed:
//! an interceptor that errors, panics or runs past its time limit, or a dependency that cannot be
//! built, stops the call ([`FailureKind::Guard`](crate::contract::outcome::FailureKind::Guard)); the tool does not
//! run (or its output is discarded when an after-hook fails). What a reader makes of an outcome
//! is [`observe`].
//!
//! Uses only [`crate::contract`] and the leaves.
mod approval;
pub mod guard;
pub mod harness;
mod hooks;
pub mod observe;
pub mod render;
mod run;
mod slot;
pub mod trace;

pub(crate) use hooks::bounded;
pub use render::{TRUNCATION_MARKER, truncate_result};
pub use run::decode_input;
pub(crate) use run::{ToolSlot, run_typed};
pub(crate) use slot::call_json_typed;
#[doc(hidden)]
pub use slot::erased_tool;
