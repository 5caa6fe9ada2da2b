//! [`RunStore`] on [`SqlStore`].
//!
//! A leased write is fenced in its transaction: the run's row is updated only if it is still
//! running under the lease's token and worker, and that row lock orders concurrent appends to
//! one run (each gets the next position). Locks are taken run before thread: an append locks its
//! run's row with the fenced update, then its thread's row to number the messages.
use std::time::Duration;

use super::begin::try_begin_run;
use super::db::{Bind, backend, sql_u64, stored_u64};
use super::dialect::Dialect;
use super::queries::{FINISH_RUN, INSERT_STEP, RELEASE, RUN_EXISTS, SELECT_RUN, STEPS};
use super::rows::{journal_step, run_record};
use super::store::SqlStore;
use crate::model::Message;
use crate::store::checks::{lease_lost, lease_of, run_not_found};
use crate::store::error::StoreError;
use crate::store::traits::RunStore;
use crate::store::types::{
    FORMAT_VERSION, JournalStep, Lease, NewRun, RunEnd, RunRecord, RunStatus, StepEntry,
};

/// How often `begin_run` starts over when another worker created or removed the run meanwhile.
const BEGIN_ATTEMPTS: usize = 5;

impl<D: Dialect> RunStore for SqlStore<D> {
    async fn begin_run(
        &self,
        new: NewRun,
        worker: &str,
        ttl: Duration,
    ) -> Result<(RunRecord, Lease), StoreError> {
        for _ in 0..BEGIN_ATTEMPTS {
            if let Some(run) = try_begin_run(self, &new, worker, ttl).await? {
                let lease = lease_of(&run, ttl);
                return Ok((run, lease));
            }
        }
        Err(StoreError::backend(
            "begin run",
            format!(
                "run `{}` kept being created and deleted by other workers",
                new.run_id
            ),
        ))
    }

    async fn run(&self, tenant: &str, run_id: &str) -> Result<RunRecord, StoreError> {
        const OP: &str = "read run";
        let q = sqlx::query(SELECT_RUN).text(tenant).text(run_id);
        let row = self
            .optional(OP, q)
            .await?
            .ok_or_else(|| run_not_found(run_id))?;
        run_record::<D>(&row, OP)
    }

    async fn resumable_runs(&self, limit: usize) -> Result<Vec<RunRecord>, StoreError> {
        const OP: &str = "list resumable runs";
        let q = sqlx::query(D::queries().resumable_runs.as_str()).int(sql_u64(limit as u64));
        let rows = self.all(OP, q).await?;
        rows.iter().map(|row| run_record::<D>(row, OP)).collect()
    }

    async fn steps(&self, tenant: &str, run_id: &str) -> Result<Vec<JournalStep>, StoreError> {
        const OP: &str = "read steps";
        let exists = sqlx::query(RUN_EXISTS).text(tenant).text(run_id);
        self.exists(OP, exists, || run_not_found(run_id)).await?;
        let rows = self
            .all(OP, sqlx::query(STEPS).text(tenant).text(run_id))
            .await?;
        rows.iter().map(|row| journal_step::<D>(row, OP)).collect()
    }

    async fn append(
        &self,
        lease: &Lease,
        entry: &StepEntry,
        messages: &[Message],
    ) -> Result<u64, StoreError> {
        const OP: &str = "append step";
        let mut w = self.write(OP).await?;
        // The fence, and the run's row lock: concurrent appends to one run queue here and each
        // gets the next position.
        let fence = sqlx::query(D::queries().append.as_str())
            .text(&lease.tenant)
            .text(&lease.run_id)
            .int(lease.token)
            .text(&lease.worker)
            .int(lease.ttl_ms());
        let row = w
            .optional(OP, fence)
            .await?
            .ok_or_else(|| lease_lost(lease))?;
        let seq = D::get_int(&row, 0).map_err(backend(OP))?;
        let thread_id = D::get_opt_text(&row, 1).map_err(backend(OP))?;
        let insert = sqlx::query(INSERT_STEP)
            .text(&lease.tenant)
            .text(&lease.run_id)
            .int(seq)
            .text(entry.kind())
            .text(entry.key())
            .int(FORMAT_VERSION)
            .text(&entry.encode());
        w.execute(OP, insert).await?;
        if let Some(thread_id) = thread_id {
            let to = (
                lease.tenant.as_str(),
                thread_id.as_str(),
                lease.run_id.as_str(),
            );
            w.append_messages(OP, to, messages).await?;
        }
        w.commit(OP).await?;
        stored_u64("run", seq)
    }

    async fn renew(&self, lease: &Lease) -> Result<(), StoreError> {
        let sql = D::queries().renew.as_str();
        self.fenced("renew lease", sql, lease, |q| q.int(lease.ttl_ms()))
            .await
    }

    async fn finish_run(&self, lease: &Lease, end: &RunEnd) -> Result<(), StoreError> {
        let (status, output, error) = match end {
            RunEnd::Completed { output } => (RunStatus::Completed, Some(output.as_str()), None),
            RunEnd::Failed { error } => (RunStatus::Failed, None, Some(error.as_str())),
        };
        self.fenced("finish run", FINISH_RUN, lease, |q| {
            q.text(status.as_str()).opt_text(output).opt_text(error)
        })
        .await
    }

    async fn release(&self, lease: &Lease) -> Result<(), StoreError> {
        self.fenced("release lease", RELEASE, lease, |q| q).await
    }
}
