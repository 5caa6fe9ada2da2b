//! The kill test: a real child process runs a scripted conversation over SQLite and over
//! PostgreSQL, is killed with SIGKILL after its tool call completed and before its run ended,
//! and a second process resumes the run. A counter kept outside both processes (a file the
//! tool appends to) proves the tool ran exactly once, and the conversation completes.
use std::io::{BufRead as _, BufReader};
use std::os::unix::process::ExitStatusExt as _;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

#[path = "kill/support.rs"]
mod support;

use support::{CHILD, pg_url, refunds, scratch};

/// Starts the child with `args` and waits (a minute at most) for the first line it prints.
fn start(args: &[&str]) -> (Child, Result<String, mpsc::RecvTimeoutError>) {
    let mut child = Command::new(CHILD)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start the child");
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            let _ = tx.send(line);
        }
    });
    let line = rx.recv_timeout(Duration::from_secs(60));
    (child, line)
}

fn kill_and_resume(store: &str, schema: &str, dir: &Path) {
    let counter = dir.join("refunds.txt");
    let counter = counter.to_str().unwrap();
    let (mut child, line) = start(&["crash", store, schema, counter, "run-kill"]);
    assert_eq!(
        line.as_deref(),
        Ok("STALLED"),
        "the child did not reach its stall"
    );
    assert_eq!(
        refunds(Path::new(counter)),
        1,
        "the tool ran before the kill"
    );

    child.kill().expect("SIGKILL the child");
    let status = child.wait().unwrap();
    assert_eq!(status.signal(), Some(9), "killed by SIGKILL: {status:?}");

    let resumed = Command::new(CHILD)
        .args(["resume", store, schema, counter, "run-kill"])
        .output()
        .expect("run the resuming child");
    let stdout = String::from_utf8_lossy(&resumed.stdout);
    assert!(
        resumed.status.success(),
        "resume failed: {stdout}\n{}",
        String::from_utf8_lossy(&resumed.stderr)
    );
    assert!(stdout.contains("ANSWER Refund done."), "{stdout}");
    assert!(stdout.contains("REPLAYED 3"), "{stdout}");
    // The input, the tool call, its observation, the final answer.
    assert!(stdout.contains("MESSAGES 4"), "{stdout}");
    assert_eq!(
        refunds(Path::new(counter)),
        1,
        "the refund ran exactly once"
    );
}

/// Kills a process whose run waits on a pending ticket, then decides it from another process.
fn kill_while_pending_and_decide(store: &str, schema: &str, dir: &Path) {
    let counter = dir.join("payouts.txt");
    let counter = counter.to_str().unwrap();
    let mut child = Command::new(CHILD)
        .args(["approval-wait", store, schema, counter, "run-approval"])
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start the child");
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            let _ = tx.send(line);
        }
    });
    let line = rx
        .recv_timeout(Duration::from_secs(60))
        .expect("the child printed its ticket");
    let ticket = line
        .strip_prefix("PENDING ")
        .expect("a pending ticket")
        .to_string();
    assert_eq!(
        refunds(Path::new(counter)),
        0,
        "nothing runs before a decision"
    );
    child.kill().expect("SIGKILL the child");
    assert_eq!(child.wait().unwrap().signal(), Some(9));

    let decided = Command::new(CHILD)
        .args([
            "approval-decide",
            store,
            schema,
            counter,
            "run-approval",
            &ticket,
        ])
        .output()
        .expect("run the deciding child");
    let stdout = String::from_utf8_lossy(&decided.stdout);
    assert!(
        decided.status.success(),
        "decide failed: {stdout}\n{}",
        String::from_utf8_lossy(&decided.stderr)
    );
    assert!(stdout.contains("ANSWER Payout done."), "{stdout}");
    assert!(stdout.contains("TICKET completed"), "{stdout}");
    assert_eq!(
        refunds(Path::new(counter)),
        1,
        "the payout ran exactly once"
    );
    // A second decision of the same ticket is refused; nothing runs again.
    let again = Command::new(CHILD)
        .args([
            "approval-decide",
            store,
            schema,
            counter,
            "run-approval",
            &ticket,
        ])
        .output()
        .unwrap();
    assert!(!again.status.success());
    assert_eq!(refunds(Path::new(counter)), 1);
}

#[test]
fn a_pending_ticket_survives_a_killed_process_on_sqlite_and_runs_once_when_decided() {
    let dir = scratch("sqlite-approval");
    let db = dir.join("agboss.db");
    kill_while_pending_and_decide(&format!("sqlite:{}", db.display()), "-", &dir);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_pending_ticket_survives_a_killed_process_on_postgres_and_runs_once_when_decided() {
    let Some(url) = pg_url() else {
        return;
    };
    let dir = scratch("postgres-approval");
    let schema = format!("kill_approval_{}", std::process::id());
    kill_while_pending_and_decide(&url, &schema, &dir);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_killed_run_resumes_on_sqlite_and_its_tool_runs_exactly_once() {
    let dir = scratch("sqlite");
    let db = dir.join("agboss.db");
    kill_and_resume(&format!("sqlite:{}", db.display()), "-", &dir);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_killed_run_resumes_on_postgres_and_its_tool_runs_exactly_once() {
    let Some(url) = pg_url() else {
        return;
    };
    let dir = scratch("postgres");
    let schema = format!("kill_{}", std::process::id());
    kill_and_resume(&url, &schema, &dir);
    let _ = std::fs::remove_dir_all(dir);
}
