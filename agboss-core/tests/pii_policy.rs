//! PII policies in the pipeline, the `max_result_size` cascade and the `tool_call` tracing span.
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use agboss_core::callback::listener::{ToolCallInfo, ToolCallListener, ToolCallListeners};
use agboss_core::callback::{ToolCallback, ToolInvocation};
use agboss_core::dto::Dto;
use agboss_core::pii::{Detector, PiiMatch};
use agboss_core::pipeline::TRUNCATION_MARKER;
use agboss_core::*;
use proptest::prelude::*;

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

#[tokio::test]
async fn policies_of_every_scope_apply_outermost_first() {
    let app = app();
    let agent = app.agent_in::<PpCareWorkflow, PpSupportAgent>().unwrap();
    let echo = agent.tool("pp-echo-tool").unwrap();
    assert_eq!(
        echo.chain().pii().names(),
        [
            "pp-email-pii-policy",
            "pp-ticket-pii-policy",
            "pp-ip-pii-policy",
            "pp-card-pii-policy"
        ]
    );
    let text = "jane@example.com TCK-1234 card 4242 4242 4242 4242 ip 10.0.0.7";
    let out = echo.call("c", None, &note(text)).await;
    let CallOutcome::Ran(Rendered { text: out, .. }) = out else {
        panic!("ran")
    };
    let value: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        value["note"],
        "[REDACTED:email] [REDACTED:ticket] card ************4242 ip [REDACTED:ipv4]"
    );
    // The typed field keeps its type.
    assert_eq!(value["count"], text.len() as i64);
    // describe() lists each path's policies; the registry knows them by name.
    assert!(
        app.describe().contains(
            "pii policies: pp-email-pii-policy, pp-ticket-pii-policy, pp-ip-pii-policy, pp-card-pii-policy"
        ),
        "{}",
        app.describe()
    );
    assert!(
        agboss_core::contract::registry::all()
            .any(|r| r.kind() == "pii-policy" && r.name() == "pp-card-pii-policy")
    );
    // The direct chain has the application's and the tool's policies only.
    let direct = app.tool_by_name("pp-echo-tool").unwrap();
    let out = direct.invoke_json(&note(text)).await.unwrap();
    assert!(
        out.contains("[REDACTED:email] TCK-1234 card ************4242 ip 10.0.0.7"),
        "{out}"
    );
}

#[tokio::test]
async fn a_reply_to_model_message_is_masked() {
    let app = app();
    let cb = agent_tool(&app, true, "pp-support-agent", "pp-echo-tool");
    let out = cb.call(inv(&note("reply:jane@example.com"))).await;
    assert!(
        matches!(
            &out,
            CallOutcome::Replied { message, interceptor: "pp-reply-tool-interceptor" }
                if message == "Ask [REDACTED:email] to confirm"
        ),
        "{out:?}"
    );
}

#[tokio::test]
async fn error_texts_sent_to_the_model_are_masked() {
    let app = app();
    let cb = agent_tool(&app, true, "pp-support-agent", "pp-echo-tool");
    let err = cb
        .call(inv(&note("fail:10.1.2.3 for jane@example.com")))
        .await
        .into_result()
        .unwrap_err();
    // The typed error is the program's, unmasked; what goes to the model is masked.
    assert!(err.to_string().contains("jane@example.com"));
    assert_eq!(
        cb.mask_for_model(&err.to_string()),
        "tool `pp-echo-tool` failed: cannot reach [REDACTED:ipv4] for [REDACTED:email]"
    );
    // A listener's report goes through the same masking.
    struct Report;
    impl ToolCallListener for Report {
        type Context = ();
        fn on_error(&self, _: &mut (), _: &ToolCallInfo<'_>, e: &ToolCallError) -> Option<String> {
            Some(e.to_string())
        }
    }
    let wrapped = ToolCallListeners::wrap(cb, Report);
    let out = wrapped
        .call(inv(&note("fail:10.1.2.3 for jane@example.com")))
        .await;
    assert_eq!(
        out.model_text().unwrap(),
        "tool `pp-echo-tool` failed: cannot reach [REDACTED:ipv4] for [REDACTED:email]"
    );
}

