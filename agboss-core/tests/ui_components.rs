//! Every compile-time rule of the component macros (`#[tool]`, `#[tool_interceptor]`,
//! `#[injectable]`) has a UI test: the `.stderr` files are the exact messages users see.
#[test]
fn component_rules() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/component/*.rs");
}
