//! Calls in doubt: a call that started and has no recorded end, settled by someone who
//! checked whether its work was done ([`InDoubtResolution`]).
use super::Durability;
use super::replay::{Replay, ToolReplay};
use super::run_error::RunError;
use crate::model::Message;
use crate::pipeline::observe::Observation;
use crate::store::{NewRun, RunStore as _, StepEntry};

/// How a call in doubt ([`RunError::InDoubt`]) is settled, by someone who checked whether its
/// work was done (in the payment system, the ticket queue, ...).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum InDoubtResolution {
    /// The work was done: this is the call's observation; the resumed run reads it.
    Completed {
        /// The observation the model reads.
        observation: String,
        /// Whether it reports an error.
        is_error: bool,
    },
    /// The work was not done: the call runs when the run resumes.
    NotDone,
}

/// Settles the call in doubt `call_id` of a run (holding the run's lease for the write).
pub(crate) async fn resolve_in_doubt(
    durability: &Durability,
    tenant: &str,
    run_id: &str,
    call_id: &str,
    resolution: InDoubtResolution,
) -> Result<(), RunError> {
    let store = &durability.store;
    let record = store.run(tenant, run_id).await?;
    let mut new = NewRun::new(tenant, run_id, record.target, record.input);
    new.thread_id = record.thread_id;
    let (_, lease) = store
        .begin_run(new, &durability.worker, durability.lease_ttl)
        .await?;
    let written = async {
        let replay = Replay::from_steps(store.steps(tenant, run_id).await?);
        let found = replay.tools.into_iter().find(
            |(_, state)| matches!(state, ToolReplay::Started { call_id: c, .. } if c == call_id),
        );
        let Some((key, ToolReplay::Started { tool, .. })) = found else {
            return Err(RunError::NotInDoubt {
                run_id: run_id.to_string(),
                call_id: call_id.to_string(),
            });
        };
        match resolution {
            InDoubtResolution::Completed {
                observation,
                is_error,
            } => {
                let obs = Observation {
                    content: observation,
                    is_error,
                    truncated: false,
                };
                let entry = StepEntry::ToolFinished {
                    key: key.clone(),
                    call_id: call_id.to_string(),
                    tool,
                    decision: "resolved".to_string(),
                    content: obs.content.clone(),
                    is_error,
                    truncated: false,
                };
                // An agent's call is part of its thread's conversation.
                let messages = if key.starts_with("tool:") {
                    vec![Message::Tool {
                        call_id: call_id.to_string(),
                        content: obs.content,
                        is_error,
                    }]
                } else {
                    Vec::new()
                };
                store.append(&lease, &entry, &messages).await?;
            }
            InDoubtResolution::NotDone => {
                let entry = StepEntry::ToolAbandoned {
                    key,
                    note: format!("resolved as not done by worker {}", durability.worker),
                };
                store.append(&lease, &entry, &[]).await?;
            }
        }
        Ok(())
    }
    .await;
    let released = store.release(&lease).await;
    written?;
    released?;
    Ok(())
}
