//! Paths used by macro-generated code. Not public API.
/// Runtime of `#[derive(Dto)]`.
pub use crate::dto::__private as dto;
pub use inventory;
pub use schemars;
pub use serde;
pub use serde_json;

pub mod fallback;

/// The test harness behind `agboss_testing`: one interceptor or guardrail built outside an app
/// (`harness_build`) and one hook or tool call on it (`harness`).
pub mod harness_build {
    pub use crate::cascade::harness_build::*;
}
/// See [`harness_build`].
pub mod harness {
    pub use crate::pipeline::harness::*;
}
mod probe;
pub use probe::{Dep, NotInjectable, assert_inject, assert_service};

pub use crate::contract::Built;
pub use crate::contract::agent::{
    Agent, AgentMeta, AgentOutput, Router, RouterMeta, ToolErrorPolicy, agent_meta,
};
pub use crate::contract::channel::{ApprovalChannel, Channel, ChannelMeta, channel_meta};
pub use crate::contract::guardrail::{
    Boundary, GuardrailMeta, InputGuardrailComponent, OutputGuardrailComponent, ScopeGuardrails,
};
pub use crate::contract::handler_error::ToolError;
pub use crate::contract::interceptor::{InterceptorMeta, ToolInterceptor};
pub use crate::contract::pii_policy::{PiiPolicy, PiiPolicyMeta, custom_detector};
pub use crate::contract::registry::{Registered, Registration};
pub use crate::contract::tool::{Tool, ToolHandler, ToolMeta};
pub use crate::contract::usage_limits::UsageLimitsMeta;
pub use crate::contract::workflow::{Application, ApplicationMeta, Workflow, WorkflowMeta};
pub use crate::di::{
    DepKind, DepMeta, DiError, Inject, Injectable, InjectableMeta, Resolver, Services, any_context,
};
pub use crate::dto::Dto;
pub use crate::pii::MaskStrategy;
pub use crate::pipeline::ErasedInterceptor;
pub use crate::pipeline::erased_tool;
pub use crate::pipeline::typed::TypedInterceptor;
pub use crate::pipeline::typed::probe::{
    Hooks, NoHooks, Probe, ViaAfter, ViaBefore, ViaNoAfter, ViaNoBefore,
};
pub use crate::pipeline::{
    ErasedChannel, ErasedGuardrail, build_channel, build_input_guardrail, build_output_guardrail,
};
/// The one install of rustls' `ring` provider (for the workspace's crates that build a reqwest
/// client of their own).
#[cfg(any(
    feature = "openai",
    feature = "anthropic",
    feature = "mcp",
    feature = "otel",
    feature = "tls"
))]
pub use crate::tls::ensure_provider as ensure_tls_provider;

/// `#[mcp_tool]` expands to `if_mcp!({ expansion } else { the struct as written })`: the
/// expansion with agboss-core's feature `mcp`, else one error naming the feature
/// (`[mcp-tool.feature]`). An erroneous `#[mcp_tool]`'s fallback impl goes through `with_mcp!`,
/// which drops it without the feature. The macro itself is always exported, so it is in the
/// prelude whatever the features.
#[cfg(feature = "mcp")]
#[doc(hidden)]
#[macro_export]
macro_rules! __agboss_if_mcp {
    ({ $($yes:tt)* } else { $($no:tt)* }) => { $($yes)* };
}
#[cfg(not(feature = "mcp"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __agboss_if_mcp {
    ({ $($yes:tt)* } else { $($no:tt)* }) => {
        ::core::compile_error!(
            "[mcp-tool.feature] `#[mcp_tool]` needs agboss-core's feature `mcp`: \
             `agboss-core = { version = \"0.2\", features = [\"mcp\"] }`"
        );
        $($no)*
    };
}
#[cfg(feature = "mcp")]
#[doc(hidden)]
#[macro_export]
macro_rules! __agboss_with_mcp {
    ({ $($yes:tt)* }) => { $($yes)* };
}
#[cfg(not(feature = "mcp"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __agboss_with_mcp {
    ({ $($yes:tt)* }) => {};
}
pub use crate::__agboss_if_mcp as if_mcp;
pub use crate::__agboss_with_mcp as with_mcp;

/// What `#[mcp_tool]` expands to.
#[cfg(feature = "mcp")]
pub mod mcp {
    pub use crate::dto::ValidationError;
    pub use crate::mcp::client::McpToolMeta;
    pub use crate::mcp::client::{McpArguments, McpRemote, McpResult};
}

/// Entry points of the fuzz targets (`fuzz/`) and their corpus replay.
#[cfg(feature = "openai")]
pub mod fuzz {
    pub use crate::model::openai::decode_openai_chunks;
}

use std::any::Any;
pub use std::sync::Arc;

/// Erases a service constructor for `InjectableMeta::construct`.
pub fn erase_service<S: Send + Sync + 'static>(
    service: Result<S, DiError>,
) -> Result<Arc<dyn Any + Send + Sync>, DiError> {
    service.map(|s| Arc::new(s) as Arc<dyn Any + Send + Sync>)
}

/// Compile-time check that `T: ToolInterceptor` (for `tool_interceptors = [...]`).
pub const fn interceptor_meta<T: ToolInterceptor>() -> &'static InterceptorMeta {
    T::META
}

/// The name of a tool type's meta, in a constant (`usage_limits(tool_calls_per_tool(..))`): a
/// `#[tool]`'s name is always a literal.
pub const fn tool_name(meta: &'static ToolMeta) -> &'static str {
    match meta.name {
        std::borrow::Cow::Borrowed(name) => name,
        std::borrow::Cow::Owned(_) => "",
    }
}
