//! The output gate: streamed text on its way to the caller, released at once on an
//! unguarded path, held back (or released in checked windows) until the output guardrails
//! passed it on a guarded one (see [`super::guardrails`] for the rules).
use super::events::RunEvent;
use super::guardrails::{Checked, check_text};
use super::run_error::RunError;
use super::state::RunState;
use crate::cascade::{GuardrailChain, Guardrails};
use crate::contract::guardrail::{Boundary, OutputStreaming, TextScope};
use crate::pii::MaskReport;

/// Sends a text delta through the gate: released now, held, or released once its window
/// passed the output guardrails.
pub(crate) async fn gate_delta(
    run: &RunState,
    step: &str,
    gate: &mut OutputGate,
    delta: String,
) -> Result<(), RunError> {
    let Some(chain) = gate.active.clone() else {
        run.emit(|| RunEvent::TextDelta {
            step: step.to_string(),
            delta,
        });
        return Ok(());
    };
    if !run.listening() {
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
            match check_text(
                run,
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
                    gate.release(run, step, released, overlap);
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
    run: &RunState,
    step: &str,
    gate: &mut OutputGate,
) -> Result<Option<String>, RunError> {
    let Some(chain) = gate.active.clone() else {
        return Ok(None);
    };
    let text = gate.unreleased();
    if text.is_empty() || gate.stopped || !run.listening() {
        gate.reset();
        return Ok(None);
    }
    let checked = check_text(
        run,
        step,
        Boundary::Output,
        chain.entries(),
        format!("{}{text}", gate.tail),
        TextScope::Interim,
    )
    .await?;
    let result = match checked {
        Checked::Go(checked) if checked == format!("{}{text}", gate.tail) => {
            gate.release_all(run, step);
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
    run: &RunState,
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
        match check_text(
            run,
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
    if gate.typed {
        // A typed answer streams once, whole and valid: never the model's raw deltas.
        gate.held.clear();
        if run.listening() {
            run.emit(|| RunEvent::TextDelta {
                step: step.to_string(),
                delta: masked.clone(),
            });
        }
    } else if run.listening() && !gate.stopped {
        if masked == answer {
            gate.release_all(run, step);
        } else if gate.released_nothing() {
            run.emit(|| RunEvent::TextDelta {
                step: step.to_string(),
                delta: masked.clone(),
            });
        }
    }
    gate.reset();
    Ok(masked)
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
    /// The path's answer is typed: its final text is released once, validated, whole.
    typed: bool,
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
    /// The gate of a path with a typed answer: closed whatever guards it (an answer is
    /// validated before any of it is released, an invalid one never is), holding every delta.
    pub(crate) fn for_typed_path(guardrails: &Guardrails) -> Self {
        Self {
            active: Some(guardrails.output.clone()),
            mode: OutputStreaming::Hold,
            typed: true,
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
    fn release(&mut self, run: &RunState, step: &str, text: String, overlap: usize) {
        if text.is_empty() {
            return;
        }
        self.tail.push_str(&text);
        let keep = split_from_end(&self.tail, overlap);
        self.tail.drain(..keep);
        self.released = true;
        run.emit(|| RunEvent::TextDelta {
            step: step.to_string(),
            delta: text,
        });
    }
    fn release_all(&mut self, run: &RunState, step: &str) {
        match self.mode {
            OutputStreaming::Hold => {
                for delta in std::mem::take(&mut self.held) {
                    self.released = true;
                    run.emit(|| RunEvent::TextDelta {
                        step: step.to_string(),
                        delta,
                    });
                }
            }
            OutputStreaming::Windows { overlap, .. } => {
                let rest = std::mem::take(&mut self.pending);
                self.release(run, step, rest, overlap);
            }
        }
    }
    /// Drops what this turn holds (an answer that was not valid): nothing of it is released.
    pub(crate) fn discard(&mut self) {
        self.reset();
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
