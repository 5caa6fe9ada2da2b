//! [`MemoryStore`]: the in-process backend (tests, single-process apps without durability).
use std::collections::{BTreeMap, HashMap};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use super::checks::{lease_lost, lease_of, run_not_found, thread_not_found};
use super::error::StoreError;
use super::ticket::Ticket;
use super::traits::{RunStore, ThreadStore};
use super::types::{
    JournalStep, Lease, NewRun, NewThread, RunEnd, RunRecord, RunStatus, StepEntry, ThreadInfo,
    ThreadList, ThreadMessage, now_ms, random_id,
};
use crate::contract::ticket::TicketState;
use crate::model::Message;

mod secrets;
mod tickets;
mod usage;

/// Threads, runs and journals in memory, with the same semantics as the SQL backends (leases,
/// fencing, tenant scoping). Lost when the process ends.
///
/// ```
/// use agboss_core::store::{MemoryStore, NewRun, RunStore, DEFAULT_LEASE_TTL};
/// # futures::executor::block_on(async {
/// let store = MemoryStore::new();
/// let (run, lease) = store
///     .begin_run(NewRun::new("acme", "r1", "support-agent", "hi"), "worker-a", DEFAULT_LEASE_TTL)
///     .await
///     .unwrap();
/// assert_eq!(lease.token, 1);
/// assert_eq!(run.steps, 0);
/// # });
/// ```
#[derive(Debug, Default)]
pub struct MemoryStore {
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    next_order: u64,
    threads: HashMap<(String, String), Thread>,
    runs: HashMap<(String, String), Run>,
    tickets: HashMap<(String, String), (u64, Ticket)>,
    secrets: HashMap<(String, String), String>,
    usage: HashMap<super::usage::UsageKey, u64>,
}

#[derive(Debug)]
struct Thread {
    order: u64,
    title: Option<String>,
    created_at_ms: i64,
    messages: Vec<(String, Message)>,
}

