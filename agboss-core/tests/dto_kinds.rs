//! DTO enums (`#[choice]`), maps, free JSON values (`#[json]`), doc-comment prompts, `rename`
//! and the strict schema variant: schema snapshots, validation with JSON paths, round trips.
use std::collections::{BTreeMap, HashMap};

use agboss_core::dto::{Dto, DtoEnum, strict_schema};
use serde_json::{Value, json};

/// How urgent a ticket is.
#[derive(Dto, Debug, Clone, Copy, PartialEq, Eq)]
pub enum Priority {
    Low,
    InProgress,
    #[dto(rename = "P0")]
    Urgent,
}

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct Line {
    /// Stock keeping unit.
    #[text(pattern = "^SKU-[0-9]+$")]
    pub sku: String,
}

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct Ticket {
    /// The ticket's title, one line.
    #[text(max_length = 80)]
    pub title: String,
    #[choice(prompt = "How urgent it is")]
    pub priority: Priority,
    /// Labels the ticket also has.
    #[choice]
    pub also: Vec<Priority>,
    /// Counts per warehouse.
    #[integer(min = 1)]
    pub stock: HashMap<String, u32>,
    /// Lines per order.
    #[nested]
    pub lines: BTreeMap<String, Line>,
    /// Anything the caller wants to keep.
    #[json]
    pub extra: Value,
    #[text(prompt = "Who reported it", rename = "reported_by")]
    pub reporter: Option<String>,
    /// When it is due, if it is.
    #[choice]
    pub escalation: Option<Priority>,
}

fn ticket() -> Ticket {
    Ticket {
        title: "Printer on fire".into(),
        priority: Priority::Urgent,
        also: vec![Priority::Low, Priority::InProgress],
        stock: HashMap::from([("berlin".to_owned(), 3)]),
        lines: BTreeMap::from([(
            "a".to_owned(),
            Line {
                sku: "SKU-1".into(),
            },
        )]),
        extra: json!({"any": ["thing", 1]}),
        reporter: None,
        escalation: Some(Priority::Low),
    }
}

fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap()
}

#[test]
fn enum_wire_names_are_kebab_case_or_renamed() {
    assert_eq!(Priority::VARIANTS, ["low", "in-progress", "P0"]);
    assert_eq!(
        serde_json::to_value(Priority::InProgress).unwrap(),
        json!("in-progress")
    );
    assert_eq!(Priority::from_json_str("\"P0\"").unwrap(), Priority::Urgent);
    let err = Priority::from_json_str("\"urgent\"").unwrap_err();
    assert_eq!(err.errors[0].path, "$");
    assert_eq!(err.errors[0].code, "choices");
    assert_eq!(
        Priority::json_schema(),
        json!({"type": "string", "enum": ["low", "in-progress", "P0"]})
    );
}

#[test]
fn schema_of_every_new_kind() {
    insta::assert_snapshot!("ticket_schema", pretty(&Ticket::json_schema()));
}

#[test]
fn strict_schema_requires_everything_and_makes_options_nullable() {
    let strict = Ticket::strict_json_schema();
    assert_eq!(strict, strict_schema(Ticket::json_schema()));
    assert_eq!(
        strict["required"],
        json!([
            "title",
            "priority",
            "also",
            "stock",
            "lines",
            "extra",
            "reported_by",
            "escalation"
        ])
    );
    assert_eq!(
        strict["properties"]["reported_by"]["type"],
        json!(["string", "null"])
    );
    assert_eq!(
        strict["properties"]["escalation"]["enum"],
        json!(["low", "in-progress", "P0", null])
    );
    insta::assert_snapshot!("ticket_strict_schema", pretty(&strict));
}

#[test]
fn round_trip() {
    let t = ticket();
    let wire = serde_json::to_value(&t).unwrap();
    assert_eq!(
        wire,
        json!({
            "title": "Printer on fire",
            "priority": "P0",
            "also": ["low", "in-progress"],
            "stock": {"berlin": 3},
            "lines": {"a": {"sku": "SKU-1"}},
            "extra": {"any": ["thing", 1]},
            "escalation": "low"
        })
    );
    assert_eq!(Ticket::from_json_value(&wire).unwrap(), t);
    assert_eq!(Ticket::from_json_str(&wire.to_string()).unwrap(), t);
}

#[test]
fn null_is_accepted_for_optional_fields() {
    let mut wire = serde_json::to_value(ticket()).unwrap();
    wire["reported_by"] = Value::Null;
    wire["escalation"] = Value::Null;
    let t = Ticket::from_json_value(&wire).unwrap();
    assert_eq!((t.reporter, t.escalation), (None, None));
}

#[test]
fn validation_reports_json_paths_inside_enums_lists_and_maps() {
    let wire = json!({
        "title": "x",
        "priority": "high",
        "also": ["low", 3],
        "stock": {"berlin": 0, "paris": "many"},
        "lines": {"a": {"sku": "nope"}},
        "extra": null,
    });
    let err = Ticket::from_json_value(&wire).unwrap_err();
    let lines: Vec<String> = err
        .errors
        .iter()
        .map(|e| format!("{e} [{}]", e.code))
        .collect();
    insta::assert_snapshot!("ticket_errors", lines.join("\n"));

    // Typed values are checked too: a map value below its minimum.
    let mut t = ticket();
    t.stock.insert("rome".into(), 0);
    let err = t.validate().unwrap_err();
    assert_eq!(err.errors[0].path, "$.stock[\"rome\"]");
    assert_eq!(err.errors[0].code, "min");
}

#[test]
fn doc_comments_are_prompts_and_prompt_wins_over_them() {
    let schema = Ticket::json_schema();
    assert_eq!(
        schema["properties"]["title"]["description"],
        "The ticket's title, one line."
    );
    assert_eq!(
        schema["properties"]["priority"]["description"],
        "How urgent it is"
    );
    assert_eq!(
        schema["properties"]["lines"]["additionalProperties"]["properties"]["sku"]["description"],
        "Stock keeping unit."
    );
}
