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

use super::events::RunEvent;
use super::run::{Engine, RunError, Stats};
use crate::cascade::{GuardrailChain, GuardrailEntry, Guardrails};
use crate::contract::guardrail::{
    Boundary, GuardrailContext, GuardrailVerdict, OutputStreaming, TextScope,
};
use crate::engine::run_error::StepFailedError;
use crate::model::{Message, ModelRequest, ModelResponse};
use crate::pii::MaskReport;
use crate::pipeline::guard::{GuardrailBlockKind, GuardrailBlockedError};

/// What the checks of a boundary let through.
#[derive(Debug)]
pub(crate) enum Checked {
    /// The text goes on (rewritten, perhaps).
    Go(String),
    /// The step ends with this fixed answer.
    Respond(String),
}

impl Engine {
    /// The blocking input guardrails of a run's target (an agent or a router; a workflow's
    /// steps check their own), run before a durable run is stored: a blocked input never
    /// reaches the run's record or its thread, and a rewritten one is stored rewritten. `None`
    /// when there is nothing to check here, or a guardrail answered itself (the run then
    /// checks again as it runs, so that the exchange is stored).
    pub(crate) async fn precheck_input(
        &self,
        target: &super::context::Target,
        input: &str,
    ) -> Result<Option<String>, RunError> {
        use super::context::TargetKind;
        let rt = &self.rt;
        let (step, entries): (&str, Vec<&GuardrailEntry>) = match &target.0 {
            TargetKind::Agent(name) | TargetKind::Named(name)
                if rt.agent_by_name(name).is_some() =>
            {
                let agent = rt.agent_by_name(name).expect("checked");
                let blocking = agent.guardrails.input.entries().iter();
                (
                    agent.meta.name,
                    blocking.filter(|e| !e.meta.parallel).collect(),
                )
            }
            TargetKind::Router(name) | TargetKind::Named(name)
                if rt.router_by_name(name).is_some() =>
            {
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
        match self
            .check_text(
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
        &self,
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
                    .with_tenant(self.ctx.tenant.as_ref());
                let check = crate::pipeline::guard::check(
                    &entry.guard,
                    entry.timeout,
                    &self.rt.resolved.services,
                    &ctx,
                );
                self.or_cancel(check).await?
            };
            let label = verdict.as_ref().map_or("failed", GuardrailVerdict::label);
            self.emit(|| RunEvent::GuardrailVerdict {
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

    /// Sends a text delta through the gate: released now, held, or released once its window
    /// passed the output guardrails.
    pub(crate) async fn gate_delta(
        &self,
        step: &str,
        gate: &mut OutputGate,
        delta: String,
    ) -> Result<(), RunError> {
        let Some(chain) = gate.active.clone() else {
            self.emit(|| RunEvent::TextDelta {
                step: step.to_string(),
                delta,
            });
            return Ok(());
        };
        if !self.listening() {
            return Ok(());
        }
        match gate.mode {
            OutputStreaming::Hold => gate.held.push(delta),
            OutputStreaming::Windows { size, overlap } => {
                gate.pending.push_str(&delta);
                if gate.stopped || gate.pending.chars().count() < size.max(overlap + 1) {
                    return Ok(());
                }
                let window = format!("{}{}", gate.tail, gate.pending);
                match self
                    .check_text(
                        step,
                        Boundary::Output,
                        chain.entries(),
                        window.clone(),
                        TextScope::Window,
                    )
                    .await?
                {
                    Checked::Go(checked) if checked == window => {
                        let keep = split_from_end(&gate.pending, overlap);
                        let released: String = gate.pending.drain(..keep).collect();
                        gate.release(self, step, released, overlap);
                    }
                    // A rewritten window cannot be released as written, and what was released
                    // cannot be taken back: release nothing more; the final answer carries the
                    // guardrails' text.
                    Checked::Go(_) | Checked::Respond(_) => gate.stopped = true,
                }
            }
        }
        Ok(())
    }

    /// The end of a model turn that asked for tools: its held text, checked as an interim
    /// text, is released (or the step ends with a guardrail's fixed answer).
    pub(crate) async fn gate_interim(
        &self,
        step: &str,
        gate: &mut OutputGate,
    ) -> Result<Option<String>, RunError> {
        let Some(chain) = gate.active.clone() else {
            return Ok(None);
        };
        let text = gate.unreleased();
        if text.is_empty() || gate.stopped || !self.listening() {
            gate.reset();
            return Ok(None);
        }
        let checked = self
            .check_text(
                step,
                Boundary::Output,
                chain.entries(),
                format!("{}{text}", gate.tail),
                TextScope::Interim,
            )
            .await?;
        let result = match checked {
            Checked::Go(checked) if checked == format!("{}{text}", gate.tail) => {
                gate.release_all(self, step);
                None
            }
            Checked::Go(_) => None,
            Checked::Respond(answer) => Some(answer),
        };
        gate.reset();
        Ok(result)
    }

    /// The final answer through the path's output guardrails and answer masking; what the
    /// stream has not released yet is released as checked.
    pub(crate) async fn gate_final(
        &self,
        step: &str,
        guardrails: &Guardrails,
        gate: &mut OutputGate,
        answer: String,
    ) -> Result<String, RunError> {
        if gate.active.is_none() {
            return Ok(answer);
        }
        let checked = if guardrails.output.is_empty() {
            answer.clone()
        } else {
            match self
                .check_text(
                    step,
                    Boundary::Output,
                    guardrails.output.entries(),
                    answer.clone(),
                    TextScope::Whole,
                )
                .await?
            {
                Checked::Go(text) | Checked::Respond(text) => text,
            }
        };
        let masked = match &guardrails.answer_pii {
            Some(pii) => pii
                .mask_text(&checked, &mut MaskReport::default())
                .into_owned(),
            None => checked,
        };
        if self.listening() && !gate.stopped {
            if masked == answer {
                gate.release_all(self, step);
            } else if gate.released_nothing() {
                self.emit(|| RunEvent::TextDelta {
                    step: step.to_string(),
                    delta: masked.clone(),
                });
            }
        }
        gate.reset();
        Ok(masked)
    }
}

impl Engine {
    /// The first model turn while the `parallel` input guardrails run: its deltas are held and
    /// it is journaled only once every guardrail passed; a block, a failure or a fixed answer
    /// drops it (nothing of it ran), a rewrite makes the turn again on the rewritten input.
    #[expect(
        clippy::too_many_arguments,
        reason = "call_model's inputs plus the parallel guardrails"
    )]
    pub(super) async fn first_turn_checked(
        &self,
        step: &str,
        model: &crate::model::SharedChatModel,
        req: &mut ModelRequest,
        stats: &mut Stats,
        guards: &[&GuardrailEntry],
        mask: super::telemetry::ContentMask<'_>,
        gate: &mut OutputGate,
    ) -> Result<FirstTurn, RunError> {
        let input = match req.messages.last() {
            Some(Message::User { content }) => content.clone(),
            _ => String::new(),
        };
        let replaying = self
            .journal
            .as_ref()
            .is_some_and(|j| j.has_next_model_turn());
        if replaying {
            // A resumed run: the turn is read back, not made again; check, then replay it.
            return match self
                .check_text(
                    step,
                    Boundary::Input,
                    guards,
                    input.clone(),
                    TextScope::Whole,
                )
                .await?
            {
                Checked::Respond(answer) => Ok(FirstTurn::Respond(answer)),
                Checked::Go(text) => {
                    if text != input {
                        set_last_user(req, text);
                    }
                    let (turn, response) = self
                        .call_model(step, model, req, stats, true, Some(mask), gate)
                        .await?;
                    Ok(FirstTurn::Ran(turn, response))
                }
            };
        }
        let mut held = OutputGate::holding();
        let mut turn_stats = Stats::default();
        let verdict;
        let mut response = None;
        {
            let check = self.check_text(
                step,
                Boundary::Input,
                guards,
                input.clone(),
                TextScope::Whole,
            );
            let live =
                self.call_model_live(step, model, req, &mut turn_stats, Some(mask), &mut held);
            tokio::pin!(check, live);
            verdict = loop {
                tokio::select! {
                    biased;
                    v = &mut check => break v,
                    r = &mut live, if response.is_none() => response = Some(r),
                }
            };
            if matches!(&verdict, Ok(Checked::Go(text)) if *text == input) && response.is_none() {
                response = Some(live.await);
            }
        }
        match verdict? {
            Checked::Respond(answer) => Ok(FirstTurn::Respond(answer)),
            Checked::Go(text) if text != input => {
                // The model read the input before its rewrite: its work is discarded.
                set_last_user(req, text);
                let (turn, response) = self
                    .call_model(step, model, req, stats, true, Some(mask), gate)
                    .await?;
                Ok(FirstTurn::Ran(turn, response))
            }
            Checked::Go(_) => {
                let response = response.expect("awaited above")?;
                stats.model_turns += turn_stats.model_turns;
                stats.usage += turn_stats.usage;
                let turn = match &self.journal {
                    Some(journal) => {
                        let turn = journal.next_model_turn();
                        let digest = super::journal::request_digest(req);
                        self.record_model(step, turn, digest, &response, true, gate.is_closed())
                            .await?;
                        turn
                    }
                    None => stats.model_turns - 1,
                };
                for delta in held.take_held() {
                    self.gate_delta(step, gate, delta).await?;
                }
                Ok(FirstTurn::Ran(turn, response))
            }
        }
    }
}

/// How the first turn under parallel input guardrails ended.
pub(crate) enum FirstTurn {
    /// The turn ran (its number and response) and every input guardrail passed.
    Ran(u32, ModelResponse),
    /// A guardrail answered instead.
    Respond(String),
}

/// Replaces the input of a request (its last message, the user's).
fn set_last_user(req: &mut ModelRequest, text: String) {
    if let Some(last) = req.messages.last_mut() {
        *last = Message::user(text);
    }
}

/// Streamed text on its way to the caller: released at once on an unguarded path, held back
/// (or released in checked windows) on a guarded one.
#[derive(Debug, Default)]
pub(crate) struct OutputGate {
    /// The output guardrails of the path, when the gate holds text back.
    active: Option<GuardrailChain>,
    mode: OutputStreaming,
    /// Deltas of this turn not released (hold mode).
    held: Vec<String>,
    /// Text of this turn not released (windows mode).
    pending: String,
    /// The last `overlap` characters released (windows mode).
    tail: String,
    /// This turn released something.
    released: bool,
    /// A window was not passed as written: nothing more is released this turn.
    stopped: bool,
}

impl OutputGate {
    /// A gate that releases every delta at once.
    pub(crate) fn open() -> Self {
        Self::default()
    }
    /// The gate of a path: closed when output guardrails guard it or `mask_answer` masks its
    /// answer (masking needs the whole answer: windows are not used then).
    pub(crate) fn for_path(guardrails: &Guardrails, mode: OutputStreaming) -> Self {
        if guardrails.output.is_empty() && guardrails.answer_pii.is_none() {
            return Self::open();
        }
        let mode = match mode {
            _ if guardrails.answer_pii.is_some() => OutputStreaming::Hold,
            // Never less overlap than the longest match a guardrail of the path declares.
            OutputStreaming::Windows { size, overlap } => OutputStreaming::Windows {
                size,
                overlap: guardrails
                    .output
                    .entries()
                    .iter()
                    .filter_map(|e| e.meta.max_match)
                    .fold(overlap, usize::max),
            },
            OutputStreaming::Hold => OutputStreaming::Hold,
        };
        Self {
            active: Some(guardrails.output.clone()),
            mode,
            ..Self::default()
        }
    }
    /// A gate that holds every delta (the first turn while parallel input guardrails run).
    pub(crate) fn holding() -> Self {
        Self {
            active: Some(GuardrailChain::default()),
            mode: OutputStreaming::Hold,
            ..Self::default()
        }
    }
    /// True when it holds text back.
    pub(crate) fn is_closed(&self) -> bool {
        self.active.is_some()
    }
    /// The deltas it holds, in order (taken out).
    pub(crate) fn take_held(&mut self) -> Vec<String> {
        std::mem::take(&mut self.held)
    }
    fn unreleased(&self) -> String {
        match self.mode {
            OutputStreaming::Hold => self.held.concat(),
            OutputStreaming::Windows { .. } => self.pending.clone(),
        }
    }
    fn released_nothing(&self) -> bool {
        !self.released
    }
    fn release(&mut self, engine: &Engine, step: &str, text: String, overlap: usize) {
        if text.is_empty() {
            return;
        }
        self.tail.push_str(&text);
        let keep = split_from_end(&self.tail, overlap);
        self.tail.drain(..keep);
        self.released = true;
        engine.emit(|| RunEvent::TextDelta {
            step: step.to_string(),
            delta: text,
        });
    }
    fn release_all(&mut self, engine: &Engine, step: &str) {
        match self.mode {
            OutputStreaming::Hold => {
                for delta in std::mem::take(&mut self.held) {
                    self.released = true;
                    engine.emit(|| RunEvent::TextDelta {
                        step: step.to_string(),
                        delta,
                    });
                }
            }
            OutputStreaming::Windows { overlap, .. } => {
                let rest = std::mem::take(&mut self.pending);
                self.release(engine, step, rest, overlap);
            }
        }
    }
    /// Ready for the next turn.
    fn reset(&mut self) {
        self.held.clear();
        self.pending.clear();
        self.tail.clear();
        self.released = false;
        self.stopped = false;
    }
}

/// The byte index where the last `chars` characters of `text` start.
fn split_from_end(text: &str, chars: usize) -> usize {
    if chars == 0 {
        return text.len();
    }
    text.char_indices()
        .rev()
        .nth(chars - 1)
        .map_or(0, |(i, _)| i)
}

#[cfg(test)]
mod tests {
    use super::split_from_end;

    #[test]
    fn split_from_end_counts_characters() {
        assert_eq!(split_from_end("abcdef", 2), 4);
        assert_eq!(split_from_end("abcdef", 0), 6);
        assert_eq!(split_from_end("ab", 5), 0);
        assert_eq!(split_from_end("añb", 2), 1);
    }
}
