//! The wire format: camelCase names, round trips, raw identifiers, unknown members and nulls.

use super::*;

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
