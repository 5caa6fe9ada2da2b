//! Tracing: every tool call has a span with its decision and outcome.

use super::*;

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
    // Other tests of this binary hit the same callsites on other threads with no subscriber,
    // and tracing caches each callsite's interest: a callsite another thread registers while
    // this subscriber is being installed can keep an interest computed without it (a race in
    // tracing-core's registration, not in the pipeline). Once every callsite of these calls
    // is registered, rebuilding the cache is exact: a run that missed a span is run again.
    let (spans, captured) = (0..3)
        .find_map(|_| {
            let captured = Captured::default();
            let subscriber = tracing_subscriber::registry().with(captured.clone());
            let _guard = tracing::subscriber::set_default(subscriber);
            tracing::callsite::rebuild_interest_cache();
            let app = app();
            let cb = agent_tool(&app, true, "pp-support-agent", "pp-echo-tool");
            futures::executor::block_on(async {
                let ok = cb.call(call("ok-1", &note("mail jane@example.com"))).await;
                assert!(matches!(ok, CallOutcome::Ran(_)), "{ok:?}");
                let reply = cb.call(call("reply-1", &note("reply:bob"))).await;
                assert!(
                    matches!(reply, CallOutcome::ReplyToModel { .. }),
                    "{reply:?}"
                );
                let bad = cb.call(call("bad-1", r#"{"note": 3}"#)).await;
                assert!(bad.error().is_some(), "{bad:?}");
                let fail = cb.call(call("fail-1", &note("fail:x"))).await;
                assert!(fail.error().is_some(), "{fail:?}");
            });
            let spans = captured.spans.lock().unwrap().clone();
            let complete = ["ok-1", "reply-1", "bad-1", "fail-1"].iter().all(|id| {
                spans.iter().any(|s| {
                    s["name"] == "execute_tool"
                        && s.get("gen_ai.tool.call.id").map(String::as_str) == Some(*id)
                })
            });
            complete.then_some((spans, captured))
        })
        .expect("every call has its span within three runs");
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
