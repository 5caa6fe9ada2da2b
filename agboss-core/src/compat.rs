//! Paths of 0.1 that moved, kept for one release as deprecated re-exports: code written
//! against them compiles with a warning that names the new place (see CHANGELOG.md).
//!
//! `agent` shares its name with the `#[agent]` macro, and `use agboss_core::agent;` imports
//! both: a deprecated *module* would warn every user of the macro. So that module is not
//! deprecated itself; its types, constants and functions are, one by one (a trait cannot be
//! aliased: `Agent` and `Router` are plain re-exports). rustc does not report a deprecated
//! module named in the middle of a path, so `listener` is done the same way.

/// One deprecated alias per moved type: `Name = new::path, "note";` (a lifetime parameter as
/// `Name<'a> = new::Path<'a>`).
macro_rules! moved {
    ($($name:ident $(<$lt:lifetime>)? = $path:path, $to:literal;)*) => {$(
        #[deprecated(since = "0.2.0", note = $to)]
        #[doc = concat!("Moved to `", $to, "`.")]
        pub type $name $(<$lt>)? = $path;
    )*};
}

/// Before 0.2: agents' traits and the run API. Agents' traits are now in
/// [`contract::agent`](crate::contract::agent), runs and events in [`engine`](crate::engine);
/// both at the crate root and in the prelude.
pub mod agent {
    use crate::{callback, contract, engine};

    pub use crate::contract::agent::{Agent, Router};

    moved! {
        AgentMeta = contract::agent::AgentMeta, "moved to agboss_core::contract::agent::AgentMeta";
        RouterMeta = contract::agent::RouterMeta, "moved to agboss_core::contract::agent::RouterMeta";
        ToolErrorPolicy = contract::agent::ToolErrorPolicy, "moved to agboss_core::contract::agent::ToolErrorPolicy";
        CallbackWrapper = callback::CallbackWrapper, "moved to agboss_core::callback::CallbackWrapper";
        CallDecision = engine::CallDecision, "moved to agboss_core::CallDecision";
        RouteReason = engine::RouteReason, "moved to agboss_core::engine::RouteReason";
        RunEvent = engine::RunEvent, "moved to agboss_core::RunEvent";
        StepKind = engine::StepKind, "moved to agboss_core::engine::StepKind";
        StepOutcome = engine::StepOutcome, "moved to agboss_core::engine::StepOutcome";
        CancelToken = engine::CancelToken, "moved to agboss_core::engine::CancelToken";
        RunContext = engine::RunContext, "moved to agboss_core::RunContext";
        RunError = engine::RunError, "moved to agboss_core::RunError";
        RunOutput = engine::RunOutput, "moved to agboss_core::RunOutput";
        RunStream = engine::RunStream, "moved to agboss_core::engine::RunStream";
        Target = engine::Target, "moved to agboss_core::Target";
    }

    /// Moved to `agboss_core::engine::DEFAULT_MAX_TURNS`.
    #[deprecated(
        since = "0.2.0",
        note = "moved to agboss_core::engine::DEFAULT_MAX_TURNS"
    )]
    pub const DEFAULT_MAX_TURNS: u32 = engine::DEFAULT_MAX_TURNS;
    /// Moved to `agboss_core::engine::DEFAULT_MAX_PARALLEL_TOOL_CALLS`.
    #[deprecated(
        since = "0.2.0",
        note = "moved to agboss_core::engine::DEFAULT_MAX_PARALLEL_TOOL_CALLS"
    )]
    pub const DEFAULT_MAX_PARALLEL_TOOL_CALLS: usize = engine::DEFAULT_MAX_PARALLEL_TOOL_CALLS;

    /// Moved to `agboss_core::engine::parse_route`.
    #[deprecated(since = "0.2.0", note = "moved to agboss_core::engine::parse_route")]
    pub fn parse_route(answer: &str, routes: &[&str]) -> Option<usize> {
        engine::parse_route(answer, routes)
    }
}

/// Before 0.2: the listener API, now [`callback::listener`](crate::callback::listener) (and
/// the crate root).
pub mod listener {
    use crate::callback;

    pub use crate::callback::listener::ToolCallListener;

    /// Moved to `agboss_core::callback::listener::ToolCallInfo`.
    #[deprecated(
        since = "0.2.0",
        note = "moved to agboss_core::callback::listener::ToolCallInfo"
    )]
    pub type ToolCallInfo<'a> = callback::listener::ToolCallInfo<'a>;
    /// Moved to `agboss_core::callback::listener::ListenedToolCallback`.
    #[deprecated(
        since = "0.2.0",
        note = "moved to agboss_core::callback::listener::ListenedToolCallback"
    )]
    pub type ListenedToolCallback<L> = callback::listener::ListenedToolCallback<L>;
    /// Moved to `agboss_core::callback::listener::ToolCallListeners`.
    #[deprecated(
        since = "0.2.0",
        note = "moved to agboss_core::callback::listener::ToolCallListeners"
    )]
    pub type ToolCallListeners = callback::listener::ToolCallListeners;
    /// Moved to `agboss_core::callback::ToolCallListenerSet`.
    #[deprecated(
        since = "0.2.0",
        note = "moved to agboss_core::callback::ToolCallListenerSet"
    )]
    pub type ToolCallListenerSet = callback::ToolCallListenerSet;
}

