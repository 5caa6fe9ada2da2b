//! Human-readable run events: `Display` for [`RunEvent`] and the engine's types in it (a
//! call's decision renders through [`CallDecision`]'s own `Display`), and [`RunStream::print`],
//! which prints a run as it happens.
//!
//! `{}` renders one line; `{:#}` indents it by its place in the run (steps under the run, model
//! turns and calls under their step, decisions and results under their call), as the demo prints
//! it. No `Debug` text: every value is rendered for a person.
//!
//! ```
//! use agboss_core::engine::{RunEvent, StepKind, StepOutcome};
//! let started = RunEvent::StepStarted {
//!     step: "billing-agent".into(),
//!     kind: StepKind::Agent,
//!     input: "Refund order 42".into(),
//! };
//! assert_eq!(started.to_string(), "▶ agent billing-agent ← Refund order 42");
//! assert_eq!(format!("{started:#}"), "  ▶ agent billing-agent ← Refund order 42");
//! let done = RunEvent::StepFinished {
//!     step: "billing-agent".into(),
//!     kind: StepKind::Agent,
//!     outcome: StepOutcome::Succeeded,
//! };
//! assert_eq!(done.to_string(), "■ agent billing-agent done");
//! ```
use std::fmt;

use crate::contract::guardrail::TextScope;
use std::io::Write as _;

use futures::StreamExt as _;

use super::events::{CallDecision, RouteReason, RunEvent, StepOutcome};
use super::run::{RunError, RunFailed, RunOutput, RunStream};

impl fmt::Display for RouteReason {
    /// `the model answered "billing-agent"` or `fallback: why`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::ModelChoice { answer } => write!(f, "the model answered \"{}\"", answer.trim()),
            Self::Fallback { why } => write!(f, "fallback: {why}"),
        }
    }
}

impl fmt::Display for StepOutcome {
    /// `done`, `FAILED: error`, `recovered by on_error (was: error)`, `paused: reason`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Succeeded => f.write_str("done"),
            Self::Failed { error } => write!(f, "FAILED: {error}"),
            Self::Recovered { error } => write!(f, "recovered by on_error (was: {error})"),
            Self::Paused { reason } => write!(f, "paused: {reason}"),
        }
    }
}

impl fmt::Display for RunOutput {
    /// `"answer" (2 model turns, 1 tool call, 42 tokens)` (no token count when none was
    /// reported).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let plural =
            |n: u32, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
        write!(
            f,
            "\"{}\" ({}, {}",
            self.text,
            plural(self.model_turns, "model turn", "model turns"),
            plural(self.tool_calls, "tool call", "tool calls"),
        )?;
        // A model that reports no usage (a scripted one) has no token count to show.
        if self.usage.total_tokens > 0 {
            write!(f, ", {} tokens", self.usage.total_tokens)?;
        }
        f.write_str(")")
    }
}

impl RunEvent {
    /// The event's depth in a run: 0 for the run, 1 for steps, 2 for what happens in a step,
    /// 3 for what happens to one call (what `{:#}` indents by, two spaces a level).
    #[must_use]
    pub fn depth(&self) -> usize {
        match self {
            Self::RunStarted { .. } | Self::RunResumed { .. } | Self::Completed(_) => 0,
            Self::StepStarted { .. } | Self::StepFinished { .. } => 1,
            Self::TextDelta { .. }
            | Self::Usage { .. }
            | Self::RouteChosen { .. }
            | Self::Handoff { .. }
            | Self::ToolCallRequested { .. }
            | Self::FinalAnswer { .. }
            | Self::OutputRejected { .. }
            | Self::UsageLimitExceeded { .. }
            | Self::GuardrailVerdict { .. }
            | Self::ToolCallInDoubt { .. } => 2,
            Self::Nested { event, .. } => 3 + event.depth(),
            Self::ToolCallDecision { .. }
            | Self::ToolResult { .. }
            | Self::ToolError { .. }
            | Self::ToolCallCancelled { .. }
            | Self::ApprovalRequested { .. } => 3,
        }
    }
}

