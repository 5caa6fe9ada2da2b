//! An interceptor's registration data ([`InterceptorMeta`]), apart from the hooks and the call
//! contexts: a tool's meta names the interceptors attached at it, and the contexts name the
//! tool's meta, so the data sits below both.
use std::any::TypeId;
use std::fmt;
use std::time::Duration;

use super::built::Built;
use crate::di::{DepMeta, DiError, Services};

/// The time limit of an interceptor's hooks when neither the interceptor
/// (`#[tool_interceptor(timeout_ms = ..)]`) nor the app
/// ([`AppBuilder::interceptor_timeout`](crate::AppBuilder::interceptor_timeout)) sets one.
pub const DEFAULT_HOOK_TIMEOUT: Duration = Duration::from_secs(10);

/// Registration data of a `#[tool_interceptor]`.
pub struct InterceptorMeta {
    /// Unique kebab-case name ending in `-tool-interceptor`.
    pub name: &'static str,
    /// What it is responsible for.
    pub description: &'static str,
    /// The struct's type name.
    pub type_name: &'static str,
    /// The struct's `TypeId`.
    pub type_id: fn() -> TypeId,
    /// Its dependencies.
    pub deps: &'static [DepMeta],
    /// Time limit of each of its hooks, in milliseconds (`None`: the app's
    /// [`interceptor_timeout`](crate::AppBuilder::interceptor_timeout), 10 s by default). A hook
    /// that runs past it fails the call closed ([`ToolCallErrorKind::InterceptorTimeout`](crate::contract::outcome::ToolCallErrorKind::InterceptorTimeout)).
    pub timeout_ms: Option<u64>,
    #[doc(hidden)]
    pub build: fn(&Services) -> Result<Built, DiError>,
}

impl InterceptorMeta {
    /// True for the same interceptor type.
    pub fn same(&self, other: &InterceptorMeta) -> bool {
        (self.type_id)() == (other.type_id)()
    }
}

impl fmt::Debug for InterceptorMeta {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name)
    }
}
