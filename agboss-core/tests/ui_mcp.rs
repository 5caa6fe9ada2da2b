//! The compile-time rules of `#[mcp_tool]` (feature `mcp`): the `.stderr` files are the exact
//! messages users see.
#[test]
fn mcp_tool_rules() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/mcp/*.rs");
}