impl fmt::Display for RunEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if f.alternate() {
            write!(f, "{:width$}", "", width = 2 * self.depth())?;
        }
        match self {
            Self::RunStarted { run_id, target } => write!(f, "run {run_id} → {target}"),
            Self::RunResumed {
                run_id,
                replayed_steps,
            } => write!(
                f,
                "run {run_id} resumed: {replayed_steps} journaled steps read back"
            ),
            Self::StepStarted { step, kind, input } => write!(f, "▶ {kind} {step} ← {input}"),
            Self::TextDelta { delta, .. } => f.write_str(delta),
            Self::Usage { step, usage } => write!(
                f,
                "· {step} used {} tokens ({} in, {} out)",
                usage.total_tokens, usage.prompt_tokens, usage.completion_tokens
            ),
            Self::RouteChosen {
                router,
                route,
                reason,
            } => write!(f, "⇢ {router} chose {route} ({reason})"),
            Self::Nested { tool, event, .. } => write!(f, "↳ {tool}: {event}"),
            Self::Handoff { from, to, reason } => match reason {
                Some(reason) => write!(f, "⇉ {from} handed off to {to} ({reason})"),
                None => write!(f, "⇉ {from} handed off to {to}"),
            },
            Self::ToolCallRequested {
                call_id,
                tool,
                arguments,
                ..
            } => write!(f, "→ {call_id} {tool} {arguments}"),
            Self::ToolCallDecision {
                call_id, decision, ..
            } => {
                let mark = match decision {
                    CallDecision::Allowed => '✔',
                    CallDecision::ReplyToModel { .. } => '↩',
                    CallDecision::AwaitingApproval { .. } => '⏸',
                    _ => '✖',
                };
                write!(f, "{mark} {call_id} {decision}")
            }
            Self::ToolResult {
                call_id,
                content,
                is_error,
                truncated,
                ..
            } => {
                write!(f, "= {call_id} {content}")?;
                match (is_error, truncated) {
                    (true, _) => f.write_str("  (an error observation)"),
                    (false, true) => f.write_str("  (truncated)"),
                    (false, false) => Ok(()),
                }
            }
            Self::ToolError {
                call_id,
                tool,
                error,
                ..
            } => write!(f, "! {call_id} {tool} failed: {error}"),
            Self::ToolCallCancelled { call_id, tool, .. } => {
                write!(f, "⨯ {call_id} {tool} cancelled")
            }
            Self::ToolCallInDoubt { call_id, tool, .. } => write!(
                f,
                "? {call_id} {tool} in doubt: it started and has no recorded end"
            ),
            Self::ApprovalRequested { ticket, notified } => {
                write!(f, "⚑ ticket {} for {} stored, ", ticket.id, ticket.tool)?;
                match notified {
                    Ok(()) => write!(f, "{} told", ticket.channel),
                    Err(e) => write!(
                        f,
                        "{} NOT told ({e}); the ticket stays pending",
                        ticket.channel
                    ),
                }
            }
            Self::GuardrailVerdict {
                step,
                guardrail,
                boundary,
                scope,
                verdict,
            } => {
                let mark = if *verdict == "pass" { '✔' } else { '⛨' };
                write!(f, "{mark} {step}: {boundary} {verdict} by {guardrail}")?;
                match scope {
                    TextScope::Whole => Ok(()),
                    TextScope::Window => f.write_str(" (a streamed window)"),
                    TextScope::Interim => f.write_str(" (an interim text)"),
                }
            }
            Self::FinalAnswer { step, text } => write!(f, "✎ {step}: {text}"),
            Self::UsageLimitExceeded { step, error } => write!(f, "⛔ {step}: {error}"),
            Self::OutputRejected {
                step,
                attempt,
                error,
            } => write!(
                f,
                "✗ {step}: answer {attempt} is not a valid {} ({} errors), sent back",
                error.dto,
                error.errors.len()
            ),
            Self::StepFinished {
                step,
                kind,
                outcome,
            } => write!(f, "■ {kind} {step} {outcome}"),
            Self::Completed(out) => write!(f, "completed: {out}"),
        }
    }
}

impl RunStream {
    /// Drains the run, printing every event but text deltas and passing guardrail verdicts to stdout as it happens, one
    /// indented line each (`{:#}`); returns the run's result, as
    /// [`App::execute`](crate::App::execute) would.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use agboss_core::{agent, App, engine::{RunContext, Target}};
    /// # use agboss_testing::scripted::{ScriptedModel, Turn};
    /// #[agent(name = "echo-agent", description = "Answers")]
    /// pub struct EchoAgent;
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let app = App::builder()
    ///     .agent::<EchoAgent>()
    ///     .model(Arc::new(ScriptedModel::new([Turn::text("Hello!")])))
    ///     .build()
    ///     .unwrap();
    /// // run run_… → echo-agent / ▶ agent echo-agent ← Hi / ✎ echo-agent: Hello! / …
    /// let out = app.stream(Target::agent::<EchoAgent>(), "Hi", RunContext::new()).print().await;
    /// assert_eq!(out.unwrap().text, "Hello!");
    /// # });
    /// ```
    pub async fn print(mut self) -> Result<RunOutput, RunFailed> {
        let mut stdout = std::io::stdout();
        while let Some(item) = self.next().await {
            let event = item?;
            // Deltas make the final answer; a passing guardrail is news to nobody.
            let quiet = matches!(event, RunEvent::TextDelta { .. })
                || matches!(&event, RunEvent::GuardrailVerdict { verdict, .. } if *verdict == "pass");
            if !quiet {
                // A closed stdout is no reason to stop the run.
                let _ = writeln!(stdout, "{event:#}");
            }
            if let RunEvent::Completed(out) = event {
                return Ok(out);
            }
        }
        Err(RunFailed::new(self.run_id(), RunError::Cancelled))
    }
}
