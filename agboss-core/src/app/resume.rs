//! Taking a run up again, on any instance over the same store: by run
//! ([`App::resume_run`], [`App::resume_run_when_free`], [`App::take_over_runs`]), after a human
//! decision ([`App::decide`], [`App::resume_ticket`], [`App::decide_and_resume`],
//! [`App::resume`]), or after a call in doubt is settled ([`App::resolve_in_doubt`]).
use super::App;
use crate::engine::in_doubt::resolve_in_doubt;
use crate::engine::{
    Decision, InDoubtResolution, RunContext, RunError, RunFailed, RunOutput, Target,
};
use crate::engine::{direct, ticket};
use crate::store::{RunStore as _, StoreError, Ticket, TicketStore as _};

impl App {
    /// Takes up an unfinished run of `ctx`'s tenant from its journal, on this instance: its
    /// target, input and thread are read from the store; completed steps are read back, not
    /// done again. Refused while another instance holds the run's unexpired lease
    /// ([`StoreError::LeaseHeld`]), and for a finished run ([`StoreError::RunFinished`]). A run
    /// whose journal or thread history cannot be read fails with [`RunError::Store`] of a
    /// permanent error (`Corrupt`, `UnknownFormat`, `Schema`) and is finished as failed.
    /// A run of a workflow with a custom flow is resumed with [`App::execute`] and the same
    /// target, input and run id.
    pub async fn resume_run(&self, run_id: &str, ctx: RunContext) -> Result<RunOutput, RunFailed> {
        let failed = |e: StoreError| RunFailed::new(run_id, e);
        let store = self
            .store()
            .ok_or(StoreError::NotConfigured)
            .map_err(failed)?;
        let record = store
            .run(ctx.tenant_id().unwrap_or_default(), run_id)
            .await
            .map_err(failed)?;
        let mut ctx = ctx.run_id(run_id);
        ctx.thread = record.thread_id;
        self.execute(Target::named(record.target), record.input, ctx)
            .await
    }

    /// [`App::resume_run`], waiting for another worker's lease to expire: while the run is
    /// leased ([`StoreError::LeaseHeld`], which says until when), it sleeps until that expiry
    /// (not polling) and tries again; it gives up with that `LeaseHeld` once the lease would
    /// outlast `deadline`. What a caller does after a crash, when the dead worker's lease
    /// (30 s by default) still holds. Every other result is [`App::resume_run`]'s.
    ///
    /// ```no_run
    /// # async fn f(app: agboss_core::App) -> Result<(), agboss_core::RunFailed> {
    /// use std::time::{Duration, Instant};
    /// use agboss_core::RunContext;
    /// let deadline = Instant::now() + Duration::from_secs(60);
    /// let output = app
    ///     .resume_run_when_free("run_1", RunContext::new().tenant("acme"), deadline)
    ///     .await?;
    /// # let _ = output; Ok(()) }
    /// ```
    pub async fn resume_run_when_free(
        &self,
        run_id: &str,
        ctx: RunContext,
        deadline: std::time::Instant,
    ) -> Result<RunOutput, RunFailed> {
        loop {
            let held = match self.resume_run(run_id, ctx.clone()).await {
                Err(failed) => match *failed {
                    RunError::Store(StoreError::LeaseHeld { expires_at_ms, .. }) => expires_at_ms,
                    _ => return Err(failed),
                },
                done => return done,
            };
            let wait = u64::try_from(held.saturating_sub(crate::store::types::now_ms()))
                .unwrap_or(0)
                // The store's clock may be a little ahead of ours: try just after the expiry.
                .saturating_add(5);
            let wake = std::time::Instant::now() + std::time::Duration::from_millis(wait);
            if wake > deadline {
                let held = StoreError::LeaseHeld {
                    run_id: run_id.to_string(),
                    expires_at_ms: held,
                };
                return Err(RunFailed::new(run_id, held));
            }
            tokio::time::sleep_until(wake.into()).await;
        }
    }

    /// Takes over up to `limit` unfinished runs whose lease expired or was given back (their
    /// worker crashed, or stopped on a store failure), across tenants, oldest first, and
    /// resumes each one on this instance under its own tenant: the loop a standby worker runs.
    /// Returns each run's id with its result; a run another instance took first is reported
    /// with [`StoreError::LeaseHeld`].
    ///
    /// A run paused for approval is not a crashed run: it is skipped while one of its tickets
    /// is pending and before its expiry, so paused runs never starve a takeover. Once the
    /// ticket is decided, or its expiry passed, the run is taken over like any other: this
    /// loop is also the sweeper of expired tickets. A resumed run moves its expired ticket to
    /// [`TicketState::Expired`](crate::store::TicketState::Expired) and gives the call its
    /// channel's expiry outcome (an error observation for the model, and the agent goes on;
    /// a failed step in a workflow); a direct call's run
    /// ([`ToolHandle::invoke`](crate::ToolHandle::invoke)) ends failed with a
    /// [`ToolBlockedError`](crate::contract::outcome::ToolBlockedError), its result here. The call never
    /// runs, and the run's thread is free again.
    ///
    /// A run whose journal or history cannot be read (a damaged row:
    /// [`StoreError::is_permanent`]) is reported with that error and finished as failed, so no
    /// later takeover picks it up again and its thread is free.
    pub async fn take_over_runs(
        &self,
        limit: usize,
    ) -> Result<Vec<(String, Result<RunOutput, RunError>)>, RunError> {
        let store = self.store().ok_or(StoreError::NotConfigured)?;
        let mut results = Vec::new();
        for record in store.resumable_runs(limit).await? {
            let direct = direct::take_over_direct(&self.inner, &record.tenant, &record.run_id);
            match direct.await {
                Ok(None) => {}
                // Still the caller's to decide.
                Ok(Some(Ok(()))) => continue,
                Ok(Some(Err(e))) | Err(e) => {
                    results.push((record.run_id, Err(e)));
                    continue;
                }
            }
            let mut ctx = RunContext::new();
            if !record.tenant.is_empty() {
                ctx = ctx.tenant(record.tenant.as_str());
            }
            let result = self.resume_run(&record.run_id, ctx).await;
            results.push((record.run_id, result.map_err(RunError::from)));
        }
        Ok(results)
    }

