//! The run journal's costs. Run with `cargo bench -p agboss-testing --bench journal`; the
//! PostgreSQL variants run when `AGBOSS_TEST_POSTGRES_URL` is set (`scripts/pg.sh start` prints
//! it).
//!
//! - `append`: one journal step (a tool call's observation with its thread message) on the
//!   in-memory store, on SQLite (a file in WAL mode) and on PostgreSQL.
//! - `resume_20_steps`: taking up a run of 20 journaled steps (4 model turns of 2 parallel tool
//!   calls each) and finishing it: the journal and history are read back, no tool runs again,
//!   one model call is made.
//! - `concurrent_1000_runs_100_tenants` (PostgreSQL): 1,000 runs at once, 10 per tenant, each
//!   a model turn, a tool call and an answer on its own thread; after the timed runs, every
//!   thread is read back by its tenant and checked to hold only that tenant's data.
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use agboss_core::dto::Dto;
use agboss_core::engine::{RunContext, Target};
use agboss_core::model::{
    ChatModel, Message, ModelError, ModelRequest, ModelResponse, ToolCallRequest,
};
use agboss_core::prelude::*;
use agboss_core::store::{
    DEFAULT_LEASE_TTL, MemoryStore, NewRun, NewThread, PostgresStore, RunStore, SharedStore,
    SqliteStore, StepEntry, ThreadStore,
};
use agboss_testing::flaky::FlakyStore;
use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct JbOrderDto {
    #[text(prompt = "The order id")]
    pub order_id: String,
}

/// Answers with the tenant it ran for: the cross-tenant check reads it back.
#[tool(name = "jb-lookup-tool", description = "Looks an order up", input = JbOrderDto,
       output = JbOrderDto, deps = [TenantContext])]
pub struct JbLookupTool {
    tenant: TenantContext,
}

impl ToolHandler<JbOrderDto, JbOrderDto> for JbLookupTool {
    async fn run(&self, input: JbOrderDto) -> Result<JbOrderDto, ToolError> {
        Ok(JbOrderDto {
            order_id: format!("{}@{}", input.order_id, self.tenant.tenant_id()),
        })
    }
}

#[agent(name = "jb-agent", description = "Looks orders up", tools = [JbLookupTool])]
pub struct JbAgent;

/// Stateless: `turns` turns of `width` parallel calls, then an answer.
struct ParallelModel {
    turns: usize,
    width: usize,
}

impl ChatModel for ParallelModel {
    async fn complete(&self, req: &ModelRequest) -> Result<ModelResponse, ModelError> {
        let done = req
            .messages
            .iter()
            .filter(|m| matches!(m, Message::Tool { .. }))
            .count();
        if done >= self.turns * self.width {
            return Ok(ModelResponse::text("done"));
        }
        Ok(ModelResponse::tool_calls((0..self.width).map(|i| {
            ToolCallRequest::new(
                format!("c{}", done + i),
                "jb-lookup-tool",
                r#"{"orderId":"ACME-42"}"#,
            )
        })))
    }
}

fn app(store: SharedStore, turns: usize, width: usize) -> App {
    App::builder()
        .agent::<JbAgent>()
        .model(ParallelModel { turns, width })
        .store(store)
        .worker_id("bench")
        .build()
        .unwrap()
}

fn pg_url() -> Option<String> {
    std::env::var("AGBOSS_TEST_POSTGRES_URL").ok()
}

async fn pg_store(schema: &str) -> PostgresStore {
    PostgresStore::connect_with_schema(&pg_url().unwrap(), schema)
        .await
        .unwrap()
}

fn scratch_db(name: &str) -> std::path::PathBuf {
    std::env::temp_dir().join(format!("agboss-bench-{name}-{}.db", std::process::id()))
}

