//! Input and output guardrails at the text boundary of agents and routers: verdicts, cascade
//! order and exclusions, `on_error`, the parallel mode, streaming hold-back and windows,
//! fail-closed checks, answer masking, threads.
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agboss_core::dto::Dto;
use agboss_core::engine::workflow::{Flow, Recovery, WorkflowFlow};
use agboss_core::engine::{RunContext, RunError, RunEvent, Target};
use agboss_core::error::GuardrailBlockedError;
use agboss_core::prelude::*;
use agboss_core::store::{MemoryStore, NewThread};
use agboss_testing::scripted::{ScriptedModel, Turn};
use agboss_testing::{TestOptions, test_input_guardrail};
use serde_json::json;

mod cascade;
mod streaming;
mod threads;
mod verdicts;

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct LookupDto {
    #[text(prompt = "What to look up")]
    pub query: String,
}

/// What ran, in order.
#[injectable(provided)]
#[derive(Default)]
pub struct Log {
    entries: Mutex<Vec<String>>,
}

impl Log {
    fn push(&self, entry: impl Into<String>) {
        self.entries.lock().unwrap().push(entry.into());
    }
    fn entries(&self) -> Vec<String> {
        self.entries.lock().unwrap().clone()
    }
}

#[tool(name = "lookup-tool", description = "Looks things up", input = LookupDto, output = LookupDto, deps = [Log])]
pub struct LookupTool {
    log: Arc<Log>,
}

impl ToolHandler<LookupDto, LookupDto> for LookupTool {
    async fn run(&self, input: LookupDto) -> Result<LookupDto, ToolError> {
        self.log.push(format!("tool:{}", input.query));
        Ok(input)
    }
}

macro_rules! recording_input_guardrail {
    ($ty:ident, $name:literal $(, $flag:ident)*) => {
        #[input_guardrail(name = $name, description = "Records that it ran", deps = [Log] $(, $flag)*)]
        pub struct $ty {
            log: Arc<Log>,
        }
        impl InputGuardrail for $ty {
            async fn check_input(
                &self,
                input: &GuardrailContext<'_>,
            ) -> Result<GuardrailVerdict, GuardrailError> {
                self.log.push(format!("{}@{}", $name, input.step()));
                Ok(GuardrailVerdict::pass())
            }
        }
    };
}

recording_input_guardrail!(OuterInputGuardrail, "outer-input-guardrail");
recording_input_guardrail!(InnerInputGuardrail, "inner-input-guardrail");
recording_input_guardrail!(CheapInputGuardrail, "cheap-input-guardrail", cheap);
recording_input_guardrail!(RouterInputGuardrail, "router-input-guardrail");

/// Blocks an injection, answers a policy question itself, redacts passwords.
#[input_guardrail(
    name = "policy-input-guardrail",
    description = "Refuses prompt injections"
)]
pub struct PolicyInputGuardrail;

impl InputGuardrail for PolicyInputGuardrail {
    async fn check_input(
        &self,
        input: &GuardrailContext<'_>,
    ) -> Result<GuardrailVerdict, GuardrailError> {
        let text = input.text();
        Ok(if text.contains("ignore previous instructions") {
            GuardrailVerdict::block("prompt injection")
        } else if text.contains("refund policy?") {
            GuardrailVerdict::respond("Refunds take 5 days.")
        } else if let Some(at) = text.find("password=") {
            GuardrailVerdict::rewrite(format!("{}password=[redacted]", &text[..at]))
        } else {
            GuardrailVerdict::pass()
        })
    }
}

/// Blocks answers (and windows) that carry the key `sk-1234`; rewrites `secret`.
#[output_guardrail(name = "secret-output-guardrail", description = "Keeps keys out of answers", deps = [Log])]
pub struct SecretOutputGuardrail {
    log: Arc<Log>,
}

impl OutputGuardrail for SecretOutputGuardrail {
    async fn check_output(
        &self,
        output: &GuardrailContext<'_>,
    ) -> Result<GuardrailVerdict, GuardrailError> {
        self.log
            .push(format!("secret:{:?}:{}", output.scope(), output.text()));
        let text = output.text();
        Ok(if text.contains("sk-1234") {
            GuardrailVerdict::block("an API key")
        } else if text.contains("secret") {
            GuardrailVerdict::rewrite(text.replace("secret", "[redacted]"))
        } else if text.contains("off-topic") {
            GuardrailVerdict::respond("Let's stay on topic.")
        } else {
            GuardrailVerdict::pass()
        })
    }
}

/// Slow and parallel: blocks inputs that say `forbidden`.
#[input_guardrail(name = "slow-input-guardrail", description = "A slow moderation call", deps = [Log], parallel)]
pub struct SlowInputGuardrail {
    log: Arc<Log>,
}

impl InputGuardrail for SlowInputGuardrail {
    async fn check_input(
        &self,
        input: &GuardrailContext<'_>,
    ) -> Result<GuardrailVerdict, GuardrailError> {
        tokio::time::sleep(Duration::from_millis(60)).await;
        self.log.push("slow-done");
        Ok(if input.text().contains("forbidden") {
            GuardrailVerdict::block("forbidden topic")
        } else if input.text().contains("rename") {
            GuardrailVerdict::rewrite("renamed input")
        } else {
            GuardrailVerdict::pass()
        })
    }
}

