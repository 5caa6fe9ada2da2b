//! Wrapped callbacks: definitions and metadata delegated, wrapping twice nests.

use super::*;

#[tokio::test]
async fn definition_and_metadata_are_delegated_untouched_for_every_source() {
    let (app, _) = app();
    let inner: Vec<SharedToolCallback> = vec![echo(&app), Arc::new(UpperCallback::new())];
    let wrapped = ToolCallListeners::wrap_all(inner.clone(), Recording::default());
    assert_eq!(wrapped.len(), 2);
    for (w, i) in wrapped.iter().zip(&inner) {
        assert!(std::ptr::eq(w.definition(), i.definition()));
        assert!(std::ptr::eq(w.metadata(), i.metadata()));
    }
    assert_eq!(wrapped[1].metadata().source, ToolSource::Custom);
    assert_eq!(wrapped[1].metadata().max_result_size, Some(99));
    let out = wrapped[1].call(inv("u", "abc")).await.settle().unwrap();
    assert_eq!(out.content(), "ABC");
}

#[tokio::test]
async fn wrapping_twice_nests() {
    let (app, _) = app();
    let log = Arc::new(Mutex::new(Vec::<String>::new()));
    struct Named(&'static str, Arc<Mutex<Vec<String>>>, Option<&'static str>);
    impl ToolCallListener for Named {
        type Context = ();
        fn before_call(&self, _: &ToolCallInfo<'_>) {
            self.1.lock().unwrap().push(format!("{} before", self.0));
        }
        fn after_call(&self, _: &mut (), _: &ToolCallInfo<'_>, result: &CallOutcome) {
            self.1
                .lock()
                .unwrap()
                .push(format!("{} after {}", self.0, kind(result)));
        }
        fn on_error(&self, _: &mut (), _: &ToolCallInfo<'_>, _: &ToolCallError) -> Option<String> {
            self.1.lock().unwrap().push(format!("{} error", self.0));
            self.2.map(str::to_string)
        }
        fn after_completion(&self, _: (), _: &ToolCallInfo<'_>) {
            self.1
                .lock()
                .unwrap()
                .push(format!("{} completion", self.0));
        }
    }
    let inner = ToolCallListeners::wrap_all(
        vec![echo(&app)],
        Named("inner", Arc::clone(&log), Some("reported by inner")),
    );
    let outer = ToolCallListeners::wrap_all(inner, Named("outer", Arc::clone(&log), None));
    outer[0].call(inv("n", &text("hi"))).await.settle().unwrap();
    assert_eq!(
        *log.lock().unwrap(),
        [
            "outer before",
            "inner before",
            "inner after output",
            "inner completion",
            "outer after output",
            "outer completion"
        ]
    );
    log.lock().unwrap().clear();
    // The outer listener sees what the inner one made of the failure.
    let out = outer[0]
        .call(inv("n", &text("fail")))
        .await
        .settle()
        .unwrap();
    assert_eq!(out.content(), "reported by inner");
    assert_eq!(
        *log.lock().unwrap(),
        [
            "outer before",
            "inner before",
            "inner error",
            "inner completion",
            "outer after reported",
            "outer completion"
        ]
    );
}
