//! The approval tickets of [`PostgresStore`]. Each write is one transaction that locks what it
//! checks: a leased write holds its run's row (`FOR SHARE`: a takeover, which updates the row,
//! waits for it, and a write whose lease was taken over finds the new token), and a
//! compare-and-swap holds the ticket's row (`FOR UPDATE`: of two racing decisions, the second
//! waits, then reads the first one's state and is refused). Locks are taken run before ticket.
//! A row that cannot be read ([`StoreError::Corrupt`]) is refused before anything is written.
use sqlx::Row;
use sqlx::postgres::PgRow;

use super::PostgresStore;
use crate::store::sql::{
    TicketRow, backend, lease_lost, not_in_state, ticket_columns, ticket_not_found, undecidable,
};
use crate::store::{Lease, StoreError, Ticket, TicketDecision, TicketState};

const SELECT_TICKET: &str = concat!(
    "SELECT ",
    ticket_columns!(),
    " FROM tickets WHERE tenant = $1 AND id = $2"
);
/// A ticket's row, locked until the transaction ends.
const LOCK_TICKET: &str = concat!(
    "SELECT ",
    ticket_columns!(),
    " FROM tickets WHERE tenant = $1 AND id = $2 FOR UPDATE"
);

fn ticket_row(row: &PgRow) -> Result<TicketRow, sqlx::Error> {
    Ok(TicketRow {
        tenant: row.try_get(0)?,
        id: row.try_get(1)?,
        thread_id: row.try_get(2)?,
        run_id: row.try_get(3)?,
        step_key: row.try_get(4)?,
        call_id: row.try_get(5)?,
        tool: row.try_get(6)?,
        channel: row.try_get(7)?,
        input: row.try_get(8)?,
        fingerprint: row.try_get(9)?,
        chain_digest: row.try_get(10)?,
        state: row.try_get(11)?,
        decision: row.try_get(12)?,
        created_at_ms: row.try_get(13)?,
        expires_at_ms: row.try_get(14)?,
    })
}

/// A `tickets` row, decoded.
fn decode_ticket(row: &PgRow, op: &'static str) -> Result<Ticket, StoreError> {
    ticket_row(row).map_err(backend(op))?.into_ticket()
}

