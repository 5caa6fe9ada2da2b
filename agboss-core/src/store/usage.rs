//! [`UsageKey`]: which counter of which tenant, in which time window, a [`UsageStore`] keeps
//! (the counters behind the tenant windows of `engine::TenantUsageLimits`).
//!
//! [`UsageStore`]: super::UsageStore
use std::time::Duration;

/// One counter of one tenant in one time window: `tool_calls` of `acme` in the hour that
/// started at `window_start_ms`, say. Windows are fixed and aligned on the epoch
/// ([`UsageKey::at`]): every app instance computes the same window for the same instant.
///
/// ```
/// use std::time::Duration;
/// use agboss_core::store::UsageKey;
///
/// let hour = Duration::from_secs(3600);
/// let key = UsageKey::at("acme", "tool_calls", hour, 7_250_000);
/// assert_eq!(key.window_start_ms, 7_200_000); // the hour that started at 2:00
/// assert_eq!(key, UsageKey::at("acme", "tool_calls", hour, 10_799_999));
/// assert_ne!(key, UsageKey::at("acme", "tool_calls", hour, 10_800_000)); // the next hour
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub struct UsageKey {
    /// The tenant (`""` for runs without tenant).
    pub tenant: String,
    /// What is counted (`model_requests`, `tool_calls`, `tool_calls:<tool>`, `input_tokens`,
    /// `output_tokens`, `cost_micros`).
    pub counter: String,
    /// The window's length, in ms (at least 1).
    pub window_ms: i64,
    /// When the window started, ms since the epoch (a multiple of `window_ms`).
    pub window_start_ms: i64,
}

impl UsageKey {
    /// The key of `tenant`'s `counter` in the window of length `window` that holds `now_ms`
    /// (a window under 1 ms is 1 ms long).
    pub fn at(
        tenant: impl Into<String>,
        counter: impl Into<String>,
        window: Duration,
        now_ms: i64,
    ) -> Self {
        let window_ms = i64::try_from(window.as_millis()).unwrap_or(i64::MAX).max(1);
        Self {
            tenant: tenant.into(),
            counter: counter.into(),
            window_ms,
            window_start_ms: now_ms - now_ms.rem_euclid(window_ms),
        }
    }
}
