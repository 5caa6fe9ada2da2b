//! The kill-9 loop: N runs (`AGBOSS_KILL_LOOP_N`, 100 by default) of a real child process, each
//! killed with SIGKILL at a random point of its run (before its refund, during it, after it, or
//! after the run ended), each then ended by another process that resumes it (every other run: a
//! standby's `take_over_runs`, once the lease expired). For every run: it
//! ends (completed, or failed with a typed error; never left running), the refund ran at most
//! once, and exactly once when the run completed. A refund that started and has no recorded end
//! is never run again blindly: the resumed run stops as in doubt, and the resumer settles it from
//! the refund's own record (the counter file) before it resumes again.
//!
//! The kill points come from a seed printed at the start (`AGBOSS_KILL_LOOP_SEED` replays the
//! same delays; where in the run each lands depends on the machine's timing, so a failure message
//! also names the run and its delay); they range over the time a whole run took in a calibration
//! run, and a quarter beyond it. The whole loop has a time limit (60 s + 2 s a run).
use std::os::unix::process::ExitStatusExt as _;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[path = "kill/support.rs"]
mod support;

use support::{CHILD, pg_url, refunds, scratch};

/// The lease of the loop's processes: a resumer waits for it after each kill.
const LEASE_MS: &str = "150";
/// The longest one resumer may take to end its run.
const RESUME_LIMIT: Duration = Duration::from_secs(20);

/// splitmix64: the loop's kill points, reproducible from the seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

fn env_u64(name: &str) -> Option<u64> {
    std::env::var(name).ok().map(|v| {
        v.trim()
            .parse()
            .unwrap_or_else(|_| panic!("{name} is not a number: {v}"))
    })
}

fn child(mode: &str, store: &str, schema: &str, counter: &str, run_id: &str) -> Command {
    let mut cmd = Command::new(CHILD);
    cmd.args([mode, store, schema, counter, run_id])
        .env("JOURNAL_CHILD_LEASE_MS", LEASE_MS)
        .stdin(Stdio::null())
        .stderr(Stdio::null());
    cmd
}

