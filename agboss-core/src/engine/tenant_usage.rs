//! The tenant windows of an app ([`TenantUsageLimits`]) kept in its store: [`TenantGate`]
//! reserves a call in every window of the run's tenant before it starts (one atomic conditional
//! add per bound, [`UsageStore::reserve_usage`]) and settles a model call's tokens and cost
//! after it. A refusal takes back what it reserved already; a store error refuses the call
//! (fail closed).
use std::sync::Arc;
use std::time::Duration;

use super::prices::PriceTable;
use crate::contract::usage_limits::{LimitKind, TenantUsageLimits, UsageLimitExceeded};
use crate::model::Usage;
use crate::store::{SharedStore, StoreError, UsageKey, UsageStore};

/// Cost is priced in millionths of a micro-dollar.
const PICO_PER_MICRO: u64 = 1_000_000;

/// Why the tenant windows refused a call.
#[derive(Debug)]
pub(crate) enum Refusal {
    /// A bound of a window.
    Limit(UsageLimitExceeded),
    /// The store could not reserve (the call does not run).
    Store(StoreError),
}

/// One reservation to make: which counter, how much, its bound, which bound it is.
#[derive(Debug)]
struct Want {
    key: UsageKey,
    amount: u64,
    max: u64,
    limit: LimitKind,
    window: Duration,
}

/// What a model call reserved of the token and cost bounds: settled after the call
/// ([`TenantGate::settle_model`]), with its usage or, for a call that failed, none.
#[must_use = "a model call's token reservation must be settled"]
#[derive(Debug, Default)]
pub(crate) struct ModelHold {
    held: Vec<Want>,
}

/// The app's tenant windows over its store.
pub(crate) struct TenantGate {
    windows: Vec<TenantUsageLimits>,
    store: SharedStore,
    prices: Arc<PriceTable>,
    /// Now, in ms since the epoch (a test sets its own).
    clock: fn() -> i64,
}

impl TenantGate {
    /// The gate of `windows` over `store` (`None` without windows).
    pub(crate) fn new(
        windows: Vec<TenantUsageLimits>,
        store: SharedStore,
        prices: Arc<PriceTable>,
    ) -> Option<Self> {
        (!windows.is_empty()).then_some(Self {
            windows,
            store,
            prices,
            clock: crate::stamp::now_ms,
        })
    }

    /// Reserves one call of `tool` for `tenant` in every window with a bound on it.
    pub(crate) async fn reserve_tool(&self, tenant: &str, tool: &str) -> Result<(), Refusal> {
        let now = (self.clock)();
        let mut wants = Vec::new();
        for w in &self.windows {
            if let Some(max) = w.limits.max_tool_calls {
                wants.push(want(
                    tenant,
                    "tool_calls",
                    w.window,
                    now,
                    1,
                    max,
                    LimitKind::ToolCalls,
                ));
            }
            if let Some(&max) = w.limits.max_tool_calls_per_tool.get(tool) {
                let counter = format!("tool_calls:{tool}");
                let limit = LimitKind::ToolCallsOf(tool.to_string());
                wants.push(want(tenant, &counter, w.window, now, 1, max, limit));
            }
        }
        self.reserve_all(wants).await.map(drop)
    }

    /// Reserves one request of `model` for `tenant`, and the token reservation of every token
    /// and cost bound (settled after the call).
    pub(crate) async fn reserve_model(
        &self,
        tenant: &str,
        model: &str,
    ) -> Result<ModelHold, Refusal> {
        let now = (self.clock)();
        let (mut requests, mut metered) = (Vec::new(), Vec::new());
        for w in &self.windows {
            let l = &w.limits;
            if let Some(max) = l.max_cost_micros
                && self.prices.get(model).is_none()
            {
                return Err(Refusal::Limit(UsageLimitExceeded {
                    limit: LimitKind::UnpricedModel(model.to_string()),
                    max,
                    used: 0,
                    outer: false,
                    window: Some(w.window),
                }));
            }
            if let Some(max) = l.max_model_requests {
                let kind = LimitKind::ModelRequests;
                requests.push(want(tenant, "model_requests", w.window, now, 1, max, kind));
            }
            for (counter, max, kind) in [
                ("input_tokens", l.max_input_tokens, LimitKind::InputTokens),
                (
                    "output_tokens",
                    l.max_output_tokens,
                    LimitKind::OutputTokens,
                ),
                ("cost_micros", l.max_cost_micros, LimitKind::Cost),
            ] {
                if let Some(max) = max {
                    // At least 1: a bound already reached admits no call.
                    let amount = w.token_reservation.clamp(1, max.max(1));
                    metered.push(want(tenant, counter, w.window, now, amount, max, kind));
                }
            }
        }
        let request_count = requests.len();
        requests.extend(metered);
        let mut held = self.reserve_all(requests).await?;
        // Requests are spent once the call starts: only the metered part is settled.
        held.drain(..request_count);
        Ok(ModelHold { held })
    }

