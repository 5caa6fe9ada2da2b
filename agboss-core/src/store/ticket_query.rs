//! Listing a tenant's tickets: [`TicketQuery`] (filters and a page) and [`TicketPage`] (what
//! [`TicketStore::list_tickets`](super::TicketStore::list_tickets) answers), in the one order
//! every backend shares: pending tickets first, oldest first (the queue an approver works
//! through), then every other ticket, newest first; equal times by id.
use super::error::StoreError;
use super::ticket::Ticket;
use crate::contract::ticket::TicketState;

/// The most tickets one page holds, whatever [`TicketQuery::limit`] asks.
pub const MAX_TICKET_PAGE: u64 = 500;

/// Which of a tenant's tickets to list, and which page of them.
///
/// ```
/// use agboss_core::store::TicketQuery;
/// let query = TicketQuery::new().pending().channel("finance-channel").limit(20);
/// assert!(query.pending_only);
/// assert_eq!(query.limit, 20);
/// assert_eq!(TicketQuery::new().offset(40).offset, 40);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct TicketQuery {
    /// Only tickets of this approval channel.
    pub channel: Option<String>,
    /// Only tickets of this run.
    pub run_id: Option<String>,
    /// Only tickets of this thread.
    pub thread_id: Option<String>,
    /// Only pending tickets (expired ones the store has not moved yet included; see
    /// [`Ticket::state_at`]).
    pub pending_only: bool,
    /// How many tickets of the order to skip.
    pub offset: u64,
    /// The most tickets to return (from 1 to [`MAX_TICKET_PAGE`]; 50 by default).
    pub limit: u64,
}

impl Default for TicketQuery {
    fn default() -> Self {
        Self {
            channel: None,
            run_id: None,
            thread_id: None,
            pending_only: false,
            offset: 0,
            limit: 50,
        }
    }
}

impl TicketQuery {
    /// Every ticket, first page of 50.
    pub fn new() -> Self {
        Self::default()
    }
    /// Only pending tickets.
    pub fn pending(mut self) -> Self {
        self.pending_only = true;
        self
    }
    /// Only tickets of this channel.
    pub fn channel(mut self, channel: impl Into<String>) -> Self {
        self.channel = Some(channel.into());
        self
    }
    /// Only tickets of this run.
    pub fn run(mut self, run_id: impl Into<String>) -> Self {
        self.run_id = Some(run_id.into());
        self
    }
    /// Only tickets of this thread.
    pub fn thread(mut self, thread_id: impl Into<String>) -> Self {
        self.thread_id = Some(thread_id.into());
        self
    }
    /// Skips the first `offset` tickets of the order.
    pub fn offset(mut self, offset: u64) -> Self {
        self.offset = offset;
        self
    }
    /// At most `limit` tickets (capped at [`MAX_TICKET_PAGE`]).
    pub fn limit(mut self, limit: u64) -> Self {
        self.limit = limit;
        self
    }
    /// The page size a backend reads: the limit, capped.
    pub fn page_size(&self) -> u64 {
        self.limit.clamp(1, MAX_TICKET_PAGE)
    }
    /// Whether `ticket` passes the filters (tenant aside: a backend scopes by tenant first).
    pub fn matches(&self, ticket: &Ticket) -> bool {
        let is = |want: &Option<String>, have: Option<&str>| {
            want.as_deref().is_none_or(|w| have == Some(w))
        };
        is(&self.channel, Some(&ticket.channel))
            && is(&self.run_id, Some(&ticket.run_id))
            && is(&self.thread_id, ticket.thread_id.as_deref())
            && (!self.pending_only || ticket.state == TicketState::Pending)
    }
    /// The sort key of the shared order: pending first, oldest first; then the rest, newest
    /// first; equal times by id.
    pub fn order_key(ticket: &Ticket) -> (bool, i64, &str) {
        let pending = ticket.state == TicketState::Pending;
        let time = if pending {
            ticket.created_at_ms
        } else {
            ticket.created_at_ms.saturating_neg()
        };
        (!pending, time, &ticket.id)
    }
}

/// One page of a tenant's tickets.
///
/// ```
/// use agboss_core::store::TicketPage;
/// let page = TicketPage::default();
/// assert!(page.tickets.is_empty() && page.next_offset.is_none());
/// ```
#[derive(Debug, Default)]
#[non_exhaustive]
pub struct TicketPage {
    /// The readable tickets of the page, in order.
    pub tickets: Vec<Ticket>,
    /// The tickets of the page whose row could not be read: their id and why. One damaged row
    /// hides no other ticket.
    pub unreadable: Vec<(String, StoreError)>,
    /// The offset of the next page, when there are more tickets.
    pub next_offset: Option<u64>,
}

impl TicketPage {
    /// A page of `rows` (read with one more than the page size, to tell whether more follow).
    pub fn from_rows(query: &TicketQuery, rows: Vec<Result<Ticket, (String, StoreError)>>) -> Self {
        let size = usize::try_from(query.page_size()).unwrap_or(usize::MAX);
        let more = rows.len() > size;
        let mut page = Self {
            next_offset: more.then(|| query.offset.saturating_add(query.page_size())),
            ..Self::default()
        };
        for row in rows.into_iter().take(size) {
            match row {
                Ok(ticket) => page.tickets.push(ticket),
                Err(unreadable) => page.unreadable.push(unreadable),
            }
        }
        page
    }
}
