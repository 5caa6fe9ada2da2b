//! The records a store keeps: threads and their messages, runs,
//! leases, and the steps of a run's journal, with the versioned encoding every backend shares.
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::error::StoreError;
use crate::model::{AssistantMessage, Message, Usage};

/// The encoding version of a journal step and of a thread message, stored beside its JSON. A
/// row of another version is refused with [`StoreError::UnknownFormat`], never guessed at.
pub const FORMAT_VERSION: i64 = 1;

/// How long a lease lasts when nothing renews it (writes and the engine's heartbeat do).
pub const DEFAULT_LEASE_TTL: Duration = Duration::from_secs(30);

pub use crate::stamp::{now_ms, sha256_hex};

/// A conversation owned by one tenant.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ThreadInfo {
    /// The thread id, unique within its tenant.
    pub id: String,
    /// The owning tenant (`""` for runs without tenant).
    pub tenant: String,
    /// An optional title.
    pub title: Option<String>,
    /// Messages in the thread.
    pub message_count: u64,
    /// Creation time, ms since the epoch.
    pub created_at_ms: i64,
}

/// A tenant's threads as [`ThreadStore::list_threads`](super::ThreadStore::list_threads) reads
/// them: the readable ones, oldest first, and those whose row could not be read, each by id with
/// why ([`StoreError::Corrupt`] or [`StoreError::UnknownFormat`]). One damaged row hides no
/// other thread, and none is left out silently.
///
/// ```
/// use agboss_core::store::ThreadList;
/// let list = ThreadList::default();
/// assert!(list.threads.is_empty() && list.unreadable.is_empty());
/// ```
#[derive(Debug, Default)]
pub struct ThreadList {
    /// The readable threads, oldest first.
    pub threads: Vec<ThreadInfo>,
    /// The threads whose row could not be read: their id and why, oldest first.
    pub unreadable: Vec<(String, StoreError)>,
}

/// What [`ThreadStore::create_thread`](super::ThreadStore::create_thread) is given.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct NewThread {
    /// The id (a random one when `None`).
    pub id: Option<String>,
    /// An optional title.
    pub title: Option<String>,
}

impl NewThread {
    /// A thread with a generated id.
    pub fn new() -> Self {
        Self::default()
    }
    /// With this id.
    pub fn id(mut self, id: impl Into<String>) -> Self {
        self.id = Some(id.into());
        self
    }
    /// With this title.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }
}

/// One message of a thread, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ThreadMessage {
    /// Position in the thread, from 0.
    pub seq: u64,
    /// The run that wrote it.
    pub run_id: String,
    /// The message.
    pub message: Message,
}

/// Where a run is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// Started and not finished: it may be running, or waiting to be resumed.
    Running,
    /// Finished with a final answer.
    Completed,
    /// Finished with an error (cancelled runs included).
    Failed,
}

impl RunStatus {
    /// The stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Running => "running",
            Self::Completed => "completed",
            Self::Failed => "failed",
        }
    }
    /// Parses a stored name.
    pub fn parse(s: &str) -> Result<Self, StoreError> {
        match s {
            "running" => Ok(Self::Running),
            "completed" => Ok(Self::Completed),
            "failed" => Ok(Self::Failed),
            other => Err(StoreError::Corrupt {
                what: "run status".into(),
                detail: format!("unknown status `{other}`"),
            }),
        }
    }
}

/// What [`RunStore::begin_run`](super::RunStore::begin_run) is given.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct NewRun {
    /// The tenant (`""` for none).
    pub tenant: String,
    /// The run id, unique within the tenant.
    pub run_id: String,
    /// The thread the run continues, if any (it must exist and belong to the tenant).
    pub thread_id: Option<String>,
    /// The target's name.
    pub target: String,
    /// The run's input; a new run appends it to its thread as a user message.
    pub input: String,
}

