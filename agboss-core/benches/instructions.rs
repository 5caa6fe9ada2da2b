//! Instruction counts of one guarded call (callgrind through gungraun: stable whatever the
//! machine's load), against the floor of TARGETS.md (serde decode + handler + serde encode).
//! Each benchmark makes 1,000 calls after one warm-up call made in its setup (not counted):
//! divide the instructions by 1,000 for a call.
//!
//! Run with `cargo bench -p agboss-core --bench instructions` (needs valgrind and
//! `cargo install gungraun-runner --version 0.20.0`). Variants: the floor; by name with JSON
//! arguments (`app.tool_by_name(..).invoke_json(..)`, the path of an agent's tool loop) with 0, 1,
//! 4 and 16 allowing interceptors; typed (`app.tool::<T>().invoke(..)`) with 0, 4 and 16. Each
//! call includes one `block_on` of a current-thread runtime.
use std::hint::black_box;

use agboss_core::prelude::*;
use gungraun::{library_benchmark, library_benchmark_group, main};

mod fixture;
use fixture::*;

order_tools!();

const ARGS: &str = r#"{"orderId":"ACME-42"}"#;
const CALLS: usize = 1_000;

/// What a benchmark runs on, built outside the measurement.
pub struct Bench {
    rt: tokio::runtime::Runtime,
    app: App,
    tool: &'static str,
}

fn setup(tool: &'static str) -> Bench {
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
    let bench = Bench { rt, app, tool };
    // Warm: lazy statics and first-use caches are not what a call costs.
    if tool == "floor" {
        floor_call(&bench);
    } else {
        by_name_call(&bench);
    }
    bench
}

fn floor_call(b: &Bench) {
    b.rt.block_on(async {
        let input: OrderInputDto = serde_json::from_str(ARGS).unwrap();
        let out = handler(input).await;
        black_box(serde_json::to_string(&out).unwrap());
    });
}

fn by_name_call(b: &Bench) {
    b.rt.block_on(async {
        let handle = b.app.tool_by_name(b.tool).expect("the tool");
        black_box(handle.invoke_json(ARGS).await.unwrap());
    });
}

#[library_benchmark]
#[bench::floor(args = ("floor"), setup = setup)]
fn floor_1000_calls(b: Bench) -> Bench {
    for _ in 0..CALLS {
        floor_call(&b);
    }
    b
}

#[library_benchmark]
#[bench::guards0(args = ("guards0-tool"), setup = setup)]
#[bench::guards1(args = ("guards1-tool"), setup = setup)]
#[bench::guards4(args = ("guards4-tool"), setup = setup)]
#[bench::guards16(args = ("guards16-tool"), setup = setup)]
fn by_name_1000_calls(b: Bench) -> Bench {
    for _ in 0..CALLS {
        by_name_call(&b);
    }
    b
}

fn typed_call(b: &Bench) {
    let input = || OrderInputDto {
        order_id: "ACME-42".into(),
    };
    b.rt.block_on(async {
        match b.tool {
            "guards0-tool" => {
                black_box(b.app.tool::<Guards0Tool>().invoke(input()).await.unwrap());
            }
            "guards4-tool" => {
                black_box(b.app.tool::<Guards4Tool>().invoke(input()).await.unwrap());
            }
            _ => {
                black_box(b.app.tool::<Guards16Tool>().invoke(input()).await.unwrap());
            }
        }
    });
}

#[library_benchmark]
#[bench::guards0(args = ("guards0-tool"), setup = setup)]
#[bench::guards4(args = ("guards4-tool"), setup = setup)]
#[bench::guards16(args = ("guards16-tool"), setup = setup)]
fn typed_1000_calls(b: Bench) -> Bench {
    for _ in 0..CALLS {
        typed_call(&b);
    }
    b
}

library_benchmark_group!(
    name = calls;
    benchmarks = floor_1000_calls, by_name_1000_calls, typed_1000_calls
);

main!(library_benchmark_groups = calls);
