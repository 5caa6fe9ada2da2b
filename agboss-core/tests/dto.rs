//! Behaviour of `#[derive(Dto)]`: wire names, schema, validation of typed values and of JSON.
use agboss_core::dto::{Dto, FieldError, JsonPath, ValidationError};
use proptest::prelude::*;
use serde_json::{Value, json};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

/// Counts the allocations of the current thread, to check the hot path allocates nothing.
struct CountingAlloc;

thread_local! {
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

// SAFETY: forwards to the system allocator; only counts.
unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: CountingAlloc = CountingAlloc;

fn allocations_during(f: impl FnOnce()) -> usize {
    let before = ALLOCATIONS.with(Cell::get);
    f();
    ALLOCATIONS.with(Cell::get) - before
}

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct OrderLine {
    #[text(prompt = "Stock keeping unit", pattern = "^SKU-[0-9]+$")]
    pub sku: String,
    #[integer(prompt = "How many", min = 1, max = 99)]
    pub quantity: u32,
}

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct CreateOrder {
    #[text(prompt = "Order reference", min_length = 3, max_length = 12)]
    pub order_id: String,
    #[text(prompt = "Shipping speed", choices = ["standard", "express"])]
    pub shipping_speed: String,
    #[nested(prompt = "Order lines", min_items = 1, max_items = 3)]
    pub lines: Vec<OrderLine>,
    #[number(prompt = "Discount in percent", min = 0, max = 50.5)]
    pub discount_pct: Option<f64>,
    #[boolean(prompt = "Gift wrap?")]
    pub gift_wrap: bool,
    #[text(prompt = "Tags", max_length = 5, max_items = 2)]
    pub tags: Option<Vec<String>>,
    #[integer(prompt = "Priority", min = -5)]
    pub priority: i64,
    #[nested(prompt = "Billing address")]
    pub billing: Option<Address>,
}

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct Address {
    #[text(prompt = "Street and number", min_length = 1)]
    pub street_line: String,
    #[text(prompt = "ISO country code", pattern = "^[A-Z]{2}$")]
    pub country: String,
}

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct Small {
    #[integer(prompt = "A byte")]
    pub byte: u8,
    #[integer(prompt = "A signed byte", max = 100)]
    pub signed: Option<i8>,
    #[number(prompt = "A float")]
    pub ratio: Option<f32>,
    #[text(prompt = "Raw identifier field")]
    pub r#type: Option<String>,
}

fn order() -> CreateOrder {
    CreateOrder {
        order_id: "A-17".into(),
        shipping_speed: "express".into(),
        lines: vec![OrderLine {
            sku: "SKU-1".into(),
            quantity: 2,
        }],
        discount_pct: None,
        gift_wrap: true,
        tags: Some(vec!["red".into()]),
        priority: 0,
        billing: Some(Address {
            street_line: "Main St 1".into(),
            country: "DE".into(),
        }),
    }
}

fn paths(err: &ValidationError) -> Vec<(&str, &str)> {
    err.errors
        .iter()
        .map(|e| (e.path.as_str(), e.code))
        .collect()
}

// ---------------------------------------------------------------------------------------------
// wire form

#[test]
fn serializes_with_camel_case_names_and_skips_none() {
    let value = serde_json::to_value(order()).unwrap();
    assert_eq!(
        value,
        json!({
            "orderId": "A-17",
            "shippingSpeed": "express",
            "lines": [{"sku": "SKU-1", "quantity": 2}],
            "giftWrap": true,
            "tags": ["red"],
            "priority": 0,
            "billing": {"streetLine": "Main St 1", "country": "DE"},
        })
    );
    assert!(value.get("discountPct").is_none());
}

#[test]
fn round_trips_through_json_text_and_value() {
    let original = order();
    let text = serde_json::to_string(&original).unwrap();
    assert!(text.contains("\"orderId\""));
    assert!(!text.contains("order_id"));
    assert_eq!(CreateOrder::from_json_str(&text).unwrap(), original);
    let value = serde_json::to_value(&original).unwrap();
    assert_eq!(CreateOrder::from_json_value(&value).unwrap(), original);
    let with_discount = CreateOrder {
        discount_pct: Some(12.5),
        ..original
    };
    let text = serde_json::to_string(&with_discount).unwrap();
    assert!(text.contains("\"discountPct\":12.5"));
    assert_eq!(CreateOrder::from_json_str(&text).unwrap(), with_discount);
}

#[test]
fn raw_identifiers_use_their_plain_name() {
    let small = Small::from_json_str(r#"{"byte": 1, "type": "x"}"#).unwrap();
    assert_eq!(small.r#type.as_deref(), Some("x"));
    assert_eq!(
        serde_json::to_value(&small).unwrap(),
        json!({"byte": 1, "type": "x"})
    );
    assert!(Small::json_schema()["properties"]["type"].is_object());
}

#[test]
fn unknown_members_are_ignored_and_null_means_absent_for_options() {
    let small =
        Small::from_json_str(r#"{"byte": 7, "signed": null, "extra": [1, 2], "ratio": null}"#)
            .unwrap();
    assert_eq!(
        small,
        Small {
            byte: 7,
            signed: None,
            ratio: None,
            r#type: None
        }
    );
}

#[test]
fn snake_case_names_are_not_the_wire_names() {
    let err = Address::from_json_str(r#"{"street_line": "x", "country": "DE"}"#).unwrap_err();
    assert_eq!(paths(&err), [("$.streetLine", "required")]);
}

// ---------------------------------------------------------------------------------------------
// schema

#[test]
fn schema_is_an_object_with_descriptions_and_required() {
    let schema = CreateOrder::json_schema();
    assert_eq!(schema["type"], "object");
    assert_eq!(schema["additionalProperties"], false);
    assert_eq!(
        schema["required"],
        json!(["orderId", "shippingSpeed", "lines", "giftWrap", "priority"])
    );
    let props = schema["properties"].as_object().unwrap();
    let mut names: Vec<_> = props.keys().cloned().collect();
    names.sort();
    assert_eq!(
        names,
        [
            "billing",
            "discountPct",
            "giftWrap",
            "lines",
            "orderId",
            "priority",
            "shippingSpeed",
            "tags"
        ]
    );
    assert_eq!(props["orderId"]["description"], "Order reference");
    assert_eq!(props["giftWrap"]["description"], "Gift wrap?");
    assert_eq!(props["billing"]["description"], "Billing address");
}

#[test]
fn schema_carries_every_constraint() {
    let schema = CreateOrder::json_schema();
    let p = &schema["properties"];
    assert_eq!(
        p["orderId"],
        json!({"type": "string", "minLength": 3, "maxLength": 12, "description": "Order reference"})
    );
    assert_eq!(p["shippingSpeed"]["enum"], json!(["standard", "express"]));
    assert_eq!(
        p["discountPct"],
        json!({"type": "number", "minimum": 0.0, "maximum": 50.5, "description": "Discount in percent"})
    );
    assert_eq!(
        p["giftWrap"],
        json!({"type": "boolean", "description": "Gift wrap?"})
    );
    assert_eq!(
        p["tags"],
        json!({"type": "array", "maxItems": 2, "items": {"type": "string", "maxLength": 5}, "description": "Tags"})
    );
    // i64: only the explicit bound (the type's own range is beyond JSON's safe integers).
    assert_eq!(
        p["priority"],
        json!({"type": "integer", "minimum": -5, "description": "Priority"})
    );
    // Nested DTOs are inlined, inside lists too.
    let lines = &p["lines"];
    assert_eq!(lines["type"], "array");
    assert_eq!(lines["minItems"], 1);
    assert_eq!(lines["maxItems"], 3);
    assert_eq!(lines["items"], OrderLine::json_schema());
    assert_eq!(
        lines["items"]["properties"]["sku"]["pattern"],
        "^SKU-[0-9]+$"
    );
    assert_eq!(
        lines["items"]["properties"]["quantity"],
        json!({"type": "integer", "minimum": 1, "maximum": 99, "description": "How many"})
    );
    assert_eq!(lines["items"]["required"], json!(["sku", "quantity"]));
    assert_eq!(
        p["billing"]["properties"]["country"]["pattern"],
        "^[A-Z]{2}$"
    );
    assert_eq!(p["billing"]["additionalProperties"], false);
}

#[test]
fn schema_shows_the_range_of_small_integer_types() {
    let p = &Small::json_schema()["properties"];
    assert_eq!(p["byte"]["minimum"], 0);
    assert_eq!(p["byte"]["maximum"], 255);
    assert_eq!(p["signed"]["minimum"], -128);
    assert_eq!(p["signed"]["maximum"], 100);
    assert_eq!(Small::json_schema()["required"], json!(["byte"]));
}

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

// ---------------------------------------------------------------------------------------------
// never panics

fn arb_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::from),
        "[A-Za-z0-9 ÄSKU-]{0,14}".prop_map(Value::from),
        prop_oneof![Just("SKU-1"), Just("standard"), Just("DE"), Just("A-17")]
            .prop_map(Value::from),
    ];
    let keys = prop_oneof![
        Just("orderId".to_owned()),
        Just("shippingSpeed".to_owned()),
        Just("lines".to_owned()),
        Just("discountPct".to_owned()),
        Just("giftWrap".to_owned()),
        Just("tags".to_owned()),
        Just("priority".to_owned()),
        Just("billing".to_owned()),
        Just("sku".to_owned()),
        Just("quantity".to_owned()),
        Just("streetLine".to_owned()),
        Just("country".to_owned()),
        Just("byte".to_owned()),
        Just("ratio".to_owned()),
        "[a-z]{1,6}",
    ];
    leaf.prop_recursive(4, 48, 8, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map(keys.clone(), inner, 0..9)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// Decoding either succeeds with a value that validates, or fails with at least one error,
/// each with a path starting at `$`.
fn check_outcome<T: Dto>(result: Result<T, ValidationError>) {
    match result {
        Ok(value) => assert_eq!(value.validate(), Ok(())),
        Err(err) => {
            assert!(!err.errors.is_empty());
            for e in &err.errors {
                assert!(e.path.starts_with('$'), "{e:?}");
                assert!(!e.message.is_empty());
            }
        }
    }
}

proptest! {
    #[test]
    fn arbitrary_strings_never_panic(s in any::<String>()) {
        check_outcome(CreateOrder::from_json_str(&s));
        check_outcome(Small::from_json_str(&s));
    }

    #[test]
    fn arbitrary_json_never_panics(v in arb_json()) {
        check_outcome(CreateOrder::from_json_value(&v));
        check_outcome(OrderLine::from_json_value(&v));
        check_outcome(Small::from_json_value(&v));
        let text = v.to_string();
        check_outcome(CreateOrder::from_json_str(&text));
        check_outcome(Address::from_json_str(&text));
        // Text and value decoding agree.
        prop_assert_eq!(
            CreateOrder::from_json_str(&text).map_err(|e| paths(&e).iter().map(|(p, c)| format!("{p} {c}")).collect::<Vec<_>>()),
            CreateOrder::from_json_value(&v).map_err(|e| paths(&e).iter().map(|(p, c)| format!("{p} {c}")).collect::<Vec<_>>())
        );
    }

    #[test]
    fn valid_orders_round_trip(
        id in "[A-Z]{3,12}",
        qty in 1u32..=99,
        n in 1usize..=3,
        gift in any::<bool>(),
        priority in -5i64..,
    ) {
        let original = CreateOrder {
            order_id: id,
            shipping_speed: "standard".into(),
            lines: (0..n).map(|i| OrderLine { sku: format!("SKU-{i}"), quantity: qty }).collect(),
            discount_pct: None,
            gift_wrap: gift,
            tags: None,
            priority,
            billing: None,
        };
        let text = serde_json::to_string(&original).unwrap();
        prop_assert_eq!(CreateOrder::from_json_str(&text).unwrap(), original);
    }
}
