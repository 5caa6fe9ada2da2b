//! One guarded tool call from a JSON argument string, against the bare path (serde decode +
//! async handler + serde encode) — the "floor" of TARGETS.md. Variants: 0, 1, 4 and 16 allowing
//! interceptors. Run with `cargo bench -p agboss-core --bench invoke`.
use agboss_core::dto::Dto;
use agboss_core::*;

mod fixture;
use criterion::{Criterion, criterion_group, criterion_main};
use fixture::*;
use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};

#[global_allocator]
static GLOBAL: &StatsAlloc<std::alloc::System> = &INSTRUMENTED_SYSTEM;

order_tools!();

const ARGS: &str = r#"{"orderId":"ACME-42"}"#;

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    let app = App::builder()
        .tool::<Guards0Tool>()
        .tool::<Guards1Tool>()
        .tool::<Guards4Tool>()
        .tool::<Guards16Tool>()
        .build()
        .expect("app");
    // Allocations per call (TARGETS.md: <= 8 with 4 interceptors), counted on 1,000 calls.
    let per_call = |f: &dyn Fn()| {
        f(); // warm: lazy statics, first-use caches
        let region = Region::new(GLOBAL);
        for _ in 0..1_000 {
            f();
        }
        region.change().allocations as f64 / 1_000.0
    };
    let floor = per_call(&|| {
        rt.block_on(async {
            let input: OrderInputDto = serde_json::from_str(ARGS).unwrap();
            let out = handler(input).await;
            std::hint::black_box(serde_json::to_string(&out).unwrap());
        })
    });
    let g0 = per_call(&|| {
        rt.block_on(async {
            std::hint::black_box(app.tool::<Guards0Tool>().invoke_json(ARGS).await.unwrap());
        })
    });
    let g4 = per_call(&|| {
        rt.block_on(async {
            std::hint::black_box(app.tool::<Guards4Tool>().invoke_json(ARGS).await.unwrap());
        })
    });
    let g16 = per_call(&|| {
        rt.block_on(async {
            std::hint::black_box(app.tool::<Guards16Tool>().invoke_json(ARGS).await.unwrap());
        })
    });
    println!(
        "allocations per call: floor {floor}, 0 interceptors {g0}, 4 interceptors {g4}, 16 interceptors {g16}"
    );

    let mut group = c.benchmark_group("invoke_json");
    group.measurement_time(std::time::Duration::from_secs(3));
    group.warm_up_time(std::time::Duration::from_secs(1));
    group.bench_function("floor (serde decode + handler + encode)", |b| {
        b.to_async(&rt).iter(|| async {
            let input: OrderInputDto = serde_json::from_str(std::hint::black_box(ARGS)).unwrap();
            let out = handler(input).await;
            serde_json::to_string(&out).unwrap()
        })
    });
    group.bench_function("guarded, 0 interceptors", |b| {
        b.to_async(&rt).iter(|| async {
            app.tool::<Guards0Tool>()
                .invoke_json(std::hint::black_box(ARGS))
                .await
                .unwrap()
        })
    });
    group.bench_function("guarded, 1 interceptor", |b| {
        b.to_async(&rt).iter(|| async {
            app.tool::<Guards1Tool>()
                .invoke_json(std::hint::black_box(ARGS))
                .await
                .unwrap()
        })
    });
    group.bench_function("guarded, 4 interceptors", |b| {
        b.to_async(&rt).iter(|| async {
            app.tool::<Guards4Tool>()
                .invoke_json(std::hint::black_box(ARGS))
                .await
                .unwrap()
        })
    });
    group.bench_function("guarded, 16 interceptors", |b| {
        b.to_async(&rt).iter(|| async {
            app.tool::<Guards16Tool>()
                .invoke_json(std::hint::black_box(ARGS))
                .await
                .unwrap()
        })
    });
    group.finish();

    // Where the time goes: the DTO decode (serde + validation) against plain serde.
    let mut parts = c.benchmark_group("parts");
    parts.measurement_time(std::time::Duration::from_secs(2));
    parts.warm_up_time(std::time::Duration::from_millis(500));
    parts.bench_function("serde_json::from_str", |b| {
        b.iter(|| serde_json::from_str::<OrderInputDto>(std::hint::black_box(ARGS)).unwrap())
    });
    parts.bench_function("Dto::from_json_str", |b| {
        b.iter(|| OrderInputDto::from_json_str(std::hint::black_box(ARGS)).unwrap())
    });
    parts.bench_function("CallId::generate", |b| b.iter(CallId::generate));
    parts.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
