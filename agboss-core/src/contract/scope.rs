//! Scopes of the cascade: an application, a workflow, an agent or a tool, each a place where
//! interceptors and PII policies attach.
use std::fmt;

/// The kind of a scope in the cascade.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ScopeKind {
    /// `#[application]` (or the app builder).
    Application,
    /// `#[workflow]`.
    Workflow,
    /// `#[agent]`.
    Agent,
    /// `#[router]` (a scope of guardrails only: routers attach no tool interceptors).
    Router,
    /// `#[tool]` / `#[mcp_tool]`.
    Tool,
}

impl fmt::Display for ScopeKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Application => "application",
            Self::Workflow => "workflow",
            Self::Agent => "agent",
            Self::Router => "router",
            Self::Tool => "tool",
        })
    }
}

/// A scope: its kind and name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ScopeRef {
    /// Application, workflow, agent or tool.
    pub kind: ScopeKind,
    /// The component's name.
    pub name: &'static str,
}

impl fmt::Display for ScopeRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} `{}`", self.kind, self.name)
    }
}
