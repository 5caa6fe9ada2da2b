//! The conformance suite of store backends: what every backend (memory, SQLite, PostgreSQL,
//! yours) must do, check by check, grouped by the trait they check.
//!
//! [`conformance`] runs every check on a fresh [`Store`] of its own and names the checks that
//! failed; each check is also a public function of its own. A backend of one trait runs that
//! trait's group: [`run_checks`] need a [`RunStore`] only ([`run_conformance`]),
//! [`thread_checks`] a [`ThreadStore`] and the [`RunStore`] that writes its messages,
//! [`ticket_checks`] a [`TicketStore`] and the [`RunStore`] whose leases fence it,
//! [`usage_checks`] a [`UsageStore`], and [`store_checks`] all four ([`run_checks_on`] runs any group). The [`integrity_checks`]
//! (damaged rows) need a store whose rows a test can damage ([`DamageRows`]), and run with
//! [`integrity_conformance`]. The [`secret_checks`] check a [`SecretStore`] (each tenant's
//! secrets, beside [`Store`]), run with [`secret_conformance`].
//!
//! ```
//! use agboss_core::store::MemoryStore;
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! agboss_testing::store::conformance(|| async { MemoryStore::new() }).await;
//! # }
//! ```
use std::future::Future;
use std::time::Duration;

use agboss_core::model::Message;
use agboss_core::store::{
    Lease, NewRun, NewThread, RunRecord, RunStore, SecretStore, StepEntry, Store, StoreError,
    ThreadMessage, ThreadStore, TicketStore, UsageStore,
};
use futures::future::BoxFuture;

mod expiry;
mod integrity;
mod journal;
mod leases;
mod secrets;
mod threads;
mod ticket_lists;
mod ticket_races;
mod tickets;
mod usage;

pub use expiry::{an_expired_ticket, resumable_runs_skip_runs_waiting_for_a_ticket};
pub use integrity::{DamageRows, a_corrupt_history_row, a_thread_after_a_refused_run};
pub use journal::{journal_without_a_thread, runs_are_scoped_by_tenant};
pub use leases::{
    append_is_atomic, concurrent_appends_get_distinct_seqs, finished_run_cannot_resume,
    lease_held_while_unexpired, release_frees_the_lease, renew_extends_the_lease,
    resumable_runs_lists_expired_or_released_only, resume_by_same_worker,
    stale_lease_writes_nothing, takeover_after_expiry,
};
pub use secrets::{
    concurrent_puts_leave_one_value, secrets_are_scoped_by_tenant, secrets_keep_values_as_given,
    secrets_round_trip,
};
pub use threads::{
    delete_thread_removes_messages_runs_and_steps, foreign_tenant_sees_nothing, messages_limit,
    missing_thread_or_run, new_run_appends_input_and_records_history, thread_busy, thread_exists,
    threads_per_tenant,
};
pub use ticket_lists::{
    list_tickets_filters_by_channel_run_and_thread, list_tickets_pending_first_paged_per_tenant,
};
pub use ticket_races::{
    advance_is_a_compare_and_swap, concurrent_advances_have_one_winner,
    concurrent_decides_have_one_winner, delete_thread_removes_tickets,
    superseded_ticket_cannot_be_decided, ticket_thread_is_the_runs, tickets_move_forward_only,
};
pub use tickets::{
    duplicate_ticket_refused, expired_ticket_cannot_be_decided, foreign_ticket_not_found,
    run_tickets_oldest_first_per_tenant_and_run, stale_lease_creates_or_advances_nothing,
    ticket_decided_once, tickets_round_trip_with_the_leases_tenant_and_run,
};
pub use usage::{
    concurrent_reservations_never_pass_the_bound, prune_deletes_old_windows_only,
    usage_is_per_tenant_counter_and_window, usage_released_and_added,
    usage_reserved_within_the_bound,
};

/// A check: run on a store of its own, panics on a failure.
pub type Check<S> = fn(S) -> BoxFuture<'static, ()>;

