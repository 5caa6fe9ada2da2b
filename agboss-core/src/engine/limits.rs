//! Usage limits, reserved before the call: [`UsageLimits`] (what a run may spend: model
//! requests, input and output tokens, tool calls in all and per tool), the run's budget that
//! admits each model or tool call before it starts and settles it after, and
//! [`UsageLimitExceeded`], the typed error of a refused call.
//!
//! A run's limits are the strictest of the application's
//! ([`AppBuilder::usage_limits`](crate::AppBuilder::usage_limits)) and the run's
//! ([`RunContext::usage_limits`](super::RunContext::usage_limits)): each bound is the smallest
//! one set (strictest wins: a run can tighten the application's limits, never loosen them).
//!
//! * Model requests and tool calls are **reserved** before the call: the count goes up first,
//!   atomically, and a call that would pass the bound does not start. A burst of parallel calls
//!   cannot overspend: of 100 calls against a limit of 10, exactly 10 run.
//! * Tokens are known only once a model call answered: a model call starts only while the
//!   tokens settled so far are below every token bound, and the call whose usage passes one
//!   fails the run after it (no further call starts).
//! * A run started while a tool call of another run is running (a tool that runs an agent, in
//!   the same task) is **nested**: every call it makes is reserved in its own budget and in the
//!   outer run's, so a nested run cannot bypass the outer run's limits.
use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use super::prices::PriceTable;
use crate::model::Usage;

/// What a run may spend. Every bound is optional (`None`: unbounded).
///
/// ```
/// use agboss_core::engine::UsageLimits;
///
/// let app_limits = UsageLimits::new().model_requests(20).tool_calls(50);
/// let run_limits = UsageLimits::new().tool_calls(10).tool_calls_of("refund-tool", 1);
/// let limits = app_limits.strictest(&run_limits);
/// assert_eq!(limits.max_model_requests, Some(20));
/// assert_eq!(limits.max_tool_calls, Some(10));
/// assert_eq!(limits.max_tool_calls_per_tool["refund-tool"], 1);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct UsageLimits {
    /// Model calls (routers' included).
    pub max_model_requests: Option<u64>,
    /// Prompt tokens of every model call.
    pub max_input_tokens: Option<u64>,
    /// Generated tokens of every model call.
    pub max_output_tokens: Option<u64>,
    /// Tool calls that start (refused and replied ones included: a call is reserved before
    /// its guards run).
    pub max_tool_calls: Option<u64>,
    /// Tool calls per tool name.
    pub max_tool_calls_per_tool: BTreeMap<String, u64>,
    /// Cost of every model call, in micro-dollars, by the app's
    /// [`PriceTable`](super::PriceTable) (a model it has no price for is refused).
    pub max_cost_micros: Option<u64>,
}

impl UsageLimits {
    /// No bound.
    pub fn new() -> Self {
        Self::default()
    }
    /// Bounds model calls.
    #[must_use]
    pub fn model_requests(mut self, max: u64) -> Self {
        self.max_model_requests = Some(max);
        self
    }
    /// Bounds prompt tokens.
    #[must_use]
    pub fn input_tokens(mut self, max: u64) -> Self {
        self.max_input_tokens = Some(max);
        self
    }
    /// Bounds generated tokens.
    #[must_use]
    pub fn output_tokens(mut self, max: u64) -> Self {
        self.max_output_tokens = Some(max);
        self
    }
    /// Bounds tool calls in all.
    #[must_use]
    pub fn tool_calls(mut self, max: u64) -> Self {
        self.max_tool_calls = Some(max);
        self
    }
    /// Bounds the cost of model calls, in micro-dollars (`5_000_000`: $5), priced by the app's
    /// [`PriceTable`](super::PriceTable).
    #[must_use]
    pub fn cost_micros(mut self, max: u64) -> Self {
        self.max_cost_micros = Some(max);
        self
    }
    /// Bounds the calls of one tool (by the name the model uses).
    #[must_use]
    pub fn tool_calls_of(mut self, tool: impl Into<String>, max: u64) -> Self {
        self.max_tool_calls_per_tool.insert(tool.into(), max);
        self
    }
    /// The strictest of both: each bound is the smaller one set.
    #[must_use]
    pub fn strictest(&self, other: &Self) -> Self {
        let min = |a: Option<u64>, b: Option<u64>| match (a, b) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        let mut per_tool = self.max_tool_calls_per_tool.clone();
        for (tool, max) in &other.max_tool_calls_per_tool {
            per_tool
                .entry(tool.clone())
                .and_modify(|m| *m = (*m).min(*max))
                .or_insert(*max);
        }
        Self {
            max_model_requests: min(self.max_model_requests, other.max_model_requests),
            max_input_tokens: min(self.max_input_tokens, other.max_input_tokens),
            max_output_tokens: min(self.max_output_tokens, other.max_output_tokens),
            max_tool_calls: min(self.max_tool_calls, other.max_tool_calls),
            max_tool_calls_per_tool: per_tool,
            max_cost_micros: min(self.max_cost_micros, other.max_cost_micros),
        }
    }
    /// True when no bound is set.
    pub fn is_unbounded(&self) -> bool {
        *self == Self::default()
    }
}

