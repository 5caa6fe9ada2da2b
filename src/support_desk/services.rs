//! The desk's services (app-wide singletons): the audit log, the order store, the managers'
//! inbox and the support clock.
use std::collections::HashMap;
use std::sync::Mutex;

use agboss_core::prelude::*;

use super::OrderDto;

/// Records what the audit interceptor saw (an app-wide singleton).
#[injectable(default)]
#[derive(Default)]
pub struct AuditLog {
    entries: Mutex<Vec<String>>,
}

impl AuditLog {
    /// Appends an entry.
    pub fn record(&self, entry: String) {
        self.entries.lock().expect("audit log lock").push(entry);
    }
    /// Every entry so far.
    pub fn entries(&self) -> Vec<String> {
        self.entries.lock().expect("audit log lock").clone()
    }
}

/// The order store (in memory, an app-wide singleton): every order `TENANT-n` exists and totals
/// 125.00, except order 7 of each tenant, a 2,400.00 sofa. It remembers what was refunded.
#[injectable(default)]
#[derive(Default)]
pub struct OrderStore {
    refunded: Mutex<HashMap<String, i64>>,
}

impl OrderStore {
    /// An order by id.
    pub fn find(&self, order_id: &str) -> Option<OrderDto> {
        let (tenant, number) = order_id.split_once('-')?;
        let amount_cents = if number == "7" { 240_000 } else { 12_500 };
        let refunded = self.refunded(order_id);
        Some(OrderDto {
            order_id: order_id.to_string(),
            customer_email: format!("jane.doe@{}.example", tenant.to_lowercase()),
            amount_cents,
            status: if refunded >= amount_cents {
                "refunded"
            } else {
                "paid"
            }
            .into(),
        })
    }
    /// What was refunded on an order so far, in cents.
    pub fn refunded(&self, order_id: &str) -> i64 {
        let refunded = self.refunded.lock().expect("order store lock");
        refunded.get(order_id).copied().unwrap_or(0)
    }
    /// Records a refund.
    pub fn record_refund(&self, order_id: &str, cents: i64) {
        let mut refunded = self.refunded.lock().expect("order store lock");
        *refunded.entry(order_id.to_string()).or_insert(0) += cents;
    }
}

/// The managers' inbox (an app-wide singleton): every ticket [`ManagerChannel`](super::ManagerChannel) was told of, in
/// order. A real desk would page someone; the demo and the tests read it.
#[injectable(default)]
#[derive(Default)]
pub struct ManagerInbox {
    tickets: Mutex<Vec<Ticket>>,
}

impl ManagerInbox {
    /// Every ticket the channel was told of, in order.
    pub fn tickets(&self) -> Vec<Ticket> {
        self.tickets.lock().expect("manager inbox lock").clone()
    }
    pub(super) fn push(&self, ticket: &Ticket) {
        self.tickets
            .lock()
            .expect("manager inbox lock")
            .push(ticket.clone());
    }
}

/// The hour of day (0–23) the desk believes it is.
#[injectable(default)]
pub struct SupportClock {
    hour: std::sync::atomic::AtomicU8,
}

impl Default for SupportClock {
    fn default() -> Self {
        Self::at(10)
    }
}

impl SupportClock {
    /// A clock pinned at `hour`.
    pub fn at(hour: u8) -> Self {
        Self {
            hour: std::sync::atomic::AtomicU8::new(hour),
        }
    }
    /// The hour.
    pub fn hour(&self) -> u8 {
        self.hour.load(std::sync::atomic::Ordering::Relaxed)
    }
}