fn bench_append(c: &mut Criterion, rt: &tokio::runtime::Runtime) {
    let mut group = c.benchmark_group("append");
    let mut stores: Vec<(&str, SharedStore)> = vec![
        ("memory", SharedStore::new(MemoryStore::new())),
        (
            "sqlite",
            SharedStore::new(
                rt.block_on(SqliteStore::open(scratch_db("append")))
                    .unwrap(),
            ),
        ),
    ];
    if pg_url().is_some() {
        stores.push((
            "postgres",
            SharedStore::new(rt.block_on(pg_store("bench_append"))),
        ));
    }
    for (name, store) in stores {
        let (lease, thread) = rt.block_on(async {
            let thread = store.create_thread("acme", NewThread::new()).await.unwrap();
            let run =
                NewRun::new("acme", format!("append-{name}"), "jb-agent", "hi").thread(&thread.id);
            let (_, lease) = store
                .begin_run(run, "bench", DEFAULT_LEASE_TTL)
                .await
                .unwrap();
            (lease, thread)
        });
        let _ = thread;
        let entry = StepEntry::ToolFinished {
            key: "tool:0:c1".into(),
            call_id: "c1".into(),
            tool: "jb-lookup-tool".into(),
            decision: "allowed".into(),
            content: r#"{"orderId":"ACME-42"}"#.into(),
            is_error: false,
            truncated: false,
        };
        let messages = [Message::tool_result("c1", r#"{"orderId":"ACME-42"}"#)];
        group.bench_function(name, |b| {
            b.iter(|| {
                rt.block_on(store.append(&lease, &entry, &messages))
                    .unwrap()
            })
        });
    }
    group.finish();
}

fn bench_resume(c: &mut Criterion, rt: &tokio::runtime::Runtime) {
    let mut group = c.benchmark_group("resume_20_steps");
    let mut stores: Vec<(&str, Arc<FlakyStore<SharedStore>>)> = vec![
        (
            "memory",
            Arc::new(FlakyStore::new(SharedStore::new(MemoryStore::new()))),
        ),
        (
            "sqlite",
            Arc::new(FlakyStore::new(SharedStore::new(
                rt.block_on(SqliteStore::open(scratch_db("resume")))
                    .unwrap(),
            ))),
        ),
    ];
    if pg_url().is_some() {
        stores.push((
            "postgres",
            Arc::new(FlakyStore::new(SharedStore::new(
                rt.block_on(pg_store("bench_resume")),
            ))),
        ));
    }
    let next = AtomicUsize::new(0);
    for (name, flaky) in stores {
        let app = app(SharedStore::new(Arc::clone(&flaky)), 4, 2);
        group.bench_function(name, |b| {
            b.iter_batched(
                || {
                    // A run that journaled 20 steps, then lost its store on the 21st write.
                    let run_id = format!("resume-{}", next.fetch_add(1, Ordering::Relaxed));
                    flaky.fail_append_at(21);
                    let err = rt
                        .block_on(app.execute(
                            Target::agent::<JbAgent>(),
                            "look ACME-42 up",
                            RunContext::new().tenant("acme").run_id(&run_id),
                        ))
                        .unwrap_err();
                    assert!(err.leaves_run_resumable(), "{err}");
                    flaky.fail_all(false);
                    run_id
                },
                |run_id| {
                    let out = rt
                        .block_on(app.resume_run(&run_id, RunContext::new().tenant("acme")))
                        .unwrap();
                    assert_eq!(out.replayed_steps, 20);
                },
                BatchSize::PerIteration,
            )
        });
    }
    group.finish();
}

fn bench_concurrent(c: &mut Criterion, rt: &tokio::runtime::Runtime) {
    if pg_url().is_none() {
        eprintln!("concurrent_1000_runs_100_tenants: skipped (AGBOSS_TEST_POSTGRES_URL not set)");
        return;
    }
    let store = SharedStore::new(rt.block_on(pg_store("bench_concurrent")));
    let app = app(store, 1, 1);
    let round = AtomicUsize::new(0);
    let mut group = c.benchmark_group("concurrent_1000_runs_100_tenants");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(20));
    group.throughput(Throughput::Elements(1000));
    group.bench_function("postgres", |b| {
        b.iter(|| {
            let r = round.fetch_add(1, Ordering::Relaxed);
            rt.block_on(run_round(&app, r));
        })
    });
    group.finish();
    // Every thread, read back by its own tenant, holds only its tenant's data; no tenant
    // reads another's.
    let rounds = round.load(Ordering::Relaxed);
    let mismatches = rt.block_on(check_tenants(&app, rounds));
    eprintln!(
        "concurrent_1000_runs_100_tenants: {} runs checked, {mismatches} cross-tenant reads",
        rounds * 1000
    );
    assert_eq!(mismatches, 0);
}

fn tenant(i: usize) -> String {
    format!("tenant-{:03}", i % 100)
}

async fn run_round(app: &App, round: usize) {
    let runs = (0..1000).map(|i| {
        let app = app.clone();
        tokio::spawn(async move {
            let tenant = tenant(i);
            let thread = app
                .threads(tenant.as_str())
                .create(NewThread::new().id(format!("r{round}-t{i}")))
                .await
                .unwrap();
            app.execute(
                Target::agent::<JbAgent>(),
                "look ACME-42 up",
                RunContext::new().tenant(tenant.as_str()).thread(&thread.id),
            )
            .await
            .unwrap();
        })
    });
    for run in futures::future::join_all(runs).await {
        run.unwrap();
    }
}

async fn check_tenants(app: &App, rounds: usize) -> usize {
    let mut mismatches = 0;
    for round in 0..rounds {
        for i in 0..1000 {
            let own = tenant(i);
            let id = format!("r{round}-t{i}");
            let messages = app.threads(own.as_str()).messages(&id).await.unwrap();
            for m in &messages {
                if let Message::Tool { content, .. } = &m.message
                    && !content.contains(&format!("@{own}"))
                {
                    mismatches += 1;
                }
            }
            // Another tenant never reads it.
            let other = tenant(i + 1);
            if app.threads(other.as_str()).messages(&id).await.is_ok() {
                mismatches += 1;
            }
        }
    }
    mismatches
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    bench_append(c, &rt);
    bench_resume(c, &rt);
    bench_concurrent(c, &rt);
    for name in ["append", "resume"] {
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", scratch_db(name).display()));
        }
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
