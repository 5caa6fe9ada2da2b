//! Runs on Restate against runs on the store alone. Run with `cargo bench -p agboss-restate
//! --bench restate` with `AGBOSS_TEST_RESTATE_INGRESS`/`_ADMIN` set (`scripts/restate.sh start`
//! prints them); the PostgreSQL variants when `AGBOSS_TEST_POSTGRES_URL` is set too. The bench
//! serves its own worker in process and registers it as the deployment (run it alone, not
//! beside `tests/restate.rs`).
//!
//! - `run_1_call` and `run_8_calls`: a whole run on a new thread (the model asks for 1, or 8
//!   one after the other, lookups, then answers): `app.execute` on SQLite / PostgreSQL, and the
//!   same run through Restate's ingress (`RestateClient::run`) on a worker over that store. The
//!   difference of the two divided by the 21 more journal steps (7 model turns, 7 starts, 7
//!   ends) is the per-step cost of each backend; Restate's own cost is per run.
//! - `resume_21_steps`: taking up a run that journaled 21 steps (7 calls, the 8th call's model
//!   turn not yet) and lost its store on
//!   the 22nd write, and finishing it (8 calls: 25 steps in all): `app.resume_run` on SQLite, and a Restate invocation of
//!   the run (whose attempt resumes it the same way).
//! - `concurrent_50_runs_5_tenants`: 50 runs of 1 call each started at once, over 5 tenants
//!   (10 each, each run on a thread of its own), all awaited: `app.execute` on SQLite /
//!   PostgreSQL, and through Restate's ingress on a worker over that store. A sample is the
//!   whole batch: divide by 50 for the time per run under that concurrency.
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use agboss_core::dto::Dto;
use agboss_core::engine::{RunContext, Target};
use agboss_core::model::{
    ChatModel, Message, ModelError, ModelRequest, ModelResponse, ToolCallRequest,
};
use agboss_core::prelude::*;
use agboss_core::store::{NewThread, PostgresStore, SharedStore, SqliteStore};
use agboss_restate::{RestateClient, RunReply, RunRequest};
use agboss_testing::flaky::FlakyStore;
use criterion::{BatchSize, Criterion, criterion_group, criterion_main};

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct RbOrderDto {
    #[text(prompt = "The order id")]
    pub order_id: String,
}

#[tool(name = "rb-lookup-tool", description = "Looks an order up", input = RbOrderDto,
       output = RbOrderDto)]
pub struct RbLookupTool;

impl ToolHandler<RbOrderDto, RbOrderDto> for RbLookupTool {
    async fn run(&self, input: RbOrderDto) -> Result<RbOrderDto, ToolError> {
        Ok(input)
    }
}

#[agent(name = "rb-agent", description = "Looks orders up", tools = [RbLookupTool])]
pub struct RbAgent;

/// Stateless: as many lookups as the input's number, one per turn, then an answer.
struct CallsModel;

impl ChatModel for CallsModel {
    async fn complete(&self, req: &ModelRequest) -> Result<ModelResponse, ModelError> {
        let mut wanted = 0usize;
        let mut done = 0usize;
        for m in &req.messages {
            match m {
                Message::User { content, .. } => {
                    wanted = content.trim().parse().unwrap_or(1);
                    done = 0;
                }
                Message::Tool { .. } => done += 1,
                _ => {}
            }
        }
        if done >= wanted {
            return Ok(ModelResponse::text("done"));
        }
        Ok(ModelResponse::tool_calls([ToolCallRequest::new(
            format!("c{done}"),
            "rb-lookup-tool",
            r#"{"orderId":"ACME-42"}"#,
        )]))
    }
}

fn app(store: SharedStore) -> App {
    App::builder()
        .agent::<RbAgent>()
        .model(CallsModel)
        .store(store)
        .worker_id(format!("bench-{}", std::process::id()))
        .build()
        .unwrap()
}

