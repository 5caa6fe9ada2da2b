//! Handoffs (`#[agent(handoffs = [..])]`): the model of an agent sees one
//! `transfer_to_<name>` tool per target; calling one ends the agent's step and the rest of
//! the run goes to the target, with the target's own cascade (its tools' chains, its
//! guardrails, its policies) and the same thread. The handoff is an event and a journal step
//! (the call's observation), and a run's handoffs are bounded (`max_handoffs`).
use std::sync::Arc;

use serde_json::json;

use super::events::RunEvent;
use super::replay::{ToolReplay, tool_key};
use super::run_error::RunError;
use super::state::RunState;
use crate::cascade::ResolvedAgent;
use crate::contract::agent::{AgentMeta, handoff_tool_name};
use crate::model::{ToolCallRequest, ToolDefinition};
use crate::pipeline::observe::Observation;

/// Handoffs one run may make when its context sets no `max_handoffs`
/// ([`RunContext::max_handoffs`](super::RunContext::max_handoffs)).
pub const DEFAULT_MAX_HANDOFFS: u32 = 4;

/// How an agent's step ended.
pub(super) enum Ended {
    /// With its final answer.
    Answer(String),
    /// With a handoff of `input` (the request as the agent's input guardrails let it
    /// through) to `to`.
    Handoff {
        to: &'static AgentMeta,
        reason: Option<String>,
        input: String,
    },
}

/// The handoff tools `meta`'s model sees, one per target.
pub(super) fn definitions(meta: &AgentMeta) -> impl Iterator<Item = Arc<ToolDefinition>> {
    meta.handoffs.iter().map(|target| {
        let target = target();
        Arc::new(ToolDefinition::new(
            handoff_tool_name(target.name),
            format!(
                "Hand the conversation over to {}: {}. Call it alone; the other agent answers from then on.",
                target.name, target.description
            ),
            json!({
                "type": "object",
                "properties": {
                    "reason": {"type": "string", "description": "Why the other agent should take over"}
                },
                "additionalProperties": false
            }),
        ))
    })
}

/// The first handoff call of a turn, with its target.
pub(super) fn requested<'a>(
    meta: &AgentMeta,
    calls: &'a [ToolCallRequest],
) -> Option<(&'a ToolCallRequest, &'static AgentMeta)> {
    calls.iter().find_map(|call| {
        meta.handoffs
            .iter()
            .map(|t| t())
            .find(|t| handoff_tool_name(t.name) == call.name)
            .map(|t| (call, t))
    })
}

/// The reason a handoff call gives (its `reason` argument), if any.
pub(super) fn reason(call: &ToolCallRequest) -> Option<String> {
    serde_json::from_str::<serde_json::Value>(&call.arguments)
        .ok()?
        .get("reason")?
        .as_str()
        .map(|r| crate::dto::bounded(r.to_string()))
}

/// Journals the handoff call of turn `turn` as answered (the thread then holds the call and
/// its observation, as a provider expects of every call); a resumed run that journaled it
/// already does not again.
pub(super) async fn record(
    run: &RunState,
    turn: u32,
    call: &ToolCallRequest,
    to: &AgentMeta,
) -> Result<(), RunError> {
    let Some(journal) = run.journal() else {
        return Ok(());
    };
    let key = tool_key(turn, &call.id);
    if matches!(journal.tool_state(&key), ToolReplay::Finished(_)) {
        return Ok(());
    }
    let obs = Observation {
        content: format!("Handed over to {}.", to.name),
        is_error: false,
        truncated: false,
    };
    journal
        .record_tool_finished(&key, &call.id, &call.name, "handoff", &obs, true)
        .await
}

/// The target of a handoff by `from`, once the run's bound allows one more: the target's
/// path in the app (checked at build: `BuildError::UnknownHandoff`), and the event.
pub(super) fn take<'r>(
    run: &'r RunState,
    from: &str,
    to: &AgentMeta,
    reason: Option<String>,
    handoffs: &mut u32,
) -> Result<&'r ResolvedAgent, RunError> {
    let max_handoffs = run.ctx().max_handoffs.unwrap_or(DEFAULT_MAX_HANDOFFS);
    if *handoffs >= max_handoffs {
        return Err(RunError::MaxHandoffsExceeded {
            agent: from.to_string(),
            max_handoffs,
        });
    }
    *handoffs += 1;
    let target = run
        .rt()
        .agent_by_name(to.name)
        .ok_or_else(|| RunError::UnknownTarget {
            kind: "agent".to_string(),
            name: to.name.to_string(),
        })?;
    tracing::debug!(from, to = to.name, ?reason, "handoff");
    run.emit(|| RunEvent::Handoff {
        from: from.to_string(),
        to: to.name.to_string(),
        reason,
    });
    Ok(target)
}
