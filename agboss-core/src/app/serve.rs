//! The app's side of serving it over MCP: the callbacks and bound tools of the path chosen
//! ([`McpServePath`](crate::mcp::server::McpServePath)), with the warnings of serving it.
use super::App;
use crate::cascade::served_path_warnings;
use crate::mcp::server::{ServedPath, ServedSet};

/// The tools of `path` (`None`: no such agent).
pub(super) fn served_set(app: &App, path: &ServedPath) -> Option<ServedSet> {
    let (callbacks, bound, agent) = match path {
        ServedPath::Direct => (app.callbacks(), app.bound_tools().cloned().collect(), None),
        ServedPath::Agent(name) => {
            let agent = app.agent_by_name(name)?;
            (app.agent_callbacks(agent), agent.tools.clone(), Some(&**agent))
        }
    };
    let label = path.to_string();
    let warnings = served_path_warnings(&label, &bound, agent, app.agents());
    Some(ServedSet {
        callbacks,
        bound,
        warnings,
    })
}
