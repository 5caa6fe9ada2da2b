//! Usage limits, the data: [`UsageLimits`] (what a run may spend: model requests, input and
//! output tokens, tool calls in all and per tool, cost), [`TenantUsageLimits`] (the same per
//! tenant over a time window, kept in the app's store), [`UsageLimitsMeta`] (what
//! `usage_limits(..)` declares on a scope of the cascade) and [`UsageLimitExceeded`], the typed
//! error of a refused call. The engine reserves every call in them (`engine/budget.rs`,
//! `engine/tenant_usage.rs`); re-exported from [`crate::engine`].
//!
//! A run's limits are the strictest of the application's
//! ([`AppBuilder::usage_limits`](crate::AppBuilder::usage_limits)), those declared on its
//! target's path (`usage_limits(..)` on the application, workflow and agent) and the run's
//! ([`RunContext::usage_limits`](crate::engine::RunContext::usage_limits)): each bound is the
//! smallest one set (strictest wins: nothing inner can loosen what an outer scope allows).
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
use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

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
    /// [`PriceTable`](crate::engine::PriceTable) (a model it has no price for is refused).
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
    /// [`PriceTable`](crate::engine::PriceTable).
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
    /// These bounds for each tenant over a time `window`, counted across its runs (and every
    /// app instance over the same store), for
    /// [`AppBuilder::tenant_usage_limits`](crate::AppBuilder::tenant_usage_limits).
    ///
    /// ```
    /// use std::time::Duration;
    /// use agboss_core::engine::UsageLimits;
    ///
    /// let hourly = UsageLimits::new().tool_calls(100).per_tenant(Duration::from_secs(3600));
    /// assert_eq!(hourly.limits.max_tool_calls, Some(100));
    /// assert_eq!(hourly.window, Duration::from_secs(3600));
    /// ```
    #[must_use]
    pub fn per_tenant(self, window: Duration) -> TenantUsageLimits {
        TenantUsageLimits {
            limits: self,
            window,
            token_reservation: DEFAULT_TOKEN_RESERVATION,
        }
    }
}

/// What a model call reserves of each token (and cost) bound of a tenant window before it
/// starts, unless [`TenantUsageLimits::token_reservation`] says otherwise.
pub const DEFAULT_TOKEN_RESERVATION: u64 = 1;

/// Usage limits of each tenant over a time window ([`UsageLimits::per_tenant`]): every run of
/// a tenant counts into the tenant's window, kept in the app's store
/// ([`UsageStore`](crate::store::UsageStore)), so the bound holds across runs and across every
/// app instance over the same store. Windows are fixed and aligned on the epoch (an hour window
/// runs from one full hour to the next).
///
/// * Model requests and tool calls (in all and per tool) are reserved in the store before the
///   call, by one atomic conditional add: a call that would pass a bound never starts.
/// * Tokens and cost are known after the call: a model call reserves
///   [`token_reservation`](Self::token_reservation) of each such bound first (refused when that
///   would pass the bound), then settles with what it used: the unused part is released, the
///   excess added (a call whose usage passes the bound fails its run after it).
/// * A store error while reserving fails the call closed (the run fails with
///   [`RunError::Store`](crate::engine::RunError::Store); the call does not run).
///
/// ```
/// use std::time::Duration;
/// use agboss_core::engine::UsageLimits;
///
/// let daily = UsageLimits::new()
///     .output_tokens(200_000)
///     .per_tenant(Duration::from_secs(24 * 3600))
///     .token_reservation(2_000); // what one answer is expected to take
/// assert_eq!(daily.token_reservation, 2_000);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct TenantUsageLimits {
    /// The bounds, per tenant and window.
    pub limits: UsageLimits,
    /// The window's length.
    pub window: Duration,
    /// What a model call reserves of each token and cost bound before it starts (default
    /// [`DEFAULT_TOKEN_RESERVATION`]): the larger, the less concurrent calls can pass a bound
    /// together before their usage is known.
    pub token_reservation: u64,
}

