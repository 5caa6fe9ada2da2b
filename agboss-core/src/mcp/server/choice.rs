//! Which path a served tool runs: [`McpServePath`], the required choice between the direct
//! chains and one agent's path, and what [`McpServe`] shows of it ([`McpServe::describe`],
//! [`McpServe::warnings`]).
use std::fmt;
use std::sync::Arc;

use super::tasks::ApprovalTasks;
use super::{McpServe, McpServerError};
use crate::callback::SharedToolCallback;
use crate::cascade::{BoundTool, BuildWarning, render_served};

/// The path served: the app's direct chains, or one agent's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ServedPath {
    /// Every tool of the app on its application → tool chain.
    Direct,
    /// The tools of the agent of this name, on its application → [workflow →] agent → tool
    /// path.
    Agent(String),
}

impl fmt::Display for ServedPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Direct => f.write_str("direct chains (application → tool)"),
            Self::Agent(name) => write!(f, "path of agent `{name}`"),
        }
    }
}

/// What the app hands the server for one path: its callbacks and bound tools, and the
/// warnings of serving it.
pub(crate) struct ServedSet {
    pub(crate) callbacks: Vec<SharedToolCallback>,
    pub(crate) bound: Vec<BoundTool>,
    pub(crate) warnings: Vec<BuildWarning>,
    /// The tickets of calls that wait for approval (`None`: the app has no store).
    pub(crate) approvals: Option<Arc<dyn ApprovalTasks>>,
}

/// How the app resolves a path (`None`: no such agent).
pub(crate) type Resolve = dyn Fn(&ServedPath) -> Option<ServedSet> + Send + Sync;

/// The first step of serving an app over MCP ([`App::serve_mcp`](crate::App::serve_mcp)): which
/// chain every served tool runs is an explicit choice, the agent's path (its interceptors,
/// its listeners) or the app's direct chains; there is no default. The choice gives the
/// [`McpServe`] to configure.
///
/// A tool whose agent path has interceptors the served path lacks (an emergency stop attached
/// to the agent, with the direct chains served) is reported as a
/// [`BuildWarning::ServedPathLacksInterceptors`] when the server is built (logged, and in
/// [`McpServe::warnings`]); [`McpServe::describe`] shows each served tool's chain.
///
/// ```
/// # use agboss_core::{tool, App, ToolError, ToolHandler};
/// # use agboss_core::dto::Dto;
/// # #[derive(Dto, Debug, Clone, PartialEq)]
/// # pub struct EchoDto { #[text(prompt = "Text")] pub text: String }
/// # #[tool(name = "echo-tool", description = "Echoes", input = EchoDto, output = EchoDto)]
/// # pub struct EchoTool;
/// # impl ToolHandler<EchoDto, EchoDto> for EchoTool {
/// #     async fn run(&self, input: EchoDto) -> Result<EchoDto, ToolError> { Ok(input) }
/// # }
/// let app = App::builder().tool::<EchoTool>().build().unwrap();
/// let serve = app.serve_mcp().direct_chains().tenant("acme");
/// let described = serve.describe().unwrap();
/// assert!(described.contains("`: serves the direct chains (application → tool)\n  tool `echo-tool`"));
/// assert!(serve.warnings().unwrap().is_empty());
/// ```
#[must_use = "choose the path: `.agent(name)` or `.direct_chains()`"]
pub struct McpServePath {
    app_name: &'static str,
    resolve: Arc<Resolve>,
}

impl fmt::Debug for McpServePath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpServePath")
            .field("app", &self.app_name)
            .finish_non_exhaustive()
    }
}

impl McpServePath {
    pub(crate) fn new(
        app_name: &'static str,
        resolve: impl Fn(&ServedPath) -> Option<ServedSet> + Send + Sync + 'static,
    ) -> Self {
        Self {
            app_name,
            resolve: Arc::new(resolve),
        }
    }

    /// Serves the tools of agent `name` on its path (application → [workflow →] agent →
    /// tool), decorated with the app's and the agent's listeners: an MCP client's call passes
    /// every guard the agent's calls pass. An unknown name is
    /// [`McpServerError::UnknownAgent`] when the server is built.
    pub fn agent(self, name: impl Into<String>) -> McpServe {
        McpServe::new(self.app_name, self.resolve, ServedPath::Agent(name.into()))
    }

    /// Serves every tool of the app on its direct chain (application → tool), decorated with
    /// the app's listeners: what `app.tool::<T>().invoke(..)` runs. Interceptors attached to
    /// an agent (or a workflow) do not run.
    pub fn direct_chains(self) -> McpServe {
        McpServe::new(self.app_name, self.resolve, ServedPath::Direct)
    }
}

impl McpServe {
    pub(crate) fn served_set(&self) -> Result<ServedSet, McpServerError> {
        (self.resolve)(&self.served).ok_or_else(|| McpServerError::UnknownAgent {
            name: match &self.served {
                ServedPath::Agent(name) => name.clone(),
                ServedPath::Direct => String::new(),
            },
        })
    }

    /// The served path as text: which path, and each served tool's chain in order (as
    /// [`App::describe`](crate::App::describe) shows it), then the warnings.
    pub fn describe(&self) -> Result<String, McpServerError> {
        let set = self.served_set()?;
        Ok(render_served(
            &self.implementation.name,
            &self.served.to_string(),
            &set.bound,
            &set.warnings,
        ))
    }

    /// What serving this path warns about: each served tool with interceptors on an agent
    /// path that the served path lacks ([`BuildWarning::ServedPathLacksInterceptors`]). Also
    /// logged when the server is built.
    pub fn warnings(&self) -> Result<Vec<BuildWarning>, McpServerError> {
        Ok(self.served_set()?.warnings)
    }
}