impl NewRun {
    /// A run of `target` on `input`.
    pub fn new(
        tenant: impl Into<String>,
        run_id: impl Into<String>,
        target: impl Into<String>,
        input: impl Into<String>,
    ) -> Self {
        Self {
            tenant: tenant.into(),
            run_id: run_id.into(),
            thread_id: None,
            target: target.into(),
            input: input.into(),
        }
    }
    /// On this thread.
    pub fn thread(mut self, thread_id: impl Into<String>) -> Self {
        self.thread_id = Some(thread_id.into());
        self
    }
}

/// A run as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct RunRecord {
    /// The tenant.
    pub tenant: String,
    /// The run id.
    pub run_id: String,
    /// Its thread.
    pub thread_id: Option<String>,
    /// The target's name.
    pub target: String,
    /// Its input.
    pub input: String,
    /// Where it is.
    pub status: RunStatus,
    /// Messages of the thread before the run (what the run reads as history, resumed or not).
    pub history_len: u64,
    /// The final answer of a completed run.
    pub output: Option<String>,
    /// The error of a failed run.
    pub error: Option<String>,
    /// Steps journaled so far.
    pub steps: u64,
    /// Whoever holds the lease, and until when.
    pub lease_worker: Option<String>,
    /// The lease's expiry, ms since the epoch.
    pub lease_expires_at_ms: Option<i64>,
    /// The fencing token of the latest lease (0 before any).
    pub lease_token: i64,
}

/// The right to write a run's journal: granted to one worker at a time, until it expires. Every
/// write carries the fencing token; a write with an older token (the lease was taken over) is
/// refused with [`StoreError::LeaseLost`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Lease {
    /// The tenant.
    pub tenant: String,
    /// The run.
    pub run_id: String,
    /// The worker holding it.
    pub worker: String,
    /// The fencing token: grows by one at every grant.
    pub token: i64,
    /// How long each write or renewal extends it.
    pub ttl: Duration,
}

impl Lease {
    /// The lease's time to live in ms.
    pub fn ttl_ms(&self) -> i64 {
        i64::try_from(self.ttl.as_millis()).unwrap_or(i64::MAX)
    }
}

/// How a run ended, as [`RunStore::finish_run`](super::RunStore::finish_run) records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunEnd {
    /// With a final answer.
    Completed {
        /// The answer.
        output: String,
    },
    /// With an error.
    Failed {
        /// The error's text.
        error: String,
    },
}

/// One journaled step of a run.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct JournalStep {
    /// Position in the run's journal, from 0.
    pub seq: u64,
    /// What happened.
    pub entry: StepEntry,
}

/// What a journal step records. `key` names the step so a resumed run finds it again:
/// `model:{n}` for the run's n-th model call, `tool:{n}:{call_id}` for a call of that turn,
/// `step:{n}:{name}` for a workflow tool step.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum StepEntry {
    /// A model turn: the digest of its request and the response.
    ModelTurn {
        /// The step key.
        key: String,
        /// The agent or router.
        step: String,
        /// SHA-256 of the request (messages and tools), hex: a resumed run whose request
        /// differs (the app changed) is refused instead of replayed.
        request_digest: String,
        /// The response.
        message: AssistantMessage,
        /// Its token usage.
        #[serde(default)]
        usage: Usage,
    },
    /// A tool call about to run (its input passed every check up to the tool's `run`).
    ToolStarted {
        /// The step key.
        key: String,
        /// The call id.
        call_id: String,
        /// The tool.
        tool: String,
        /// The key the tool reads from its `ExecutionContext`, the same on every attempt.
        idempotency_key: String,
        /// Whether the tool is idempotent (reruns when its end was never recorded).
        idempotent: bool,
    },
    /// A tool call's end: the observation the model reads.
    ToolFinished {
        /// The step key.
        key: String,
        /// The call id.
        call_id: String,
        /// The tool.
        tool: String,
        /// What the guard decided ([`CallDecision::label`](crate::CallDecision::label)).
        #[serde(default)]
        decision: String,
        /// The observation.
        content: String,
        /// Whether the observation reports an error.
        is_error: bool,
        /// Whether the result was cut to `max_result_size`.
        #[serde(default)]
        truncated: bool,
    },
    /// A gated call waits for a human decision: its ticket.
    ApprovalRequested {
        /// The step key.
        key: String,
        /// The call id.
        call_id: String,
        /// The tool.
        tool: String,
        /// The ticket.
        ticket_id: String,
    },
    /// The run's final answer, when it is not the last model turn's text (a workflow's
    /// recovery, a map step): appended to the thread before the run finishes.
    Answer {
        /// The step key (`answer`).
        key: String,
        /// The answer.
        text: String,
    },
    /// A started call without a recorded end, given up by a resolution: it may run again.
    ToolAbandoned {
        /// The step key.
        key: String,
        /// Who decided, and why.
        note: String,
    },
}