    /// Settles a model call: each bound's reservation is replaced by what the call used (the
    /// unused part released, the excess added). A bound the usage passed refuses the run's next
    /// step.
    pub(crate) async fn settle_model(
        &self,
        hold: ModelHold,
        usage: Usage,
        model: &str,
    ) -> Result<(), Refusal> {
        let cost = self.prices.get(model).map_or(0, |p| {
            p.cost_pico(usage.prompt_tokens, usage.completion_tokens)
                .div_ceil(PICO_PER_MICRO)
        });
        let mut passed = None;
        for w in hold.held {
            let used = match w.limit {
                LimitKind::InputTokens => usage.prompt_tokens,
                LimitKind::OutputTokens => usage.completion_tokens,
                _ => cost,
            };
            let store = &self.store;
            if used < w.amount {
                store
                    .release_usage(&w.key, w.amount - used)
                    .await
                    .map_err(Refusal::Store)?;
            } else if used > w.amount {
                let total = store
                    .add_usage(&w.key, used - w.amount)
                    .await
                    .map_err(Refusal::Store)?;
                if total > w.max && passed.is_none() {
                    passed = Some(exceeded(&w, total));
                }
            }
        }
        passed.map_or(Ok(()), |e| Err(Refusal::Limit(e)))
    }

    /// Reserves every one of `wants` in order; on a refusal or an error, takes back those
    /// reserved already.
    async fn reserve_all(&self, wants: Vec<Want>) -> Result<Vec<Want>, Refusal> {
        let mut held = Vec::with_capacity(wants.len());
        for w in wants {
            let refusal = match self.store.reserve_usage(&w.key, w.amount, w.max).await {
                Ok(Some(_)) => {
                    held.push(w);
                    continue;
                }
                Ok(None) => {
                    // For the report only: the decision was the store's, in one statement.
                    let used = self.store.usage(&w.key).await.unwrap_or(w.max);
                    Refusal::Limit(exceeded(&w, used.saturating_add(w.amount)))
                }
                Err(e) => Refusal::Store(e),
            };
            self.release_all(&held).await;
            return Err(refusal);
        }
        Ok(held)
    }

    /// Takes back reservations of a refused call (an error leaves the window counting more
    /// than was used: the safe side).
    async fn release_all(&self, held: &[Want]) {
        for w in held {
            if let Err(e) = self.store.release_usage(&w.key, w.amount).await {
                tracing::warn!(counter = %w.key.counter, error = %e, "tenant usage not released");
            }
        }
    }
}

fn want(
    tenant: &str,
    counter: &str,
    window: Duration,
    now: i64,
    amount: u64,
    max: u64,
    limit: LimitKind,
) -> Want {
    Want {
        key: UsageKey::at(tenant, counter, window, now),
        amount,
        max,
        limit,
        window,
    }
}