    /// Records a human decision on one of `tenant`'s tickets: the approver must be authorized
    /// by the ticket's channel, the ticket pending and not expired; a ticket is decided once
    /// ([`StoreError::TicketState`] after that). Once the approver is authorized, an edit's
    /// input is decoded and validated against the tool's input DTO: an invalid one is refused
    /// with [`RunError::InvalidEdit`] (every failing field), nothing is recorded and the ticket
    /// stays pending.
    /// Resume the run afterwards with [`App::resume_ticket`] or [`App::resume_run`].
    /// Every decision path ([`App::tickets`], [`App::resume`], the console) passes here.
    pub async fn decide(&self, tenant: &str, decision: Decision) -> Result<Ticket, RunError> {
        ticket::decide(&self.inner, tenant, decision).await
    }

    /// Resumes the run of one of `ctx`'s tenant's tickets once it is decided (by
    /// [`App::decide`] or [`App::tickets`]): the ticket records its run and thread, so nothing
    /// else is needed. The turn goes on once every ticket of it is decided; with tickets still
    /// pending the run stops again with [`RunError::AwaitingApproval`]. Another tenant's ticket
    /// reads as not found.
    /// The error's run id is the ticket's run, empty when the ticket could not be read.
    pub async fn resume_ticket(
        &self,
        ticket_id: &str,
        ctx: RunContext,
    ) -> Result<RunOutput, RunFailed> {
        let no_run = |e: StoreError| RunFailed::new("", e);
        let store = self
            .store()
            .ok_or(StoreError::NotConfigured)
            .map_err(no_run)?;
        let ticket = store
            .ticket(ctx.tenant_id().unwrap_or_default(), ticket_id)
            .await
            .map_err(no_run)?;
        self.resume_run(&ticket.run_id, ctx).await
    }

    /// Decides and resumes in one call: [`App::decide`], then [`App::resume_ticket`]. The
    /// error's run id is the ticket's run, empty when the ticket could not be read.
    pub async fn decide_and_resume(
        &self,
        decision: Decision,
        ctx: RunContext,
    ) -> Result<RunOutput, RunFailed> {
        let tenant = ctx.tenant_id().unwrap_or_default().to_string();
        let ticket_id = decision.ticket_id().to_string();
        match self.decide(&tenant, decision).await {
            Ok(decided) => self.resume_run(&decided.run_id, ctx).await,
            // Refused: the run it waits in, read again only on this rare path.
            Err(e) => Err(RunFailed::new(self.run_of(&tenant, &ticket_id).await, e)),
        }
    }

    /// The run of one of `tenant`'s tickets, empty when it cannot be read.
    async fn run_of(&self, tenant: &str, ticket_id: &str) -> String {
        match self.store() {
            Some(store) => store
                .ticket(tenant, ticket_id)
                .await
                .map(|t| t.run_id)
                .unwrap_or_default(),
            None => String::new(),
        }
    }

    /// Decides a ticket of thread `thread_id` (of `ctx`'s tenant) and resumes its run, from any
    /// app instance over the same store: once every ticket of the paused turn is decided the
    /// turn goes on (an approved call runs once, through its whole chain; a rejected one reads
    /// the approver's message; an edited one runs the approver's input through the before chain
    /// again); with tickets still pending it stops again with
    /// [`RunError::AwaitingApproval`]. A ticket of another thread or tenant reads as not found;
    /// a finished run is not resumed.
    ///
    /// The ticket records its thread, so the thread id is only a check here: the variant
    /// without it is [`App::decide_and_resume`] (or [`App::decide`] then
    /// [`App::resume_ticket`]).
    pub async fn resume(
        &self,
        thread_id: &str,
        decision: Decision,
        ctx: RunContext,
    ) -> Result<RunOutput, RunFailed> {
        let tenant = ctx.tenant_id().unwrap_or_default().to_string();
        let no_run = |e: StoreError| RunFailed::new("", e);
        let store = self
            .store()
            .ok_or(StoreError::NotConfigured)
            .map_err(no_run)?;
        let ticket = store
            .ticket(&tenant, decision.ticket_id())
            .await
            .map_err(no_run)?;
        if ticket.thread_id.as_deref() != Some(thread_id) {
            return Err(no_run(StoreError::TicketNotFound {
                ticket_id: ticket.id,
            }));
        }
        self.decide_and_resume(decision, ctx).await
    }

    /// Settles a call in doubt ([`RunError::InDoubt`]) of `tenant`'s run: the work was done,
    /// with this observation, or it was not, and the call runs again on resume. Then resume
    /// the run with [`App::resume_run`].
    pub async fn resolve_in_doubt(
        &self,
        tenant: &str,
        run_id: &str,
        call_id: &str,
        resolution: InDoubtResolution,
    ) -> Result<(), RunError> {
        let durability = self.inner.durability()?;
        resolve_in_doubt(durability, tenant, run_id, call_id, resolution).await
    }
}
