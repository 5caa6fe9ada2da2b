//! MCP both ways (feature `mcp`), on the official Rust SDK `rmcp`.
//!
//! - [`client`]: MCP servers as connections of an app: `#[mcp_tool]`s and whole servers' tools
//!   run under the same cascade, pipeline, listeners and events as `#[tool]`s.
//! - [`server`]: the app served as an MCP server (`App::serve_mcp`): every inbound `tools/call`
//!   runs the full guarded pipeline.
pub mod client;
pub mod server;
