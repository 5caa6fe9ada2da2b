//! The approval tickets of [`MemoryStore`]: each operation checks and writes under the store's
//! one lock.
use super::{MemoryStore, key};
use crate::contract::ticket::TicketState;
use crate::store::checks::{advance, decidable, in_state, new_ticket, ticket_not_found};
use crate::store::error::StoreError;
use crate::store::ticket::{Ticket, TicketDecision};
use crate::store::ticket_query::{TicketPage, TicketQuery};
use crate::store::traits::TicketStore;
use crate::store::types::Lease;

impl TicketStore for MemoryStore {
    async fn create_ticket(&self, lease: &Lease, ticket: &Ticket) -> Result<(), StoreError> {
        new_ticket(ticket)?;
        let mut state = self.state();
        let thread_id = state.leased(lease)?.record.thread_id.clone();
        let k = key(&lease.tenant, &ticket.id);
        if state.tickets.contains_key(&k) {
            return Err(StoreError::TicketExists {
                ticket_id: ticket.id.clone(),
            });
        }
        state.next_order += 1;
        let mut ticket = ticket.clone();
        ticket.tenant = lease.tenant.clone();
        ticket.run_id = lease.run_id.clone();
        ticket.thread_id = thread_id;
        let order = state.next_order;
        state.tickets.insert(k, (order, ticket));
        Ok(())
    }

    async fn ticket(&self, tenant: &str, ticket_id: &str) -> Result<Ticket, StoreError> {
        self.state()
            .tickets
            .get(&key(tenant, ticket_id))
            .map(|(_, t)| t.clone())
            .ok_or_else(|| ticket_not_found(ticket_id))
    }

    async fn run_tickets(&self, tenant: &str, run_id: &str) -> Result<Vec<Ticket>, StoreError> {
        let state = self.state();
        let mut tickets: Vec<_> = state
            .tickets
            .values()
            .filter(|(_, t)| t.tenant == tenant && t.run_id == run_id)
            .cloned()
            .collect();
        tickets.sort_by_key(|(order, _)| *order);
        Ok(tickets.into_iter().map(|(_, t)| t).collect())
    }

    async fn list_tickets(
        &self,
        tenant: &str,
        query: &TicketQuery,
    ) -> Result<TicketPage, StoreError> {
        let state = self.state();
        let mut tickets: Vec<&Ticket> = state
            .tickets
            .values()
            .map(|(_, t)| t)
            .filter(|t| t.tenant == tenant && query.matches(t))
            .collect();
        tickets.sort_by(|a, b| TicketQuery::order_key(a).cmp(&TicketQuery::order_key(b)));
        let skip = usize::try_from(query.offset).unwrap_or(usize::MAX);
        let take = usize::try_from(query.page_size()).unwrap_or(usize::MAX);
        let rows = tickets
            .into_iter()
            .skip(skip)
            .take(take.saturating_add(1))
            .map(|t| Ok(t.clone()))
            .collect();
        Ok(TicketPage::from_rows(query, rows))
    }

    async fn decide_ticket(
        &self,
        tenant: &str,
        ticket_id: &str,
        decision: &TicketDecision,
        now_ms: i64,
    ) -> Result<Ticket, StoreError> {
        let mut state = self.state();
        let (_, ticket) = state
            .tickets
            .get_mut(&key(tenant, ticket_id))
            .ok_or_else(|| ticket_not_found(ticket_id))?;
        decidable(ticket, now_ms)?;
        ticket.state = TicketState::Decided;
        ticket.decision = Some(decision.clone());
        Ok(ticket.clone())
    }

    async fn advance_ticket(
        &self,
        lease: &Lease,
        ticket_id: &str,
        from: TicketState,
        to: TicketState,
    ) -> Result<Ticket, StoreError> {
        advance(ticket_id, from, to)?;
        let mut state = self.state();
        state.leased(lease)?;
        let not_found = || ticket_not_found(ticket_id);
        let (_, ticket) = state
            .tickets
            .get_mut(&key(&lease.tenant, ticket_id))
            .ok_or_else(not_found)?;
        if ticket.run_id != lease.run_id {
            return Err(not_found());
        }
        in_state(ticket, from)?;
        ticket.state = to;
        Ok(ticket.clone())
    }
}
