//! [`RunState`]: the one owner of a run's state (its runtime, context, event sink, id, journal,
//! and what the driver settled before the target runs). The units of the engine get it as
//! `&RunState`: they read it and emit events through it, and none of them changes it (but for
//! the budget's counters, which every call reserves in atomically: `limits.rs`). A run's
//! caller makes it ([`RunState::new`]: `App::execute`, `RunStream::start`); only the driver
//! ([`super::run`]) sets it up (input precheck, journal), before the target runs.
use std::future::Future;
use std::sync::Arc;

use tokio::sync::mpsc;

use super::Runtime;
use super::budget::RunBudget;
use super::context::{OrCancel, RunContext};
use super::events::RunEvent;
use super::journal::RunJournal;
use super::nesting::{CallingRun, DEFAULT_MAX_AGENT_TOOL_DEPTH, calling_run};
use super::run_error::RunError;
use crate::callback::SharedToolCallback;
use crate::callback::stack::stack;
use crate::contract::scope::ScopeRef;
use crate::contract::usage_limits::UsageLimitExceeded;
use crate::di::CallId;
use crate::store::types::random_id;

/// The state of one run, read by every unit of the engine.
pub(crate) struct RunState {
    rt: Arc<Runtime>,
    ctx: RunContext,
    sink: Option<mpsc::UnboundedSender<RunEvent>>,
    run_id: String,
    /// The run's journal, when the app has a store.
    journal: Option<RunJournal>,
    /// The blocking input guardrails of the run's target already ran (before the run was
    /// stored, see [`super::guardrails::precheck_input`]).
    input_checked: bool,
    /// The run journals its steps when the app has a store (a run nested in an agent tool
    /// does not: the calling run journals the call as a whole).
    journaled: bool,
    /// The run's target (its agent has no step span of its own: the run's span is its).
    target_name: String,
    /// What the run lends its tool calls: its budget (what it may still spend, nested in the
    /// run whose tool call started it, if any), its depth (`nesting.rs`).
    lent: Arc<CallingRun>,
}

impl RunState {
    /// The state of a new run of `target_name` (its id is the context's, else a new one).
    pub(crate) fn new(
        rt: Arc<Runtime>,
        ctx: RunContext,
        sink: Option<mpsc::UnboundedSender<RunEvent>>,
        target_name: String,
    ) -> Self {
        let run_id = ctx.run_id.clone().unwrap_or_else(|| {
            if rt.store.is_some() {
                // Unique across processes: a stored run must never be mistaken for another's.
                random_id("run")
            } else {
                format!("run_{}", CallId::generate().as_str())
            }
        });
        // Strictest wins: the run's limits and those declared on the target's path tighten the
        // application's, never loosen them.
        let declared = match rt.agent_by_name(&target_name) {
            Some(agent) => &agent.usage_limits,
            None => rt
                .workflow_by_name(&target_name)
                .map_or(&rt.resolved.usage_limits, |w| &w.usage_limits),
        };
        let mut limits = rt.usage_limits.strictest(declared);
        if let Some(run_limits) = &ctx.usage_limits {
            limits = limits.strictest(run_limits);
        }
        // A run started inside another run's tool call nests in it: its budget, its depth.
        let calling = calling_run();
        let budget = RunBudget::new(
            limits,
            Arc::clone(&rt.prices),
            calling.as_ref().map(|c| Arc::clone(&c.budget)),
        );
        let (depth, max_depth) = match &calling {
            Some(c) => (c.depth + 1, c.max_depth),
            None => (
                0,
                ctx.max_agent_tool_depth
                    .unwrap_or(DEFAULT_MAX_AGENT_TOOL_DEPTH),
            ),
        };
        let lent = Arc::new(CallingRun {
            budget,
            rt: Arc::clone(&rt),
            cancel: ctx.cancel.clone(),
            depth,
            max_depth,
            sink: sink.clone(),
        });
        Self {
            lent,
            rt,
            ctx,
            sink,
            run_id,
            journal: None,
            input_checked: false,
            journaled: true,
            target_name,
        }
    }

    /// Setup (the driver, before the target runs): the target's blocking input guardrails ran.
    pub(crate) fn mark_input_checked(&mut self) {
        self.input_checked = true;
    }

    /// Setup (an agent tool, before the run starts): the run is not journaled on its own.
    pub(crate) fn without_journal(&mut self) {
        self.journaled = false;
    }

    /// Whether the run journals its steps (when the app has a store).
    pub(crate) fn journaled(&self) -> bool {
        self.journaled
    }

    /// Setup (the driver, before the target runs): the run's journal, opened from the store.
    pub(crate) fn attach_journal(&mut self, journal: RunJournal) -> &RunJournal {
        self.journal.insert(journal)
    }

    /// What runs need of the built app.
    pub(crate) fn rt(&self) -> &Arc<Runtime> {
        &self.rt
    }

    /// The run's context (tenant, limits, cancellation, callback layers).
    pub(crate) fn ctx(&self) -> &RunContext {
        &self.ctx
    }

    /// The run id.
    pub(crate) fn run_id(&self) -> &str {
        &self.run_id
    }

    /// The run's journal, when the app has a store.
    pub(crate) fn journal(&self) -> Option<&RunJournal> {
        self.journal.as_ref()
    }

    /// Whether the blocking input guardrails of the run's target already ran.
    pub(crate) fn input_checked(&self) -> bool {
        self.input_checked
    }

    /// The run's budget: every model and tool call is reserved in it before it starts.
    pub(crate) fn budget(&self) -> &Arc<RunBudget> {
        &self.lent.budget
    }

    /// What the run lends each of its tool calls (a run started inside one nests in this one).
    pub(crate) fn lent(&self) -> &Arc<CallingRun> {
        &self.lent
    }

    /// The run's target name.
    pub(crate) fn target_name(&self) -> &str {
        &self.target_name
    }

    /// Sends an event when someone listens (the event is not even built otherwise).
    pub(crate) fn emit(&self, event: impl FnOnce() -> RunEvent) {
        if let Some(sink) = &self.sink {
            // A dropped stream only means nobody listens any more.
            let _ = sink.send(event());
        }
    }

    /// True when someone reads the run's events (`stream`), false for `execute`.
    pub(crate) fn listening(&self) -> bool {
        self.sink.is_some()
    }

    /// Awaits `fut` unless the run is cancelled first (see [`OrCancel`]).
    pub(crate) fn or_cancel<F: Future>(&self, fut: F) -> OrCancel<'_, F> {
        self.ctx.cancel.unless_cancelled(fut)
    }

    /// The decorated callbacks of `base` tools (see [`crate::callback`]).
    pub(crate) fn callbacks(
        &self,
        agent: Option<&str>,
        scopes: &[ScopeRef],
        base: Vec<SharedToolCallback>,
    ) -> Vec<SharedToolCallback> {
        stack(&self.rt.listeners, agent, scopes, base, &self.ctx.layers)
    }
}

/// The error of a call a usage limit refused (or of a model call that passed a token bound),
/// announced as an event first.
pub(crate) fn limit_exceeded(run: &RunState, step: &str, refused: UsageLimitExceeded) -> RunError {
    tracing::warn!(step, error = %refused, "usage limit exceeded");
    run.emit(|| super::events::RunEvent::UsageLimitExceeded {
        step: step.to_string(),
        error: refused.clone(),
    });
    RunError::UsageLimit(refused)
}
