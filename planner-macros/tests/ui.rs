//! trybuild UI tests: `tests/ui/pass` must build and run, `tests/ui/fail` must fail with the
//! message in the `.stderr` beside each (`TRYBUILD=overwrite` rewrites them).

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.pass("../tests/ui/pass/*.rs");
    t.compile_fail("../tests/ui/fail/*.rs");
}
