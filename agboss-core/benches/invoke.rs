//! One guarded tool call from a JSON argument string, against the bare path (serde decode +
//! async handler + serde encode) — the "floor" of TARGETS.md. Variants: 0, 1, 4 and 16 allowing
//! interceptors. Run with `cargo bench -p agboss-core --bench invoke`.
use agboss_core::di::CallId;
use agboss_core::dto::Dto;
use agboss_core::prelude::*;

mod fixture;
use criterion::{Criterion, criterion_group, criterion_main};
use fixture::*;
use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};

#[global_allocator]
static GLOBAL: &StatsAlloc<std::alloc::System> = &INSTRUMENTED_SYSTEM;

order_tools!();

/// The agent-loop path: the callback an agent's tool loop calls, through 4 agent interceptors.
#[agent(name = "alloc-agent", description = "Looks orders up", tools = [Guards0Tool],
        tool_interceptors = [A1ToolInterceptor, A2ToolInterceptor, A3ToolInterceptor, A4ToolInterceptor])]
pub struct AllocAgent;

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
        .agent::<AllocAgent>()
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
    // Every path a call takes, with 0, 4 and 16 interceptors: typed JSON (`ToolHandle::invoke_json`),
    // by name (`DynToolHandle::invoke_json`: the dyn boundary), typed (`ToolHandle::invoke`),
    // and the agent loop's callback (4 agent interceptors).
    let json = |n: usize| {
        per_call(&|| {
            rt.block_on(async {
                let out = match n {
                    0 => app.tool::<Guards0Tool>().invoke_json(ARGS).await,
                    4 => app.tool::<Guards4Tool>().invoke_json(ARGS).await,
                    _ => app.tool::<Guards16Tool>().invoke_json(ARGS).await,
                };
                std::hint::black_box(out.unwrap());
            })
        })
    };
    let by_name = |name: &'static str| {
        per_call(&|| {
            rt.block_on(async {
                let handle = app.tool_by_name(name).expect("the tool");
                std::hint::black_box(handle.invoke_json(ARGS).await.unwrap());
            })
        })
    };
    let typed = |n: usize| {
        per_call(&|| {
            rt.block_on(async {
                let input = OrderInputDto {
                    order_id: "ACME-42".into(),
                };
                match n {
                    0 => drop(std::hint::black_box(
                        app.tool::<Guards0Tool>().invoke(input).await.unwrap(),
                    )),
                    4 => drop(std::hint::black_box(
                        app.tool::<Guards4Tool>().invoke(input).await.unwrap(),
                    )),
                    _ => drop(std::hint::black_box(
                        app.tool::<Guards16Tool>().invoke(input).await.unwrap(),
                    )),
                }
            })
        })
    };
    let bound = app.agent::<AllocAgent>().expect("the agent").tools[0].clone();
    let callback = per_call(&|| {
        rt.block_on(async {
            let out = bound.call("call_1", None, ARGS).await.into_result();
            std::hint::black_box(out.unwrap());
        })
    });
    // The typed floor: the handler alone (its input and output strings).
    let typed_floor = per_call(&|| {
        rt.block_on(async {
            let input = OrderInputDto {
                order_id: "ACME-42".into(),
            };
            std::hint::black_box(handler(input).await);
        })
    });
    println!(
        "allocations per call (floor {floor}, typed floor {typed_floor}):\n  \
         typed JSON 0/4/16 interceptors: {} / {} / {}\n  \
         by name 0/4/16: {} / {} / {}\n  \
         typed 0/4/16: {} / {} / {}\n  \
         agent-loop callback, 4: {callback}",
        json(0),
        json(4),
        json(16),
        by_name("guards0-tool"),
        by_name("guards4-tool"),
        by_name("guards16-tool"),
        typed(0),
        typed(4),
        typed(16),
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
