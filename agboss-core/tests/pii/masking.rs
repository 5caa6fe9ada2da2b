//! Masking text and JSON: overlaps, adjacency, borrowing, reports, odd and huge inputs.

use super::*;

// ----------------------------------------------------------------------------------------
// Overlaps

#[test]
fn overlapping_matches_longest_wins_and_merge() {
    let m = PiiMasker::builder()
        .detector(RegexDetector::new("short", "abc").unwrap())
        .detector(RegexDetector::new("long", "bcdef").unwrap())
        .build()
        .unwrap();
    // Overlap merged into one span, attributed to the longest finding.
    assert_eq!(m.mask_str("xabcdefx"), "x[REDACTED:long]x");
    let findings = m.detect("xabcdefx");
    assert_eq!(findings.len(), 1);
    assert_eq!(findings[0].detector, "long");
    assert_eq!(findings[0].range, 1..7);

    // Equal lengths: the earliest start wins.
    let m = PiiMasker::builder()
        .detector(RegexDetector::new("second", "bcde").unwrap())
        .detector(RegexDetector::new("first", "abcd").unwrap())
        .build()
        .unwrap();
    assert_eq!(m.mask_str("xabcdefx"), "x[REDACTED:first]fx");

    // Same range: the detector registered first wins.
    let m = PiiMasker::builder()
        .detector(RegexDetector::new("one", "abc").unwrap())
        .detector(RegexDetector::new("two", "abc").unwrap())
        .build()
        .unwrap();
    let mut report = MaskReport::default();
    assert_eq!(m.mask_str_with_report("abc", &mut report), "[REDACTED:one]");
    assert_eq!(report.count("one"), 1);
    assert_eq!(report.count("two"), 0);

    // Built-ins: an e-mail whose local part is a phone number is one e-mail.
    assert_eq!(
        redactor().mask_str("+14155552671@example.com"),
        "[REDACTED:email]"
    );
    // IPv4 embedded in IPv6: one IPv6.
    assert_eq!(redactor().mask_str("::ffff:192.0.2.128"), "[REDACTED:ipv6]");
}

#[test]
fn adjacent_findings_are_all_masked() {
    let m = redactor();
    // The phone is glued to the e-mail's TLD; once the e-mail is masked, it stands alone.
    assert_eq!(
        m.mask_str("a@b.co+14155552671"),
        "[REDACTED:email][REDACTED:phone]"
    );
    assert_eq!(
        m.mask_str("10.0.0.1,10.0.0.2;jane@example.com"),
        "[REDACTED:ipv4],[REDACTED:ipv4];[REDACTED:email]"
    );
}

// ----------------------------------------------------------------------------------------
// mask_str: borrowing, idempotency, reports, weird input

#[test]
fn mask_str_borrows_without_pii_and_is_idempotent() {
    for m in all_maskers() {
        assert!(matches!(
            m.mask_str("nothing to see, 42 items in 2024"),
            Cow::Borrowed(_)
        ));
        let once = m
            .mask_str("jane@example.com 4242 4242 4242 4242 DE89370400440532013000 ::ffff:1.2.3.4")
            .into_owned();
        assert!(matches!(m.mask_str(&once), Cow::Borrowed(_)), "{once}");
    }
}

#[test]
fn report_counts_per_detector() {
    let m = redactor();
    let mut report = MaskReport::default();
    let text = "a@b.com c@d.org 10.0.0.1 123-45-6789";
    m.mask_str_with_report(text, &mut report);
    assert_eq!(report.count("email"), 2);
    assert_eq!(report.count("ipv4"), 1);
    assert_eq!(report.count("ssn"), 1);
    assert_eq!(report.count("card"), 0);
    assert_eq!(report.total(), 4);
    assert_eq!(
        report.iter().collect::<Vec<_>>(),
        [("email", 2), ("ipv4", 1), ("ssn", 1)]
    );
    // The report never holds the values.
    let serialized = serde_json::to_string(&report).unwrap();
    assert!(!serialized.contains("a@b.com") && !serialized.contains("10.0.0.1"));
    let mut merged = report.clone();
    merged.merge(&report);
    assert_eq!(merged.total(), 8);
    assert!(MaskReport::default().is_empty());
    assert!(m.contains_pii(text));
    assert!(!m.contains_pii("plain"));
}

