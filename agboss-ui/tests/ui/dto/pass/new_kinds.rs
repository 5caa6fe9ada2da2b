//! DTO enums, maps, JSON values, doc prompts and `rename` compile without any warning, in a
//! crate that denies them.
#![deny(warnings, missing_docs, unused, clippy::all)]

use std::collections::{BTreeMap, HashMap};

use agboss_core::dto::Dto;

/// A shipping speed.
#[derive(Dto, Debug, Clone, Copy, PartialEq)]
pub enum Speed {
    /// Slow.
    Standard,
    /// Fast.
    #[dto(rename = "next-day")]
    Express,
}

/// An order.
#[derive(Dto, Debug, Clone, PartialEq)]
pub struct Order {
    /// How fast.
    #[choice]
    speed: Speed,
    /// Fallback speeds.
    #[choice(max_items = 2)]
    fallbacks: Option<Vec<Speed>>,
    /// Counts per warehouse.
    #[integer(min = 0)]
    stock: HashMap<String, u32>,
    /// Notes per line.
    #[text(max_length = 10)]
    notes: BTreeMap<String, Option<String>>,
    #[json(prompt = "Anything else", rename = "extra_data")]
    extra: Option<serde_json::Value>,
}

fn main() {
    let order = Order::from_json_str(
        r#"{"speed": "next-day", "stock": {"a": 1}, "notes": {"x": null}, "extra_data": [1]}"#,
    )
    .unwrap();
    assert_eq!(order.speed, Speed::Express);
    assert!(order.fallbacks.is_none() && order.stock["a"] == 1 && order.notes["x"].is_none());
    assert_eq!(order.extra, Some(serde_json::json!([1])));
    assert_eq!(Order::strict_json_schema()["required"].as_array().map(Vec::len), Some(5));
}
