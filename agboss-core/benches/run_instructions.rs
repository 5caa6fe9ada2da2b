//! Instruction counts of whole agent runs (callgrind through gungraun: stable whatever the
//! machine's load), the companion of `agent_turn` (which times the same runs with criterion).
//! Each benchmark makes 100 runs after one warm-up run made in its setup (not counted): divide
//! the instructions by 100 for a run.
//!
//! Run with `cargo bench -p agboss-core --bench run_instructions` (needs valgrind and
//! `cargo install gungraun-runner --version 0.20.0`). Variants: `execute` and `stream` of a
//! 2-turn run with 1 tool call through 4 allowing interceptors, the same with 2 passing
//! guardrails, a 1-turn run without tools, and the 2-turn `execute` under usage limits (every
//! call reserved in the run's budget). Each run includes one `block_on` of a
//! current-thread runtime.
use std::hint::black_box;

use agboss_core::engine::{RunContext, Target, UsageLimits};
use agboss_core::prelude::*;
use futures::StreamExt as _;
use gungraun::{library_benchmark, library_benchmark_group, main};

mod fixture;
use fixture::*;

const RUNS: usize = 100;

run_fixture!();

#[input_guardrail(name = "g1-input-guardrail", description = "Passes")]
pub struct G1InputGuardrail;
impl InputGuardrail for G1InputGuardrail {
    async fn check_input(
        &self,
        input: &GuardrailContext<'_>,
    ) -> Result<GuardrailVerdict, GuardrailError> {
        black_box(input.text());
        Ok(GuardrailVerdict::pass())
    }
}

#[output_guardrail(name = "g2-output-guardrail", description = "Passes")]
pub struct G2OutputGuardrail;
impl OutputGuardrail for G2OutputGuardrail {
    async fn check_output(
        &self,
        output: &GuardrailContext<'_>,
    ) -> Result<GuardrailVerdict, GuardrailError> {
        black_box(output.text());
        Ok(GuardrailVerdict::pass())
    }
}

/// `BenchAgent` with 2 passing guardrails: one on the input, one on the answer.
#[agent(name = "guarded-bench-agent", description = "Looks orders up, guarded", tools = [GetOrderTool],
        instructions = "You look orders up.",
        tool_interceptors = [A1ToolInterceptor, A2ToolInterceptor, A3ToolInterceptor, A4ToolInterceptor],
        input_guardrails = [G1InputGuardrail], output_guardrails = [G2OutputGuardrail])]
pub struct GuardedBenchAgent;

/// What a benchmark runs on, built outside the measurement.
pub struct Bench {
    rt: tokio::runtime::Runtime,
    app: App,
    variant: &'static str,
}

fn setup(variant: &'static str) -> Bench {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    let app = App::builder()
        .agent::<BenchAgent>()
        .agent::<ChatAgent>()
        .agent::<GuardedBenchAgent>()
        .model(TwoTurnModel)
        .build()
        .expect("app");
    let bench = Bench { rt, app, variant };
    // Warm: lazy statics and first-use caches are not what a run costs.
    one_run(&bench);
    bench
}

fn target(variant: &str) -> Target {
    match variant {
        "chat" => Target::agent::<ChatAgent>(),
        "guarded" | "stream_guarded" => Target::agent::<GuardedBenchAgent>(),
        _ => Target::agent::<BenchAgent>(),
    }
}

fn one_run(b: &Bench) {
    let input = if b.variant == "chat" {
        "hi"
    } else {
        "where is ACME-42?"
    };
    // The `limits` variant: every call reserved in the run's budget (a limit check per call).
    let ctx = || {
        if b.variant == "limits" {
            RunContext::new().usage_limits(
                UsageLimits::new()
                    .model_requests(1_000)
                    .tool_calls(1_000)
                    .tool_calls_of("get-order-tool", 1_000)
                    .output_tokens(1_000_000),
            )
        } else {
            RunContext::new()
        }
    };
    b.rt.block_on(async {
        if b.variant.starts_with("stream") {
            let mut s = b.app.stream(target(b.variant), input, ctx());
            while let Some(ev) = s.next().await {
                black_box(ev.expect("event"));
            }
        } else {
            let out = b
                .app
                .execute(target(b.variant), input, ctx())
                .await
                .expect("run");
            black_box(out);
        }
    });
}

#[library_benchmark]
#[bench::execute_2_turns_1_call_4_interceptors(args = ("execute"), setup = setup)]
#[bench::stream_2_turns_1_call_4_interceptors(args = ("stream"), setup = setup)]
#[bench::execute_with_2_guardrails(args = ("guarded"), setup = setup)]
#[bench::stream_with_2_guardrails(args = ("stream_guarded"), setup = setup)]
#[bench::execute_1_turn_no_tools(args = ("chat"), setup = setup)]
#[bench::execute_with_usage_limits(args = ("limits"), setup = setup)]
fn runs_100(b: Bench) -> Bench {
    for _ in 0..RUNS {
        one_run(&b);
    }
    b
}

library_benchmark_group!(
    name = runs;
    benchmarks = runs_100
);

main!(library_benchmark_groups = runs);
