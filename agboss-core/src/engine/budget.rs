//! The run's budget ([`RunBudget`]): the limits of one run and what it reserved, in atomic
//! counters; every model and tool call of the run is reserved here before it starts and settled
//! after, and in the budget of every outer run (a run nested in a tool call of another).
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use super::prices::PriceTable;
use crate::contract::usage_limits::{LimitKind, UsageCount, UsageLimitExceeded, UsageLimits};
use crate::model::Usage;

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
            window: None,
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
                window: None,
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
                    window: None,
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
                    window: None,
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

    /// Takes back a reservation of `tool` made by [`RunBudget::reserve_tool`], here and in every
    /// outer run (a call a tenant window refused after this budget admitted it never starts).
    pub(crate) fn release_tool(&self, tool: &str) {
        self.tool_calls.fetch_sub(1, Ordering::AcqRel);
        self.release_of(tool);
        if let Some(parent) = &self.parent {
            parent.release_tool(tool);
        }
    }

    /// Takes back a reservation made by [`RunBudget::reserve_model`], here and in every outer
    /// run.
    pub(crate) fn release_model(&self) {
        self.model_requests.fetch_sub(1, Ordering::AcqRel);
        if let Some(parent) = &self.parent {
            parent.release_model();
        }
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
                window: None,
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
        inner.release_tool("a-tool");
        assert_eq!((inner.count().tool_calls, outer.count().tool_calls), (0, 0));
        assert_eq!(inner.per_tool.lock().unwrap()["a-tool"], 0);
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
