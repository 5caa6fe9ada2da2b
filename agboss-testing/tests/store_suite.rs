//! The conformance suite itself: a store with a bug fails it, naming the checks that caught it.
use std::panic::AssertUnwindSafe;
use std::time::Duration;

use agboss_core::model::Message;
use agboss_core::store::{
    JournalStep, Lease, MemoryStore, NewRun, NewThread, RunEnd, RunRecord, RunStore, SecretStore,
    StepEntry, StoreError, ThreadInfo, ThreadList, ThreadMessage, ThreadStore,
};
use agboss_testing::store::{
    checks, run_checks, run_checks_on, run_conformance, secret_checks, secret_conformance,
    store_checks, thread_checks, ticket_checks, usage_checks,
};
use futures::FutureExt;

#[derive(Clone, Copy, PartialEq)]
enum Bug {
    /// `messages` ignores its limit.
    NoLimit,
    /// `list_threads` is newest first.
    NewestFirst,
    /// `resumable_runs` lists every run.
    EveryRunResumable,
    /// `renew` does nothing.
    RenewIgnored,
}

/// MemoryStore with one bug.
struct Buggy(MemoryStore, Bug);

impl ThreadStore for Buggy {
    async fn create_thread(&self, tenant: &str, new: NewThread) -> Result<ThreadInfo, StoreError> {
        self.0.create_thread(tenant, new).await
    }
    async fn thread(&self, tenant: &str, thread_id: &str) -> Result<ThreadInfo, StoreError> {
        self.0.thread(tenant, thread_id).await
    }
    async fn list_threads(&self, tenant: &str) -> Result<ThreadList, StoreError> {
        let mut list = self.0.list_threads(tenant).await?;
        if self.1 == Bug::NewestFirst {
            list.threads.reverse();
        }
        Ok(list)
    }
    async fn delete_thread(&self, tenant: &str, thread_id: &str) -> Result<(), StoreError> {
        self.0.delete_thread(tenant, thread_id).await
    }
    async fn messages(
        &self,
        tenant: &str,
        thread_id: &str,
        limit: Option<u64>,
    ) -> Result<Vec<ThreadMessage>, StoreError> {
        let limit = if self.1 == Bug::NoLimit { None } else { limit };
        self.0.messages(tenant, thread_id, limit).await
    }
}

impl RunStore for Buggy {
    async fn begin_run(
        &self,
        run: NewRun,
        worker: &str,
        ttl: Duration,
    ) -> Result<(RunRecord, Lease), StoreError> {
        self.0.begin_run(run, worker, ttl).await
    }
    async fn run(&self, tenant: &str, run_id: &str) -> Result<RunRecord, StoreError> {
        self.0.run(tenant, run_id).await
    }
    async fn resumable_runs(&self, limit: usize) -> Result<Vec<RunRecord>, StoreError> {
        if self.1 == Bug::EveryRunResumable {
            // Every run: one listed before, or still held.
            let mut all = Vec::new();
            for tenant in ["acme", "globex", "initech"] {
                for id in [
                    "expired",
                    "held",
                    "released",
                    "finished",
                    "failed",
                    "expired-too",
                ] {
                    if let Ok(r) = self.0.run(tenant, id).await {
                        all.push(r);
                    }
                }
            }
            all.truncate(limit);
            return Ok(all);
        }
        self.0.resumable_runs(limit).await
    }
    async fn steps(&self, tenant: &str, run_id: &str) -> Result<Vec<JournalStep>, StoreError> {
        self.0.steps(tenant, run_id).await
    }
    async fn append(
        &self,
        lease: &Lease,
        entry: &StepEntry,
        messages: &[Message],
    ) -> Result<u64, StoreError> {
        self.0.append(lease, entry, messages).await
    }
    async fn renew(&self, lease: &Lease) -> Result<(), StoreError> {
        if self.1 == Bug::RenewIgnored {
            return Ok(());
        }
        self.0.renew(lease).await
    }
    async fn finish_run(&self, lease: &Lease, end: &RunEnd) -> Result<(), StoreError> {
        self.0.finish_run(lease, end).await
    }
    async fn release(&self, lease: &Lease) -> Result<(), StoreError> {
        self.0.release(lease).await
    }
}

/// A backend of runs alone (no threads, no tickets): the run checks are all it needs.
struct RunsOnly(MemoryStore);

