//! The store conformance suite on every backend: memory, SQLite (in memory and on file) and
//! PostgreSQL (needs `AGBOSS_TEST_POSTGRES_URL`; `bash scripts/test.sh` starts a server); the
//! SQL stores with the integrity checks of damaged rows; every backend with the checks of its
//! `SecretStore`.
mod support;

use agboss_core::store::{MemoryStore, SqliteStore};
use agboss_testing::store::{conformance, integrity_conformance, secret_conformance};
use support::{TempDir, pg_fresh, pg_url, sqlite_file};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_store_conforms() {
    conformance(|| async { MemoryStore::new() }).await;
    secret_conformance(|| async { MemoryStore::new() }).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_in_memory_store_conforms() {
    integrity_conformance(|| async { SqliteStore::memory().await.expect("in-memory SQLite") })
        .await;
    secret_conformance(|| async { SqliteStore::memory().await.expect("in-memory SQLite") }).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_file_store_conforms() {
    let dir = TempDir::new();
    integrity_conformance(|| sqlite_file(&dir)).await;
    secret_conformance(|| sqlite_file(&dir)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_store_conforms() {
    let Some(url) = pg_url() else { return };
    integrity_conformance(|| pg_fresh(&url)).await;
    secret_conformance(|| pg_fresh(&url)).await;
}
