//! The Restate backend against the real server (`scripts/restate.sh`, started by
//! `bash scripts/test.sh`): worker processes (`src/bin/restate-worker.rs`) serve the app as one
//! deployment behind a TCP load balancer, runs go through the ingress, and workers are killed
//! with SIGKILL. A counter file outside every process (the tools append to it) proves what ran.
//!
//! One test, its scenarios in order: the service `AgbossThread` has one latest deployment on the
//! server, so scenarios of parallel tests would invoke each other's workers.
use std::path::Path;

use agboss_core::App;
use agboss_core::engine::InDoubtResolution;
use agboss_core::model::Message;
use agboss_core::store::{
    PostgresStore, RunStatus, RunStore as _, SharedStore, SqliteStore, ThreadStore as _,
    TicketState, TicketStore as _,
};
use agboss_restate::{RestateClient, RunReply, RunRequest};

#[path = "restate/support.rs"]
mod support;

use support::{Worker, balancer, done, restate, scratch};

struct Env {
    client: RestateClient,
    ingress: String,
    admin: String,
    /// The store every worker shares: `sqlite:<path>` or a PostgreSQL URL.
    store_arg: String,
    schema: String,
    counter: std::path::PathBuf,
    store: SharedStore,
    /// Tenants of this run (apart from an earlier run's on the same server).
    acme: String,
    globex: String,
}

impl Env {
    fn worker(&self, mode: &str) -> Worker {
        Worker::start(&self.store_arg, &self.schema, &self.counter, mode)
    }

    /// Puts a new balancer in front of `workers` and registers it as the deployment.
    async fn deploy(&self, workers: &[&Worker]) {
        let port = balancer(workers.iter().map(|w| w.port).collect());
        self.client
            .register(&format!("http://127.0.0.1:{port}"))
            .await
            .expect("register the deployment");
    }

    async fn run(
        &self,
        tenant: &str,
        thread: &str,
        run_id: &str,
        target: &str,
        input: &str,
    ) -> RunReply {
        self.client
            .run(tenant, thread, &RunRequest::new(run_id, target, input))
            .await
            .expect("the run's invocation")
    }

    /// Starts run `run_id` of `rw-desk-agent` (order `order`, thread `thread`) on a deployment of
    /// a `mode` worker and `standby`, kills the worker with SIGKILL once it stalls after the
    /// refund's work (done once), and returns the run's reply, which the standby gives.
    async fn run_killed_mid_call(
        &self,
        mode: &str,
        standby: &Worker,
        thread: &str,
        run_id: &str,
        order: &str,
    ) -> RunReply {
        let mut doomed = self.worker(mode);
        self.deploy(&[&doomed, standby]).await;
        let client = self.client.clone();
        let tenant = self.acme.clone();
        let thread = thread.to_owned();
        let request = RunRequest::new(run_id, "rw-desk-agent", order);
        let run = tokio::spawn(async move { client.run(&tenant, &thread, &request).await });
        tokio::task::spawn_blocking(move || {
            doomed.expect_prefix("STALLED");
            doomed
        })
        .await
        .unwrap()
        .kill9_checked(&self.counter, order);
        run.await.unwrap().expect("the run's invocation")
    }

    async fn messages(&self, tenant: &str, thread: &str) -> Vec<Message> {
        self.store
            .messages(tenant, thread, None)
            .await
            .expect("the thread's messages")
            .into_iter()
            .map(|m| m.message)
            .collect()
    }
}