#[derive(Debug)]
struct Run {
    order: u64,
    record: RunRecord,
    steps: Vec<StepEntry>,
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    fn state(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock cannot leave half a write: every write below checks
        // first and mutates last.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

fn key(tenant: &str, id: &str) -> (String, String) {
    (tenant.to_string(), id.to_string())
}

impl Thread {
    fn info(&self, tenant: &str, id: &str) -> ThreadInfo {
        ThreadInfo {
            id: id.to_string(),
            tenant: tenant.to_string(),
            title: self.title.clone(),
            message_count: self.messages.len() as u64,
            created_at_ms: self.created_at_ms,
        }
    }
}

impl State {
    /// The run `lease` names, if the lease is still its own.
    fn leased(&mut self, lease: &Lease) -> Result<&mut Run, StoreError> {
        let lost = || lease_lost(lease);
        let run = self
            .runs
            .get_mut(&key(&lease.tenant, &lease.run_id))
            .ok_or_else(lost)?;
        let r = &run.record;
        if r.status != RunStatus::Running
            || r.lease_token != lease.token
            || r.lease_worker.as_deref() != Some(lease.worker.as_str())
        {
            return Err(lost());
        }
        Ok(run)
    }

    fn unfinished_run_of(&self, tenant: &str, thread_id: &str) -> Option<String> {
        self.runs
            .values()
            .filter(|r| {
                r.record.tenant == tenant
                    && r.record.thread_id.as_deref() == Some(thread_id)
                    && r.record.status == RunStatus::Running
            })
            .min_by_key(|r| r.order)
            .map(|r| r.record.run_id.clone())
    }
}

impl ThreadStore for MemoryStore {
    async fn create_thread(&self, tenant: &str, new: NewThread) -> Result<ThreadInfo, StoreError> {
        let id = new.id.unwrap_or_else(|| random_id("thread"));
        let mut state = self.state();
        let k = key(tenant, &id);
        if state.threads.contains_key(&k) {
            return Err(StoreError::ThreadExists { thread_id: id });
        }
        state.next_order += 1;
        let thread = Thread {
            order: state.next_order,
            title: new.title,
            created_at_ms: now_ms(),
            messages: Vec::new(),
        };
        let info = thread.info(tenant, &id);
        state.threads.insert(k, thread);
        Ok(info)
    }

    async fn thread(&self, tenant: &str, thread_id: &str) -> Result<ThreadInfo, StoreError> {
        self.state()
            .threads
            .get(&key(tenant, thread_id))
            .map(|t| t.info(tenant, thread_id))
            .ok_or_else(|| thread_not_found(thread_id))
    }

    async fn list_threads(&self, tenant: &str) -> Result<ThreadList, StoreError> {
        let state = self.state();
        let mut threads: Vec<_> = state
            .threads
            .iter()
            .filter(|((t, _), _)| t == tenant)
            .map(|((t, id), thread)| (thread.order, thread.info(t, id)))
            .collect();
        threads.sort_by_key(|(order, _)| *order);
        Ok(ThreadList {
            threads: threads.into_iter().map(|(_, info)| info).collect(),
            unreadable: Vec::new(),
        })
    }

    async fn delete_thread(&self, tenant: &str, thread_id: &str) -> Result<(), StoreError> {
        let mut state = self.state();
        let k = key(tenant, thread_id);
        if !state.threads.contains_key(&k) {
            return Err(thread_not_found(thread_id));
        }
        if let Some(run_id) = state.unfinished_run_of(tenant, thread_id) {
            return Err(StoreError::ThreadBusy {
                thread_id: thread_id.to_string(),
                run_id,
            });
        }
        state.threads.remove(&k);
        state.runs.retain(|_, r| {
            !(r.record.tenant == tenant && r.record.thread_id.as_deref() == Some(thread_id))
        });
        state
            .tickets
            .retain(|_, (_, t)| !(t.tenant == tenant && t.thread_id.as_deref() == Some(thread_id)));
        Ok(())
    }

    async fn messages(
        &self,
        tenant: &str,
        thread_id: &str,
        limit: Option<u64>,
    ) -> Result<Vec<ThreadMessage>, StoreError> {
        let state = self.state();
        let thread = state
            .threads
            .get(&key(tenant, thread_id))
            .ok_or_else(|| thread_not_found(thread_id))?;
        let n = limit.map_or(thread.messages.len(), |l| {
            usize::try_from(l)
                .unwrap_or(usize::MAX)
                .min(thread.messages.len())
        });
        Ok(thread.messages[..n]
            .iter()
            .enumerate()
            .map(|(seq, (run_id, message))| ThreadMessage {
                seq: seq as u64,
                run_id: run_id.clone(),
                message: message.clone(),
            })
            .collect())
    }
}

impl RunStore for MemoryStore {
    async fn begin_run(
        &self,
        new: NewRun,
        worker: &str,
        ttl: Duration,
    ) -> Result<(RunRecord, Lease), StoreError> {
        let now = now_ms();
        let ttl_ms = i64::try_from(ttl.as_millis()).unwrap_or(i64::MAX);
        let mut state = self.state();
        let k = key(&new.tenant, &new.run_id);
        if let Some(thread_id) = &new.thread_id
            && !state.threads.contains_key(&key(&new.tenant, thread_id))
        {
            return Err(thread_not_found(thread_id));
        }
        if let Some(run) = state.runs.get_mut(&k) {
            let r = &mut run.record;
            if r.status != RunStatus::Running {
                return Err(StoreError::RunFinished { run_id: new.run_id });
            }
            if let (Some(holder), Some(expires)) = (&r.lease_worker, r.lease_expires_at_ms)
                && holder != worker
                && expires > now
            {
                return Err(StoreError::LeaseHeld {
                    run_id: new.run_id,
                    expires_at_ms: expires,
                });
            }
            r.lease_token += 1;
            r.lease_worker = Some(worker.to_string());
            r.lease_expires_at_ms = Some(now.saturating_add(ttl_ms));
            let lease = lease_of(r, ttl);
            return Ok((r.clone(), lease));
        }
        let mut history_len = 0;
        if let Some(thread_id) = &new.thread_id {
            if let Some(run_id) = state.unfinished_run_of(&new.tenant, thread_id) {
                return Err(StoreError::ThreadBusy {
                    thread_id: thread_id.clone(),
                    run_id,
                });
            }
            let thread = state
                .threads
                .get_mut(&key(&new.tenant, thread_id))
                .expect("checked above");
            history_len = thread.messages.len() as u64;
            thread
                .messages
                .push((new.run_id.clone(), Message::user(new.input.clone())));
        }
        state.next_order += 1;
        let record = RunRecord {
            tenant: new.tenant,
            run_id: new.run_id,
            thread_id: new.thread_id,
            target: new.target,
            input: new.input,
            status: RunStatus::Running,
            history_len,
            output: None,
            error: None,
            steps: 0,
            lease_worker: Some(worker.to_string()),
            lease_expires_at_ms: Some(now.saturating_add(ttl_ms)),
            lease_token: 1,
        };
        let lease = lease_of(&record, ttl);
        let order = state.next_order;
        state.runs.insert(
            k,
            Run {
                order,
                record: record.clone(),
                steps: Vec::new(),
            },
        );
        Ok((record, lease))
    }

    async fn run(&self, tenant: &str, run_id: &str) -> Result<RunRecord, StoreError> {
        self.state()
            .runs
            .get(&key(tenant, run_id))
            .map(|r| r.record.clone())
            .ok_or_else(|| run_not_found(run_id))
    }

    async fn resumable_runs(&self, limit: usize) -> Result<Vec<RunRecord>, StoreError> {
        let now = now_ms();
        let state = self.state();
        let mut runs: BTreeMap<u64, RunRecord> = BTreeMap::new();
        for run in state.runs.values() {
            let r = &run.record;
            let waits = state.tickets.values().any(|(_, t)| {
                t.tenant == r.tenant
                    && t.run_id == r.run_id
                    && t.state == TicketState::Pending
                    && t.expires_at_ms > now
            });
            if r.status == RunStatus::Running
                && r.lease_expires_at_ms.is_none_or(|e| e <= now)
                && !waits
            {
                runs.insert(run.order, r.clone());
            }
        }
        Ok(runs.into_values().take(limit).collect())
    }

    async fn steps(&self, tenant: &str, run_id: &str) -> Result<Vec<JournalStep>, StoreError> {
        let state = self.state();
        let run = state
            .runs
            .get(&key(tenant, run_id))
            .ok_or_else(|| run_not_found(run_id))?;
        Ok(run
            .steps
            .iter()
            .enumerate()
            .map(|(seq, entry)| JournalStep {
                seq: seq as u64,
                entry: entry.clone(),
            })
            .collect())
    }

    async fn append(
        &self,
        lease: &Lease,
        entry: &StepEntry,
        messages: &[Message],
    ) -> Result<u64, StoreError> {
        let mut guard = self.state();
        let state = &mut *guard;
        let run = state.leased(lease)?;
        let seq = run.steps.len() as u64;
        run.steps.push(entry.clone());
        run.record.steps = seq + 1;
        run.record.lease_expires_at_ms = Some(now_ms().saturating_add(lease.ttl_ms()));
        if let Some(thread_id) = run.record.thread_id.clone()
            && !messages.is_empty()
            && let Some(thread) = state.threads.get_mut(&key(&lease.tenant, &thread_id))
        {
            thread
                .messages
                .extend(messages.iter().map(|m| (lease.run_id.clone(), m.clone())));
        }
        Ok(seq)
    }

    async fn renew(&self, lease: &Lease) -> Result<(), StoreError> {
        let mut state = self.state();
        let run = state.leased(lease)?;
        run.record.lease_expires_at_ms = Some(now_ms().saturating_add(lease.ttl_ms()));
        Ok(())
    }

    async fn finish_run(&self, lease: &Lease, end: &RunEnd) -> Result<(), StoreError> {
        let mut state = self.state();
        let run = state.leased(lease)?;
        let r = &mut run.record;
        match end {
            RunEnd::Completed { output } => {
                r.status = RunStatus::Completed;
                r.output = Some(output.clone());
            }
            RunEnd::Failed { error } => {
                r.status = RunStatus::Failed;
                r.error = Some(error.clone());
            }
        }
        r.lease_worker = None;
        r.lease_expires_at_ms = None;
        Ok(())
    }

    async fn release(&self, lease: &Lease) -> Result<(), StoreError> {
        let mut state = self.state();
        let run = state.leased(lease)?;
        run.record.lease_worker = None;
        run.record.lease_expires_at_ms = None;
        Ok(())
    }
}
