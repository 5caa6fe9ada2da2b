//! MCP servers as connections (client side).