/// Writes `$group()`: the checks named, for a store with the traits named.
macro_rules! checks {
    ($(#[$meta:meta])* $group:ident for $first:ident $(+ $more:ident)*: [$($name:ident),* $(,)?]) => {
        $(#[$meta])*
        pub fn $group<S: $first $(+ $more)*>() -> Vec<(&'static str, Check<S>)> {
            vec![$((
                stringify!($name),
                (|store: S| Box::pin(async move { $name(&store).await }) as BoxFuture<'static, ()>)
                    as Check<S>,
            )),*]
        }
    };
}

checks!(
    /// The checks of [`RunStore`] alone: runs without a thread, their journals and leases.
    run_checks for RunStore: [
        journal_without_a_thread,
        runs_are_scoped_by_tenant,
        takeover_after_expiry,
        lease_held_while_unexpired,
        renew_extends_the_lease,
        release_frees_the_lease,
        resumable_runs_lists_expired_or_released_only,
    ]
);

checks!(
    /// The checks of [`ThreadStore`], with the runs that write the threads' messages.
    thread_checks for ThreadStore + RunStore: [
        threads_per_tenant,
        thread_exists,
        foreign_tenant_sees_nothing,
        missing_thread_or_run,
        new_run_appends_input_and_records_history,
        thread_busy,
        delete_thread_removes_messages_runs_and_steps,
        messages_limit,
        resume_by_same_worker,
        stale_lease_writes_nothing,
        append_is_atomic,
        concurrent_appends_get_distinct_seqs,
        finished_run_cannot_resume,
    ]
);

checks!(
    /// The checks of [`TicketStore`], with the runs whose leases fence the tickets.
    ticket_checks for RunStore + TicketStore: [
        run_tickets_oldest_first_per_tenant_and_run,
        foreign_ticket_not_found,
        stale_lease_creates_or_advances_nothing,
        duplicate_ticket_refused,
        ticket_decided_once,
        expired_ticket_cannot_be_decided,
        an_expired_ticket,
        resumable_runs_skip_runs_waiting_for_a_ticket,
        advance_is_a_compare_and_swap,
        superseded_ticket_cannot_be_decided,
        concurrent_decides_have_one_winner,
        concurrent_advances_have_one_winner,
        tickets_move_forward_only,
        list_tickets_pending_first_paged_per_tenant,
    ]
);

checks!(
    /// The checks of [`UsageStore`]: each tenant's usage windows.
    usage_checks for UsageStore: [
        usage_reserved_within_the_bound,
        concurrent_reservations_never_pass_the_bound,
        usage_is_per_tenant_counter_and_window,
        usage_released_and_added,
        prune_deletes_old_windows_only,
    ]
);

checks!(
    /// The checks across the traits: tickets and the threads of their runs.
    store_checks for Store: [
        tickets_round_trip_with_the_leases_tenant_and_run,
        delete_thread_removes_tickets,
        ticket_thread_is_the_runs,
        list_tickets_filters_by_channel_run_and_thread,
    ]
);

checks!(
    /// The checks of [`SecretStore`] (each tenant's secrets by name), beside [`Store`]: run them
    /// with [`secret_conformance`].
    secret_checks for SecretStore: [
        secrets_round_trip,
        secrets_are_scoped_by_tenant,
        secrets_keep_values_as_given,
        concurrent_puts_leave_one_value,
    ]
);

checks!(
    /// The checks of damaged rows: a corrupt history row, a thread after a run refused for one.
    integrity_checks for DamageRows: [
        a_corrupt_history_row,
        a_thread_after_a_refused_run,
    ]
);

/// Every check of the suite, by name: for a whole [`Store`].
pub fn checks<S: Store>() -> Vec<(&'static str, Check<S>)> {
    let mut all = thread_checks();
    all.extend(run_checks());
    all.extend(ticket_checks());
    all.extend(usage_checks());
    all.extend(store_checks());
    all
}

/// Runs every check of the suite, each on a store `fresh` makes, and panics naming the checks
/// that failed (all checks run, whatever fails). Needs a tokio runtime: each check is a task.
pub async fn conformance<S, F, Fut>(fresh: F)
where
    S: Store,
    F: Fn() -> Fut,
    Fut: Future<Output = S>,
{
    run_checks_on(checks::<S>(), fresh).await;
}

/// [`conformance`] and the [`integrity_checks`], for a store whose rows a test can damage.
pub async fn integrity_conformance<S, F, Fut>(fresh: F)
where
    S: DamageRows,
    F: Fn() -> Fut,
    Fut: Future<Output = S>,
{
    let mut all = checks::<S>();
    all.extend(integrity_checks::<S>());
    run_checks_on(all, fresh).await;
}

/// The [`secret_checks`], each on a store `fresh` makes, for a backend of [`SecretStore`].
///
/// ```
/// use agboss_core::store::MemoryStore;
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// agboss_testing::store::secret_conformance(|| async { MemoryStore::new() }).await;
/// # }
/// ```
pub async fn secret_conformance<S, F, Fut>(fresh: F)
where
    S: SecretStore,
    F: Fn() -> Fut,
    Fut: Future<Output = S>,
{
    run_checks_on(secret_checks::<S>(), fresh).await;
}

/// [`conformance`] for a backend of [`RunStore`] alone: the [`run_checks`].
pub async fn run_conformance<S, F, Fut>(fresh: F)
where
    S: RunStore,
    F: Fn() -> Fut,
    Fut: Future<Output = S>,
{
    run_checks_on(run_checks::<S>(), fresh).await;
}

/// Runs `checks`, each on a store `fresh` makes, and panics naming the checks that failed.
pub async fn run_checks_on<S, F, Fut>(checks: Vec<(&'static str, Check<S>)>, fresh: F)
where
    S: Send + 'static,
    F: Fn() -> Fut,
    Fut: Future<Output = S>,
{
    let total = checks.len();
    let mut failed = Vec::new();
    for (name, check) in checks {
        let store = fresh().await;
        if let Err(e) = tokio::spawn(check(store)).await {
            let why = if e.is_panic() {
                panic_text(e.into_panic())
            } else {
                e.to_string()
            };
            failed.push(format!("  {name}: {why}"));
        }
    }
    assert!(
        failed.is_empty(),
        "store conformance: {} of {total} checks failed:\n{}",
        failed.len(),
        failed.join("\n")
    );
}

fn panic_text(payload: Box<dyn std::any::Any + Send>) -> String {
    match payload.downcast::<String>() {
        Ok(s) => *s,
        Err(payload) => payload
            .downcast_ref::<&str>()
            .map_or_else(|| "panicked".to_string(), |s| s.to_string()),
    }
}

/// A lease that outlives every check.
pub(crate) const LONG: Duration = Duration::from_secs(600);
/// A lease expired as soon as granted.
pub(crate) const EXPIRED: Duration = Duration::ZERO;

pub(crate) async fn thread<S: ThreadStore>(store: &S, tenant: &str, id: &str) {
    store
        .create_thread(tenant, NewThread::new().id(id))
        .await
        .unwrap_or_else(|e| panic!("create thread {tenant}/{id}: {}", why(&e)));
}

pub(crate) async fn begin<S: RunStore>(
    store: &S,
    run: NewRun,
    worker: &str,
    ttl: Duration,
) -> (RunRecord, Lease) {
    let what = format!("begin run {}/{} by {worker}", run.tenant, run.run_id);
    store
        .begin_run(run, worker, ttl)
        .await
        .unwrap_or_else(|e| panic!("{what}: {}", why(&e)))
}

pub(crate) fn run_on(tenant: &str, run_id: &str, thread_id: &str, input: &str) -> NewRun {
    NewRun::new(tenant, run_id, "agent", input).thread(thread_id)
}

pub(crate) fn step(key: &str) -> StepEntry {
    StepEntry::ToolFinished {
        key: key.to_string(),
        call_id: format!("call-{key}"),
        tool: "lookup".into(),
        decision: "allowed".into(),
        content: format!("observation of {key}"),
        is_error: false,
        truncated: false,
    }
}

pub(crate) async fn append<S: RunStore>(
    store: &S,
    lease: &Lease,
    entry: &StepEntry,
    messages: &[Message],
) -> u64 {
    store
        .append(lease, entry, messages)
        .await
        .unwrap_or_else(|e| panic!("append {} to {}: {}", entry.key(), lease.run_id, why(&e)))
}

pub(crate) async fn messages<S: ThreadStore>(
    store: &S,
    tenant: &str,
    thread_id: &str,
) -> Vec<ThreadMessage> {
    store
        .messages(tenant, thread_id, None)
        .await
        .unwrap_or_else(|e| panic!("messages of {tenant}/{thread_id}: {}", why(&e)))
}

pub(crate) async fn run<S: RunStore>(store: &S, tenant: &str, run_id: &str) -> RunRecord {
    store
        .run(tenant, run_id)
        .await
        .unwrap_or_else(|e| panic!("run {tenant}/{run_id}: {}", why(&e)))
}

pub(crate) async fn step_keys<S: RunStore>(store: &S, tenant: &str, run_id: &str) -> Vec<String> {
    store
        .steps(tenant, run_id)
        .await
        .unwrap_or_else(|e| panic!("steps of {tenant}/{run_id}: {}", why(&e)))
        .into_iter()
        .enumerate()
        .map(|(i, s)| {
            assert_eq!(s.seq, i as u64, "journal positions are 0, 1, 2, ...");
            s.entry.key().to_string()
        })
        .collect()
}

pub(crate) fn texts(messages: &[ThreadMessage]) -> Vec<String> {
    messages
        .iter()
        .enumerate()
        .map(|(i, m)| {
            assert_eq!(m.seq, i as u64, "thread positions are 0, 1, 2, ...");
            m.message.text().unwrap_or_default().to_string()
        })
        .collect()
}

/// An error with its causes.
pub(crate) fn why(e: &StoreError) -> String {
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

/// Asserts `result` failed with `LeaseLost` for `lease`.
#[track_caller]
pub(crate) fn assert_lease_lost<T: std::fmt::Debug>(
    what: &str,
    result: Result<T, StoreError>,
    lease: &Lease,
) {
    match result {
        Err(StoreError::LeaseLost { run_id, token }) => {
            assert_eq!(run_id, lease.run_id, "{what}: LeaseLost names the run");
            assert_eq!(
                token, lease.token,
                "{what}: LeaseLost names the stale token"
            );
        }
        other => panic!("{what}: expected LeaseLost, got {other:?}"),
    }
}
