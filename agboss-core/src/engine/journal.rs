//! The journal of one run: opened from the app's [`RunStore`] when the run starts (a new run,
//! or an unfinished one taken up again), it replays completed steps and records new ones before
//! the run goes on.
//!
//! Step keys are deterministic, so a resumed run finds its steps again: `model:{n}` is the
//! run's n-th model call, `tool:{n}:{call_id}` a call the n-th model turn asked for,
//! `step:{n}:{tool}` the run's n-th workflow tool step. A model turn found in the journal is
//! read back (after checking that the request is the same: [`RunError::JournalMismatch`]
//! otherwise); a tool call found finished is read back and never run again; a call found
//! started without an end reruns, with the same idempotency key, only if its tool is
//! idempotent, and otherwise stops the run as [`RunError::InDoubt`] until
//! [`App::resolve_in_doubt`](crate::App::resolve_in_doubt) decides (see [`super::in_doubt`]).
use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use super::replay::{ModelReplay, Replay, ToolReplay, model_key, repair_history};
use super::run_error::RunError;
use super::ticket::{ApprovalRequest, Tickets};
use crate::model::{AssistantMessage, Message, Usage};
use crate::pipeline::observe::Observation;
use crate::store::types::sha256_hex;
use crate::store::{
    Lease, NewRun, RunEnd, RunRecord, RunStore as _, SharedStore, StepEntry, StoreError,
    ThreadStore as _, Ticket,
};

/// Ends a run refused at its start with `err`: finished as failed when `err` is permanent (the
/// same read would fail again), given back otherwise. Returns `err`.
async fn refuse(store: &SharedStore, lease: &Lease, err: RunError) -> RunError {
    let permanent = matches!(&err, RunError::Store(e) if e.is_permanent());
    let ended = if permanent {
        let end = RunEnd::Failed {
            error: err.to_string(),
        };
        store.finish_run(lease, &end).await
    } else {
        store.release(lease).await
    };
    if let Err(e) = ended {
        tracing::warn!(run_id = %lease.run_id, error = %e, "could not end the refused run; its lease frees itself when it expires");
    }
    err
}

/// The journal of one run, holding its lease.
pub(crate) struct RunJournal {
    store: SharedStore,
    lease: Lease,
    pub(crate) record: RunRecord,
    /// The thread's messages before the run (repaired: see [`repair_history`]).
    pub(crate) history: Vec<Message>,
    /// Steps found in the journal when the run was opened.
    pub(crate) replayed_steps: u64,
    replay: Mutex<Replay>,
    model_turns: AtomicU32,
    tool_steps: AtomicU32,
}

impl RunJournal {
    /// Begins (or takes up) the run and loads its journal and its thread's history.
    ///
    /// When they cannot be read, nothing of the run was done: a permanent failure
    /// ([`StoreError::is_permanent`]: a corrupt or unknown row, a schema error) finishes the
    /// run as failed, so its thread is free again and no takeover retries it; any other
    /// failure gives the lease back, and the run can be resumed later.
    pub(crate) async fn open(
        store: SharedStore,
        new: NewRun,
        worker: &str,
        ttl: Duration,
    ) -> Result<Self, RunError> {
        let (target, input) = (new.target.clone(), new.input.clone());
        let (record, lease) = store.begin_run(new, worker, ttl).await?;
        let loaded = async {
            if record.target != target || record.input != input {
                return Err(RunError::JournalMismatch {
                    run_id: record.run_id.clone(),
                    key: "run".to_string(),
                    detail: format!(
                        "the run was started for `{}` with another input; resume it with the same \
                         target and input (App::resume_run reads them from the store)",
                        record.target
                    ),
                });
            }
            let steps = store.steps(&record.tenant, &record.run_id).await?;
            let history = match &record.thread_id {
                Some(thread) => store
                    .messages(&record.tenant, thread, Some(record.history_len))
                    .await?
                    .into_iter()
                    .map(|m| m.message)
                    .collect(),
                None => Vec::new(),
            };
            Ok((steps, history))
        }
        .await;
        let (steps, history) = match loaded {
            Ok(loaded) => loaded,
            Err(err) => return Err(refuse(&store, &lease, err).await),
        };
        Ok(Self {
            store,
            lease,
            replayed_steps: steps.len() as u64,
            replay: Mutex::new(Replay::from_steps(steps)),
            history: repair_history(history),
            record,
            model_turns: AtomicU32::new(0),
            tool_steps: AtomicU32::new(0),
        })
    }

