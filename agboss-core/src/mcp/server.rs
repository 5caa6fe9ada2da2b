//! The app served as an MCP server.
