//! What a run's journal holds, read back: [`Replay`] (the journaled model turns and the state
//! of each tool call by its step key), the deterministic step keys, and the repair of a
//! thread's history a model reads. No store access here: [`super::journal`] reads and writes.
use std::collections::HashMap;

use crate::model::{AssistantMessage, Message, ModelRequest, Usage};
use crate::pipeline::observe::Observation;
use crate::store::types::sha256_hex;
use crate::store::{JournalStep, StepEntry};

/// A journaled model turn.
pub(crate) struct ModelReplay {
    pub(crate) message: AssistantMessage,
    pub(crate) usage: Usage,
}

/// What the journal knows of a tool call.
#[derive(Debug, Clone)]
pub(crate) enum ToolReplay {
    /// Never started (or given up by a resolution): run it.
    Fresh,
    /// Started, no end recorded.
    Started {
        idempotency_key: String,
        idempotent: bool,
        call_id: String,
        tool: String,
    },
    /// Finished: its observation.
    Finished(Observation),
    /// Waiting for a human decision on this ticket.
    Awaiting { ticket_id: String },
}

#[derive(Default)]
pub(crate) struct Replay {
    pub(super) model: HashMap<String, (String, ModelReplay)>,
    pub(super) tools: HashMap<String, ToolReplay>,
    pub(super) answered: bool,
    /// The text of the last model turn appended to the thread without tool calls.
    pub(super) last_visible_text: Option<String>,
}

impl Replay {
    pub(super) fn from_steps(steps: Vec<JournalStep>) -> Self {
        let mut replay = Self::default();
        for step in steps {
            match step.entry {
                StepEntry::ModelTurn {
                    key,
                    request_digest,
                    message,
                    usage,
                    ..
                } => {
                    replay
                        .model
                        .insert(key, (request_digest, ModelReplay { message, usage }));
                }
                StepEntry::ToolStarted {
                    key,
                    call_id,
                    tool,
                    idempotency_key,
                    idempotent,
                } => {
                    replay.tools.insert(
                        key,
                        ToolReplay::Started {
                            idempotency_key,
                            idempotent,
                            call_id,
                            tool,
                        },
                    );
                }
                StepEntry::ToolFinished {
                    key,
                    content,
                    is_error,
                    truncated,
                    ..
                } => {
                    replay.tools.insert(
                        key,
                        ToolReplay::Finished(Observation {
                            content,
                            is_error,
                            truncated,
                        }),
                    );
                }
                StepEntry::ToolAbandoned { key, .. } => {
                    replay.tools.insert(key, ToolReplay::Fresh);
                }
                StepEntry::Answer { .. } => replay.answered = true,
                StepEntry::ApprovalRequested { key, ticket_id, .. } => {
                    replay.tools.insert(key, ToolReplay::Awaiting { ticket_id });
                }
            }
        }
        replay
    }
}

pub(crate) fn model_key(turn: u32) -> String {
    format!("model:{turn}")
}

/// The key of a call of model turn `turn`.
pub(crate) fn tool_key(turn: u32, call_id: &str) -> String {
    format!("tool:{turn}:{call_id}")
}

/// The key of workflow tool step `n`.
pub(crate) fn step_key(n: u32, tool: &str) -> String {
    format!("step:{n}:{tool}")
}

/// SHA-256 of a model request (messages, tools, settings), hex.
pub(crate) fn request_digest(req: &ModelRequest) -> String {
    let json = serde_json::to_vec(req).unwrap_or_default();
    sha256_hex(&json)
}

/// A thread's history as a model can read it: an assistant turn whose tool calls have no
/// observation (its run failed or stopped at that turn) gets one saying the call did not
/// complete, right after the observations it has. The stored thread is not changed.
pub(crate) fn repair_history(messages: Vec<Message>) -> Vec<Message> {
    let mut out = Vec::with_capacity(messages.len());
    let mut open: Vec<String> = Vec::new();
    let close = |out: &mut Vec<Message>, open: &mut Vec<String>| {
        for call_id in open.drain(..) {
            out.push(Message::tool_error(
                call_id,
                "This tool call has no recorded result: its step failed or its run stopped before \
                 it finished.",
            ));
        }
    };
    for message in messages {
        match &message {
            Message::Tool { call_id, .. } => open.retain(|c| c != call_id),
            _ => close(&mut out, &mut open),
        }
        if let Message::Assistant(a) = &message {
            open.extend(a.tool_calls.iter().map(|c| c.id.clone()));
        }
        out.push(message);
    }
    close(&mut out, &mut open);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ToolCallRequest;

    #[test]
    fn history_repair_answers_every_dangling_tool_call() {
        let history = vec![
            Message::user("refund my order"),
            Message::Assistant(AssistantMessage::tool_calls([
                ToolCallRequest::new("c1", "refund-tool", "{}"),
                ToolCallRequest::new("c2", "lookup-tool", "{}"),
            ])),
            Message::tool_result("c2", "found"),
            Message::user("hello?"),
        ];
        let repaired = repair_history(history);
        assert_eq!(repaired.len(), 5);
        assert_eq!(repaired[2], Message::tool_result("c2", "found"));
        assert!(
            matches!(&repaired[3], Message::Tool { call_id, is_error: true, .. } if call_id == "c1")
        );
        assert_eq!(repaired[4], Message::user("hello?"));
        // A complete history is left as it is.
        let complete = vec![Message::user("hi"), Message::assistant("hello")];
        assert_eq!(repair_history(complete.clone()), complete);
    }
}