impl StepEntry {
    /// The step key.
    pub fn key(&self) -> &str {
        match self {
            Self::ModelTurn { key, .. }
            | Self::ToolStarted { key, .. }
            | Self::ToolFinished { key, .. }
            | Self::Answer { key, .. }
            | Self::ApprovalRequested { key, .. }
            | Self::ToolAbandoned { key, .. } => key,
        }
    }
    /// The stored kind name.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::ModelTurn { .. } => "model_turn",
            Self::ToolStarted { .. } => "tool_started",
            Self::ToolFinished { .. } => "tool_finished",
            Self::Answer { .. } => "answer",
            Self::ApprovalRequested { .. } => "approval_requested",
            Self::ToolAbandoned { .. } => "tool_abandoned",
        }
    }
    /// The JSON a backend stores (with [`FORMAT_VERSION`] beside it).
    pub fn encode(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|_| unreachable!("step entries serialize"))
    }
    /// Decodes a stored step: an unknown format or unreadable JSON is a typed error.
    pub fn decode(format: i64, json: &str) -> Result<Self, StoreError> {
        check_format("journal step", format)?;
        serde_json::from_str(json).map_err(|e| StoreError::Corrupt {
            what: "journal step".into(),
            detail: e.to_string(),
        })
    }
}

/// Encodes a thread message for storage.
pub fn encode_message(message: &Message) -> String {
    serde_json::to_string(message).unwrap_or_else(|_| unreachable!("messages serialize"))
}

/// Decodes a stored thread message: an unknown format or unreadable JSON is a typed error.
pub fn decode_message(format: i64, json: &str) -> Result<Message, StoreError> {
    check_format("thread message", format)?;
    serde_json::from_str(json).map_err(|e| StoreError::Corrupt {
        what: "thread message".into(),
        detail: e.to_string(),
    })
}

fn check_format(what: &str, format: i64) -> Result<(), StoreError> {
    if format == FORMAT_VERSION {
        Ok(())
    } else {
        Err(StoreError::UnknownFormat {
            what: what.into(),
            found: format,
            supported: FORMAT_VERSION,
        })
    }
}

/// A random id (runs, threads, workers): unique across processes, unlike generated call ids.
pub fn random_id(prefix: &str) -> String {
    format!("{prefix}_{}", uuid::Uuid::new_v4().simple())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_format_and_corrupt_json_are_typed_errors() {
        let entry = StepEntry::ToolAbandoned {
            key: "tool:0:c".into(),
            note: "n".into(),
        };
        let json = entry.encode();
        assert_eq!(StepEntry::decode(FORMAT_VERSION, &json).unwrap(), entry);
        assert!(matches!(
            StepEntry::decode(2, &json),
            Err(StoreError::UnknownFormat { found: 2, .. })
        ));
        assert!(matches!(
            StepEntry::decode(FORMAT_VERSION, "{\"kind\":"),
            Err(StoreError::Corrupt { .. })
        ));
        assert!(matches!(
            decode_message(FORMAT_VERSION, "[]"),
            Err(StoreError::Corrupt { .. })
        ));
    }
}
