//! Decoding JSON: wrong types, nested failures, the fast path, overflow, non-JSON, how errors display.

use super::*;

#[test]
fn wrong_json_types_are_reported_with_what_was_expected() {
    let err = CreateOrder::from_json_value(&json!({
        "orderId": 17,
        "shippingSpeed": "standard",
        "lines": {"sku": "SKU-1"},
        "discountPct": "10",
        "giftWrap": "yes",
        "tags": "red",
        "priority": 1.5,
        "billing": [],
    }))
    .unwrap_err();
    assert_eq!(
        paths(&err),
        [
            ("$.orderId", "type"),
            ("$.lines", "type"),
            ("$.discountPct", "type"),
            ("$.giftWrap", "type"),
            ("$.tags", "type"),
            ("$.priority", "type"),
            ("$.billing", "type"),
        ]
    );
    let messages: Vec<_> = err.errors.iter().map(|e| e.message.as_str()).collect();
    assert_eq!(
        messages,
        [
            "expected a string, got an integer",
            "expected an array, got an object",
            "expected a number, got a string",
            "expected a boolean, got a string",
            "expected an array, got a string",
            "expected an integer, got 1.5",
            "expected an object, got an array",
        ]
    );
}

#[test]
fn structural_and_constraint_failures_are_reported_together_in_nested_lists() {
    let err = CreateOrder::from_json_str(
        r#"{
            "orderId": "A-17",
            "shippingSpeed": "slow",
            "lines": [
                {"sku": "SKU-1", "quantity": 1},
                {"quantity": "2"},
                {"sku": "bad", "quantity": 0},
                7
            ],
            "giftWrap": false,
            "tags": ["ok", 5, "waytoolong"],
            "priority": 0,
            "billing": {"country": "de"}
        }"#,
    )
    .unwrap_err();
    assert_eq!(
        paths(&err),
        [
            ("$.shippingSpeed", "choices"),
            ("$.lines", "max_items"),
            ("$.lines[1].sku", "required"),
            ("$.lines[1].quantity", "type"),
            ("$.lines[2].sku", "pattern"),
            ("$.lines[2].quantity", "min"),
            ("$.lines[3]", "type"),
            ("$.tags", "max_items"),
            ("$.tags[1]", "type"),
            ("$.tags[2]", "max_length"),
            ("$.billing.streetLine", "required"),
            ("$.billing.country", "pattern"),
        ]
    );
}