#[test]
fn weird_unicode_and_huge_inputs() {
    let m = redactor();
    assert_eq!(
        m.mask_str("é🎉 jane@example.com ١٢٣-٤٥-٦٧٨٩ 𝟜𝟚𝟜𝟚 \u{202e}10.0.0.1\u{200d}"),
        "é🎉 [REDACTED:email] ١٢٣-٤٥-٦٧٨٩ 𝟜𝟚𝟜𝟚 \u{202e}[REDACTED:ipv4]\u{200d}"
    );
    // Large adversarial inputs complete (no quadratic blow-up) and never panic.
    for unit in [
        "1 ", "a@", "AB12 ", ":", "1.", "+1 ", "0", "é", "DE89", "4242-",
    ] {
        let text = unit.repeat(200_000 / unit.len());
        let masked = m.mask_str(&text);
        assert!(masked.len() >= text.len() / 4);
    }
    let big = "jane@example.com 4242424242424242 ".repeat(5_000);
    let mut report = MaskReport::default();
    let masked = m.mask_str_with_report(&big, &mut report);
    assert_eq!(report.count("email"), 5_000);
    assert_eq!(report.count("card"), 5_000);
    assert!(!masked.contains("jane@"));
}

// ----------------------------------------------------------------------------------------
// JSON

#[test]
fn mask_json_keeps_structure_and_non_pii_values() {
    let m = redactor();
    let mut doc = json!({
        "jane@example.com": "keys are not masked",
        "user": {
            "name": "Jane",
            "email": "jane@example.com",
            "note": "call me at +1 415 555 2671 or mail j@x.io",
            "age": 41,
            "score": 3.5,
            "active": true,
            "manager": null,
        },
        "cards": [4242424242424242u64, "4242 4242 4242 4242", 1234],
        "phone_number": 14155552671u64,
        "created_ms": 1700000000000u64,
        "order_total": 4242424242424241u64,
        "negative": -4242424242424242i64,
        "nested": [[["10.0.0.1"]], {"deep": {"ok": "fine"}}],
    });
    let untouched = doc["user"]["name"].clone();
    let report = m.mask_json(&mut doc);
    assert_eq!(
        doc,
        json!({
            "jane@example.com": "keys are not masked",
            "user": {
                "name": "Jane",
                "email": "[REDACTED:email]",
                "note": "call me at [REDACTED:phone] or mail [REDACTED:email]",
                "age": 41,
                "score": 3.5,
                "active": true,
                "manager": null,
            },
            "cards": ["[REDACTED:card]", "[REDACTED:card]", 1234],
            "phone_number": "[REDACTED:phone]",
            "created_ms": 1700000000000u64,
            "order_total": 4242424242424241u64,
            "negative": -4242424242424242i64,
            "nested": [[["[REDACTED:ipv4]"]], {"deep": {"ok": "fine"}}],
        })
    );
    assert_eq!(doc["user"]["name"], untouched);
    assert_eq!(report.count("email"), 2);
    assert_eq!(report.count("phone"), 2);
    assert_eq!(report.count("card"), 2);
    assert_eq!(report.count("ipv4"), 1);
    assert_eq!(report.values_masked(), 6);
    // A second pass changes nothing.
    let before = doc.clone();
    assert!(m.mask_json(&mut doc).is_empty());
    assert_eq!(doc, before);
}

#[test]
fn mask_json_untouched_document_is_byte_identical() {
    let text =
        r#"{"b":[1,2.5,-3,1e300,"x",{"c":null}],"a":"plain \u00e9 text","n":18446744073709551615}"#;
    let mut doc: Value = serde_json::from_str(text).unwrap();
    let before = serde_json::to_string(&doc).unwrap();
    let report = redactor().mask_json(&mut doc);
    assert!(report.is_empty());
    assert_eq!(serde_json::to_string(&doc).unwrap(), before);
}

#[test]
fn mask_json_deeply_nested_does_not_overflow() {
    let mut doc = json!("jane@example.com");
    for _ in 0..10_000 {
        doc = Value::Array(vec![doc]);
    }
    let report = redactor().mask_json(&mut doc);
    assert_eq!(report.count("email"), 1);
    let mut inner = &doc;
    while let Value::Array(items) = inner {
        inner = &items[0];
    }
    assert_eq!(inner, "[REDACTED:email]");
    // Dropping a 10 000-deep value recurses in serde_json; unwind it here.
    let mut current = doc;
    while let Value::Array(mut items) = current {
        current = items.pop().unwrap_or(Value::Null);
    }
}
