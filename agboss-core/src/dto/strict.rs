//! The strict variant of a DTO schema ([`strict_schema`]).
use serde_json::{Map, Value};

/// The strict variant of `schema`, as OpenAI's structured outputs and `strict: true` tools
/// require it: every object has `additionalProperties: false` and lists **every** property in
/// `required`; a property that may be absent (an `Option` field) is nullable instead
/// (`"type": ["string", "null"]`, `null` added to an `enum`, or
/// `{"anyOf": [.., {"type": "null"}]}` for a schema without a `type`).
///
/// Validation accepts `null` for an optional field, so what a strict model sends for a field
/// it has no value for (`null`) decodes to `None`.
pub fn strict_schema(mut schema: Value) -> Value {
    make_strict(&mut schema);
    schema
}

fn make_strict(schema: &mut Value) {
    let Value::Object(map) = schema else { return };
    let required: Vec<String> = match map.get("required") {
        Some(Value::Array(r)) => r
            .iter()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect(),
        _ => Vec::new(),
    };
    if let Some(Value::Object(properties)) = map.get_mut("properties") {
        let mut all = Vec::with_capacity(properties.len());
        for (key, property) in properties.iter_mut() {
            make_strict(property);
            if !required.iter().any(|r| r == key) {
                make_nullable(property);
            }
            all.push(Value::from(key.as_str()));
        }
        map.insert("required".to_owned(), Value::Array(all));
        map.insert("additionalProperties".to_owned(), Value::Bool(false));
    }
    for key in ["items", "additionalProperties"] {
        if let Some(sub @ Value::Object(_)) = map.get_mut(key) {
            make_strict(sub);
        }
    }
    for key in ["anyOf", "oneOf", "allOf", "prefixItems"] {
        if let Some(Value::Array(subs)) = map.get_mut(key) {
            subs.iter_mut().for_each(make_strict);
        }
    }
    for key in ["$defs", "definitions"] {
        if let Some(Value::Object(defs)) = map.get_mut(key) {
            defs.values_mut().for_each(make_strict);
        }
    }
}

/// Lets `schema` also accept `null`.
fn make_nullable(schema: &mut Value) {
    let Value::Object(map) = schema else { return };
    match map.get_mut("type") {
        Some(Value::String(t)) => {
            let t = std::mem::take(t);
            map.insert(
                "type".to_owned(),
                Value::Array(vec![Value::from(t), Value::from("null")]),
            );
        }
        Some(Value::Array(types)) => {
            if !types.iter().any(|t| t == "null") {
                types.push(Value::from("null"));
            }
        }
        _ => {
            // No `type` (a free value, an `anyOf`): one more alternative, `null`.
            let description = map.remove("description");
            let inner = Value::Object(std::mem::take(map));
            let mut null = Map::new();
            null.insert("type".to_owned(), Value::from("null"));
            map.insert(
                "anyOf".to_owned(),
                Value::Array(vec![inner, Value::Object(null)]),
            );
            if let Some(d) = description {
                map.insert("description".to_owned(), d);
            }
            return;
        }
    }
    if let Some(Value::Array(values)) = map.get_mut("enum")
        && !values.iter().any(Value::is_null)
    {
        values.push(Value::Null);
    }
}
