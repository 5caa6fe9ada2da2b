//! The desk's DTOs: orders, refunds, shipments and FAQ answers.
use agboss_core::prelude::*;

/// An order reference.
#[derive(Dto, Debug, Clone, PartialEq)]
pub struct OrderRefDto {
    /// The order.
    #[text(prompt = "Order ID, e.g. ACME-42", pattern = "^[A-Z]+-[0-9]+$")]
    pub order_id: String,
}

/// An order as support staff see it.
#[derive(Dto, Debug, Clone, PartialEq)]
pub struct OrderDto {
    /// The order.
    #[text(prompt = "Order ID")]
    pub order_id: String,
    /// Customer e-mail.
    #[text(prompt = "Customer e-mail")]
    pub customer_email: String,
    /// Total in cents.
    #[integer(prompt = "Total in cents", min = 0)]
    pub amount_cents: i64,
    /// Order status.
    #[text(prompt = "Status", choices = ["paid", "shipped", "refunded"])]
    pub status: String,
}

/// A refund request.
#[derive(Dto, Debug, Clone, PartialEq)]
pub struct RefundInputDto {
    /// The order.
    #[text(prompt = "Order ID to refund", pattern = "^[A-Z]+-[0-9]+$")]
    pub order_id: String,
    /// Amount to refund in cents.
    #[integer(prompt = "Amount to refund, in cents", min = 1)]
    pub amount_cents: i64,
    /// Why.
    #[text(prompt = "Reason given by the customer", min_length = 3)]
    pub reason: String,
}

/// A refund receipt.
#[derive(Dto, Debug, Clone, PartialEq)]
pub struct RefundReceiptDto {
    /// The order.
    #[text(prompt = "Order ID")]
    pub order_id: String,
    /// Refunded amount.
    #[integer(prompt = "Refunded cents", min = 1)]
    pub refunded_cents: i64,
}

/// Tracking information.
#[derive(Dto, Debug, Clone, PartialEq)]
pub struct ShipmentDto {
    /// The order.
    #[text(prompt = "Order ID")]
    pub order_id: String,
    /// Carrier and status.
    #[text(prompt = "Where the parcel is")]
    pub status: String,
}

/// A question for the FAQ.
#[derive(Dto, Debug, Clone, PartialEq)]
pub struct FaqQueryDto {
    /// The question.
    #[text(prompt = "The customer's question", min_length = 2, max_length = 500)]
    pub question: String,
}

/// An FAQ answer.
#[derive(Dto, Debug, Clone, PartialEq)]
pub struct FaqAnswerDto {
    /// The answer.
    #[text(prompt = "The answer")]
    pub answer: String,
}

/// The case note the desk files for its CRM at the end of a conversation: the typed output of
/// [`CaseNoteAgent`](super::CaseNoteAgent).
#[derive(Dto, Debug, Clone, PartialEq)]
pub struct CaseNoteDto {
    /// The order the conversation was about.
    #[text(prompt = "Order ID", pattern = "^[A-Z]+-[0-9]+$")]
    pub order_id: String,
    /// What was refunded in the conversation, in cents.
    #[integer(prompt = "Cents refunded in this conversation", min = 0)]
    pub refunded_cents: i64,
    /// Whether a request was handed to a human colleague.
    #[boolean(prompt = "Whether a request waits for a human colleague")]
    pub escalated: bool,
    /// One sentence for the next person on the case.
    #[text(
        prompt = "One sentence for the next person on the case",
        min_length = 3,
        max_length = 300
    )]
    pub summary: String,
}
