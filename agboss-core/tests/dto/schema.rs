//! The JSON schema: descriptions, required members, constraints, integer ranges.

use super::*;

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
