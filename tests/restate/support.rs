//! What the Restate test (`tests/restate.rs`) needs around the real server: its URLs, the
//! worker processes (`src/bin/restate-worker.rs`), a TCP load balancer in front of them (the
//! deployment Restate invokes), and the counter file's count.
use std::io::{BufRead as _, BufReader};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// The worker process.
pub const WORKER: &str = env!("CARGO_BIN_EXE_restate-worker");

/// The Restate server of the tests (`bash scripts/test.sh` starts one): its ingress and admin
/// URLs. A missing one fails the test in CI and skips it elsewhere.
pub fn restate() -> Option<(String, String)> {
    match (
        std::env::var("AGBOSS_TEST_RESTATE_INGRESS"),
        std::env::var("AGBOSS_TEST_RESTATE_ADMIN"),
    ) {
        (Ok(ingress), Ok(admin)) if !ingress.is_empty() && !admin.is_empty() => {
            Some((ingress, admin))
        }
        _ if std::env::var_os("CI").is_some() => panic!(
            "AGBOSS_TEST_RESTATE_INGRESS/ADMIN are not set: CI runs the Restate tests (bash scripts/test.sh)"
        ),
        _ => {
            eprintln!("skipped: AGBOSS_TEST_RESTATE_INGRESS not set (run bash scripts/test.sh)");
            None
        }
    }
}

/// The rows of `sql` on the server's admin API (`POST /query`, its SQL over `sys_invocation`
/// and the other system tables).
#[allow(dead_code)] // not used by tests/restate.rs
pub async fn query(admin: &str, sql: &str) -> Vec<serde_json::Value> {
    agboss_core::__private::ensure_tls_provider();
    let answer: serde_json::Value = reqwest::Client::new()
        .post(format!("{admin}/query"))
        .header("accept", "application/json")
        .json(&serde_json::json!({ "query": sql }))
        .send()
        .await
        .expect("the admin API's query")
        .json()
        .await
        .expect("a JSON answer");
    answer["rows"].as_array().expect("rows").clone()
}

/// The PostgreSQL server of the tests (`bash scripts/test.sh` starts one); a missing one fails
/// the test in CI and skips that backend elsewhere.
pub fn pg_url() -> Option<String> {
    match std::env::var("AGBOSS_TEST_POSTGRES_URL") {
        Ok(url) if !url.trim().is_empty() => Some(url),
        _ if std::env::var_os("CI").is_some() => panic!(
            "AGBOSS_TEST_POSTGRES_URL is not set: CI runs the PostgreSQL tests (bash scripts/test.sh)"
        ),
        _ => {
            eprintln!(
                "PostgreSQL skipped: AGBOSS_TEST_POSTGRES_URL not set (run bash scripts/test.sh)"
            );
            None
        }
    }
}

/// A fresh scratch directory, and a nonce that keeps this run's ids apart from an earlier
/// run's on the same server.
pub fn scratch(name: &str) -> (PathBuf, String) {
    let nonce = format!(
        "{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis()
    );
    let dir = std::env::temp_dir().join(format!("agboss-restate-{name}-{nonce}"));
    std::fs::create_dir_all(&dir).unwrap();
    (dir, nonce)
}

/// How many times the tools did `kind` (`refund`, `payout`) for `order` (the counter file's
/// lines `<kind> <order>`).
pub fn done(counter: &Path, kind: &str, order: &str) -> usize {
    let line = format!("{kind} {order}");
    std::fs::read_to_string(counter)
        .map(|s| s.lines().filter(|l| *l == line).count())
        .unwrap_or(0)
}

/// A worker process serving the app as a Restate deployment, and the lines it prints.
pub struct Worker {
    pub child: Child,
    pub port: u16,
    lines: mpsc::Receiver<String>,
}

impl Worker {
    /// Starts a worker over `store` (`sqlite:<path>` or a PostgreSQL URL with its `schema`) in
    /// `mode` (`plain`, `crash`, `stall-tool`).
    pub fn start(store: &str, schema: &str, counter: &Path, mode: &str) -> Self {
        let mut child = Command::new(WORKER)
            .args(["serve", store, path(counter), mode])
            .env("RESTATE_WORKER_TOOL_MS", "150")
            .env("RESTATE_WORKER_PG_SCHEMA", schema)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start a worker");
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut worker = Self {
            child,
            port: 0,
            lines,
        };
        let listen = worker.expect_prefix("LISTEN ");
        worker.port = listen.parse().expect("a port");
        worker
    }

    /// Waits (a minute at most) for a line starting with `prefix`, and returns the rest of it.
    pub fn expect_prefix(&mut self, prefix: &str) -> String {
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            let line = self
                .lines
                .recv_timeout(left)
                .unwrap_or_else(|e| panic!("the worker printed no `{prefix}` line: {e}"));
            if let Some(rest) = line.strip_prefix(prefix) {
                return rest.to_string();
            }
        }
    }

    /// Kills the worker with SIGKILL and checks it died of it.
    pub fn kill9(mut self) {
        use std::os::unix::process::ExitStatusExt as _;
        self.child.kill().expect("SIGKILL the worker");
        let status = self.child.wait().unwrap();
        assert_eq!(status.signal(), Some(9), "killed by SIGKILL: {status:?}");
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn path(p: &Path) -> &str {
    p.to_str().expect("a UTF-8 path")
}

/// A TCP load balancer in front of workers, what Restate's deployment URL points at: each new
/// connection goes to the first worker in `backends` that accepts it. A killed worker's
/// connections break, and Restate's next connection reaches the next worker.
pub fn balancer(backends: Vec<u16>) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for inbound in listener.incoming() {
            let Ok(inbound) = inbound else { continue };
            let outbound = backends.iter().find_map(|p| {
                TcpStream::connect_timeout(&([127, 0, 0, 1], *p).into(), Duration::from_millis(500))
                    .ok()
            });
            let Some(outbound) = outbound else { continue };
            pipe(&inbound, &outbound);
            pipe(&outbound, &inbound);
        }
    });
    port
}

/// Copies `from` to `to` on a thread of its own until either side closes.
fn pipe(from: &TcpStream, to: &TcpStream) {
    let (mut from, mut to) = (from.try_clone().unwrap(), to.try_clone().unwrap());
    std::thread::spawn(move || {
        let _ = std::io::copy(&mut from, &mut to);
        let _ = to.shutdown(std::net::Shutdown::Both);
        let _ = from.shutdown(std::net::Shutdown::Both);
    });
}