    fn replay(&self) -> std::sync::MutexGuard<'_, Replay> {
        self.replay.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The key of the run's next model call, and the turn number tool keys use.
    pub(crate) fn next_model_turn(&self) -> u32 {
        self.model_turns.fetch_add(1, Ordering::Relaxed)
    }

    /// True when the journal holds the run's next model turn (a resumed run reads it back).
    pub(crate) fn has_next_model_turn(&self) -> bool {
        let key = model_key(self.model_turns.load(Ordering::Relaxed));
        self.replay().model.contains_key(&key)
    }

    /// The key of the run's next workflow tool step.
    pub(crate) fn next_tool_step(&self) -> u32 {
        self.tool_steps.fetch_add(1, Ordering::Relaxed)
    }

    /// The journaled response of model turn `turn`, if it was recorded (for the same request).
    pub(crate) fn replayed_model(
        &self,
        turn: u32,
        digest: &str,
        visible: bool,
    ) -> Result<Option<ModelReplay>, RunError> {
        let key = model_key(turn);
        let mut replay = self.replay();
        match replay.model.remove(&key) {
            None => Ok(None),
            Some((recorded, turn)) if recorded == digest => {
                if visible {
                    replay.last_visible_text = turn
                        .message
                        .tool_calls
                        .is_empty()
                        .then(|| turn.message.content.clone().unwrap_or_default());
                }
                Ok(Some(turn))
            }
            Some(_) => Err(RunError::JournalMismatch {
                run_id: self.record.run_id.clone(),
                key,
                detail: "the model request differs from the journaled one (the agent's \
                         instructions, tools or history changed since the run started)"
                    .to_string(),
            }),
        }
    }

    /// Records model turn `turn`; `visible` ones are appended to the thread too.
    pub(crate) async fn record_model(
        &self,
        turn: u32,
        step: &str,
        digest: String,
        message: &AssistantMessage,
        usage: Usage,
        visible: bool,
    ) -> Result<(), RunError> {
        let entry = StepEntry::ModelTurn {
            key: model_key(turn),
            step: step.to_string(),
            request_digest: digest,
            message: message.clone(),
            usage,
        };
        let messages = if visible {
            vec![Message::Assistant(message.clone())]
        } else {
            Vec::new()
        };
        self.store.append(&self.lease, &entry, &messages).await?;
        if visible {
            self.replay().last_visible_text = message
                .tool_calls
                .is_empty()
                .then(|| message.content.clone().unwrap_or_default());
        }
        Ok(())
    }

    /// What the journal knows of the tool call `key`.
    pub(crate) fn tool_state(&self, key: &str) -> ToolReplay {
        self.replay()
            .tools
            .get(key)
            .cloned()
            .unwrap_or(ToolReplay::Fresh)
    }

    /// The idempotency key of the tool call `key`: the same on every attempt.
    pub(crate) fn idempotency_key(&self, key: &str) -> String {
        let digest =
            sha256_hex(format!("{}\n{}\n{key}", self.record.tenant, self.record.run_id).as_bytes());
        format!("idem_{}", &digest[..32])
    }

