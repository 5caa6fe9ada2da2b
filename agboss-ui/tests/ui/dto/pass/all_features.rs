//! A DTO using every kind and key compiles without any warning, in a crate that denies them.
#![deny(warnings, missing_docs, unused, clippy::all)]

use agboss_core::dto::Dto;

/// A line.
#[derive(Dto, Debug, Clone, PartialEq)]
pub struct Line {
    #[text(prompt = "Sku", pattern = "^SKU-[0-9]+$", min_length = 5, max_length = 12)]
    sku: String,
    #[integer(prompt = "How many", min = 1, max = 99)]
    quantity: u8,
}

/// An order.
#[derive(Dto, Debug, Clone, PartialEq)]
pub struct Order {
    #[text(prompt = "Speed", choices = ["standard", "express"])]
    speed: String,
    #[nested(prompt = "Lines", min_items = 1, max_items = 10)]
    lines: Vec<Line>,
    #[nested(prompt = "Maybe more lines")]
    extra: Option<Vec<Line>>,
    #[number(prompt = "Discount", min = -1, max = 0.5)]
    discount: Option<f32>,
    #[boolean(prompt = "Gift?")]
    gift: bool,
    #[integer(prompt = "Priority", min = -10, max = 10)]
    r#priority: Option<i128>,
    #[text(prompt = "Tags", max_items = 3)]
    tags: Vec<Option<String>>,
}

fn main() {
    let order = Order::from_json_str(
        r#"{"speed": "express", "lines": [{"sku": "SKU-1", "quantity": 2}], "gift": false, "tags": []}"#,
    )
    .unwrap();
    assert_eq!(order.lines[0].quantity, 2);
    assert!(order.extra.is_none() && order.discount.is_none() && order.r#priority.is_none());
    assert_eq!(Order::DTO_NAME, "Order");
    assert_eq!(Order::json_schema()["properties"]["lines"]["minItems"], 1);
    assert!(order.tags.is_empty() && !order.gift && order.speed == "express");
}