impl TenantUsageLimits {
    /// Sets what a model call reserves of each token and cost bound before it starts.
    #[must_use]
    pub fn token_reservation(mut self, tokens: u64) -> Self {
        self.token_reservation = tokens;
        self
    }
}

/// The bounds set, e.g. `model requests 20, tool calls 10, calls of `refund-tool` 1`
/// (`unbounded` when none is).
impl fmt::Display for UsageLimits {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = Vec::new();
        for (label, max) in [
            ("model requests", self.max_model_requests),
            ("input tokens", self.max_input_tokens),
            ("output tokens", self.max_output_tokens),
            ("tool calls", self.max_tool_calls),
            ("cost (micro-dollars)", self.max_cost_micros),
        ] {
            if let Some(max) = max {
                parts.push(format!("{label} {max}"));
            }
        }
        for (tool, max) in &self.max_tool_calls_per_tool {
            parts.push(format!("calls of `{tool}` {max}"));
        }
        if parts.is_empty() {
            f.write_str("unbounded")
        } else {
            f.write_str(&parts.join(", "))
        }
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
/// ([`RunError::UsageLimit`](crate::engine::RunError::UsageLimit)) and emits
/// [`RunEvent::UsageLimitExceeded`](crate::engine::RunEvent::UsageLimitExceeded).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("usage limit exceeded: {limit} would reach {used}, the limit is {max}{}{}",
        if *.outer { " (the outer run's)" } else { "" },
        match .window { Some(w) => format!(" (the tenant's, per {w:?})"), None => String::new() })]
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
    /// The window of the tenant limits whose bound it is ([`TenantUsageLimits`]); `None` for
    /// the run's limits.
    pub window: Option<Duration>,
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

/// Usage limits as `usage_limits(..)` declares them on `#[application]`, `#[workflow]` or
/// `#[agent]` (constant data; [`UsageLimits::from`] makes the limits of it).
///
/// ```
/// use agboss_core::contract::usage_limits::UsageLimitsMeta;
/// use agboss_core::engine::UsageLimits;
///
/// const DECLARED: UsageLimitsMeta = UsageLimitsMeta {
///     model_requests: Some(20),
///     tool_calls_per_tool: &[("refund-order-tool", 1)],
///     ..UsageLimitsMeta::NONE
/// };
/// let limits = UsageLimits::from(&DECLARED);
/// assert_eq!(limits, UsageLimits::new().model_requests(20).tool_calls_of("refund-order-tool", 1));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UsageLimitsMeta {
    /// `model_requests = n`.
    pub model_requests: Option<u64>,
    /// `input_tokens = n`.
    pub input_tokens: Option<u64>,
    /// `output_tokens = n`.
    pub output_tokens: Option<u64>,
    /// `tool_calls = n`.
    pub tool_calls: Option<u64>,
    /// `tool_calls_per_tool(SomeTool = n, ..)`: by tool name.
    pub tool_calls_per_tool: &'static [(&'static str, u64)],
    /// `cost_micros = n`.
    pub cost_micros: Option<u64>,
}

impl UsageLimitsMeta {
    /// No bound.
    pub const NONE: Self = Self {
        model_requests: None,
        input_tokens: None,
        output_tokens: None,
        tool_calls: None,
        tool_calls_per_tool: &[],
        cost_micros: None,
    };
}

impl From<&UsageLimitsMeta> for UsageLimits {
    fn from(meta: &UsageLimitsMeta) -> Self {
        Self {
            max_model_requests: meta.model_requests,
            max_input_tokens: meta.input_tokens,
            max_output_tokens: meta.output_tokens,
            max_tool_calls: meta.tool_calls,
            max_tool_calls_per_tool: meta
                .tool_calls_per_tool
                .iter()
                .map(|(tool, max)| ((*tool).to_string(), *max))
                .collect(),
            max_cost_micros: meta.cost_micros,
        }
    }
}
