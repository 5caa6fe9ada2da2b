//! The console's inbox with 1,000 pending tickets in SQLite (target: a page in ≤ 100 ms server
//! time): `GET /` (the first page, the oldest 25) and `GET /?offset=500` (a page in the middle),
//! each one HTTP/1.1 request over loopback to `app.console_router(..)` served by axum, its
//! response read whole, as the manager of the tickets' tenant. Each ticket is a real one of the
//! refund desk's path (its policy digest), so every row is masked by the path's PII policies and
//! lists the interceptors that allowed the call. The client's connection and read are counted
//! too: the figure is an upper bound of the server's time.
//!
//! Run with `cargo bench -p agboss-e2e --bench console_inbox`.
#[path = "../agboss-core/tests/tickets/fixture.rs"]
#[allow(dead_code)]
mod fixture;

use std::sync::Arc;
use std::time::{Duration, Instant};

use agboss_core::console::{ConsoleExt as _, ConsoleTokens, ConsoleUser, INBOX_PAGE};
use agboss_core::store::{
    NewRun, RunStore as _, SharedStore, SqliteStore, Ticket, TicketStore as _,
};
use criterion::{Criterion, criterion_group, criterion_main};
use fixture::{IxLog, desk, manager};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

const TICKETS: i64 = 1_000;

async fn get(addr: &str, path: &str) -> String {
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let request = format!(
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nCookie: agboss_console=t-acme\r\nConnection: close\r\n\r\n"
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).await.unwrap();
    response
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let dir = std::env::temp_dir().join(agboss_core::store::types::random_id("bench-inbox"));
    std::fs::create_dir_all(&dir).unwrap();
    let addr = rt.block_on(async {
        let store = SharedStore::new(SqliteStore::open(dir.join("inbox.db")).await.unwrap());
        let app = desk(store.clone(), Arc::new(IxLog::default()));
        let digest = app
            .bound_tools()
            .find(|b| b.meta().name == "ix-refund-tool")
            .unwrap()
            .policy_digest();
        let run = NewRun::new("acme", "r-many", "ix-desk-agent", "many refunds");
        let (_, lease) = store
            .begin_run(run, "w", Duration::from_secs(3600))
            .await
            .unwrap();
        for i in 0..TICKETS {
            let input = format!(
                r#"{{"orderId":"A-{i:04}","amountCents":{},"note":"mail jane{i}@example.com"}}"#,
                5_000 + i
            );
            let mut ticket = Ticket::pending(format!("tk-{i:04}"), "ix-refund-tool", input);
            ticket.channel = "ix-manager-channel".into();
            ticket.chain_digest = digest.to_string();
            ticket.call_id = format!("call_{i}");
            ticket.step_key = format!("turn-1/call_{i}");
            ticket.created_at_ms += i;
            ticket.expires_at_ms = ticket.created_at_ms + 3_600_000;
            store.create_ticket(&lease, &ticket).await.unwrap();
        }
        let tokens =
            ConsoleTokens::new().token("t-acme", ConsoleUser::new("acme", manager("acme")));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        let router = app.console_router(tokens);
        tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
        addr
    });
    // Warm (the pool's connections, the statement cache), and check what a page holds.
    let first = rt.block_on(get(&addr, "/"));
    assert!(first.starts_with("HTTP/1.1 200"), "{first}");
    assert_eq!(first.matches("data-ticket=").count(), INBOX_PAGE as usize);
    assert!(first.contains("ix-limit-tool-interceptor") && !first.contains("jane0@example.com"));
    let middle = rt.block_on(get(&addr, "/?offset=500"));
    assert!(middle.contains(r#"data-ticket="tk-0500""#), "{middle}");

    let mut group = c.benchmark_group("console_inbox");
    group.sample_size(50);
    group.bench_function("first_page_of_1000", |b| {
        b.iter(|| rt.block_on(get(&addr, "/")))
    });
    group.bench_function("page_at_offset_500_of_1000", |b| {
        b.iter(|| rt.block_on(get(&addr, "/?offset=500")))
    });
    group.finish();

    let rounds = 200;
    let mut worst = Duration::ZERO;
    let started = Instant::now();
    for _ in 0..rounds {
        let t = Instant::now();
        rt.block_on(get(&addr, "/"));
        worst = worst.max(t.elapsed());
    }
    println!(
        "inbox of {TICKETS} pending tickets, first page: mean {:.2} ms, worst {:.2} ms over {rounds} requests",
        started.elapsed().as_secs_f64() * 1000.0 / f64::from(rounds),
        worst.as_secs_f64() * 1000.0
    );
    let _ = std::fs::remove_dir_all(dir);
}

criterion_group!(benches, bench);
criterion_main!(benches);
