//! Golden files shared by the golden tests: `tests/golden/NAME` holds the
//! expected output; `UPDATE_GOLDEN=1` rewrites it after a deliberate change.

use std::path::Path;

/// Compares `got` with `tests/golden/NAME` (rewritten with `UPDATE_GOLDEN=1`).
pub fn golden(name: &str, got: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(name);
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&path, got).unwrap();
    }
    let want = std::fs::read_to_string(&path)
        .unwrap_or_else(|_| panic!("{} missing: run with UPDATE_GOLDEN=1", path.display()));
    assert_eq!(
        got, want,
        "{name} differs from the golden file (UPDATE_GOLDEN=1 after a deliberate change)"
    );
}
