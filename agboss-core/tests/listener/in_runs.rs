//! Listeners in runs: cancelled calls, app-wide and per-agent listeners, many concurrent calls.

use super::*;

#[tokio::test]
async fn a_cancelled_call_drops_the_context_without_more_calls() {
    let (app, _) = app();
    let dropped = Arc::new(AtomicUsize::new(0));
    #[derive(Default)]
    struct Guard(Option<Arc<AtomicUsize>>);
    impl Drop for Guard {
        fn drop(&mut self) {
            if let Some(d) = &self.0 {
                d.fetch_add(1, Ordering::SeqCst);
            }
        }
    }
    struct L(Arc<AtomicUsize>, Arc<AtomicUsize>);
    impl ToolCallListener for L {
        type Context = Guard;
        fn before_call(&self, _: &ToolCallInfo<'_>) -> Guard {
            Guard(Some(Arc::clone(&self.0)))
        }
        fn after_completion(&self, _: Guard, _: &ToolCallInfo<'_>) {
            self.1.fetch_add(1, Ordering::SeqCst);
        }
    }
    let completions = Arc::new(AtomicUsize::new(0));
    let cb = ToolCallListeners::wrap(
        echo(&app),
        L(Arc::clone(&dropped), Arc::clone(&completions)),
    );
    let args = text("sleep");
    {
        let mut fut = cb.call(inv("c", &args));
        // Poll once: `before_call` ran, the tool is sleeping.
        assert!(futures::poll!(&mut fut).is_pending());
    }
    assert_eq!(dropped.load(Ordering::SeqCst), 1);
    assert_eq!(completions.load(Ordering::SeqCst), 0);
}

// --- App and agent listeners -----------------------------------------------------------------

#[tokio::test]
async fn listeners_attach_to_a_whole_app_and_to_one_agent() {
    let log = Arc::new(Mutex::new(Vec::<String>::new()));
    struct Tag(&'static str, Arc<Mutex<Vec<String>>>);
    impl ToolCallListener for Tag {
        type Context = ();
        fn before_call(&self, call: &ToolCallInfo<'_>) {
            self.1
                .lock()
                .unwrap()
                .push(format!("{} {}", self.0, call.tool_name));
        }
    }
    let app = App::builder()
        .agent::<LsnEchoAgent>()
        .tool_call_listener(Tag("app-1", Arc::clone(&log)))
        .tool_call_listener(Tag("app-2", Arc::clone(&log)))
        .agent_tool_call_listener("lsn-echo-agent", Tag("agent", Arc::clone(&log)))
        .agent_tool_call_listener("other-agent", Tag("other", Arc::clone(&log)))
        .provide(LsnRuns::default())
        .build()
        .unwrap();
    let agent = app.agent::<LsnEchoAgent>().unwrap();
    let callbacks = app.agent_callbacks(agent);
    assert_eq!(callbacks.len(), 1);
    callbacks[0]
        .call(inv("x", &text("hi")))
        .await
        .settle()
        .unwrap();
    assert_eq!(
        *log.lock().unwrap(),
        [
            "app-1 lsn-echo-tool",
            "app-2 lsn-echo-tool",
            "agent lsn-echo-tool"
        ]
    );
    // The agent's path is untouched by decoration.
    assert_eq!(callbacks[0].metadata().path, ["app", "lsn-echo-agent"]);
    log.lock().unwrap().clear();
    // Direct callbacks get the app-wide listeners only.
    app.callbacks()[0]
        .call(inv("y", &text("hi")))
        .await
        .settle()
        .unwrap();
    assert_eq!(
        *log.lock().unwrap(),
        ["app-1 lsn-echo-tool", "app-2 lsn-echo-tool"]
    );
}

// --- Concurrency -----------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_concurrent_calls_each_get_their_own_context_back() {
    struct Correlating {
        mismatches: AtomicUsize,
        completions: AtomicUsize,
    }
    impl ToolCallListener for Correlating {
        type Context = (String, String);
        fn before_call(&self, call: &ToolCallInfo<'_>) -> (String, String) {
            (call.call_id.to_string(), call.input.to_string())
        }
        fn after_call(
            &self,
            ctx: &mut (String, String),
            call: &ToolCallInfo<'_>,
            result: &CallOutcome,
        ) {
            let expected: serde_json::Value = serde_json::from_str(&ctx.1).unwrap();
            let got: serde_json::Value =
                serde_json::from_str(result.model_text().unwrap()).unwrap();
            if ctx.0 != call.call_id
                || got["text"] != format!("echo:{}", expected["text"].as_str().unwrap())
            {
                self.mismatches.fetch_add(1, Ordering::SeqCst);
            }
        }
        fn after_completion(&self, ctx: (String, String), call: &ToolCallInfo<'_>) {
            if ctx.0 != call.call_id {
                self.mismatches.fetch_add(1, Ordering::SeqCst);
            }
            self.completions.fetch_add(1, Ordering::SeqCst);
        }
    }
    let (app, runs) = app();
    let listener = Arc::new(Correlating {
        mismatches: AtomicUsize::new(0),
        completions: AtomicUsize::new(0),
    });
    let cb = ToolCallListeners::wrap(echo(&app), Arc::clone(&listener));
    let tasks: Vec<_> = (0..1000)
        .map(|i| {
            let cb = Arc::clone(&cb);
            tokio::spawn(async move {
                let id = format!("call-{i}");
                let args = text(&format!("n{i}"));
                // Yield between calls so that they interleave.
                tokio::task::yield_now().await;
                cb.call(inv(&id, &args)).await.settle().map(|r| (i, r))
            })
        })
        .collect();
    for task in futures::future::join_all(tasks).await {
        let (i, result) = task.unwrap().unwrap();
        assert_eq!(result.content(), text(&format!("echo:n{i}")));
    }
    assert_eq!(runs.get(), 1000);
    assert_eq!(listener.completions.load(Ordering::SeqCst), 1000);
    assert_eq!(listener.mismatches.load(Ordering::SeqCst), 0);
}
