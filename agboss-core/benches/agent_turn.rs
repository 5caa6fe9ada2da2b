//! One full agent run on a scripted (deterministic, in-memory) model: 2 model turns and 1 tool
//! call through 4 allowing interceptors, by `execute` and by `stream`; plus a 1-turn run without
//! tools and the bare guarded tool call on the same path, so that the framework overhead per
//! turn and per tool call can be read off; and the same 2-turn run with 4 passing guardrails
//! (2 input, 2 output), for the cost of the text boundary; the 2-turn run under usage limits
//! (every call reserved in the run's budget), for the cost of a limit check; and a 1-turn run
//! of an agent with a typed output, for the cost of asking for and validating it; and the
//! 2-turn run journaled in a memory and an in-memory SQLite store, without and with a tenant
//! window (each call reserved in the store), for the cost of a tenant window. Run with
//! `cargo bench -p agboss-core --bench agent_turn`.
use std::time::Duration;

use agboss_core::dto::Dto;
use agboss_core::engine::{RunContext, Target, UsageLimits};
use agboss_core::model::{ChatModel, ModelError, ModelRequest, ModelResponse};
use agboss_core::prelude::*;
use criterion::{Criterion, criterion_group, criterion_main};
use futures::StreamExt as _;

mod fixture;
use fixture::*;

run_fixture!();

macro_rules! passing_guardrails {
    ($($input:ident $in_name:literal),* ; $($output:ident $out_name:literal),*) => {
        $(
            #[input_guardrail(name = $in_name, description = "Passes")]
            pub struct $input;
            impl InputGuardrail for $input {
                async fn check_input(&self, input: &GuardrailContext<'_>) -> Result<GuardrailVerdict, GuardrailError> {
                    std::hint::black_box(input.text());
                    Ok(GuardrailVerdict::pass())
                }
            }
        )*
        $(
            #[output_guardrail(name = $out_name, description = "Passes")]
            pub struct $output;
            impl OutputGuardrail for $output {
                async fn check_output(&self, output: &GuardrailContext<'_>) -> Result<GuardrailVerdict, GuardrailError> {
                    std::hint::black_box(output.text());
                    Ok(GuardrailVerdict::pass())
                }
            }
        )*
    };
}

passing_guardrails!(
    G1InputGuardrail "g1-input-guardrail", G2InputGuardrail "g2-input-guardrail";
    G3OutputGuardrail "g3-output-guardrail", G4OutputGuardrail "g4-output-guardrail"
);

/// `BenchAgent` with 4 passing guardrails (2 on the input, 2 on the answer).
#[agent(name = "guarded-bench-agent", description = "Looks orders up, guarded", tools = [GetOrderTool],
        instructions = "You look orders up.",
        tool_interceptors = [A1ToolInterceptor, A2ToolInterceptor, A3ToolInterceptor, A4ToolInterceptor],
        input_guardrails = [G1InputGuardrail, G2InputGuardrail],
        output_guardrails = [G3OutputGuardrail, G4OutputGuardrail])]
pub struct GuardedBenchAgent;

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct QuoteDto {
    #[text(prompt = "Order id", min_length = 3)]
    pub order_id: String,
    #[integer(prompt = "Total in cents", min = 0)]
    pub total_cents: u64,
}

/// A one-turn agent whose answer is a `QuoteDto`.
#[agent(name = "typed-bench-agent", description = "Quotes orders", output = QuoteDto)]
pub struct TypedBenchAgent;

/// Answers every request with the same valid `QuoteDto` (as a structured-mode provider would).
struct QuoteModel;
impl ChatModel for QuoteModel {
    async fn complete(&self, _req: &ModelRequest) -> Result<ModelResponse, ModelError> {
        Ok(ModelResponse::text(
            r#"{"orderId":"ACME-42","totalCents":12500}"#,
        ))
    }
    fn structured_output(&self) -> bool {
        true
    }
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let app = App::builder()
        .agent::<BenchAgent>()
        .agent::<ChatAgent>()
        .agent::<GuardedBenchAgent>()
        .agent::<TypedBenchAgent>()
        .model(TwoTurnModel)
        .agent_model("typed-bench-agent", std::sync::Arc::new(QuoteModel))
        .build()
        .unwrap();
    let mut g = c.benchmark_group("agent_turn");
    g.measurement_time(Duration::from_secs(3))
        .warm_up_time(Duration::from_secs(1));