#[tokio::test]
async fn masking_happens_on_the_whole_value_so_a_cut_cannot_leak_half_a_value() {
    let app = app();
    // pp-small-tool: 90 bytes, 33 of them kept before the marker; the e-mail straddles the cut.
    let cb = agent_tool(&app, true, "pp-support-agent", "pp-small-tool");
    let out = cb
        .call(inv(&note(&format!(
            "aaaaaaaa jane.doe@example.com {}",
            "b".repeat(100)
        ))))
        .await;
    let CallOutcome::Ran(Rendered {
        text: content,
        truncated,
    }) = out
    else {
        panic!("output")
    };
    assert!(truncated);
    assert_eq!(content.len(), 90, "{content}");
    assert!(!content.contains("jane"), "{content}");
    assert!(content.ends_with(TRUNCATION_MARKER));
    assert!(content.contains(r#""note":"aaaaaaaa [RE"#), "{content}");
}

#[test]
fn max_result_size_innermost_wins() {
    let app = app();
    let support = app.agent_in::<PpCareWorkflow, PpSupportAgent>().unwrap();
    // tool 90, agent 120, workflow 150, application 200.
    assert_eq!(
        support.tool("pp-small-tool").unwrap().max_result_size(),
        Some(90)
    );
    assert_eq!(
        support.tool("pp-big-tool").unwrap().max_result_size(),
        Some(120)
    );
    let plain_in_workflow = app.agent_in::<PpCareWorkflow, PpPlainAgent>().unwrap();
    assert_eq!(
        plain_in_workflow
            .tool("pp-big-tool")
            .unwrap()
            .max_result_size(),
        Some(150)
    );
    let plain_direct = app
        .agents()
        .find(|a| a.meta.name == "pp-plain-agent" && a.workflow().is_none())
        .unwrap();
    assert_eq!(
        plain_direct.tool("pp-big-tool").unwrap().max_result_size(),
        Some(200)
    );
    // The callback's metadata reports the effective limit.
    let cb = agent_tool(&app, true, "pp-support-agent", "pp-big-tool");
    assert_eq!(cb.metadata().max_result_size, Some(120));
}

#[tokio::test]
async fn the_effective_limit_is_the_one_that_truncates() {
    let app = app();
    let long = "x".repeat(500);
    for (workflow, agent, tool, max) in [
        (true, "pp-support-agent", "pp-small-tool", 90),
        (true, "pp-support-agent", "pp-big-tool", 120),
        (true, "pp-plain-agent", "pp-big-tool", 150),
        (false, "pp-plain-agent", "pp-big-tool", 200),
    ] {
        let cb = agent_tool(&app, workflow, agent, tool);
        let out = cb.call(inv(&note(&long))).await;
        let CallOutcome::Ran(Rendered {
            text: content,
            truncated,
        }) = out
        else {
            panic!("output")
        };
        assert!(truncated);
        assert_eq!(content.len(), max, "{agent}/{tool}");
        assert!(content.ends_with(TRUNCATION_MARKER));
    }
}

#[test]
fn a_hash_policy_without_its_key_is_a_build_error() {
    let err = App::builder()
        .pii_policy::<PpHashPiiPolicy>()
        .tool::<PpBigTool>()
        .build()
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("`pp-hash-pii-policy`: the `hash` strategy reads its key from the environment variable `PP_TEST_PII_KEY_UNSET`"),
        "{err}"
    );
}

#[tokio::test]
async fn an_app_builder_policy_applies_to_every_tool() {
    let app = App::builder()
        .pii_policy::<PpAllPiiPolicy>()
        .tool::<PpBigTool>()
        .build()
        .unwrap();
    let out = app
        .tool::<PpBigTool>()
        .invoke_json(&note(
            "call +1 415 555 2671 or mail a@b.io, ssn 123-45-6789",
        ))
        .await
        .unwrap();
    assert_eq!(
        out,
        note("call [REDACTED:phone] or mail [REDACTED:email], ssn [REDACTED:ssn]")
    );
    // The typed direct invoke is not masked (no model reads it).
    let typed = app
        .tool::<PpBigTool>()
        .invoke(PpNoteDto {
            note: "a@b.io".into(),
        })
        .await
        .unwrap();
    assert_eq!(typed.note, "a@b.io");
}

// --- Property: masked output never contains a detected value ---------------------------------

fn pii_value() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z]{1,8}\\.[a-z]{1,8}@[a-z]{2,8}\\.(com|org|io)",
        Just("4242 4242 4242 4242".to_string()),
        Just("5555-5555-5555-4444".to_string()),
        Just("DE89 3704 0044 0532 0130 00".to_string()),
        Just("123-45-6789".to_string()),
        (1u8..=254, 0u8..=255, 0u8..=255, 1u8..=254)
            .prop_map(|(a, b, c, d)| format!("{a}.{b}.{c}.{d}")),
        Just("2001:db8::8a2e:370:7334".to_string()),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn masked_output_never_contains_a_detected_value(
        values in proptest::collection::vec(pii_value(), 1..4),
        filler in "[a-z ]{0,20}",
        max in prop_oneof![Just(None), (60usize..200).prop_map(Some)],
    ) {
        let mut builder = App::builder().pii_policy::<PpAllPiiPolicy>().tool::<PpBigTool>();
        if let Some(max) = max {
            builder = builder.max_result_size(max);
        }
        let app = builder.build().unwrap();
        let text = values.join(&format!(" {filler} "));
        let out = futures::executor::block_on(app.tool::<PpBigTool>().invoke_json(&note(&text))).unwrap();
        for v in &values {
            prop_assert!(!out.contains(v.as_str()), "{v} leaked in {out}");
        }
        if let Some(max) = max {
            prop_assert!(out.len() <= max);
        }
    }
}