/// Which bound of [`UsageLimits`] a call would have passed.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum LimitKind {
    /// `max_model_requests`.
    ModelRequests,
    /// `max_input_tokens`.
    InputTokens,
    /// `max_output_tokens`.
    OutputTokens,
    /// `max_tool_calls`.
    ToolCalls,
    /// `max_tool_calls_per_tool` of this tool.
    ToolCallsOf(String),
    /// `max_cost_micros`.
    Cost,
    /// `max_cost_micros` is set and the price table has no price for this model.
    UnpricedModel(String),
}

impl fmt::Display for LimitKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::ModelRequests => f.write_str("model requests"),
            Self::InputTokens => f.write_str("input tokens"),
            Self::OutputTokens => f.write_str("output tokens"),
            Self::ToolCalls => f.write_str("tool calls"),
            Self::ToolCallsOf(tool) => write!(f, "calls of `{tool}`"),
            Self::Cost => f.write_str("cost (micro-dollars)"),
            Self::UnpricedModel(model) => write!(f, "cost of model `{model}`, which has no price"),
        }
    }
}

/// A call refused (or, for tokens, a model call that passed a bound): the run stops with it
/// ([`RunError::UsageLimit`](super::RunError::UsageLimit)) and emits
/// [`RunEvent::UsageLimitExceeded`](super::RunEvent::UsageLimitExceeded).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("usage limit exceeded: {limit} would reach {used}, the limit is {max}{}",
        if *.outer { " (the outer run's)" } else { "" })]
#[non_exhaustive]
pub struct UsageLimitExceeded {
    /// The bound.
    pub limit: LimitKind,
    /// Its value.
    pub max: u64,
    /// What the run would have used (or used, for tokens).
    pub used: u64,
    /// True when the bound is an outer run's (this run is nested in it).
    pub outer: bool,
}

/// What a run spent, as its budget counted it (reservations included).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct UsageCount {
    /// Model calls reserved.
    pub model_requests: u64,
    /// Tool calls reserved.
    pub tool_calls: u64,
    /// Prompt tokens settled.
    pub input_tokens: u64,
    /// Generated tokens settled.
    pub output_tokens: u64,
    /// Cost settled, in micro-dollars (rounded down; `0` without prices).
    pub cost_micros: u64,
}

/// A run's budget: its limits and what it reserved, shared with the runs nested in it.
#[derive(Debug, Default)]
pub(crate) struct RunBudget {
    limits: UsageLimits,
    model_requests: AtomicU64,
    tool_calls: AtomicU64,
    input_tokens: AtomicU64,
    output_tokens: AtomicU64,
    per_tool: Mutex<HashMap<String, u64>>,
    /// Cost settled, in millionths of a micro-dollar.
    cost_pico: AtomicU64,
    prices: Arc<PriceTable>,
    parent: Option<Arc<RunBudget>>,
}

/// Cost is counted in millionths of a micro-dollar: a price per million tokens times tokens.
const PICO_PER_MICRO: u64 = 1_000_000;

