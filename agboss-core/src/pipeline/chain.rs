//! A resolved chain: the interceptors of one tool on one path, in the order their hooks run,
//! where each came from, and the PII policies of the path. The cascade builds it once per path
//! when the app is built; the pipeline runs calls on it.
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use super::ErasedInterceptor;
use super::pii::PiiChain;
use crate::contract::interceptor::InterceptorMeta;
use crate::contract::scope::ScopeRef;

/// One interceptor of a resolved chain and where it came from.
#[derive(Debug, Clone)]
pub struct ChainEntry {
    /// The interceptor.
    pub interceptor: &'static InterceptorMeta,
    /// The scope that attached it (its outermost place).
    pub origin: ScopeRef,
}

/// An inherited interceptor that a scope excluded.
#[derive(Debug, Clone)]
pub struct Exclusion {
    /// The interceptor.
    pub interceptor: &'static InterceptorMeta,
    /// Where it was attached.
    pub attached_at: ScopeRef,
    /// Where it was excluded.
    pub excluded_at: ScopeRef,
}

/// One interceptor of a chain with the time limit of its hooks.
#[derive(Clone)]
pub(crate) struct Link {
    pub(crate) interceptor: Arc<dyn ErasedInterceptor>,
    pub(crate) timeout: Duration,
}

impl Link {
    /// The interceptor with its hooks' limit: its own `timeout_ms`, else `default`.
    pub(crate) fn new(interceptor: Arc<dyn ErasedInterceptor>, default: Duration) -> Self {
        let timeout = interceptor
            .meta()
            .timeout_ms
            .map_or(default, Duration::from_millis);
        Self {
            interceptor,
            timeout,
        }
    }
}

/// The resolved, ordered interceptor chain of one tool on one path.
pub struct Chain {
    pub(crate) before: Box<[Link]>,
    /// Already in inner-to-outer order.
    pub(crate) after: Box<[Link]>,
    pub(crate) entries: Vec<ChainEntry>,
    pub(crate) exclusions: Vec<Exclusion>,
    pub(crate) path: Arc<[&'static str]>,
    pub(crate) pii: PiiChain,
}

impl fmt::Debug for Chain {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Chain")
            .field("path", &self.path)
            .field("entries", &self.entries)
            .field("exclusions", &self.exclusions)
            .finish()
    }
}

impl Chain {
    /// The interceptors in `before_tool_call` order (outer to inner), with their origin.
    pub fn entries(&self) -> &[ChainEntry] {
        &self.entries
    }
    /// The exclusions applied on this path.
    pub fn exclusions(&self) -> &[Exclusion] {
        &self.exclusions
    }
    /// Names of the interceptors whose `before_tool_call` runs, in order.
    pub fn before_order(&self) -> Vec<&'static str> {
        self.before
            .iter()
            .map(|l| l.interceptor.meta().name)
            .collect()
    }
    /// Names of the interceptors whose `after_tool_call` runs, in order (inner to outer).
    pub fn after_order(&self) -> Vec<&'static str> {
        self.after
            .iter()
            .map(|l| l.interceptor.meta().name)
            .collect()
    }
    /// The scope names of the path (outermost first, without the tool).
    pub fn path(&self) -> &[&'static str] {
        &self.path
    }
    /// The time limit of each interceptor's hooks, in `before_tool_call` order.
    pub fn hook_timeouts(&self) -> Vec<(&'static str, Duration)> {
        self.entries
            .iter()
            .filter_map(|e| {
                self.before
                    .iter()
                    .chain(self.after.iter())
                    .find(|l| l.interceptor.meta().same(e.interceptor))
                    .map(|l| (e.interceptor.name, l.timeout))
            })
            .collect()
    }
    /// The PII policies that apply on this path, outermost first.
    pub fn pii(&self) -> &PiiChain {
        &self.pii
    }
}