fn scratch_db(name: &str) -> std::path::PathBuf {
    std::env::temp_dir().join(format!(
        "agboss-restate-bench-{name}-{}.db",
        std::process::id()
    ))
}

struct Backend {
    name: &'static str,
    store: Arc<FlakyStore<SharedStore>>,
    app: App,
}

fn backends(rt: &tokio::runtime::Runtime) -> Vec<Backend> {
    let mut stores = vec![(
        "sqlite",
        SharedStore::new(rt.block_on(SqliteStore::open(scratch_db("runs"))).unwrap()),
    )];
    if let Ok(url) = std::env::var("AGBOSS_TEST_POSTGRES_URL") {
        let schema = format!("restate_bench_{}", std::process::id());
        let pg = rt
            .block_on(PostgresStore::connect_with_schema(&url, &schema))
            .unwrap();
        stores.push(("postgres", SharedStore::new(pg)));
    }
    stores
        .into_iter()
        .map(|(name, store)| {
            let store = Arc::new(FlakyStore::new(store));
            let app = app(SharedStore::new(Arc::clone(&store)));
            Backend { name, store, app }
        })
        .collect()
}

/// Serves `app` in process and registers it as the deployment.
fn deploy(rt: &tokio::runtime::Runtime, client: &RestateClient, app: &App) {
    rt.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        tokio::spawn(agboss_restate::serve(
            Arc::new(app.clone()),
            listener,
            std::future::pending::<()>(),
        ));
        client
            .register(&format!("http://127.0.0.1:{port}"))
            .await
            .unwrap();
    });
}

fn restate_client() -> Option<RestateClient> {
    match (
        std::env::var("AGBOSS_TEST_RESTATE_INGRESS"),
        std::env::var("AGBOSS_TEST_RESTATE_ADMIN"),
    ) {
        (Ok(ingress), Ok(admin)) => Some(RestateClient::new(ingress, admin)),
        _ => None,
    }
}

static NEXT: AtomicUsize = AtomicUsize::new(0);