/// Adds one to `counter` unless that passes `max`; the new count, or the refusal.
fn reserve_one(
    counter: &AtomicU64,
    max: Option<u64>,
    limit: LimitKind,
) -> Result<u64, UsageLimitExceeded> {
    let result = counter.fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
        let next = n.saturating_add(1);
        match max {
            Some(max) if next > max => None,
            _ => Some(next),
        }
    });
    match result {
        Ok(n) => Ok(n + 1),
        Err(n) => Err(UsageLimitExceeded {
            limit,
            max: max.unwrap_or(u64::MAX),
            used: n.saturating_add(1),
            outer: false,
        }),
    }
}

impl RunBudget {
    /// The budget of a new run with `limits`: nested in `parent`, the budget of the run whose
    /// tool call started this one (`nesting.rs`), if one did.
    pub(crate) fn new(
        limits: UsageLimits,
        prices: Arc<PriceTable>,
        parent: Option<Arc<RunBudget>>,
    ) -> Arc<Self> {
        Arc::new(Self {
            limits,
            prices,
            parent,
            ..Self::default()
        })
    }

    /// What was counted so far.
    pub(crate) fn count(&self) -> UsageCount {
        UsageCount {
            model_requests: self.model_requests.load(Ordering::Acquire),
            tool_calls: self.tool_calls.load(Ordering::Acquire),
            input_tokens: self.input_tokens.load(Ordering::Acquire),
            output_tokens: self.output_tokens.load(Ordering::Acquire),
            cost_micros: self.cost_pico.load(Ordering::Acquire) / PICO_PER_MICRO,
        }
    }

    /// Reserves a call of `model` here and in every outer run: refused when one more request
    /// passes a bound, the tokens or cost settled already reached one, or a cost bound is set
    /// and `model` has no price.
    pub(crate) fn reserve_model(&self, model: &str) -> Result<(), UsageLimitExceeded> {
        if self.limits.max_cost_micros.is_some() && self.prices.get(model).is_none() {
            return Err(UsageLimitExceeded {
                limit: LimitKind::UnpricedModel(model.to_string()),
                max: self.limits.max_cost_micros.unwrap_or_default(),
                used: self.count().cost_micros,
                outer: false,
            });
        }
        self.check_tokens()?;
        reserve_one(
            &self.model_requests,
            self.limits.max_model_requests,
            LimitKind::ModelRequests,
        )?;
        if let Some(parent) = &self.parent
            && let Err(refused) = parent.reserve_model(model)
        {
            self.model_requests.fetch_sub(1, Ordering::AcqRel);
            return Err(UsageLimitExceeded {
                outer: true,
                ..refused
            });
        }
        Ok(())
    }

    /// Counts a model call read back from the journal (it ran before: never refused).
    pub(crate) fn record_model(&self, usage: Usage, model: &str) {
        self.model_requests.fetch_add(1, Ordering::AcqRel);
        self.add_tokens(usage, model);
        if let Some(parent) = &self.parent {
            parent.record_model(usage, model);
        }
    }

    /// Settles a model call with its usage: an error when the tokens now pass a bound, here or
    /// in an outer run.
    pub(crate) fn settle_model(&self, usage: Usage, model: &str) -> Result<(), UsageLimitExceeded> {
        self.add_tokens(usage, model);
        if let Some(parent) = &self.parent {
            parent
                .settle_model(usage, model)
                .map_err(|e| UsageLimitExceeded { outer: true, ..e })?;
        }
        self.check_tokens()
    }

    fn add_tokens(&self, usage: Usage, model: &str) {
        self.input_tokens
            .fetch_add(usage.prompt_tokens, Ordering::AcqRel);
        self.output_tokens
            .fetch_add(usage.completion_tokens, Ordering::AcqRel);
        if let Some(price) = self.prices.get(model) {
            self.cost_pico.fetch_add(
                price.cost_pico(usage.prompt_tokens, usage.completion_tokens),
                Ordering::AcqRel,
            );
        }
    }

