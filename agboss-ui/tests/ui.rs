//! Every compile-time rule of the macros has a UI test: the `.stderr` files are the exact
//! messages users see. One trybuild run for all of them (`#[tool]`, `#[tool_interceptor]`,
//! `#[injectable]`, `#[channel]`, the cascade macros, `#[derive(Dto)]`, `#[pii_policy]`,
//! `#[mcp_tool]`), so the dependency tree is compiled once. Regenerate the expected output with
//! `TRYBUILD=overwrite cargo test -p agboss-ui`.
#[test]
fn macro_rules() {
    let t = trybuild::TestCases::new();
    t.pass("tests/ui/dto/pass/*.rs");
    t.compile_fail("tests/ui/component/*.rs");
    t.compile_fail("tests/ui/dto/*.rs");
    t.compile_fail("tests/ui/pii/*.rs");
    t.compile_fail("tests/ui/mcp/*.rs");
}
