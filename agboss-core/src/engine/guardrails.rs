//! The text boundary of agents and routers: input guardrails before the model reads the input,
//! output guardrails before the caller reads the answer, and the [`OutputGate`] that holds
//! streamed text back until it is checked.
//!
//! - The guardrails of a boundary run in order (`cheap` ones first, then cascade order, outer to
//!   inner) and stop at the first `block` or `respond`; a `rewrite` replaces the text and the
//!   next guardrail reads the new text (so a redaction never skips a later check).
//! - A guardrail that errors, panics, cannot be built or runs past its time limit fails the
//!   step closed ([`GuardrailBlockedError`]); nothing downstream softens that.
//! - Input guardrails run before the model is called. `parallel` ones run while the first
//!   model turn streams: its deltas are held and it is journaled only once every input
//!   guardrail passed; a trip (or a rewrite) discards it, so no tool call of it ever executes.
//! - With output guardrails (or `mask_answer`) on the path, text deltas are held back
//!   ([`OutputStreaming::Hold`]) until the whole answer passed, or released in checked windows
//!   ([`OutputStreaming::Windows`]). The text of a turn that ends in tool calls is checked as
//!   an interim text before it is released. A run without a listener (`execute`) buffers
//!   nothing: only the final answer is checked.
use std::borrow::Borrow;

use super::context::{Target, TargetKind};
use super::events::RunEvent;
use super::run_error::RunError;
use super::state::RunState;
use crate::cascade::GuardrailEntry;
use crate::contract::guardrail::{Boundary, GuardrailContext, GuardrailVerdict, TextScope};
use crate::engine::run_error::StepFailedError;
use crate::pipeline::guard::{GuardrailBlockKind, GuardrailBlockedError};

/// What the checks of a boundary let through.
#[derive(Debug)]
pub(crate) enum Checked {
    /// The text goes on (rewritten, perhaps).
    Go(String),
    /// The step ends with this fixed answer.
    Respond(String),
}

/// The blocking input guardrails of a run's target (an agent or a router; a workflow's
/// steps check their own), run before a durable run is stored: a blocked input never
/// reaches the run's record or its thread, and a rewritten one is stored rewritten. `None`
/// when there is nothing to check here, or a guardrail answered itself (the run then
/// checks again as it runs, so that the exchange is stored).
pub(crate) async fn precheck_input(
    run: &RunState,
    target: &Target,
    input: &str,
) -> Result<Option<String>, RunError> {
    let rt = run.rt();
    let (step, entries): (&str, Vec<&GuardrailEntry>) = match &target.0 {
        TargetKind::Agent(name) | TargetKind::Named(name) if rt.agent_by_name(name).is_some() => {
            let agent = rt.agent_by_name(name).expect("checked");
            let blocking = agent.guardrails.input.entries().iter();
            (
                agent.meta.name,
                blocking.filter(|e| !e.meta.parallel).collect(),
            )
        }
        TargetKind::Router(name) | TargetKind::Named(name) if rt.router_by_name(name).is_some() => {
            let router = rt.router_by_name(name).expect("checked");
            (
                router.meta.name,
                router.guardrails.input.entries().iter().collect(),
            )
        }
        _ => return Ok(None),
    };
    if entries.is_empty() {
        return Ok(None);
    }
    match check_text(
        run,
        step,
        Boundary::Input,
        &entries,
        input.to_string(),
        TextScope::Whole,
    )
    .await?
    {
        Checked::Go(text) => Ok(Some(text)),
        Checked::Respond(_) => Ok(None),
    }
}

/// Runs `entries` on `text` in order: the text that goes on, the fixed answer a guardrail
/// responded with, or the step's failure.
pub(crate) async fn check_text<E: Borrow<GuardrailEntry>>(
    run: &RunState,
    step: &str,
    boundary: Boundary,
    entries: &[E],
    mut text: String,
    scope: TextScope,
) -> Result<Checked, RunError> {
    for entry in entries {
        let entry: &GuardrailEntry = entry.borrow();
        let verdict = {
            let ctx = GuardrailContext::new(boundary, step, &text)
                .with_scope(scope)
                .with_tenant(run.ctx().tenant.as_ref());
            let check = crate::pipeline::guard::check(
                &entry.guard,
                entry.timeout,
                &run.rt().resolved.services,
                &ctx,
            );
            run.or_cancel(check).await?
        };
        let label = verdict.as_ref().map_or("failed", GuardrailVerdict::label);
        run.emit(|| RunEvent::GuardrailVerdict {
            step: step.to_string(),
            guardrail: entry.meta.name.to_string(),
            boundary,
            scope,
            verdict: label,
        });
        let kind = match verdict {
            Ok(GuardrailVerdict::Pass) => continue,
            Ok(GuardrailVerdict::Rewrite { text: new }) => {
                tracing::debug!(step, guardrail = entry.meta.name, %boundary, "guardrail rewrote the text");
                text = new;
                continue;
            }
            Ok(GuardrailVerdict::Respond { answer }) => return Ok(Checked::Respond(answer)),
            Ok(GuardrailVerdict::Block { reason }) => GuardrailBlockKind::Block { reason },
            Err(kind) => kind,
        };
        let blocked = GuardrailBlockedError {
            step: step.to_string(),
            guardrail: entry.meta.name,
            boundary,
            kind,
        };
        if blocked.is_failure() {
            tracing::error!(step, guardrail = entry.meta.name, error = %blocked, "guardrail failed: the step fails closed");
        } else {
            tracing::info!(step, guardrail = entry.meta.name, error = %blocked, "guardrail blocked the step");
        }
        return Err(StepFailedError::GuardrailBlocked(blocked).into());
    }
    Ok(Checked::Go(text))
}
