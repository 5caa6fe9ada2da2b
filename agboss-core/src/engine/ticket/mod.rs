//! The one lifecycle of an approval ticket, used by every path a gated call takes: the agent
//! loop ([`super::tool_calls`]), a workflow's tool step ([`super::tool_step`]) and a direct call
//! ([`super::direct`]).
//!
//! ```text
//!            decide (a human, once)                 claim (a resume, once)
//! pending ──► approved | rejected | edited ──────────► claimed ──► completed
//!    │                     │                                         (outcome journaled)
//!    │                     └──► superseded   (made under another policy: a new ticket is asked)
//!    └──► expired   (nobody decided before its expiry: the call never runs)
//! ```
//!
//! The store keeps the states as [`TicketState`](crate::store::TicketState): `Pending`,
//! `Decided` (with the [`TicketDecision`](crate::store::TicketDecision): approved, rejected or
//! edited), `Executing` (claimed), `Completed`, `Superseded`, `Expired`. Every transition is a
//! compare-and-set through [`TicketStore`](crate::store::TicketStore): `decide_ticket` for the
//! decision ([`decide`]), `advance_ticket` under the run's lease for the others ([`Tickets`]).
//! So a ticket is decided once and its decision consumed once: two resumes racing on one
//! ticket, one wins, the other gets `StoreError::TicketState` (or `LeaseHeld`).
//!
//! - A ticket is written before its channel is told ([`tell_channel`]); a failure to tell
//!   leaves it pending.
//! - A decided ticket is applied only under the policy it was made under (the digest of the
//!   call's resolved chain, and a channel): otherwise it is superseded and a new one requested.
//! - An approval runs the call bound to the approved input's fingerprint; an edit runs the
//!   approver's input (through the tool's input DTO and before chain again).
//!
//! # What a rejection means: one parameter, [`OnRejection`]
//! A rejected call, or one whose ticket expired undecided, never runs. What its path makes of
//! that is the one thing the paths differ in:
//!
//! | path | `OnRejection` | a rejection | an expiry | journaled |
//! |---|---|---|---|---|
//! | agent loop | `Observation` | the approver's message is the call's error observation; the loop goes on | the expiry reason is the observation | the call's end (`rejected_by_approver`, `approval_expired`), in the thread |
//! | workflow tool step | `Failure` | the step fails: `ToolBlockedError` from the channel, `rejected by {who}: {message}` (an `on_error` may recover) | the same, with the expiry reason | nothing more (the run ends failed unless recovered) |
//! | direct call | `Failure` (always: [`Refusal::into_block`]) | `ToolHandle::resume` fails with that `ToolBlockedError` | `App::take_over_runs` reports it | the call's end (`rejected_by_approver`, `approval_expired`, with the error), its one-call run finished failed |
//!
//! A rejected ticket is claimed, then completed once the refusal is journaled; an expired one
//! stays `Expired`.
//!
//! An account request ([`super::account`]: a missing MCP credential asks a human to connect the
//! tenant's account) is a ticket of a one-call run too ([`open_one_call`]), with no call
//! behind it: a takeover claims a decided one and completes it (approved: `connected`;
//! rejected: its run fails with the approver's message); approving it runs nothing.
mod decision;
mod lifecycle;
mod one_call;
mod rejection;

pub use decision::Decision;
pub(crate) use decision::{decide, tell_channel};
pub(crate) use lifecycle::{ApprovalRequest, Claim, Policy, Tickets};
pub(crate) use one_call::{finish_one_call, lease_one_call, open_one_call};
pub(crate) use rejection::{OnRejection, Refusal};
