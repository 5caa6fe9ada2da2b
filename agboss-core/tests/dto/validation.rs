//! Typed validation: valid values (without allocating), every failure with its wire path, lengths, floats, required fields.

use super::*;

// ---------------------------------------------------------------------------------------------
// typed validation

#[test]
fn valid_typed_value_passes() {
    assert_eq!(order().validate(), Ok(()));
}

#[test]
fn validating_a_valid_value_allocates_nothing() {
    let value = order();
    // Warm up: compiles the regexes and this thread's regex caches.
    for _ in 0..3 {
        value.validate().unwrap();
    }
    assert_eq!(allocations_during(|| value.validate().unwrap()), 0);
    // The counter does count: a failing validation allocates its errors.
    let mut bad = value.clone();
    bad.order_id.clear();
    let n = allocations_during(|| {
        let _ = bad.validate();
    });
    assert!(n > 0);
}

#[test]
fn typed_validation_reports_every_failure_with_wire_paths() {
    let mut bad = order();
    bad.order_id = "AB".into();
    bad.shipping_speed = "overnight".into();
    bad.lines = vec![
        OrderLine {
            sku: "SKU-1".into(),
            quantity: 0,
        },
        OrderLine {
            sku: "nope".into(),
            quantity: 100,
        },
        OrderLine {
            sku: "SKU-3".into(),
            quantity: 1,
        },
        OrderLine {
            sku: "SKU-4".into(),
            quantity: 1,
        },
    ];
    bad.discount_pct = Some(60.0);
    bad.tags = Some(vec!["ok".into(), "toolong".into(), "x".into()]);
    bad.priority = -6;
    bad.billing = Some(Address {
        street_line: String::new(),
        country: "Germany".into(),
    });
    let err = bad.validate().unwrap_err();
    assert_eq!(err.dto, "CreateOrder");
    assert_eq!(
        paths(&err),
        [
            ("$.orderId", "min_length"),
            ("$.shippingSpeed", "choices"),
            ("$.lines", "max_items"),
            ("$.lines[0].quantity", "min"),
            ("$.lines[1].sku", "pattern"),
            ("$.lines[1].quantity", "max"),
            ("$.discountPct", "max"),
            ("$.tags", "max_items"),
            ("$.tags[1]", "max_length"),
            ("$.priority", "min"),
            ("$.billing.streetLine", "min_length"),
            ("$.billing.country", "pattern"),
        ]
    );
    assert_eq!(
        err.at("$.orderId").unwrap().message,
        "must be at least 3 characters long (got 2)"
    );
    assert_eq!(
        err.at("$.shippingSpeed").unwrap().message,
        "must be one of \"standard\", \"express\""
    );
    assert_eq!(
        err.at("$.lines").unwrap().message,
        "must have at most 3 items (got 4)"
    );
    assert_eq!(
        err.at("$.lines[1].quantity").unwrap().message,
        "must be at most 99 (got 100)"
    );
    assert_eq!(
        err.at("$.discountPct").unwrap().message,
        "must be at most 50.5 (got 60)"
    );
}

#[test]
fn validate_into_appends_below_the_given_path() {
    let mut path = JsonPath::new();
    path.push_key("args");
    path.push_index(3);
    let mut errors: Vec<FieldError> = Vec::new();
    OrderLine {
        sku: "x".into(),
        quantity: 5,
    }
    .validate_into(&mut path, &mut errors);
    assert_eq!(path.render(), "$.args[3]", "path is restored");
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0].path, "$.args[3].sku");
}

#[test]
fn text_length_counts_characters_not_bytes() {
    let mut ok = order();
    ok.order_id = "ÄÖÜ".into(); // 3 characters, 6 bytes
    assert_eq!(ok.validate(), Ok(()));
    ok.order_id = "ÄÖÜÄÖÜÄÖÜÄÖÜ".into(); // 12 characters, 24 bytes
    assert_eq!(ok.validate(), Ok(()));
    ok.order_id.push('ß');
    let err = ok.validate().unwrap_err();
    assert_eq!(paths(&err), [("$.orderId", "max_length")]);
}

#[test]
fn non_finite_floats_are_rejected() {
    let small = Small {
        byte: 0,
        signed: None,
        ratio: Some(f32::NAN),
        r#type: None,
    };
    let err = small.validate().unwrap_err();
    assert_eq!(paths(&err), [("$.ratio", "type")]);
}

// ---------------------------------------------------------------------------------------------
// JSON validation

#[test]
fn missing_required_fields_are_all_reported() {
    let err = CreateOrder::from_json_str("{}").unwrap_err();
    assert_eq!(
        paths(&err),
        [
            ("$.orderId", "required"),
            ("$.shippingSpeed", "required"),
            ("$.lines", "required"),
            ("$.giftWrap", "required"),
            ("$.priority", "required"),
        ]
    );
    assert_eq!(err.errors[0].message, "is required");
}

#[test]
fn null_for_a_required_field_is_required() {
    let err = Address::from_json_str(r#"{"streetLine": null, "country": "DE"}"#).unwrap_err();
    assert_eq!(paths(&err), [("$.streetLine", "required")]);
    assert_eq!(err.errors[0].message, "is required (got null)");
}
