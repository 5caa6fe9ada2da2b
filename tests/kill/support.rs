//! What the kill tests (`tests/kill.rs`, `tests/kill_loop.rs`) share: the child binary, a
//! scratch directory, the PostgreSQL server of the tests, and the counter file's count.
use std::path::{Path, PathBuf};

/// The child process of the kill tests (`src/bin/journal-child.rs`).
pub const CHILD: &str = env!("CARGO_BIN_EXE_journal-child");

/// A fresh scratch directory named after `name`.
pub fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "agboss-kill-{name}-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The PostgreSQL server of the tests (`bash scripts/test.sh` starts one); a missing one fails
/// the test in CI and skips it elsewhere.
pub fn pg_url() -> Option<String> {
    match std::env::var("AGBOSS_TEST_POSTGRES_URL") {
        Ok(url) if !url.trim().is_empty() => Some(url),
        _ if std::env::var_os("CI").is_some() => {
            panic!(
                "AGBOSS_TEST_POSTGRES_URL is not set: CI runs the PostgreSQL tests (bash scripts/test.sh)"
            )
        }
        _ => {
            eprintln!("skipped: AGBOSS_TEST_POSTGRES_URL not set (run bash scripts/test.sh)");
            None
        }
    }
}

/// The lines of the counter file the child's tools append to (0 when it does not exist).
pub fn refunds(counter: &Path) -> usize {
    std::fs::read_to_string(counter)
        .map(|s| s.lines().count())
        .unwrap_or(0)
}