fn completed(reply: &RunReply) -> (&str, u64) {
    match reply {
        RunReply::Completed {
            text,
            replayed_steps,
            ..
        } => (text.as_str(), *replayed_steps),
        other => panic!("expected a completed run: {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn restate_backend() {
    let Some((ingress, admin)) = restate() else {
        return;
    };
    let (dir, nonce) = scratch("backend");
    let db = dir.join("store.sqlite");
    let sqlite = SharedStore::new(SqliteStore::open(support::path(&db)).await.unwrap());
    let store_arg = format!("sqlite:{}", support::path(&db));
    scenarios(
        &ingress,
        &admin,
        &dir,
        &nonce,
        sqlite,
        store_arg,
        String::new(),
    )
    .await;
    if let Some(url) = support::pg_url() {
        let schema = format!("restate_{}", std::process::id());
        let pg = PostgresStore::connect_with_schema(&url, &schema)
            .await
            .unwrap();
        let nonce = format!("{nonce}-pg");
        scenarios(
            &ingress,
            &admin,
            &dir,
            &nonce,
            SharedStore::new(pg),
            url,
            schema,
        )
        .await;
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Every scenario, in order, over one store shared by the test and its workers.
async fn scenarios(
    ingress: &str,
    admin: &str,
    dir: &Path,
    nonce: &str,
    store: SharedStore,
    store_arg: String,
    schema: String,
) {
    let env = Env {
        client: RestateClient::new(ingress, admin),
        ingress: ingress.to_string(),
        admin: admin.to_string(),
        counter: dir.join(format!("counter-{nonce}.txt")),
        store_arg,
        schema,
        store,
        acme: format!("acme-{nonce}"),
        globex: format!("globex-{nonce}"),
    };
    env.client
        .wait_ready(std::time::Duration::from_secs(30))
        .await
        .unwrap();
    let standby = env.worker("plain");
    env.deploy(&[&standby]).await;

    conversation(&env).await;
    idempotent_start(&env).await;
    tenants_apart(&env).await;
    serialized(&env).await;
    kill_after_tool(&env, &standby).await;
    kill_in_tool(&env, &standby).await;
    approval_across_restart(&env, &standby).await;
    approval_expires(&env).await;
}

/// Two runs on one thread: the second reads the first's messages.
async fn conversation(env: &Env) {
    let first = env.run(&env.acme, "t1", "c1", "rw-desk-agent", "C-1").await;
    assert_eq!(completed(&first), ("refund done (4 messages seen)", 0));
    let second = env.run(&env.acme, "t1", "c2", "rw-desk-agent", "C-2").await;
    // The system prompt, the first run's four messages, the input, the call, its observation.
    assert_eq!(completed(&second), ("refund done (8 messages seen)", 0));
    assert_eq!(env.messages(&env.acme, "t1").await.len(), 8);
    assert_eq!(done(&env.counter, "refund", "C-1"), 1);
    assert_eq!(done(&env.counter, "refund", "C-2"), 1);
}

/// The same run sent twice at once with its id as idempotency key runs once; both callers get
/// its reply.
async fn idempotent_start(env: &Env) {
    let (a, b) = tokio::join!(
        env.run(&env.acme, "t3", "i1", "rw-desk-agent", "I-1"),
        env.run(&env.acme, "t3", "i1", "rw-desk-agent", "I-1"),
    );
    assert_eq!(a, b);
    assert_eq!(completed(&a).0, "refund done (4 messages seen)");
    assert_eq!(
        done(&env.counter, "refund", "I-1"),
        1,
        "the run started once"
    );
    assert_eq!(env.messages(&env.acme, "t3").await.len(), 4);
}

/// Tenant B's run on a thread id of tenant A's runs on B's own thread: it reads none of A's
/// messages, and A's thread is untouched.
async fn tenants_apart(env: &Env) {
    let reply = env
        .run(&env.globex, "t1", "g1", "rw-desk-agent", "G-1")
        .await;
    assert_eq!(completed(&reply).0, "refund done (4 messages seen)");
    let theirs = env.messages(&env.globex, "t1").await;
    assert_eq!(theirs.len(), 4);
    assert!(
        theirs.iter().all(|m| !format!("{m:?}").contains("C-1")),
        "{theirs:?}"
    );
    assert_eq!(env.messages(&env.acme, "t1").await.len(), 8);
    // A's run reads as not found under B.
    assert!(env.store.run(&env.globex, "c1").await.is_err());
}

/// Two runs started at once on one thread are serialized (the object's single writer): each
/// completes, one after the other (without it the second would fail with ThreadBusy).
async fn serialized(env: &Env) {
    let (a, b) = tokio::join!(
        env.run(&env.acme, "t4", "s1", "rw-desk-agent", "S-1"),
        env.run(&env.acme, "t4", "s2", "rw-desk-agent", "S-2"),
    );
    let mut seen = [completed(&a).0, completed(&b).0];
    seen.sort_unstable();
    assert_eq!(
        seen,
        [
            "refund done (4 messages seen)",
            "refund done (8 messages seen)"
        ]
    );
    assert_eq!(env.messages(&env.acme, "t4").await.len(), 8);
    assert_eq!(done(&env.counter, "refund", "S-1"), 1);
    assert_eq!(done(&env.counter, "refund", "S-2"), 1);
}

/// A worker killed after its tool call completed, mid-run, with a second worker deployed: the
/// run completes there from the journal, and the tool ran once.
async fn kill_after_tool(env: &Env, standby: &Worker) {
    let reply = env
        .run_killed_mid_call("crash", standby, "t5", "k1", "K-1")
        .await;
    // Read back: the model turn, the call's start and its end.
    assert_eq!(completed(&reply), ("refund done (4 messages seen)", 3));
    assert_eq!(
        done(&env.counter, "refund", "K-1"),
        1,
        "the refund ran once"
    );
    let record = env.store.run(&env.acme, "k1").await.unwrap();
    assert_eq!(record.status, RunStatus::Completed);
}

/// A worker killed inside a tool that is not idempotent: the call started and has no recorded
/// end, so the second worker does not run it again (the run stops in doubt); settled as done,
/// the run goes on with a new invocation and the tool still ran once.
async fn kill_in_tool(env: &Env, standby: &Worker) {
    let reply = env
        .run_killed_mid_call("stall-tool", standby, "t6", "d1", "D-1")
        .await;
    let RunReply::InDoubt { call_id, .. } = reply else {
        panic!("expected the run in doubt: {reply:?}");
    };
    assert_eq!(
        done(&env.counter, "refund", "D-1"),
        1,
        "not run blindly again"
    );

    let app = App::builder().store(env.store.clone()).build().unwrap();
    let observation = r#"{"orderId":"D-1"}"#.to_string();
    app.resolve_in_doubt(
        &env.acme,
        "d1",
        &call_id,
        InDoubtResolution::Completed {
            observation,
            is_error: false,
        },
    )
    .await
    .unwrap();
    let again = env
        .client
        .run_keyed(
            &env.acme,
            "t6",
            &RunRequest::new("d1", "rw-desk-agent", "D-1"),
            "d1-resolved",
        )
        .await
        .unwrap();
    assert_eq!(completed(&again).0, "refund done (4 messages seen)");
    assert_eq!(done(&env.counter, "refund", "D-1"), 1);
}

/// A run paused for approval survives its worker's SIGKILL: once it waits on the ticket's
/// awakeable its worker is killed, a manager approves from another process, the awakeable wakes
/// the run on the other worker, which reads back the journal, and the payout runs once.
async fn approval_across_restart(env: &Env, standby: &Worker) {
    let mut doomed = env.worker("plain");
    env.deploy(&[&doomed, standby]).await;
    let client = env.client.clone();
    let tenant = env.acme.clone();
    let run = tokio::spawn(async move {
        client
            .run(
                &tenant,
                "t7",
                &RunRequest::new("p1", "rw-payout-agent", "P-1"),
            )
            .await
    });
    let (doomed, ticket) = tokio::task::spawn_blocking(move || {
        let ticket = doomed.expect_prefix("PENDING ");
        (doomed, ticket)
    })
    .await
    .unwrap();
    assert_eq!(
        done(&env.counter, "payout", "P-1"),
        0,
        "nothing runs before a decision"
    );
    // Once the run is suspended on the ticket's awakeable, its worker dies.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while env
        .client
        .waiting_on(&env.acme, "t7", &ticket)
        .await
        .unwrap()
        .is_none()
    {
        assert!(std::time::Instant::now() < deadline, "the run never waited");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    doomed.kill9();

    let decided = std::process::Command::new(support::WORKER)
        .args([
            "decide",
            &env.store_arg,
            support::path(&env.counter),
            &env.ingress,
            &env.admin,
            &ticket,
        ])
        .env("RESTATE_WORKER_TENANT", &env.acme)
        .env("RESTATE_WORKER_PG_SCHEMA", &env.schema)
        .output()
        .expect("run the deciding process");
    assert!(
        decided.status.success(),
        "{}",
        String::from_utf8_lossy(&decided.stderr)
    );
    let reply = run.await.unwrap().expect("the run's invocation");
    assert_eq!(completed(&reply).0, "payout done (4 messages seen)");
    assert_eq!(
        done(&env.counter, "payout", "P-1"),
        1,
        "the payout ran once"
    );
    let ticket = env.store.ticket(&env.acme, &ticket).await.unwrap();
    assert_eq!(ticket.state, TicketState::Completed);
}

/// A run waiting on a ticket nobody decides wakes at the ticket's expiry (a durable timer, not a
/// decision): the next attempt expires the ticket, the call never runs, and the agent goes on
/// with the expiry's error observation.
async fn approval_expires(env: &Env) {
    let reply = env
        .run(&env.acme, "t8", "x1", "rw-hasty-agent", "X-1")
        .await;
    assert_eq!(completed(&reply).0, "hasty done (4 messages seen)");
    assert_eq!(
        done(&env.counter, "payout", "X-1"),
        0,
        "an expired ticket's call never runs"
    );
    let tickets = env.store.run_tickets(&env.acme, "x1").await.unwrap();
    assert_eq!(tickets.len(), 1);
    assert_eq!(tickets[0].state, TicketState::Expired);
}

trait KillChecked {
    fn kill9_checked(self, counter: &Path, order: &str);
}

impl KillChecked for Worker {
    /// SIGKILL once the tool's work is done (the counter has it once).
    fn kill9_checked(self, counter: &Path, order: &str) {
        assert_eq!(
            done(counter, "refund", order),
            1,
            "the tool ran before the kill"
        );
        self.kill9();
    }
}
