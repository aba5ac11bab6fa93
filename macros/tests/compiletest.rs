//! Compile-fail tests: every misuse of `#[derive(Resource)]` and the message it gets.
//! Regenerate the `.stderr` files with `TRYBUILD=overwrite` and review each one.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
}
