//! The checks of [`UsageStore`]: reservations within a bound, atomic under concurrency, per
//! tenant, counter and window; releases and adds; pruning old windows.
use std::time::Duration;

use agboss_core::store::{StoreError, UsageKey, UsageStore};

use super::why;

const HOUR: Duration = Duration::from_secs(3600);
/// 2026-01-01 00:00 UTC, on the hour.
const T0: i64 = 1_767_225_600_000;

fn key(tenant: &str, counter: &str, at: i64) -> UsageKey {
    UsageKey::at(tenant, counter, HOUR, at)
}

fn ok<T>(what: &str, result: Result<T, StoreError>) -> T {
    result.unwrap_or_else(|e| panic!("{what}: {}", why(&e)))
}

async fn reserve<S: UsageStore>(store: &S, key: &UsageKey, amount: u64, max: u64) -> Option<u64> {
    ok("reserve_usage", store.reserve_usage(key, amount, max).await)
}

async fn used<S: UsageStore>(store: &S, key: &UsageKey) -> u64 {
    ok("usage", store.usage(key).await)
}

/// A reservation adds while the total stays within the bound; one that would pass it adds
/// nothing; an amount over the bound is refused even on a fresh counter.
pub async fn usage_reserved_within_the_bound<S: UsageStore>(store: &S) {
    let k = key("acme", "tool_calls", T0);
    assert_eq!(used(store, &k).await, 0, "a fresh counter is 0");
    let fresh = key("acme", "output_tokens", T0);
    assert_eq!(
        reserve(store, &fresh, 11, 10).await,
        None,
        "over the bound at once"
    );
    assert_eq!(
        used(store, &fresh).await,
        0,
        "a refused reservation adds nothing"
    );
    assert_eq!(reserve(store, &k, 7, 10).await, Some(7));
    assert_eq!(
        reserve(store, &k, 3, 10).await,
        Some(10),
        "up to the bound itself"
    );
    assert_eq!(reserve(store, &k, 1, 10).await, None, "one past the bound");
    assert_eq!(
        used(store, &k).await,
        10,
        "a refused reservation adds nothing"
    );
    assert_eq!(
        reserve(store, &k, 1, 11).await,
        Some(11),
        "a higher bound admits it"
    );
}

/// 100 concurrent reservations of 1 against a bound of 10: exactly 10 are granted, with the
/// totals 1 to 10 each once.
pub async fn concurrent_reservations_never_pass_the_bound<S: UsageStore>(store: &S) {
    let k = key("acme", "tool_calls", T0);
    let grants = futures::future::join_all((0..100).map(|_| store.reserve_usage(&k, 1, 10))).await;
    let mut totals: Vec<u64> = grants
        .into_iter()
        .filter_map(|r| ok("concurrent reserve_usage", r))
        .collect();
    totals.sort_unstable();
    assert_eq!(totals, (1..=10).collect::<Vec<_>>(), "exactly 10 grants");
    assert_eq!(used(store, &k).await, 10);
}

/// Tenants, counters, window lengths and windows count apart.
pub async fn usage_is_per_tenant_counter_and_window<S: UsageStore>(store: &S) {
    let k = key("acme", "tool_calls", T0);
    assert_eq!(reserve(store, &k, 5, 5).await, Some(5));
    assert_eq!(reserve(store, &k, 1, 5).await, None);
    for other in [
        key("globex", "tool_calls", T0),
        key("acme", "model_requests", T0),
        key("acme", "tool_calls", T0 + HOUR.as_millis() as i64),
        UsageKey::at("acme", "tool_calls", Duration::from_secs(60), T0),
    ] {
        assert_eq!(
            reserve(store, &other, 5, 5).await,
            Some(5),
            "{other:?} is apart"
        );
    }
    let same_hour = key("acme", "tool_calls", T0 + 3_599_999);
    assert_eq!(same_hour, k, "the same hour is the same window");
    assert_eq!(used(store, &same_hour).await, 5);
}

/// A release takes back the unused part of a reservation, never below 0; an add passes the
/// bound (usage beyond the reservation is counted, whatever it is).
pub async fn usage_released_and_added<S: UsageStore>(store: &S) {
    let k = key("acme", "output_tokens", T0);
    assert_eq!(reserve(store, &k, 100, 150).await, Some(100));
    ok("release_usage", store.release_usage(&k, 60).await);
    assert_eq!(used(store, &k).await, 40);
    assert_eq!(
        reserve(store, &k, 100, 150).await,
        Some(140),
        "released room is free"
    );
    assert_eq!(
        ok("add_usage", store.add_usage(&k, 30).await),
        170,
        "adds pass the bound"
    );
    assert_eq!(reserve(store, &k, 1, 150).await, None);
    ok("release_usage", store.release_usage(&k, 1_000).await);
    assert_eq!(used(store, &k).await, 0, "never below 0");
    let never = key("acme", "cost_micros", T0);
    ok(
        "release of a fresh counter",
        store.release_usage(&never, 5).await,
    );
    assert_eq!(used(store, &never).await, 0);
    assert_eq!(
        ok("add_usage", store.add_usage(&never, 9).await),
        9,
        "an add creates it"
    );
}

/// Pruning deletes the windows that started before the instant, of every tenant, and no other.
pub async fn prune_deletes_old_windows_only<S: UsageStore>(store: &S) {
    let hour = HOUR.as_millis() as i64;
    let (old, old_b, now) = (
        key("acme", "tool_calls", T0),
        key("globex", "tool_calls", T0),
        key("acme", "tool_calls", T0 + hour),
    );
    for k in [&old, &old_b, &now] {
        assert_eq!(reserve(store, k, 2, 10).await, Some(2));
    }
    assert_eq!(ok("prune_usage", store.prune_usage(T0 + hour).await), 2);
    assert_eq!(used(store, &old).await, 0);
    assert_eq!(used(store, &old_b).await, 0);
    assert_eq!(used(store, &now).await, 2, "the current window stays");
}
