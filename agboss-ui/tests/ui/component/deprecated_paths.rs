// Paths of 0.1 that moved still resolve, with a deprecation that names the new place (denied
// here so that the note shows in the expected output).
#![deny(deprecated)]
#![allow(dead_code)]

use agboss_core::agent::RunEvent;
use agboss_core::callback::ToolResult;
use agboss_core::listener::{ToolCallListener, ToolCallListeners};
// The `#[agent]` macro and the old `agent` module share the name: importing it warns of nothing.
use agboss_core::agent;

// The old names are the new types.
fn same_types(event: RunEvent, outcome: ToolResult) -> (agboss_core::RunEvent, agboss_core::CallOutcome) {
    (event, outcome)
}

fn listener<L: ToolCallListener>(_: L, _: ToolCallListeners) {}

// Root re-exports of 0.1 that now live in their module: a deprecated alias names the new path.
fn moved_from_the_root(
    chain: &agboss_core::Chain,
    warning: agboss_core::BuildWarning,
) -> (&agboss_core::cascade::Chain, agboss_core::cascade::BuildWarning) {
    (chain, warning)
}

#[agent(name = "quiet-agent", description = "Imports the macro")]
pub struct QuietAgent;

fn main() {}
