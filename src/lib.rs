//! Domain code shared by the examples (`examples/`) and the end-to-end tests (`tests/`) of
//! agboss-rs. Each module is a small application written the way a user would write it.
pub mod mcp_desk;
pub mod run_driver;
pub mod support_desk;
pub mod tenant_order;