fn exceeded(w: &Want, used: u64) -> UsageLimitExceeded {
    UsageLimitExceeded {
        limit: w.limit.clone(),
        max: w.max,
        used,
        outer: false,
        window: Some(w.window),
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use super::*;
    use crate::contract::usage_limits::UsageLimits;
    use crate::engine::prices::Price;
    use crate::store::MemoryStore;

    /// 2026-01-01 00:00 UTC.
    const T0: i64 = 1_767_225_600_000;
    const MINUTE: Duration = Duration::from_secs(60);

    thread_local! {
        static NOW: Cell<i64> = const { Cell::new(T0) };
    }

    fn clock() -> i64 {
        NOW.with(Cell::get)
    }

    fn gate(windows: Vec<TenantUsageLimits>, store: &SharedStore) -> TenantGate {
        let prices = PriceTable::new().price("m", Price::per_mtok(1_000_000, 2_000_000));
        TenantGate {
            windows,
            store: store.clone(),
            prices: Arc::new(prices),
            clock,
        }
    }

    fn limit(refusal: Refusal) -> UsageLimitExceeded {
        match refusal {
            Refusal::Limit(e) => e,
            Refusal::Store(e) => panic!("store error: {e}"),
        }
    }

    #[tokio::test(flavor = "current_thread")]
    async fn windows_roll_over_and_tenants_count_apart() {
        NOW.with(|n| n.set(T0 + 5_000));
        let store = SharedStore::new(MemoryStore::new());
        let gate = gate(
            vec![UsageLimits::new().tool_calls(2).per_tenant(MINUTE)],
            &store,
        );
        gate.reserve_tool("acme", "t").await.unwrap();
        gate.reserve_tool("acme", "t").await.unwrap();
        let refused = limit(gate.reserve_tool("acme", "t").await.unwrap_err());
        assert_eq!(
            (refused.limit, refused.max, refused.used),
            (LimitKind::ToolCalls, 2, 3)
        );
        assert_eq!(refused.window, Some(MINUTE));
        gate.reserve_tool("globex", "t").await.unwrap();
        // Still the same minute, then the next one.
        NOW.with(|n| n.set(T0 + 59_999));
        assert!(gate.reserve_tool("acme", "t").await.is_err());
        NOW.with(|n| n.set(T0 + 60_000));
        gate.reserve_tool("acme", "t").await.unwrap();
        gate.reserve_tool("acme", "t").await.unwrap();
        assert!(gate.reserve_tool("acme", "t").await.is_err());
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_refused_bound_takes_back_the_others() {
        let store = SharedStore::new(MemoryStore::new());
        let limits = UsageLimits::new().tool_calls(5).tool_calls_of("refund", 1);
        let gate = gate(vec![limits.per_tenant(MINUTE)], &store);
        gate.reserve_tool("acme", "refund").await.unwrap();
        let refused = limit(gate.reserve_tool("acme", "refund").await.unwrap_err());
        assert_eq!(refused.limit, LimitKind::ToolCallsOf("refund".into()));
        let total = UsageKey::at("acme", "tool_calls", MINUTE, clock());
        assert_eq!(
            store.usage(&total).await.unwrap(),
            1,
            "the refused call took its count back"
        );
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_model_call_settles_its_token_reservation() {
        let store = SharedStore::new(MemoryStore::new());
        let window = UsageLimits::new()
            .output_tokens(100)
            .per_tenant(MINUTE)
            .token_reservation(50);
        let gate = gate(vec![window], &store);
        let key = UsageKey::at("acme", "output_tokens", MINUTE, clock());
        let hold = gate.reserve_model("acme", "m").await.unwrap();
        assert_eq!(
            store.usage(&key).await.unwrap(),
            50,
            "reserved before the call"
        );
        gate.settle_model(hold, Usage::new(10, 20), "m")
            .await
            .unwrap();
        assert_eq!(
            store.usage(&key).await.unwrap(),
            20,
            "the unused part released"
        );
        let hold = gate.reserve_model("acme", "m").await.unwrap();
        let over = limit(
            gate.settle_model(hold, Usage::new(10, 90), "m")
                .await
                .unwrap_err(),
        );
        assert_eq!((over.limit, over.used), (LimitKind::OutputTokens, 110));
        let refused = limit(gate.reserve_model("acme", "m").await.unwrap_err());
        assert_eq!(refused.limit, LimitKind::OutputTokens);
        // A failed call used nothing known: its reservation is released.
        let other = gate.reserve_model("globex", "m").await.unwrap();
        gate.settle_model(other, Usage::default(), "m")
            .await
            .unwrap();
        let key = UsageKey::at("globex", "output_tokens", MINUTE, clock());
        assert_eq!(store.usage(&key).await.unwrap(), 0);
    }

    #[tokio::test(flavor = "current_thread")]
    async fn cost_is_settled_in_micro_dollars_and_unpriced_models_are_refused() {
        let store = SharedStore::new(MemoryStore::new());
        let gate = gate(
            vec![UsageLimits::new().cost_micros(10).per_tenant(MINUTE)],
            &store,
        );
        let hold = gate.reserve_model("acme", "m").await.unwrap();
        // 3 input tokens at $1/Mtok and 2 output at $2/Mtok: 7 micro-dollars.
        gate.settle_model(hold, Usage::new(3, 2), "m")
            .await
            .unwrap();
        let key = UsageKey::at("acme", "cost_micros", MINUTE, clock());
        assert_eq!(store.usage(&key).await.unwrap(), 7);
        let refused = limit(gate.reserve_model("acme", "unpriced").await.unwrap_err());
        assert_eq!(refused.limit, LimitKind::UnpricedModel("unpriced".into()));
    }
}
