//! The errors of dependency injection: [`DiError`] (a dependency that could not be provided for
//! one invocation) and [`BuildError`] (what building an app finds: raised by the service graph
//! here, by the registry and by the cascade, the layers above that build an app on it).
/// A dependency that could not be provided.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DiError {
    /// The call was made without a tenant, but a component needs `TenantContext`.
    #[error("no TenantContext for this invocation: pass a tenant (e.g. `.tenant(\"acme\")`)")]
    NoTenant,
    /// The service is not in the app.
    #[error("service `{0}` is not provided")]
    MissingService(&'static str),
    /// The constructor failed.
    #[error("{0}")]
    Failed(String),
}

/// An error found when an app is built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// Two components of one kind share a name.
    #[error(
        "duplicate {kind} name `{name}`: registered by `{first}` and `{second}`; names must be unique"
    )]
    DuplicateName {
        /// tool, tool-interceptor...
        kind: &'static str,
        /// The shared name.
        name: std::borrow::Cow<'static, str>,
        /// First type.
        first: &'static str,
        /// Second type.
        second: &'static str,
    },
    /// A dependency that nothing provides.
    #[error("`{component}` depends on `{dependency}`, which nothing provides: {hint}")]
    MissingProvider {
        /// The component that needs it.
        component: &'static str,
        /// The type it needs.
        dependency: &'static str,
        /// How to fix it.
        hint: &'static str,
    },
    /// Services that depend on each other.
    #[error("dependency cycle between services: {0}")]
    DependencyCycle(String),
    /// A service asked for a per-invocation context.
    #[error(
        "service `{service}` depends on `{context}`, a per-invocation context; services are app-wide singletons, so take the context in the tool or interceptor that calls the service"
    )]
    ContextInService {
        /// The service.
        service: &'static str,
        /// The context type.
        context: &'static str,
    },
    /// A service's constructor failed.
    #[error("cannot construct service `{service}`: {message}")]
    ServiceConstruction {
        /// The service.
        service: &'static str,
        /// What went wrong.
        message: String,
    },
    /// A tool is registered twice in one app, or another structural problem.
    #[error("{0}")]
    Invalid(String),
    /// An agent hands off (`handoffs = [..]`) to an agent the app does not hold.
    #[error(
        "agent `{agent}` hands off to `{target}`, which is not in the app: add it (`.agent::<..>()`, a workflow or a router)"
    )]
    UnknownHandoff {
        /// The agent that hands off.
        agent: &'static str,
        /// The missing target.
        target: &'static str,
    },
    /// An agent lists (`agent_tools = [..]`) an agent the app does not hold.
    #[error(
        "agent `{agent}` asks `{target}` as a tool, which is not in the app: add it (`.agent::<..>()`, a workflow or a router)"
    )]
    UnknownAgentTool {
        /// The agent that lists it.
        agent: &'static str,
        /// The missing agent.
        target: &'static str,
    },
    /// An MCP server the app uses is not connected, lacks a tool an `#[mcp_tool]` names, or
    /// has a tool whose schema does not fit its declaration.
    #[error("{}MCP server `{server}`: {problem}", tool.as_ref().map(|t| format!("tool `{t}`: ")).unwrap_or_default())]
    Mcp {
        /// The server's name.
        server: &'static str,
        /// The tool concerned, if one is.
        tool: Option<std::borrow::Cow<'static, str>>,
        /// What is wrong and how to fix it.
        problem: String,
    },
}