/// Errors on `fail`, panics on `panic`, hangs on `hang`.
#[input_guardrail(
    name = "broken-input-guardrail",
    description = "Misbehaves",
    timeout_ms = 50
)]
pub struct BrokenInputGuardrail;

impl InputGuardrail for BrokenInputGuardrail {
    async fn check_input(
        &self,
        input: &GuardrailContext<'_>,
    ) -> Result<GuardrailVerdict, GuardrailError> {
        match input.text() {
            "fail" => Err(GuardrailError::msg("moderation service down")),
            "panic" => panic!("guardrail bug"),
            "hang" => {
                std::future::pending::<()>().await;
                unreachable!()
            }
            _ => Ok(GuardrailVerdict::pass()),
        }
    }
}

/// Sees the run's tenant.
#[input_guardrail(name = "tenant-input-guardrail", description = "Refuses banned tenants", deps = [TenantContext])]
pub struct TenantInputGuardrail {
    tenant: TenantContext,
}

impl InputGuardrail for TenantInputGuardrail {
    async fn check_input(
        &self,
        _input: &GuardrailContext<'_>,
    ) -> Result<GuardrailVerdict, GuardrailError> {
        Ok(if self.tenant.tenant_id() == "banned" {
            GuardrailVerdict::block("tenant banned")
        } else {
            GuardrailVerdict::pass()
        })
    }
}

#[pii_policy(name = "answer-email-pii-policy", description = "Masks e-mails", detectors = [email])]
pub struct AnswerEmailPiiPolicy;

#[agent(
    name = "desk-agent",
    description = "Answers customers",
    tools = [LookupTool],
    input_guardrails = [PolicyInputGuardrail],
    output_guardrails = [SecretOutputGuardrail],
)]
pub struct DeskAgent;

#[agent(
    name = "order-agent",
    description = "Orders",
    input_guardrails = [InnerInputGuardrail, CheapInputGuardrail],
)]
pub struct OrderAgent;

#[agent(
    name = "excluding-agent",
    description = "Excludes the outer guardrail",
    input_guardrails = [InnerInputGuardrail],
    exclude_input_guardrails = [OuterInputGuardrail],
)]
pub struct ExcludingAgent;

#[agent(
    name = "parallel-agent",
    description = "Starts its model at once",
    tools = [LookupTool],
    input_guardrails = [SlowInputGuardrail],
)]
pub struct ParallelAgent;

#[agent(name = "broken-agent", description = "Misbehaving guardrail", input_guardrails = [BrokenInputGuardrail])]
pub struct BrokenAgent;

#[agent(name = "tenant-agent", description = "Per-tenant guardrail", input_guardrails = [TenantInputGuardrail])]
pub struct TenantAgent;

#[agent(
    name = "masked-agent",
    description = "Masks its answers",
    pii_policies = [AnswerEmailPiiPolicy],
    mask_answer,
)]
pub struct MaskedAgent;

#[router(
    name = "desk-router",
    description = "Routes",
    routes = [OrderAgent, DeskAgent],
    input_guardrails = [RouterInputGuardrail],
)]
pub struct DeskRouter;

#[workflow(name = "guarded-workflow", description = "One guarded step", agents = [DeskAgent])]
pub struct GuardedWorkflow;

impl WorkflowFlow for GuardedWorkflow {
    fn flow() -> Flow {
        Flow::new()
            .agent::<DeskAgent>()
            .on_error(|err, _ctx| match err.as_guardrail_blocked() {
                Some(blocked) => Ok(Recovery::Output(format!("refused: {}", blocked.text()))),
                None => Err(err),
            })
    }
}

fn app_with(model: &Arc<ScriptedModel>, log: &Arc<Log>) -> AppBuilder {
    App::builder()
        .name("guard-application")
        .agent::<DeskAgent>()
        .agent::<OrderAgent>()
        .agent::<ExcludingAgent>()
        .agent::<ParallelAgent>()
        .agent::<BrokenAgent>()
        .agent::<TenantAgent>()
        .agent::<MaskedAgent>()
        .router::<DeskRouter>()
        .workflow::<GuardedWorkflow>()
        .input_guardrail::<OuterInputGuardrail>()
        .provide_arc(Arc::clone(log))
        .shared_model(Arc::clone(model) as _)
}

fn guarded_app(turns: impl IntoIterator<Item = Turn>) -> (App, Arc<ScriptedModel>, Arc<Log>) {
    let model = Arc::new(ScriptedModel::new(turns));
    let log = Arc::new(Log::default());
    let app = app_with(&model, &log).build().unwrap();
    (app, model, log)
}

fn verdicts(events: &[RunEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            RunEvent::GuardrailVerdict {
                guardrail,
                boundary,
                verdict,
                ..
            } => Some(format!("{boundary}:{guardrail}:{verdict}")),
            _ => None,
        })
        .collect()
}

fn deltas(events: &[RunEvent]) -> String {
    events
        .iter()
        .filter_map(|e| match e {
            RunEvent::TextDelta { delta, .. } => Some(delta.as_str()),
            _ => None,
        })
        .collect()
}

fn guardrail_block(err: &RunError) -> &GuardrailBlockedError {
    err.as_step_failed()
        .and_then(StepFailedError::as_guardrail_blocked)
        .unwrap_or_else(|| panic!("not a guardrail block: {err:?}"))
}
