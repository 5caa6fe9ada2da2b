//! The path a tool is served on over MCP, checked against the app's agent paths: what an MCP
//! server's `describe()` renders and the [`BuildWarning`]s of a served path that lacks an agent
//! path's interceptors.
use std::fmt::Write as _;
use std::sync::Arc;

use super::BuildWarning;
use super::bound::{BoundTool, ResolvedAgent};
use super::describe::render_tool;

/// A [`BuildWarning::ServedPathLacksInterceptors`] for every served tool and every agent path
/// (other than the served one, `served_agent`) whose chain for the same tool has interceptors
/// the served chain lacks. `served` names the served path for the message.
pub(crate) fn served_path_warnings<'a>(
    served: &str,
    tools: &[BoundTool],
    served_agent: Option<&ResolvedAgent>,
    agents: impl IntoIterator<Item = &'a Arc<ResolvedAgent>>,
) -> Vec<BuildWarning> {
    let agents: Vec<&Arc<ResolvedAgent>> = agents.into_iter().collect();
    let mut warnings = Vec::new();
    for tool in tools {
        let has = |name: &str| {
            tool.chain
                .entries
                .iter()
                .any(|e| e.interceptor.name == name)
        };
        for &agent in &agents {
            if served_agent.is_some_and(|s| std::ptr::eq(s, Arc::as_ptr(agent))) {
                continue;
            }
            let Some(theirs) = agent.tool(&tool.meta.name) else {
                continue;
            };
            let lacking: Vec<&'static str> = theirs
                .chain
                .entries
                .iter()
                .map(|e| e.interceptor.name)
                .filter(|name| !has(name))
                .collect();
            let known = warnings.iter().any(|w| {
                matches!(w, BuildWarning::ServedPathLacksInterceptors { tool: t, agent: a, interceptors, .. }
                    if *t == tool.meta.name && *a == agent.meta.name && *interceptors == lacking)
            });
            if !lacking.is_empty() && !known {
                warnings.push(BuildWarning::ServedPathLacksInterceptors {
                    tool: tool.meta.name.clone(),
                    served: served.to_string(),
                    agent: agent.meta.name,
                    interceptors: lacking,
                });
            }
        }
    }
    warnings
}

/// The served path as text: its name, each tool's chain as `App::describe` shows it, and the
/// warnings.
pub(crate) fn render_served(
    server: &str,
    served: &str,
    tools: &[BoundTool],
    warnings: &[BuildWarning],
) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "MCP server `{server}`: serves the {served}");
    for tool in tools {
        render_tool(&mut out, tool, 2);
    }
    if !warnings.is_empty() {
        let _ = writeln!(out, "warnings");
        for w in warnings {
            let _ = writeln!(out, "  - {w}");
        }
    }
    out
}
