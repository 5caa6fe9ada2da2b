//! Every compile-time rule of `#[pii_policy]` and of `pii_policies = [...]` has a UI test: the
//! `.stderr` files are the exact messages users see.
#[test]
fn pii_policy_rules() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/pii/*.rs");
}
