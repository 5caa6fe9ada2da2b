//! Hostile tool arguments: item and error caps, oversized input, duplicate keys, short quotes in errors.

use super::*;
use agboss_core::contract::outcome::FailureKind;

// --- 1. Error amplification ---------------------------------------------------------------------

#[test]
fn a_list_over_max_items_reports_the_limit_first_and_checks_few_items() {
    let err = HiOrderDto::from_json_str(&empty_objects(200_000)).unwrap_err();
    assert_eq!(err.errors[0].code, code::MAX_ITEMS, "{err}");
    assert!(err.errors.len() <= MAX_REPORTED_ERRORS);
    // Only the first items were looked at (200,000 would be 200,000 errors).
    assert!(err.errors.iter().skip(1).all(|e| {
        let index: usize = e.path["$.lines[".len()..]
            .split(']')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        index < 50 + MAX_REPORTED_ERRORS
    }));
}

#[test]
fn reported_errors_stop_at_the_cap() {
    let text = empty_objects(100_000).replacen(r#""orderId":"A-1","#, "", 1);
    let err = HiBulkDto::from_json_str(&text).unwrap_err();
    assert_eq!(err.errors.len(), MAX_REPORTED_ERRORS);
    assert!(err.more);
    let shown = err.to_string();
    assert!(shown.contains("or more errors"), "{shown}");
    assert!(
        shown.contains("checking stopped after 20 errors"),
        "{shown}"
    );
    assert!(shown.len() < 2_000, "{} bytes", shown.len());
}

#[tokio::test]
async fn arguments_over_the_input_size_are_refused_before_decoding() {
    let app = App::builder()
        .tool::<HiOrderTool>()
        .tool::<HiSmallTool>()
        .build()
        .unwrap();
    // The default bound: 1 MiB.
    let big = empty_objects(400_000);
    assert!(big.len() > 1 << 20);
    let outcome = app.tool::<HiOrderTool>().call(&big).await;
    let failure = outcome.failure().expect("refused");
    assert_eq!(failure.kind(), FailureKind::Rejected);
    assert!(
        failure
            .error()
            .to_string()
            .contains("over this tool's limit of 1048576 bytes"),
        "{}",
        failure.error()
    );
    // A tool's own bound.
    let args = json!({ "sku": "x".repeat(100) }).to_string();
    let err = app
        .tool::<HiSmallTool>()
        .invoke_json(&args)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("limit of 64 bytes"), "{err}");
    assert!(
        app.tool::<HiSmallTool>()
            .invoke_json(r#"{"sku":"ok"}"#)
            .await
            .is_ok()
    );
}

// --- 5. Duplicate keys ----------------------------------------------------------------------------

#[tokio::test]
async fn duplicate_keys_are_refused_with_the_key_named() {
    let err = HiLineDto::from_json_str(r#"{"sku":"not a valid id!","sku":"AB-1"}"#).unwrap_err();
    assert_eq!(err.errors[0].code, code::DUPLICATE);
    assert_eq!(err.errors[0].path, "$.sku");
    assert!(
        err.errors[0]
            .message
            .contains("`sku` appears more than once")
    );
    // In a nested object too, at its path.
    let err = HiOrderDto::from_json_str(r#"{"orderId":"A","lines":[{"sku":"a","sku":"b"}]}"#)
        .unwrap_err();
    assert_eq!(err.errors[0].code, code::DUPLICATE);
    assert!(err.errors[0].path.starts_with("$.lines[0]"), "{err}");
    // Through the pipeline: a rejected input, the tool never runs.
    let app = App::builder().tool::<HiOrderTool>().build().unwrap();
    let outcome = app
        .tool::<HiOrderTool>()
        .call(r#"{"orderId":"A","orderId":"B","lines":[]}"#)
        .await;
    assert_eq!(outcome.failure().unwrap().kind(), FailureKind::Rejected);
}

#[tokio::test]
async fn duplicate_keys_are_refused_after_a_null_and_in_maps_and_raw_values() {
    // The first occurrence null or of the wrong type, the second valid: not "the last wins".
    assert_duplicate::<HiOrderDto>(
        r#"{"orderId":null,"orderId":"AB-1","lines":[]}"#,
        "$.orderId",
    );
    assert_duplicate::<HiOrderDto>(r#"{"orderId":7,"orderId":"AB-1","lines":[]}"#, "$.orderId");
    assert_duplicate::<HiOrderDto>(
        r#"{"orderId":"A","lines":[{"sku":null,"sku":"b"}]}"#,
        "$.lines[0].sku",
    );
    // Inside a map field and a raw `Value` field, at any depth; an escaped spelling is the
    // same key.
    assert_duplicate::<HiTaggedDto>(r#"{"tags":{"a":"1","a":"2"},"extra":{}}"#, "$.tags.a");
    assert_duplicate::<HiTaggedDto>(
        r#"{"tags":{},"extra":{"x":[1,{"k":1,"k":2}]}}"#,
        "$.extra.x[1].k",
    );
    assert_duplicate::<HiTaggedDto>(
        r#"{"tags":{"a b":"1","a b":"2"},"extra":0}"#,
        r#"$.tags["a b"]"#,
    );
    // The same key in two objects is no duplicate.
    let ok =
        HiTaggedDto::from_json_str(r#"{"tags":{"a":"1"},"extra":{"a":1,"b":{"a":2}}}"#).unwrap();
    assert_eq!(ok.extra["b"]["a"], 2);
    // Through the pipeline: rejected, the tool never runs.
    let app = App::builder()
        .tool::<HiOrderTool>()
        .tool::<HiTaggedTool>()
        .build()
        .unwrap();
    let outcome = app
        .tool::<HiOrderTool>()
        .call(r#"{"orderId":null,"orderId":"AB-1","lines":[]}"#)
        .await;
    assert_eq!(outcome.failure().unwrap().kind(), FailureKind::Rejected);
    let outcome = app
        .tool::<HiTaggedTool>()
        .call(r#"{"tags":{"to":"ann","to":"eve"},"extra":null}"#)
        .await;
    assert_eq!(outcome.failure().unwrap().kind(), FailureKind::Rejected);
}

#[tokio::test]
async fn an_error_quotes_at_most_a_short_prefix_of_the_input() {
    // A 1 MB string followed by junk: serde's message of the typed decode quotes the string.
    let args = format!("\"{}\" junk", "a".repeat(1_000_000));
    let err = HiOrderDto::from_json_str(&args).unwrap_err();
    assert_eq!(err.errors[0].code, code::JSON);
    let shown = err.to_string();
    assert!(shown.len() < ERROR_TEXT_BOUND, "{} bytes", shown.len());
    assert!(shown.contains("not valid JSON"), "{shown}");
    assert!(shown.contains("\"aaaa"), "a short prefix is kept: {shown}");
    assert!(
        shown.contains("expected"),
        "so is the end of serde's message: {shown}"
    );
    // What a listener records (the JSON report) is bounded too.
    assert!(serde_json::to_string(&err).unwrap().len() < ERROR_TEXT_BOUND);
    // And what the caller (a model, through the agent loop) reads.
    let app = App::builder().tool::<HiOrderTool>().build().unwrap();
    let outcome = app.tool::<HiOrderTool>().call(&args).await;
    let failure = outcome.failure().expect("refused");
    assert_eq!(failure.kind(), FailureKind::Rejected);
    let shown = failure.error().to_string();
    assert!(shown.len() < ERROR_TEXT_BOUND, "{} bytes", shown.len());

    // A map key of a megabyte in an error's path.
    let key = "k".repeat(1_000_000);
    let err = HiStockDto::from_json_str(&format!(r#"{{"lines":{{"{key}":{{}}}}}}"#)).unwrap_err();
    assert_eq!(
        err.errors[0].code,
        code::REQUIRED,
        "{:.200}",
        err.to_string()
    );
    assert!(
        err.errors[0].path.starts_with("$.lines[\"kkkk"),
        "{:.200}",
        err.errors[0].path
    );
    assert!(
        err.errors[0].path.ends_with("].sku"),
        "{:.200}",
        err.errors[0].path
    );
    assert!(
        err.to_string().len() < ERROR_TEXT_BOUND,
        "{} bytes",
        err.to_string().len()
    );
}
