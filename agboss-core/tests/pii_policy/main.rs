//! PII policies in the pipeline, the `max_result_size` cascade and the `tool_call` tracing span.
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use agboss_core::callback::listener::{ToolCallInfo, ToolCallListener, ToolCallListeners};
use agboss_core::callback::{ToolCallback, ToolInvocation};
use agboss_core::contract::outcome::Rendered;
use agboss_core::dto::Dto;
use agboss_core::pii::{Detector, PiiMatch};
use agboss_core::pipeline::TRUNCATION_MARKER;
use agboss_core::*;
use proptest::prelude::*;

mod properties;
mod scopes;
mod spans;
mod truncation;

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct PpNoteDto {
    #[text(prompt = "A note")]
    pub note: String,
}

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct PpRecordDto {
    #[text(prompt = "A note")]
    pub note: String,
    #[integer(prompt = "A count")]
    pub count: i64,
}

#[pii_policy(name = "pp-email-pii-policy", description = "Masks e-mails", detectors = [email])]
pub struct PpEmailPiiPolicy;

#[pii_policy(name = "pp-card-pii-policy", description = "Masks cards, keeping 4 digits",
             detectors = [card], strategy = "partial", keep = 4)]
pub struct PpCardPiiPolicy;

#[pii_policy(name = "pp-ip-pii-policy", description = "Masks IP addresses", detectors = [ipv4, ipv6])]
pub struct PpIpPiiPolicy;

#[derive(Default)]
pub struct PpTicketDetector;
impl Detector for PpTicketDetector {
    fn name(&self) -> &str {
        "ticket"
    }
    fn find(&self, text: &str, out: &mut Vec<PiiMatch>) {
        for (i, _) in text.match_indices("TCK-") {
            if text.len() >= i + 8 {
                out.push(PiiMatch::new(i..i + 8));
            }
        }
    }
}

#[pii_policy(name = "pp-ticket-pii-policy", description = "Masks ticket ids",
             custom_detectors = [PpTicketDetector])]
pub struct PpTicketPiiPolicy;

#[pii_policy(name = "pp-hash-pii-policy", description = "Hashes e-mails", detectors = [email],
             strategy = "hash", hash_key_env = "PP_TEST_PII_KEY_UNSET")]
pub struct PpHashPiiPolicy;

#[pii_policy(name = "pp-all-pii-policy", description = "Every built-in detector")]
pub struct PpAllPiiPolicy;

#[tool(name = "pp-echo-tool", description = "Echoes a note", input = PpNoteDto,
       output = PpRecordDto, pii_policies = [PpCardPiiPolicy],
       tool_interceptors = [PpReplyToolInterceptor])]
pub struct PpEchoTool;

impl ToolHandler<PpNoteDto, PpRecordDto> for PpEchoTool {
    async fn run(&self, input: PpNoteDto) -> Result<PpRecordDto, ToolError> {
        if let Some(rest) = input.note.strip_prefix("fail:") {
            return Err(ToolError::msg(format!("cannot reach {rest}")));
        }
        Ok(PpRecordDto {
            count: input.note.len() as i64,
            note: input.note,
        })
    }
}

#[tool_interceptor(
    name = "pp-reply-tool-interceptor",
    description = "Replies with the note"
)]
pub struct PpReplyToolInterceptor;

impl BeforeToolCall for PpReplyToolInterceptor {
    async fn before_tool_call(
        &self,
        call: &ToolCallContext<'_>,
    ) -> Result<ToolCallDecision, InterceptorError> {
        let note = call.input()["note"].as_str().unwrap_or_default();
        Ok(match note.strip_prefix("reply:") {
            Some(rest) => ToolCallDecision::reply_to_model(format!("Ask {rest} to confirm")),
            None => ToolCallDecision::allow(),
        })
    }
}

#[tool(name = "pp-big-tool", description = "Echoes", input = PpNoteDto, output = PpNoteDto)]
pub struct PpBigTool;
impl ToolHandler<PpNoteDto, PpNoteDto> for PpBigTool {
    async fn run(&self, input: PpNoteDto) -> Result<PpNoteDto, ToolError> {
        Ok(input)
    }
}

#[tool(name = "pp-small-tool", description = "Echoes with its own limit", input = PpNoteDto,
       output = PpNoteDto, max_result_size = 90)]
pub struct PpSmallTool;
impl ToolHandler<PpNoteDto, PpNoteDto> for PpSmallTool {
    async fn run(&self, input: PpNoteDto) -> Result<PpNoteDto, ToolError> {
        Ok(input)
    }
}

#[agent(name = "pp-support-agent", description = "Support", tools = [PpEchoTool, PpBigTool, PpSmallTool],
        pii_policies = [PpIpPiiPolicy], max_result_size = 120)]
pub struct PpSupportAgent;

#[agent(name = "pp-plain-agent", description = "No own limit", tools = [PpBigTool])]
pub struct PpPlainAgent;

#[workflow(name = "pp-care-workflow", description = "Care", agents = [PpSupportAgent, PpPlainAgent],
           pii_policies = [PpTicketPiiPolicy], max_result_size = 150)]
pub struct PpCareWorkflow;

#[application(name = "pp-care-application", description = "Care app", workflows = [PpCareWorkflow],
              agents = [PpPlainAgent], pii_policies = [PpEmailPiiPolicy], max_result_size = 200)]
pub struct PpCareApplication;

fn app() -> App {
    App::builder()
        .application::<PpCareApplication>()
        .build()
        .expect("app builds")
}

fn inv<'a>(arguments: &'a str) -> ToolInvocation<'a> {
    ToolInvocation::new("call-1", arguments)
}

fn call<'a>(call_id: &'a str, arguments: &'a str) -> ToolInvocation<'a> {
    ToolInvocation::new(call_id, arguments)
}

fn note(text: &str) -> String {
    serde_json::json!({ "note": text }).to_string()
}

fn agent_tool(app: &App, workflow: bool, agent: &str, tool: &str) -> Arc<dyn ToolCallback> {
    let agent = app
        .agents()
        .find(|a| a.meta.name == agent && a.workflow().is_some() == workflow)
        .unwrap();
    app.agent_callbacks(agent)
        .into_iter()
        .find(|c| c.definition().name == tool)
        .unwrap()
}