impl PostgresStore {
    /// `create_ticket`: fenced by the lease, with the lease's tenant and run and the run's
    /// thread.
    pub(super) async fn insert_ticket(
        &self,
        lease: &Lease,
        ticket: &Ticket,
    ) -> Result<(), StoreError> {
        const OP: &str = "create ticket";
        let mut tx = self.begin(OP).await?;
        let run = sqlx::query(concat!(
            "SELECT thread_id FROM runs",
            fenced!(),
            " FOR SHARE"
        ))
        .bind(&lease.tenant)
        .bind(&lease.run_id)
        .bind(lease.token)
        .bind(&lease.worker)
        .fetch_optional(&mut *tx)
        .await
        .map_err(backend(OP))?
        .ok_or_else(|| lease_lost(lease))?;
        let thread_id: Option<String> = run.try_get(0).map_err(backend(OP))?;
        let done = sqlx::query(concat!(
            "INSERT INTO tickets (",
            ticket_columns!(),
            ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15) \
             ON CONFLICT (tenant, id) DO NOTHING"
        ))
        .bind(&lease.tenant)
        .bind(&ticket.id)
        .bind(thread_id)
        .bind(&lease.run_id)
        .bind(&ticket.step_key)
        .bind(&ticket.call_id)
        .bind(&ticket.tool)
        .bind(&ticket.channel)
        .bind(&ticket.input)
        .bind(&ticket.fingerprint)
        .bind(&ticket.chain_digest)
        .bind(ticket.state.as_str())
        .bind(ticket.decision.as_ref().map(TicketDecision::encode))
        .bind(ticket.created_at_ms)
        .bind(ticket.expires_at_ms)
        .execute(&mut *tx)
        .await
        .map_err(backend(OP))?;
        if done.rows_affected() == 0 {
            return Err(StoreError::TicketExists {
                ticket_id: ticket.id.clone(),
            });
        }
        tx.commit().await.map_err(backend(OP))
    }

    /// `ticket`.
    pub(super) async fn read_ticket(
        &self,
        tenant: &str,
        ticket_id: &str,
    ) -> Result<Ticket, StoreError> {
        const OP: &str = "read ticket";
        let row = sqlx::query(SELECT_TICKET)
            .bind(tenant)
            .bind(ticket_id)
            .fetch_optional(&self.pool)
            .await
            .map_err(backend(OP))?
            .ok_or_else(|| ticket_not_found(ticket_id))?;
        decode_ticket(&row, OP)
    }

    /// `run_tickets`, oldest first.
    pub(super) async fn list_run_tickets(
        &self,
        tenant: &str,
        run_id: &str,
    ) -> Result<Vec<Ticket>, StoreError> {
        const OP: &str = "list tickets";
        let rows = sqlx::query(concat!(
            "SELECT ",
            ticket_columns!(),
            " FROM tickets WHERE tenant = $1 AND run_id = $2 ORDER BY ord"
        ))
        .bind(tenant)
        .bind(run_id)
        .fetch_all(&self.pool)
        .await
        .map_err(backend(OP))?;
        rows.iter().map(|row| decode_ticket(row, OP)).collect()
    }

    /// `decide_ticket`: `Pending → Decided` with the decision, checked and written in one
    /// transaction.
    pub(super) async fn cas_decide_ticket(
        &self,
        tenant: &str,
        ticket_id: &str,
        decision: &TicketDecision,
        now_ms: i64,
    ) -> Result<Ticket, StoreError> {
        const OP: &str = "decide ticket";
        let mut tx = self.begin(OP).await?;
        let row = sqlx::query(LOCK_TICKET)
            .bind(tenant)
            .bind(ticket_id)
            .fetch_optional(&mut *tx)
            .await
            .map_err(backend(OP))?
            .ok_or_else(|| ticket_not_found(ticket_id))?;
        let mut ticket = decode_ticket(&row, OP)?;
        if let Some(refused) = undecidable(&ticket, now_ms) {
            return Err(refused);
        }
        sqlx::query("UPDATE tickets SET state = $3, decision = $4 WHERE tenant = $1 AND id = $2")
            .bind(tenant)
            .bind(ticket_id)
            .bind(TicketState::Decided.as_str())
            .bind(decision.encode())
            .execute(&mut *tx)
            .await
            .map_err(backend(OP))?;
        tx.commit().await.map_err(backend(OP))?;
        ticket.state = TicketState::Decided;
        ticket.decision = Some(decision.clone());
        Ok(ticket)
    }

    /// `advance_ticket`: fenced by the lease, `from → to` on a ticket of the lease's run.
    pub(super) async fn cas_advance_ticket(
        &self,
        lease: &Lease,
        ticket_id: &str,
        from: TicketState,
        to: TicketState,
    ) -> Result<Ticket, StoreError> {
        const OP: &str = "advance ticket";
        let mut tx = self.begin(OP).await?;
        sqlx::query(concat!("SELECT 1 FROM runs", fenced!(), " FOR SHARE"))
            .bind(&lease.tenant)
            .bind(&lease.run_id)
            .bind(lease.token)
            .bind(&lease.worker)
            .fetch_optional(&mut *tx)
            .await
            .map_err(backend(OP))?
            .ok_or_else(|| lease_lost(lease))?;
        let row = sqlx::query(concat!(
            "SELECT ",
            ticket_columns!(),
            " FROM tickets WHERE tenant = $1 AND id = $2 AND run_id = $3 FOR UPDATE"
        ))
        .bind(&lease.tenant)
        .bind(ticket_id)
        .bind(&lease.run_id)
        .fetch_optional(&mut *tx)
        .await
        .map_err(backend(OP))?
        .ok_or_else(|| ticket_not_found(ticket_id))?;
        let mut ticket = decode_ticket(&row, OP)?;
        if let Some(refused) = not_in_state(&ticket, from) {
            return Err(refused);
        }
        sqlx::query("UPDATE tickets SET state = $3 WHERE tenant = $1 AND id = $2")
            .bind(&lease.tenant)
            .bind(ticket_id)
            .bind(to.as_str())
            .execute(&mut *tx)
            .await
            .map_err(backend(OP))?;
        tx.commit().await.map_err(backend(OP))?;
        ticket.state = to;
        Ok(ticket)
    }
}