// --- Tracing -------------------------------------------------------------------------------------

#[derive(Clone, Default)]
struct Captured {
    spans: Arc<Mutex<Vec<HashMap<String, String>>>>,
    events: Arc<Mutex<Vec<HashMap<String, String>>>>,
}

struct Visit<'a>(&'a mut HashMap<String, String>);
impl tracing::field::Visit for Visit<'_> {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        self.0.insert(
            field.name().to_string(),
            format!("{value:?}").trim_matches('"').to_string(),
        );
    }
    fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
        self.0.insert(field.name().to_string(), value.to_string());
    }
}

struct Fields(Mutex<HashMap<String, String>>);

impl<S> tracing_subscriber::Layer<S> for Captured
where
    S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
{
    fn on_new_span(
        &self,
        attrs: &tracing::span::Attributes<'_>,
        id: &tracing::span::Id,
        ctx: tracing_subscriber::layer::Context<'_, S>,
    ) {
        let mut map = HashMap::new();
        map.insert("name".into(), attrs.metadata().name().to_string());
        attrs.record(&mut Visit(&mut map));
        ctx.span(id)
            .unwrap()
            .extensions_mut()
            .insert(Fields(Mutex::new(map)));
    }
    fn on_record(
        &self,
        id: &tracing::span::Id,
        values: &tracing::span::Record<'_>,
        ctx: tracing_subscriber::layer::Context<'_, S>,
    ) {
        let span = ctx.span(id).unwrap();
        let ext = span.extensions();
        let mut map = ext.get::<Fields>().unwrap().0.lock().unwrap();
        // How often each field is recorded (`name#`): a `fmt` subscriber prints every record.
        let mut recorded = HashMap::new();
        values.record(&mut Visit(&mut recorded));
        for (k, v) in recorded {
            let n = map
                .get(&format!("{k}#"))
                .map_or(0, |n| n.parse::<u32>().unwrap())
                + 1;
            map.insert(format!("{k}#"), n.to_string());
            map.insert(k, v);
        }
    }
    fn on_event(&self, event: &tracing::Event<'_>, _: tracing_subscriber::layer::Context<'_, S>) {
        let mut map = HashMap::new();
        event.record(&mut Visit(&mut map));
        self.events.lock().unwrap().push(map);
    }
    fn on_close(&self, id: tracing::span::Id, ctx: tracing_subscriber::layer::Context<'_, S>) {
        let span = ctx.span(&id).unwrap();
        let ext = span.extensions();
        let map = ext.get::<Fields>().unwrap().0.lock().unwrap().clone();
        self.spans.lock().unwrap().push(map);
    }
}