/// Runs the resumer of `run_id` to its end (within [`RESUME_LIMIT`]) and returns its output.
fn resume(store: &str, schema: &str, counter: &str, run_id: &str, replay: &str) -> String {
    // Every other run is ended by a standby's takeover.
    let mode = if run_id.ends_with(['1', '3', '5', '7', '9']) {
        "loop-standby"
    } else {
        "loop-resume"
    };
    let mut resumer = child(mode, store, schema, counter, run_id)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the resumer");
    let started = Instant::now();
    while resumer.try_wait().unwrap().is_none() {
        if started.elapsed() > RESUME_LIMIT {
            resumer.kill().ok();
            panic!("{replay}: the resumer did not end the run within {RESUME_LIMIT:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let out = resumer.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{replay}: the resumer failed: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// What the loop saw, counted by kind.
#[derive(Default, Debug)]
struct Tally {
    exited_before_kill: usize,
    never_stored: usize,
    finished_before_kill: usize,
    resumed: usize,
    taken_over: usize,
    in_doubt_done: usize,
    in_doubt_not_done: usize,
}

fn kill_loop(label: &str, store: &str, schema: &str) {
    let n = env_u64("AGBOSS_KILL_LOOP_N").unwrap_or(100);
    let seed = env_u64("AGBOSS_KILL_LOOP_SEED").unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos() as u64
    });
    let dir = scratch(&format!("loop-{label}"));
    let loop_limit = Duration::from_secs(60 + 2 * n);
    let began = Instant::now();

    // Calibration: whole runs, unkilled, give the range of the kill points (the second one,
    // once the store's schema exists).
    let mut whole_run = Duration::ZERO;
    for round in 0..2 {
        let counter = dir.join(format!("refunds-calibration-{round}.txt"));
        let run_id = format!("run-calibration-{round}");
        let started = Instant::now();
        let status = child(
            "loop-run",
            store,
            schema,
            counter.to_str().unwrap(),
            &run_id,
        )
        .stdout(Stdio::null())
        .status()
        .unwrap();
        whole_run = started.elapsed();
        assert!(status.success(), "the calibration run failed: {status:?}");
        assert_eq!(refunds(&counter), 1);
    }
    let range_ms = (whole_run.as_millis() as u64 * 5 / 4).max(50) + 10;
    eprintln!(
        "kill loop on {label}: N = {n}, seed = {seed} (AGBOSS_KILL_LOOP_SEED={seed} replays it), \
         kill points in 0..{range_ms} ms (a whole run took {whole_run:?})"
    );

    let mut rng = Rng(seed);
    let mut tally = Tally::default();
    for i in 0..n {
        assert!(
            began.elapsed() < loop_limit,
            "seed {seed}: the loop exceeded {loop_limit:?} after {i} runs: {tally:?}"
        );
        let kill_at = Duration::from_millis(rng.next() % range_ms);
        let run_id = format!("run-{i}");
        let replay = format!("seed {seed}, run {i}, killed at {kill_at:?} after start");
        let counter = dir.join(format!("refunds-{i}.txt"));
        let counter_path = counter.as_path();
        let counter = counter.to_str().unwrap();

        let mut running = child("loop-run", store, schema, counter, &run_id)
            .stdout(Stdio::null())
            .spawn()
            .expect("start the child");
        std::thread::sleep(kill_at);
        running.kill().ok();
        let status = running.wait().unwrap();
        assert!(
            status.success() || status.signal() == Some(9),
            "{replay}: the child neither ended well nor was killed: {status:?}"
        );
        if status.success() {
            tally.exited_before_kill += 1;
        }

        let stdout = resume(store, schema, counter, &run_id, &replay);
        let lines: Vec<&str> = stdout.lines().collect();
        let count = refunds(counter_path);
        assert!(
            count <= 1,
            "{replay}: the refund ran {count} times: {stdout}"
        );
        if lines == ["NORUN"] {
            // Killed before its run was stored: nothing of it ran.
            tally.never_stored += 1;
            assert_eq!(count, 0, "{replay}: a refund without a stored run");
            continue;
        }
        let status = lines
            .iter()
            .find_map(|l| l.strip_prefix("STATUS "))
            .unwrap_or_else(|| panic!("{replay}: no status: {stdout}"));
        assert!(
            !lines.iter().any(|l| l.starts_with("ERROR")),
            "{replay}: the resumed run failed: {stdout}"
        );
        assert_eq!(
            status, "completed",
            "{replay}: the run did not end: {stdout}"
        );
        assert_eq!(count, 1, "{replay}: a completed run refunded {count} times");
        if lines.contains(&"FINISHED") {
            tally.finished_before_kill += 1;
        } else {
            assert!(lines.contains(&"ANSWER Refund done."), "{replay}: {stdout}");
            tally.resumed += 1;
        }
        if lines.contains(&"TAKEN OVER") {
            tally.taken_over += 1;
        }
        if lines.contains(&"INDOUBT done") {
            tally.in_doubt_done += 1;
        }
        if lines.contains(&"INDOUBT not-done") {
            tally.in_doubt_not_done += 1;
        }
    }
    eprintln!(
        "kill loop on {label}: {n} runs in {:?}, seed {seed}: {tally:?}",
        began.elapsed()
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn every_run_killed_at_a_random_point_ends_on_sqlite_and_its_refund_runs_at_most_once() {
    let dir = scratch("loop-sqlite-db");
    let db = dir.join("agboss.db");
    kill_loop("sqlite", &format!("sqlite:{}", db.display()), "-");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn every_run_killed_at_a_random_point_ends_on_postgres_and_its_refund_runs_at_most_once() {
    let Some(url) = pg_url() else {
        return;
    };
    let schema = format!("kill_loop_{}", std::process::id());
    kill_loop("postgres", &url, &schema);
}