    /// Refused when the settled tokens or cost reached a bound.
    fn check_tokens(&self) -> Result<(), UsageLimitExceeded> {
        if let Some(max) = self.limits.max_cost_micros {
            let pico = self.cost_pico.load(Ordering::Acquire);
            if pico >= max.saturating_mul(PICO_PER_MICRO) {
                return Err(UsageLimitExceeded {
                    limit: LimitKind::Cost,
                    max,
                    used: pico.div_ceil(PICO_PER_MICRO),
                    outer: false,
                });
            }
        }
        for (counter, max, limit) in [
            (
                &self.input_tokens,
                self.limits.max_input_tokens,
                LimitKind::InputTokens,
            ),
            (
                &self.output_tokens,
                self.limits.max_output_tokens,
                LimitKind::OutputTokens,
            ),
        ] {
            let used = counter.load(Ordering::Acquire);
            if let Some(max) = max
                && used >= max
            {
                return Err(UsageLimitExceeded {
                    limit,
                    max,
                    used,
                    outer: false,
                });
            }
        }
        Ok(())
    }

    /// Reserves a call of `tool` here and in every outer run (in all, and of that tool).
    pub(crate) fn reserve_tool(&self, tool: &str) -> Result<(), UsageLimitExceeded> {
        reserve_one(
            &self.tool_calls,
            self.limits.max_tool_calls,
            LimitKind::ToolCalls,
        )?;
        if let Err(refused) = self.reserve_of(tool) {
            self.tool_calls.fetch_sub(1, Ordering::AcqRel);
            return Err(refused);
        }
        if let Some(parent) = &self.parent
            && let Err(refused) = parent.reserve_tool(tool)
        {
            self.tool_calls.fetch_sub(1, Ordering::AcqRel);
            self.release_of(tool);
            return Err(UsageLimitExceeded {
                outer: true,
                ..refused
            });
        }
        Ok(())
    }

    fn reserve_of(&self, tool: &str) -> Result<(), UsageLimitExceeded> {
        let max = self.limits.max_tool_calls_per_tool.get(tool).copied();
        let mut per_tool = self.per_tool.lock().unwrap_or_else(|e| e.into_inner());
        let used = per_tool.entry(tool.to_string()).or_default();
        let next = used.saturating_add(1);
        if let Some(max) = max
            && next > max
        {
            return Err(UsageLimitExceeded {
                limit: LimitKind::ToolCallsOf(tool.to_string()),
                max,
                used: next,
                outer: false,
            });
        }
        *used = next;
        Ok(())
    }

    fn release_of(&self, tool: &str) {
        let mut per_tool = self.per_tool.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(used) = per_tool.get_mut(tool) {
            *used = used.saturating_sub(1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_reservation_leaves_no_count_behind() {
        let outer = Arc::new(RunBudget {
            limits: UsageLimits::new().tool_calls(1),
            ..RunBudget::default()
        });
        let inner = RunBudget {
            limits: UsageLimits::new().tool_calls_of("a-tool", 5),
            parent: Some(Arc::clone(&outer)),
            ..RunBudget::default()
        };
        inner.reserve_tool("a-tool").unwrap();
        let refused = inner.reserve_tool("a-tool").unwrap_err();
        assert!(refused.outer);
        assert_eq!(refused.limit, LimitKind::ToolCalls);
        assert_eq!(inner.count().tool_calls, 1);
        assert_eq!(inner.per_tool.lock().unwrap()["a-tool"], 1);
        assert_eq!(outer.count().tool_calls, 1);
    }

    #[test]
    fn tokens_stop_the_next_model_call_once_a_bound_is_reached() {
        let budget = RunBudget {
            limits: UsageLimits::new().output_tokens(10),
            ..RunBudget::default()
        };
        budget.reserve_model("m").unwrap();
        budget.settle_model(Usage::new(100, 6), "m").unwrap();
        budget.reserve_model("m").unwrap();
        let over = budget.settle_model(Usage::new(100, 6), "m").unwrap_err();
        assert_eq!(
            (over.limit.clone(), over.used),
            (LimitKind::OutputTokens, 12)
        );
        assert_eq!(
            budget.reserve_model("m").unwrap_err().limit,
            LimitKind::OutputTokens
        );
        assert_eq!(budget.count().model_requests, 2);
    }
}