#[test]
fn every_tool_call_has_a_span_with_its_decision_and_outcome() {
    use tracing_subscriber::layer::SubscriberExt as _;
    let captured = Captured::default();
    let subscriber = tracing_subscriber::registry().with(captured.clone());
    let _guard = tracing::subscriber::set_default(subscriber);
    // Other tests of this binary hit the same callsites on other threads with no subscriber:
    // recompute their interest now that this thread has one (tracing caches it per callsite).
    tracing::callsite::rebuild_interest_cache();
    let app = app();
    let cb = agent_tool(&app, true, "pp-support-agent", "pp-echo-tool");
    futures::executor::block_on(async {
        let ok = cb.call(call("ok-1", &note("mail jane@example.com"))).await;
        assert!(matches!(ok, CallOutcome::Ran(_)), "{ok:?}");
        let reply = cb.call(call("reply-1", &note("reply:bob"))).await;
        assert!(matches!(reply, CallOutcome::Replied { .. }), "{reply:?}");
        let bad = cb.call(call("bad-1", r#"{"note": 3}"#)).await;
        assert!(bad.error().is_some(), "{bad:?}");
        let fail = cb.call(call("fail-1", &note("fail:x"))).await;
        assert!(fail.error().is_some(), "{fail:?}");
    });
    let spans = captured.spans.lock().unwrap().clone();
    let span = |id: &str| {
        spans
            .iter()
            .find(|s| {
                s["name"] == "execute_tool"
                    && s.get("gen_ai.tool.call.id").map(String::as_str) == Some(id)
            })
            .unwrap_or_else(|| panic!("no span for {id}: {spans:?}"))
            .clone()
    };
    let ok = span("ok-1");
    assert_eq!(ok["gen_ai.tool.name"], "pp-echo-tool");
    assert_eq!(ok["otel.name"], "execute_tool pp-echo-tool");
    assert_eq!(
        ok["agboss.path"],
        "pp-care-application/pp-care-workflow/pp-support-agent"
    );
    assert_eq!(ok["agboss.decision"], "allowed");
    assert!(!ok.contains_key("agboss.interceptor"));
    assert_eq!(ok["agboss.outcome"], "ok");
    assert_eq!(ok["agboss.truncated"], "false");
    assert_eq!(ok["agboss.pii_masked"], "1");
    assert!(ok.contains_key("agboss.duration_us"));
    let reply = span("reply-1");
    assert_eq!(reply["agboss.decision"], "replied_to_model");
    assert_eq!(reply["agboss.interceptor"], "pp-reply-tool-interceptor");
    assert_eq!(reply["agboss.outcome"], "reply_to_model");
    // One decision per span, recorded once (a `fmt` subscriber prints each record).
    for s in [&ok, &reply] {
        assert_eq!(s["agboss.decision#"], "1", "{s:?}");
    }
    assert_eq!(span("bad-1")["agboss.decision"], "rejected");
    assert_eq!(span("bad-1")["agboss.outcome"], "invalid_input");
    assert_eq!(span("bad-1")["error.type"], "invalid_input");
    assert_eq!(span("fail-1")["agboss.outcome"], "tool_error");
    // One event per interceptor decision.
    let events = captured.events.lock().unwrap();
    let decisions: Vec<&str> = events
        .iter()
        .filter(|e| e.get("message").map(String::as_str) == Some("before_tool_call"))
        .map(|e| e["decision"].as_str())
        .collect();
    assert_eq!(decisions, ["allow", "reply_to_model", "allow"]);
}