fn next_id(what: &str) -> String {
    format!(
        "{what}-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

fn bench_runs(c: &mut Criterion, rt: &tokio::runtime::Runtime, client: &RestateClient) {
    for (group_name, calls) in [("run_1_call", 1), ("run_8_calls", 8)] {
        let mut group = c.benchmark_group(group_name);
        group.sample_size(10);
        group.measurement_time(Duration::from_secs(5));
        for backend in backends(rt) {
            let app = &backend.app;
            group.bench_function(backend.name, |b| {
                b.iter(|| {
                    let thread = next_id("t");
                    rt.block_on(async {
                        app.threads("acme")
                            .create(NewThread::new().id(&thread))
                            .await
                            .unwrap();
                        let out = app
                            .execute(
                                Target::agent::<RbAgent>(),
                                calls.to_string(),
                                RunContext::new().tenant("acme").thread(&thread),
                            )
                            .await
                            .unwrap();
                        assert_eq!(out.tool_calls, calls);
                    })
                })
            });
            deploy(rt, client, app);
            group.bench_function(format!("restate-{}", backend.name), |b| {
                b.iter(|| {
                    let request = RunRequest::new(next_id("r"), "rb-agent", calls.to_string());
                    let reply = rt
                        .block_on(client.run("acme", &next_id("t"), &request))
                        .unwrap();
                    assert!(matches!(reply, RunReply::Completed { .. }), "{reply:?}");
                })
            });
        }
        group.finish();
    }
}

fn bench_resume(c: &mut Criterion, rt: &tokio::runtime::Runtime, client: &RestateClient) {
    let mut group = c.benchmark_group("resume_21_steps");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(5));
    for backend in backends(rt) {
        let (app, flaky) = (&backend.app, &backend.store);
        // A run of 8 calls that journaled 21 steps, then lost its store on the 22nd write.
        let stopped = || {
            let (run_id, thread) = (next_id("r"), next_id("t"));
            rt.block_on(async {
                app.threads("acme")
                    .create(NewThread::new().id(&thread))
                    .await
                    .unwrap();
                flaky.fail_append_at(22);
                let err = app
                    .execute(
                        Target::agent::<RbAgent>(),
                        "8",
                        RunContext::new()
                            .tenant("acme")
                            .thread(&thread)
                            .run_id(&run_id),
                    )
                    .await
                    .unwrap_err();
                assert!(err.leaves_run_resumable(), "{err}");
                flaky.fail_all(false);
            });
            (run_id, thread)
        };
        group.bench_function(backend.name, |b| {
            b.iter_batched(
                stopped,
                |(run_id, _)| {
                    let out = rt
                        .block_on(app.resume_run(&run_id, RunContext::new().tenant("acme")))
                        .unwrap();
                    assert_eq!(out.replayed_steps, 21);
                },
                BatchSize::PerIteration,
            )
        });
        deploy(rt, client, app);
        group.bench_function(format!("restate-{}", backend.name), |b| {
            b.iter_batched(
                stopped,
                |(run_id, thread)| {
                    let request = RunRequest::new(run_id, "rb-agent", "8");
                    let reply = rt.block_on(client.run("acme", &thread, &request)).unwrap();
                    assert!(
                        matches!(
                            reply,
                            RunReply::Completed {
                                replayed_steps: 21,
                                ..
                            }
                        ),
                        "{reply:?}"
                    );
                },
                BatchSize::PerIteration,
            )
        });
    }
    group.finish();
}

/// N runs started at once over M tenants, each one call on its own thread.
const CONCURRENT_RUNS: usize = 50;
const TENANTS: usize = 5;

fn bench_concurrent(c: &mut Criterion, rt: &tokio::runtime::Runtime, client: &RestateClient) {
    let mut group = c.benchmark_group(format!(
        "concurrent_{CONCURRENT_RUNS}_runs_{TENANTS}_tenants"
    ));
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(10));
    let tenant = |i: usize| format!("tenant-{}", i % TENANTS);
    for backend in backends(rt) {
        let app = &backend.app;
        group.bench_function(backend.name, |b| {
            b.iter(|| {
                rt.block_on(async {
                    let runs = (0..CONCURRENT_RUNS).map(|i| {
                        let (app, tenant, thread) = (app.clone(), tenant(i), next_id("t"));
                        tokio::spawn(async move {
                            app.threads(tenant.as_str())
                                .create(NewThread::new().id(&thread))
                                .await
                                .unwrap();
                            app.execute(
                                Target::agent::<RbAgent>(),
                                "1",
                                RunContext::new().tenant(tenant.as_str()).thread(&thread),
                            )
                            .await
                            .unwrap()
                        })
                    });
                    for out in futures::future::join_all(runs).await {
                        assert_eq!(out.unwrap().tool_calls, 1);
                    }
                })
            })
        });
        deploy(rt, client, app);
        group.bench_function(format!("restate-{}", backend.name), |b| {
            b.iter(|| {
                rt.block_on(async {
                    let runs = (0..CONCURRENT_RUNS).map(|i| {
                        let (client, tenant) = (client.clone(), tenant(i));
                        tokio::spawn(async move {
                            let request = RunRequest::new(next_id("r"), "rb-agent", "1");
                            client.run(&tenant, &next_id("t"), &request).await
                        })
                    });
                    for reply in futures::future::join_all(runs).await {
                        let reply = reply.unwrap().unwrap();
                        assert!(matches!(reply, RunReply::Completed { .. }), "{reply:?}");
                    }
                })
            })
        });
    }
    group.finish();
}

fn benches(c: &mut Criterion) {
    let Some(client) = restate_client() else {
        eprintln!(
            "restate: skipped (AGBOSS_TEST_RESTATE_INGRESS/ADMIN not set: scripts/restate.sh start)"
        );
        return;
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    bench_runs(c, &rt, &client);
    bench_resume(c, &rt, &client);
    bench_concurrent(c, &rt, &client);
}

criterion_group!(group, benches);
criterion_main!(group);