#[test]
fn constraint_failures_on_well_typed_json_come_from_the_fast_path() {
    let err = OrderLine::from_json_str(r#"{"sku": "SKU-x", "quantity": 100}"#).unwrap_err();
    assert_eq!(paths(&err), [("$.sku", "pattern"), ("$.quantity", "max")]);
}

#[test]
fn integer_overflow_is_a_range_error_not_a_panic_or_a_wrap() {
    let err = Small::from_json_str(r#"{"byte": 300}"#).unwrap_err();
    assert_eq!(paths(&err), [("$.byte", "max")]);
    assert_eq!(err.errors[0].message, "must be at most 255 (got 300)");
    let err = Small::from_json_str(r#"{"byte": -1, "signed": -129}"#).unwrap_err();
    assert_eq!(paths(&err), [("$.byte", "min"), ("$.signed", "min")]);
    // The explicit max is tighter than i8's range.
    let err = Small::from_json_value(&json!({"byte": 0, "signed": 127})).unwrap_err();
    assert_eq!(err.errors[0].message, "must be at most 100 (got 127)");
    let err = Small::from_json_str(r#"{"byte": 18446744073709551616}"#).unwrap_err();
    assert_eq!(paths(&err), [("$.byte", "type")]);
    let err = CreateOrder::from_json_value(&json!({
        "orderId": "A-17", "shippingSpeed": "standard", "giftWrap": true,
        "lines": [{"sku": "SKU-1", "quantity": u64::MAX}], "priority": u64::MAX,
    }))
    .unwrap_err();
    assert_eq!(
        paths(&err),
        [("$.lines[0].quantity", "max"), ("$.priority", "max")]
    );
}

#[test]
fn f32_overflow_is_rejected() {
    let err = Small::from_json_str(r#"{"byte": 1, "ratio": 1e300}"#).unwrap_err();
    assert_eq!(paths(&err), [("$.ratio", "type")]);
    let err = Small::from_json_value(&json!({"byte": 1, "ratio": -1e300})).unwrap_err();
    assert_eq!(paths(&err), [("$.ratio", "type")]);
}

#[test]
fn non_json_is_one_error_at_the_root() {
    for text in ["", "not json", "{\"orderId\": ", "{} trailing", "[1, 2"] {
        let err = CreateOrder::from_json_str(text).unwrap_err();
        assert_eq!(paths(&err), [("$", "json")], "{text:?}");
        assert!(
            err.errors[0]
                .message
                .starts_with("the arguments are not valid JSON"),
            "{}",
            err.errors[0].message
        );
    }
}

#[test]
fn json_that_is_not_an_object_is_a_type_error_at_the_root() {
    for (text, got) in [
        ("[]", "an array"),
        ("\"x\"", "a string"),
        ("null", "null"),
        ("3", "an integer"),
    ] {
        let err = Address::from_json_str(text).unwrap_err();
        assert_eq!(paths(&err), [("$", "type")]);
        assert_eq!(
            err.errors[0].message,
            format!("expected an object, got {got}")
        );
    }
}

#[test]
fn display_lists_every_error_and_serialize_is_model_friendly() {
    let err = Address::from_json_str(r#"{"country": "xx"}"#).unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid Address (2 errors):\n- $.streetLine: is required\n- $.country: must match the pattern `^[A-Z]{2}$`"
    );
    assert_eq!(
        serde_json::to_value(&err).unwrap(),
        json!({
            "dto": "Address",
            "errors": [
                {"path": "$.streetLine", "code": "required", "message": "is required"},
                {"path": "$.country", "code": "pattern", "message": "must match the pattern `^[A-Z]{2}$`"},
            ]
        })
    );
    let one = Address::from_json_str("{\"streetLine\": \"a\"}").unwrap_err();
    assert_eq!(
        one.to_string(),
        "invalid Address (1 error):\n- $.country: is required"
    );
}

#[test]
fn single_builds_a_one_error_validation_error() {
    let err = ValidationError::single("X", "$.a", "type", "bad");
    assert_eq!(err.errors, [FieldError::at("$.a", "type", "bad")]);
    assert_eq!(err.to_string(), "invalid X (1 error):\n- $.a: bad");
}

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct ClosedDto {
    #[text(prompt = "Order ID")]
    pub order_id: String,
    #[integer(prompt = "Count")]
    pub count: Option<i64>,
}

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct TaggedDto {
    #[text(prompt = "Order ID")]
    pub order_id: String,
    #[text(prompt = "Tags")]
    pub tags: std::collections::BTreeMap<String, String>,
}

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct OuterDto {
    #[nested(prompt = "Inner")]
    pub inner: Vec<TaggedDto>,
}

#[test]
fn only_dtos_that_can_hold_a_repeated_key_unnoticed_are_scanned_before_decoding() {
    // Fields only: the typed decode refuses a repeated field itself.
    const { assert!(!<ClosedDto as Dto>::OPEN_KEYS) };
    // A map (or raw JSON) keeps the last of two keys: scanned, at any depth.
    const { assert!(<TaggedDto as Dto>::OPEN_KEYS) };
    const { assert!(<OuterDto as Dto>::OPEN_KEYS) };
    // Either way a repeated key of the DTO is refused, its first value valid or not.
    for text in [
        r#"{"orderId":"A-1","orderId":"A-2"}"#,
        r#"{"orderId":null,"orderId":"A-2"}"#,
    ] {
        let err = ClosedDto::from_json_str(text).unwrap_err();
        assert_eq!(err.errors[0].code, "duplicate", "{text}: {err}");
    }
    let err = OuterDto::from_json_str(r#"{"inner":[{"orderId":"A","tags":{"a":"1","a":"2"}}]}"#)
        .unwrap_err();
    assert_eq!(err.errors[0].code, "duplicate", "{err}");
    // A key the DTO does not have is ignored, repeated or not (the tool never reads it).
    let ok = ClosedDto::from_json_str(r#"{"orderId":"A-1","note":1,"note":2}"#).unwrap();
    assert_eq!(ok.order_id, "A-1");
}
