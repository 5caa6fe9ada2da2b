//! Compile errors of `#[derive(Dto)]`: one UI test per rule (`tests/ui/dto/<rule>.rs` and its
//! `.stderr`), plus DTOs that must compile cleanly (`tests/ui/dto/pass/`). Regenerate the
//! expected output with `TRYBUILD=overwrite`.
#[test]
fn dto_compile_errors() {
    let t = trybuild::TestCases::new();
    t.pass("tests/ui/dto/pass/*.rs");
    t.compile_fail("tests/ui/dto/*.rs");
}
