//! A support desk: an application with a workflow, a router in front of two agents, four tools,
//! interceptors at every level of the cascade (one of them excluded below), and a human approval
//! channel on refunds.
//!
//! ```text
//! support-desk-application          audit, pii-redaction
//! └─ support-workflow               support-hours
//!    ├─ support-router
//!    │  ├─ billing-agent            refund-limit           tools: lookup-order, refund-order
//!    │  └─ shipping-agent                                  tools: lookup-order, track-shipment
//!    │                                                     (track-shipment excludes support-hours)
//!    │                                                     hands refunds off to billing-agent
//!    └─ case-note-agent                                    answers a typed CaseNoteDto
//! lookup-order-tool                 order-ownership
//! refund-order-tool                 order-ownership        approval: manager-channel, above 100.00
//! ```
//!
//! Refunds have two limits:
//!
//! - **Manager approval** ([`ManagerChannel`]): a refund above
//!   [`REFUND_APPROVAL_LIMIT_CENTS`] (100.00) does not run on the model's word. Once every
//!   `before_tool_call` of its chain allowed it, a ticket bound to the exact call is stored, the
//!   channel is told (it puts the ticket in the [`ManagerInbox`]) and the run waits; a
//!   `manager` of the ticket's tenant approves (or rejects, or edits) it and the run is resumed:
//!   the approved call goes through its whole chain again and runs once.
//! - **Hard block** ([`RefundLimitToolInterceptor`], on the billing agent): what no manager may
//!   approve. A refund above what is left to refund on the order (its total minus what was
//!   refunded already, see [`OrderStore`]) or above the [`REFUND_HARD_CAP_CENTS`] (1,000.00)
//!   hard cap is blocked. The before chain runs before the approval point, so a blocked call
//!   never creates a ticket and never wakes a manager. (The hard block is the billing agent's:
//!   a direct call of `refund-order-tool`, outside the agent, only has the approval.)
mod approval;
mod desk;
mod dto;
mod guardrails;
mod interceptors;
mod services;
mod tools;

pub use approval::{ManagerChannel, needs_manager_approval};
pub use desk::{
    BillingAgent, CaseNoteAgent, ShippingAgent, SupportDeskApplication, SupportRouter,
    SupportWorkflow,
};
pub use dto::{
    CaseNoteDto, FaqAnswerDto, FaqQueryDto, OrderDto, OrderRefDto, RefundInputDto,
    RefundReceiptDto, ShipmentDto,
};
pub use guardrails::{InternalNoteOutputGuardrail, PromptInjectionInputGuardrail};
pub use interceptors::{
    AuditToolInterceptor, OrderOwnershipToolInterceptor, PiiRedactionToolInterceptor,
    RefundLimitToolInterceptor, SupportHoursToolInterceptor,
};
pub use services::{AuditLog, ManagerInbox, OrderStore, SupportClock};
pub use tools::{LookupOrderTool, RefundOrderTool, SearchFaqTool, TrackShipmentTool};

/// Refunds above this (100.00) wait for a manager's approval.
pub const REFUND_APPROVAL_LIMIT_CENTS: i64 = 10_000;
/// Refunds above this (1,000.00) are blocked, whoever would approve them.
pub const REFUND_HARD_CAP_CENTS: i64 = 100_000;

/// Cents as money: `12500` is `"125.00"`, `240000` is `"2,400.00"`, `-50` is `"-0.50"`.
pub fn money(cents: i64) -> String {
    let sign = if cents < 0 { "-" } else { "" };
    let cents = cents.unsigned_abs();
    let units = (cents / 100).to_string();
    let mut grouped = String::new();
    for (i, c) in units.chars().enumerate() {
        if i > 0 && (units.len() - i).is_multiple_of(3) {
            grouped.push(',');
        }
        grouped.push(c);
    }
    format!("{sign}{grouped}.{:02}", cents % 100)
}