/// Before 0.2: items re-exported at the crate root that now live only in their module (the
/// root keeps the items an app names most; the rest is in [`prelude`](crate::prelude) or its
/// module). Each is a deprecated alias naming the new path; traits cannot be aliased and are
/// listed in CHANGELOG.md.
pub mod moved {
    use crate::{app, callback, cascade, contract, di, engine, pipeline};
    moved! {
        DynToolHandle<'a> = app::DynToolHandle<'a>, "moved to agboss_core::app::DynToolHandle";
        ToolCallInfo<'a> = callback::listener::ToolCallInfo<'a>, "moved to agboss_core::callback::listener::ToolCallInfo (and the prelude)";
        ToolCallListeners = callback::listener::ToolCallListeners, "moved to agboss_core::callback::listener::ToolCallListeners";
        SharedToolCallback = callback::SharedToolCallback, "moved to agboss_core::callback::SharedToolCallback";
        ToolInvocation<'a> = callback::ToolInvocation<'a>, "moved to agboss_core::callback::ToolInvocation";
        BoundTool = cascade::BoundTool, "moved to agboss_core::cascade::BoundTool";
        BuildWarning = cascade::BuildWarning, "moved to agboss_core::cascade::BuildWarning";
        ResolvedAgent = cascade::ResolvedAgent, "moved to agboss_core::cascade::ResolvedAgent";
        ResolvedRouter = cascade::ResolvedRouter, "moved to agboss_core::cascade::ResolvedRouter";
        ResolvedWorkflow = cascade::ResolvedWorkflow, "moved to agboss_core::cascade::ResolvedWorkflow";
        Chain = cascade::Chain, "moved to agboss_core::cascade::Chain";
        ToolErrorPolicy = contract::agent::ToolErrorPolicy, "moved to agboss_core::contract::agent::ToolErrorPolicy";
        Approver = contract::channel::Approver, "moved to agboss_core::contract::channel::Approver (and the prelude)";
        Boundary = contract::guardrail::Boundary, "moved to agboss_core::contract::guardrail::Boundary";
        GuardrailContext<'a> = contract::guardrail::GuardrailContext<'a>, "moved to agboss_core::contract::guardrail::GuardrailContext (and the prelude)";
        GuardrailVerdict = contract::guardrail::GuardrailVerdict, "moved to agboss_core::contract::guardrail::GuardrailVerdict (and the prelude)";
        OutputStreaming = contract::guardrail::OutputStreaming, "moved to agboss_core::contract::guardrail::OutputStreaming";
        TextScope = contract::guardrail::TextScope, "moved to agboss_core::contract::guardrail::TextScope";
        PiiChain = pipeline::pii::PiiChain, "moved to agboss_core::pipeline::pii::PiiChain";
        PiiPolicyMeta = contract::pii_policy::PiiPolicyMeta, "moved to agboss_core::contract::pii_policy::PiiPolicyMeta";
        ScopeKind = contract::scope::ScopeKind, "moved to agboss_core::contract::scope::ScopeKind";
        ScopeRef = contract::scope::ScopeRef, "moved to agboss_core::contract::scope::ScopeRef";
        ToolMeta = contract::tool::ToolMeta, "moved to agboss_core::contract::tool::ToolMeta";
        CallId = di::CallId, "moved to agboss_core::di::CallId";
        Flow = engine::workflow::Flow, "moved to agboss_core::engine::workflow::Flow";
        Recovery = engine::workflow::Recovery, "moved to agboss_core::engine::workflow::Recovery";
        RunStream = engine::RunStream, "moved to agboss_core::engine::RunStream";
    }
}

/// Before 0.2: items of the crate root that moved to their module (the root keeps the names an
/// application writes; see CHANGELOG.md).
pub mod root {
    use crate::{contract, di, pipeline};

    moved! {
        CallFailure = contract::outcome::CallFailure, "use agboss_core::contract::outcome::CallFailure";
        FailureKind = contract::outcome::FailureKind, "use agboss_core::contract::outcome::FailureKind";
        Rendered = contract::outcome::Rendered, "use agboss_core::contract::outcome::Rendered";
        BuildError = di::BuildError, "use agboss_core::error::BuildError";
        ToolBlockedError = contract::outcome::ToolBlockedError, "use agboss_core::error::ToolBlockedError";
        GuardrailBlockKind = pipeline::guard::GuardrailBlockKind, "use agboss_core::error::GuardrailBlockKind";
        GuardrailBlockedError = pipeline::guard::GuardrailBlockedError, "use agboss_core::error::GuardrailBlockedError";
        BlockKind = contract::interceptor::ToolCallDecision, "use agboss_core::ToolCallDecision: a block's kind is the decision that stopped the call (`Block { reason }` or `ReplyToModel { message }`)";
    }
}