impl RunStore for RunsOnly {
    async fn begin_run(
        &self,
        run: NewRun,
        worker: &str,
        ttl: Duration,
    ) -> Result<(RunRecord, Lease), StoreError> {
        self.0.begin_run(run, worker, ttl).await
    }
    async fn run(&self, tenant: &str, run_id: &str) -> Result<RunRecord, StoreError> {
        self.0.run(tenant, run_id).await
    }
    async fn resumable_runs(&self, limit: usize) -> Result<Vec<RunRecord>, StoreError> {
        self.0.resumable_runs(limit).await
    }
    async fn steps(&self, tenant: &str, run_id: &str) -> Result<Vec<JournalStep>, StoreError> {
        self.0.steps(tenant, run_id).await
    }
    async fn append(
        &self,
        lease: &Lease,
        entry: &StepEntry,
        messages: &[Message],
    ) -> Result<u64, StoreError> {
        self.0.append(lease, entry, messages).await
    }
    async fn renew(&self, lease: &Lease) -> Result<(), StoreError> {
        self.0.renew(lease).await
    }
    async fn finish_run(&self, lease: &Lease, end: &RunEnd) -> Result<(), StoreError> {
        self.0.finish_run(lease, end).await
    }
    async fn release(&self, lease: &Lease) -> Result<(), StoreError> {
        self.0.release(lease).await
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_backend_of_runs_alone_runs_the_run_checks() {
    run_conformance(|| async { RunsOnly(MemoryStore::new()) }).await;
    assert!(run_checks::<RunsOnly>().len() >= 5);
    // Every group together is the whole suite.
    let groups = run_checks::<MemoryStore>().len()
        + thread_checks::<MemoryStore>().len()
        + ticket_checks::<MemoryStore>().len()
        + usage_checks::<MemoryStore>().len()
        + store_checks::<MemoryStore>().len();
    assert_eq!(groups, checks::<MemoryStore>().len());
}

async fn failure_of(bug: Bug) -> String {
    // The bugs are in threads and runs: the checks of those two (Buggy keeps no tickets).
    let mut checks = thread_checks();
    checks.extend(run_checks());
    let outcome = AssertUnwindSafe(run_checks_on(checks, || async move {
        Buggy(MemoryStore::new(), bug)
    }))
    .catch_unwind()
    .await;
    let payload = outcome.expect_err("a buggy store fails the suite");
    match payload.downcast::<String>() {
        Ok(s) => *s,
        Err(_) => panic!("the suite fails with a message"),
    }
}

#[tokio::test]
async fn a_bug_fails_the_checks_that_cover_it() {
    for (bug, check) in [
        (Bug::NoLimit, "messages_limit"),
        (Bug::NewestFirst, "threads_per_tenant"),
        (
            Bug::EveryRunResumable,
            "resumable_runs_lists_expired_or_released_only",
        ),
        (Bug::RenewIgnored, "renew_extends_the_lease"),
    ] {
        let message = failure_of(bug).await;
        assert!(
            message.contains(&format!("  {check}: ")),
            "the failure names {check}: {message}"
        );
        assert!(
            !message.contains("  thread_exists: "),
            "checks the bug does not touch pass: {message}"
        );
    }
}

#[test]
fn every_check_has_a_distinct_name() {
    let names: Vec<_> = checks::<MemoryStore>()
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    let mut unique = names.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), names.len());
    assert!(names.len() >= 18);
}

/// A secret store that forgets the tenant: every tenant reads the last value set by any.
struct SharedSecrets(MemoryStore);

impl SecretStore for SharedSecrets {
    async fn secret(&self, _tenant: &str, name: &str) -> Result<Option<String>, StoreError> {
        self.0.secret("", name).await
    }
    async fn put_secret(&self, _tenant: &str, name: &str, value: &str) -> Result<(), StoreError> {
        self.0.put_secret("", name, value).await
    }
    async fn delete_secret(&self, _tenant: &str, name: &str) -> Result<(), StoreError> {
        self.0.delete_secret("", name).await
    }
}

#[tokio::test]
async fn a_secret_store_that_mixes_tenants_fails_the_secret_checks() {
    let outcome = AssertUnwindSafe(secret_conformance(|| async {
        SharedSecrets(MemoryStore::new())
    }))
    .catch_unwind()
    .await;
    let payload = outcome.expect_err("a store that mixes tenants fails the suite");
    let message = payload.downcast::<String>().expect("a message");
    assert!(
        message.contains("  secrets_are_scoped_by_tenant: "),
        "{message}"
    );
    assert!(
        !message.contains("secrets_keep_values_as_given"),
        "{message}"
    );
    assert_eq!(secret_checks::<MemoryStore>().len(), 4);
}
