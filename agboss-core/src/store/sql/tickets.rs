//! [`TicketStore`] on [`SqlStore`]. Each write is one transaction that locks what it checks: a
//! leased write holds its run's row (a takeover, which updates the row, waits for it, and a
//! write whose lease was taken over finds the new token), and a compare-and-swap holds the
//! ticket's row (of two racing decisions, the second waits, then reads the first one's state and
//! is refused). Locks are taken run before ticket. A row that cannot be read
//! ([`StoreError::Corrupt`]) is refused before anything is written.
use super::db::sql_u64;
use super::db::{Bind, backend};
use super::dialect::Dialect;
use super::queries::{ADVANCE_TICKET, DECIDE_TICKET, LIST_TICKETS, RUN_TICKETS, SELECT_TICKET};
use super::rows::ticket;
use super::store::{SqlStore, Write};
use crate::contract::ticket::TicketState;
use crate::store::checks::{
    advance, decidable, in_state, lease_lost, new_ticket, ticket_not_found,
};
use crate::store::error::StoreError;
use crate::store::ticket::{Ticket, TicketDecision};
use crate::store::ticket_query::{TicketPage, TicketQuery};
use crate::store::traits::TicketStore;
use crate::store::types::Lease;

impl<D: Dialect> Write<'_, D> {
    /// The fence of a ticket write: the lease's run, its row held, and its thread.
    async fn fenced_run(
        &mut self,
        op: &'static str,
        lease: &Lease,
    ) -> Result<Option<String>, StoreError> {
        let q = sqlx::query(D::queries().fenced_run.as_str())
            .text(&lease.tenant)
            .text(&lease.run_id)
            .int(lease.token)
            .text(&lease.worker);
        let row = self
            .optional(op, q)
            .await?
            .ok_or_else(|| lease_lost(lease))?;
        D::get_opt_text(&row, 0).map_err(backend(op))
    }
}

impl<D: Dialect> TicketStore for SqlStore<D> {
    async fn create_ticket(&self, lease: &Lease, t: &Ticket) -> Result<(), StoreError> {
        const OP: &str = "create ticket";
        new_ticket(t)?;
        let mut w = self.write(OP).await?;
        let thread_id = w.fenced_run(OP, lease).await?;
        let decision = t.decision.as_ref().map(TicketDecision::encode);
        let insert = sqlx::query(D::queries().insert_ticket.as_str())
            .text(&lease.tenant)
            .text(&t.id)
            .opt_text(thread_id.as_deref())
            .text(&lease.run_id)
            .text(&t.step_key)
            .text(&t.call_id)
            .text(&t.tool)
            .text(&t.channel)
            .text(&t.input)
            .text(&t.fingerprint)
            .text(&t.chain_digest)
            .text(t.state.as_str())
            .opt_text(decision.as_deref())
            .int(t.created_at_ms)
            .int(t.expires_at_ms);
        if w.optional(OP, insert).await?.is_none() {
            return Err(StoreError::TicketExists {
                ticket_id: t.id.clone(),
            });
        }
        w.commit(OP).await
    }

    async fn ticket(&self, tenant: &str, ticket_id: &str) -> Result<Ticket, StoreError> {
        const OP: &str = "read ticket";
        let q = sqlx::query(SELECT_TICKET).text(tenant).text(ticket_id);
        let row = self
            .optional(OP, q)
            .await?
            .ok_or_else(|| ticket_not_found(ticket_id))?;
        ticket::<D>(&row, OP)
    }

    async fn run_tickets(&self, tenant: &str, run_id: &str) -> Result<Vec<Ticket>, StoreError> {
        const OP: &str = "list tickets";
        let rows = self
            .all(OP, sqlx::query(RUN_TICKETS).text(tenant).text(run_id))
            .await?;
        rows.iter().map(|row| ticket::<D>(row, OP)).collect()
    }

    async fn list_tickets(
        &self,
        tenant: &str,
        query: &TicketQuery,
    ) -> Result<TicketPage, StoreError> {
        const OP: &str = "list tickets";
        let q = sqlx::query(LIST_TICKETS)
            .text(tenant)
            .opt_text(query.channel.as_deref())
            .opt_text(query.run_id.as_deref())
            .opt_text(query.thread_id.as_deref())
            .int(i64::from(query.pending_only))
            .int(sql_u64(query.page_size().saturating_add(1)))
            .int(sql_u64(query.offset));
        let rows = self.all(OP, q).await?;
        let rows = rows
            .iter()
            .map(|row| {
                ticket::<D>(row, OP).map_err(|e| (D::get_text(row, 1).unwrap_or_default(), e))
            })
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
        const OP: &str = "decide ticket";
        let mut w = self.write(OP).await?;
        let lock = sqlx::query(D::queries().lock_ticket.as_str())
            .text(tenant)
            .text(ticket_id);
        let row = w
            .optional(OP, lock)
            .await?
            .ok_or_else(|| ticket_not_found(ticket_id))?;
        let mut found = ticket::<D>(&row, OP)?;
        decidable(&found, now_ms)?;
        let update = sqlx::query(DECIDE_TICKET)
            .text(tenant)
            .text(ticket_id)
            .text(TicketState::Decided.as_str())
            .text(&decision.encode());
        w.execute(OP, update).await?;
        w.commit(OP).await?;
        found.state = TicketState::Decided;
        found.decision = Some(decision.clone());
        Ok(found)
    }

    async fn advance_ticket(
        &self,
        lease: &Lease,
        ticket_id: &str,
        from: TicketState,
        to: TicketState,
    ) -> Result<Ticket, StoreError> {
        const OP: &str = "advance ticket";
        advance(ticket_id, from, to)?;
        let mut w = self.write(OP).await?;
        w.fenced_run(OP, lease).await?;
        let lock = sqlx::query(D::queries().lock_run_ticket.as_str())
            .text(&lease.tenant)
            .text(ticket_id)
            .text(&lease.run_id);
        let row = w
            .optional(OP, lock)
            .await?
            .ok_or_else(|| ticket_not_found(ticket_id))?;
        let mut found = ticket::<D>(&row, OP)?;
        in_state(&found, from)?;
        let update = sqlx::query(ADVANCE_TICKET)
            .text(&lease.tenant)
            .text(ticket_id)
            .text(to.as_str());
        w.execute(OP, update).await?;
        w.commit(OP).await?;
        found.state = to;
        Ok(found)
    }
}
