//! App build time (`AppBuilder::build`: names checked, services and tool slots built, every
//! chain of every path resolved) of generated components (`build.rs`: 1,000 `#[tool]`s, 50
//! allowing `#[tool_interceptor]`s, an `#[application]`, agents):
//!
//! - the series: 100 and 1,000 tools under 50 application-level interceptors, and 5,000 tool
//!   paths (5 agents × the 1,000 tools, under the same 50): linear in paths × chain length
//!   means each step costs about its ratio;
//! - the three shapes of 1,000 tools × 50 interceptors: the builder, an `#[application]`, and
//!   10 agents × 100 tools with 25 interceptors at the application and 25 at each agent.
//!
//! Run with `cargo bench -p agboss-e2e --bench app_build`.
use std::time::Duration;

use agboss_core::contract::tool::{Tool, ToolMeta};
use agboss_core::prelude::*;
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};

include!("app_build/common.rs");
include!(concat!(env!("OUT_DIR"), "/app_build.rs"));

fn builder_with(n: usize) -> AppBuilder {
    let mut builder = attach_all(App::builder());
    for meta in &TOOLS[..n] {
        builder = builder.tool_meta(meta);
    }
    builder
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("app_build");
    g.sample_size(15)
        .measurement_time(Duration::from_secs(4))
        .warm_up_time(Duration::from_secs(1));
    for n in [100, 1_000] {
        g.bench_with_input(BenchmarkId::new("series_tools_x50", n), &n, |b, &n| {
            b.iter(|| std::hint::black_box(builder_with(n).build().expect("app")));
        });
    }
    g.bench_function(BenchmarkId::new("series_tools_x50", 5_000), |b| {
        b.iter(|| {
            let app = wide_agents(attach_all(App::builder()))
                .build()
                .expect("app");
            std::hint::black_box(app)
        });
    });
    g.bench_function("shape_builder_1000_tools_x50", |b| {
        b.iter(|| std::hint::black_box(builder_with(1_000).build().expect("app")));
    });
    g.bench_function("shape_application_1000_tools_x50", |b| {
        b.iter(|| {
            std::hint::black_box(
                App::builder()
                    .application::<BenchApplication>()
                    .build()
                    .expect("app"),
            )
        });
    });
    g.bench_function("shape_10_agents_x100_tools_x25_plus_25", |b| {
        b.iter(|| std::hint::black_box(agents(App::builder()).build().expect("app")));
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
