//! The demo (`examples/support_desk.rs`) run both ways: in-process, and with `--restate`
//! through the pinned Restate server (`scripts/restate.sh`, started by `bash scripts/test.sh`).
//! The two printed conversations are the same once the generated ids (`run_…`, `ticket_…`,
//! `thread_…`: random per run) and the SQLite file's path (per process) are normalised; the
//! refund ran once in each; and the Restate run really went through the server: each of its runs
//! is a completed invocation of the thread's virtual object, keyed by its run id.
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::{Command, Output};

#[path = "restate/support.rs"]
#[allow(dead_code)]
mod support;

/// The demo's binary: `cargo test` builds the examples with the tests (next to `deps/`); a run
/// of this test alone (`--test support_desk_restate`) builds it first.
fn demo() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let profile = exe.parent().and_then(|deps| deps.parent()).unwrap();
    let bin = profile.join("examples").join("support_desk");
    if !bin.exists() {
        let status = Command::new(env!("CARGO"))
            .args(["build", "--example", "support_desk"])
            .env("CARGO_TARGET_DIR", profile.parent().unwrap())
            .status()
            .expect("cargo build --example support_desk");
        assert!(status.success(), "cargo build --example support_desk");
    }
    bin
}

fn run_demo(args: &[&str], env: &[(&str, &str)]) -> String {
    let mut cmd = Command::new(demo());
    cmd.args(args)
        .env_remove("AGBOSS_OPENAI_API_KEY")
        .env_remove("AGBOSS_DB")
        .env_remove("AGBOSS_RESTATE");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let Output {
        status,
        stdout,
        stderr,
    } = cmd.output().expect("run the demo");
    let (stdout, stderr) = (
        String::from_utf8(stdout).unwrap(),
        String::from_utf8_lossy(&stderr),
    );
    assert!(
        status.success(),
        "the demo {args:?} failed:\n{stdout}\n{stderr}"
    );
    stdout
}

/// The output with what legitimately differs between two runs replaced: generated ids and the
/// temporary SQLite file's path.
fn normalise(out: &str) -> String {
    let mut lines = Vec::new();
    for line in out.lines() {
        if line.starts_with("== store: SQLite at ") {
            lines.push("== store: SQLite at PATH".to_string());
            continue;
        }
        let mut norm = String::with_capacity(line.len());
        let mut rest = line;
        while let Some((at, prefix)) = ["run_", "ticket_", "thread_"]
            .iter()
            .filter_map(|p| rest.find(p).map(|at| (at, *p)))
            .min()
        {
            let id_at = at + prefix.len();
            let hex = rest[id_at..]
                .bytes()
                .take_while(u8::is_ascii_hexdigit)
                .count();
            norm.push_str(&rest[..id_at]);
            if hex == 32 {
                norm.push_str("ID");
            } else {
                norm.push_str(&rest[id_at..id_at + hex]);
            }
            rest = &rest[id_at + hex..];
        }
        norm.push_str(rest);
        lines.push(norm);
    }
    lines.join("\n")
}

/// How many times the refund tool ran, by the audit interceptor's after-hook: one
/// `tool_result … refund-order-tool` line per execution.
fn refunds(out: &str) -> usize {
    out.lines()
        .filter(|l| l.trim_start().starts_with("tool_result ") && l.ends_with(" refund-order-tool"))
        .count()
}

/// The ids after `prefix` (`run run_… →` lines: each run the demo started).
fn ids_after<'a>(out: &'a str, prefix: &str) -> BTreeSet<&'a str> {
    out.lines()
        .filter_map(|l| l.strip_prefix(prefix))
        .filter_map(|rest| rest.split_whitespace().next())
        .collect()
}

/// The idempotency keys of the completed `run` invocations of `key`'s object.
async fn completed_runs(admin: &str, key: &str) -> BTreeSet<String> {
    let sql = format!(
        "SELECT idempotency_key, status FROM sys_invocation \
         WHERE target_service_name = 'AgbossThread' AND target_handler_name = 'run' \
         AND target_service_key = '{key}'"
    );
    support::query(admin, &sql)
        .await
        .iter()
        .map(|row| {
            assert_eq!(row["status"], "completed", "{row}");
            row["idempotency_key"].as_str().unwrap().to_string()
        })
        .collect()
}

#[tokio::test]
async fn the_demo_prints_the_same_conversation_in_process_and_through_restate() {
    let Some((ingress, admin)) = support::restate() else {
        return;
    };
    let local = run_demo(&[], &[]);
    let restate = run_demo(
        &["--restate"],
        &[
            ("AGBOSS_RESTATE_INGRESS", &ingress),
            ("AGBOSS_RESTATE_ADMIN", &admin),
        ],
    );
    assert_eq!(
        normalise(&local),
        normalise(&restate),
        "the two outputs differ:\n--- in process\n{local}\n--- through Restate\n{restate}"
    );
    assert_eq!(refunds(&local), 1, "{local}");
    assert_eq!(refunds(&restate), 1, "{restate}");

    // Every run of the Restate demo was an invocation of its thread's object, started with its
    // run id as idempotency key, and completed (the paused one too, after the approval).
    let runs: BTreeSet<String> = ids_after(&restate, "run ")
        .into_iter()
        .map(str::to_string)
        .collect();
    let turns = restate
        .lines()
        .filter(|l| l.starts_with("== customer"))
        .count();
    assert!(turns >= 3, "{restate}");
    assert_eq!(runs.len(), turns, "one run per turn: {restate}");
    let threads = ids_after(&restate, "== thread ");
    let [thread] = threads.into_iter().collect::<Vec<_>>()[..] else {
        panic!("one thread: {restate}");
    };
    let key = agboss_restate::object_key("acme", thread);
    assert_eq!(completed_runs(&admin, &key).await, runs);
}