    /// The run's tickets, under its lease (see [`super::ticket`]).
    pub(crate) fn tickets(&self) -> Tickets<'_> {
        Tickets::new(&self.store, &self.lease, &self.record.tenant)
    }

    /// Makes the ticket of a gated call (written before anyone is told) and journals that the
    /// call waits for it.
    pub(crate) async fn request_approval(
        &self,
        request: ApprovalRequest<'_>,
    ) -> Result<Ticket, RunError> {
        let ticket = request.ticket(
            &self.record.tenant,
            self.record.thread_id.clone(),
            &self.record.run_id,
        );
        self.tickets().open(&ticket).await?;
        let entry = StepEntry::ApprovalRequested {
            key: request.key.to_string(),
            call_id: request.call_id.to_string(),
            tool: request.tool.to_string(),
            ticket_id: ticket.id.clone(),
        };
        self.store.append(&self.lease, &entry, &[]).await?;
        self.replay().tools.insert(
            request.key.to_string(),
            ToolReplay::Awaiting {
                ticket_id: ticket.id.clone(),
            },
        );
        Ok(ticket)
    }

    /// Records that the tool call `key` is about to run.
    pub(crate) async fn record_tool_started(
        &self,
        key: &str,
        call_id: &str,
        tool: &str,
        idempotency_key: &str,
        idempotent: bool,
    ) -> Result<(), RunError> {
        let entry = StepEntry::ToolStarted {
            key: key.to_string(),
            call_id: call_id.to_string(),
            tool: tool.to_string(),
            idempotency_key: idempotency_key.to_string(),
            idempotent,
        };
        self.store.append(&self.lease, &entry, &[]).await?;
        Ok(())
    }

    /// Records the tool call's decision and observation; a `visible` one goes to the thread
    /// too.
    pub(crate) async fn record_tool_finished(
        &self,
        key: &str,
        call_id: &str,
        tool: &str,
        decision: &str,
        obs: &Observation,
        visible: bool,
    ) -> Result<(), RunError> {
        let entry = StepEntry::ToolFinished {
            key: key.to_string(),
            call_id: call_id.to_string(),
            tool: tool.to_string(),
            decision: decision.to_string(),
            content: obs.content.clone(),
            is_error: obs.is_error,
            truncated: obs.truncated,
        };
        let messages = if visible {
            vec![Message::Tool {
                call_id: call_id.to_string(),
                content: obs.content.clone(),
                is_error: obs.is_error,
            }]
        } else {
            Vec::new()
        };
        self.store.append(&self.lease, &entry, &messages).await?;
        Ok(())
    }

    /// Ends the run in the store: a final answer or a final error finishes it; an error that
    /// leaves it resumable (the store failed, a call is in doubt, the journal does not match)
    /// only gives the lease back.
    pub(crate) async fn close(&self, result: &Result<String, RunError>) -> Result<(), StoreError> {
        match result {
            Ok(text) => {
                let unanswered = {
                    let replay = self.replay();
                    !replay.answered && replay.last_visible_text.as_deref() != Some(text.as_str())
                };
                if unanswered && self.record.thread_id.is_some() {
                    let entry = StepEntry::Answer {
                        key: "answer".to_string(),
                        text: text.clone(),
                    };
                    self.store
                        .append(&self.lease, &entry, &[Message::assistant(text.clone())])
                        .await?;
                }
                self.store
                    .finish_run(
                        &self.lease,
                        &RunEnd::Completed {
                            output: text.clone(),
                        },
                    )
                    .await
            }
            Err(err) if err.leaves_run_resumable() => {
                if let Err(release) = self.store.release(&self.lease).await {
                    tracing::warn!(run_id = %self.record.run_id, error = %release, "could not release the run's lease; it frees itself when it expires");
                }
                Ok(())
            }
            Err(err) => {
                self.store
                    .finish_run(
                        &self.lease,
                        &RunEnd::Failed {
                            error: err.to_string(),
                        },
                    )
                    .await
            }
        }
    }

    /// Renews the lease every third of its ttl; returns only when a renewal fails (the run
    /// must stop: another worker may own it now). Never returns without a tokio runtime.
    pub(crate) async fn heartbeat(&self) -> StoreError {
        if tokio::runtime::Handle::try_current().is_err() {
            return std::future::pending().await;
        }
        let period = (self.lease.ttl / 3).max(Duration::from_millis(10));
        loop {
            tokio::time::sleep(period).await;
            if let Err(err) = self.store.renew(&self.lease).await {
                return err;
            }
        }
    }
}