    g.bench_function("execute_2_turns_1_call_4_interceptors", |b| {
        b.to_async(&rt).iter(|| async {
            let out = app
                .execute(
                    Target::agent::<BenchAgent>(),
                    "where is ACME-42?",
                    RunContext::new(),
                )
                .await
                .unwrap();
            std::hint::black_box(out);
        });
    });
    g.bench_function("stream_2_turns_1_call_4_interceptors", |b| {
        b.to_async(&rt).iter(|| async {
            let mut s = app.stream(
                Target::agent::<BenchAgent>(),
                "where is ACME-42?",
                RunContext::new(),
            );
            while let Some(ev) = s.next().await {
                std::hint::black_box(ev.unwrap());
            }
        });
    });
    g.bench_function("execute_2_turns_1_call_4_interceptors_4_guardrails", |b| {
        b.to_async(&rt).iter(|| async {
            let out = app
                .execute(
                    Target::agent::<GuardedBenchAgent>(),
                    "where is ACME-42?",
                    RunContext::new(),
                )
                .await
                .unwrap();
            std::hint::black_box(out);
        });
    });
    g.bench_function("stream_2_turns_1_call_4_interceptors_4_guardrails", |b| {
        b.to_async(&rt).iter(|| async {
            let mut s = app.stream(
                Target::agent::<GuardedBenchAgent>(),
                "where is ACME-42?",
                RunContext::new(),
            );
            while let Some(ev) = s.next().await {
                std::hint::black_box(ev.unwrap());
            }
        });
    });
    g.bench_function("execute_2_turns_1_call_4_interceptors_usage_limits", |b| {
        b.to_async(&rt).iter(|| async {
            let limits = UsageLimits::new()
                .model_requests(100)
                .tool_calls(100)
                .tool_calls_of("get-order-tool", 100)
                .output_tokens(1_000_000);
            let out = app
                .execute(
                    Target::agent::<BenchAgent>(),
                    "where is ACME-42?",
                    RunContext::new().usage_limits(limits),
                )
                .await
                .unwrap();
            std::hint::black_box(out);
        });
    });
    g.bench_function("execute_1_turn_typed_output", |b| {
        b.to_async(&rt).iter(|| async {
            let out = app
                .execute(
                    Target::agent::<TypedBenchAgent>(),
                    "quote ACME-42",
                    RunContext::new(),
                )
                .await
                .unwrap();
            std::hint::black_box(out.value::<QuoteDto>().unwrap());
        });
    });
    g.bench_function("execute_1_turn_no_tools", |b| {
        b.to_async(&rt).iter(|| async {
            let out = app
                .execute(Target::agent::<ChatAgent>(), "hi", RunContext::new())
                .await
                .unwrap();
            std::hint::black_box(out);
        });
    });
    // Journaled runs, without and with a tenant window (every call reserved in the store before
    // it starts, the model's tokens settled after): the window's cost is the difference.
    let window = UsageLimits::new()
        .model_requests(u64::MAX / 2)
        .tool_calls(u64::MAX / 2)
        .output_tokens(u64::MAX / 2)
        .per_tenant(Duration::from_secs(86_400));
    // The SQL store's pool needs tokio's timers: the store lines run on a runtime of their own.
    let store_rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    for backend in ["memory", "sqlite"] {
        for tenant_window in [false, true] {
            let mut builder = App::builder().agent::<BenchAgent>().model(TwoTurnModel);
            builder = match backend {
                "memory" => builder.store(agboss_core::store::MemoryStore::new()),
                _ => builder.store(
                    store_rt
                        .block_on(agboss_core::store::SqliteStore::memory())
                        .unwrap(),
                ),
            };
            if tenant_window {
                builder = builder.tenant_usage_limits(window.clone());
            }
            let app = builder.build().unwrap();
            let name = format!(
                "execute_2_turns_1_call_4_interceptors_{backend}_store{}",
                if tenant_window { "_tenant_window" } else { "" }
            );
            g.bench_function(name, |b| {
                b.to_async(&store_rt).iter(|| async {
                    let ctx = RunContext::new().tenant("acme");
                    let out = app
                        .execute(Target::agent::<BenchAgent>(), "where is ACME-42?", ctx)
                        .await
                        .unwrap();
                    std::hint::black_box(out);
                });
            });
        }
    }
    let bound = app.agent::<BenchAgent>().unwrap().tools[0].clone();
    g.bench_function("tool_call_only_4_interceptors", |b| {
        b.to_async(&rt).iter(|| async {
            let out = bound
                .call("call_1", None, r#"{"orderId":"ACME-42"}"#)
                .await
                .into_result()
                .unwrap();
            std::hint::black_box(out);
        });
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
