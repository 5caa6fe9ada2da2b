//! The edit form of a ticket, built from its tool's input JSON Schema, and the approver's new
//! input read back from it. A field shows the masked value (never the raw one); a field left
//! empty keeps the call's value, so an approver can change the amount without seeing, or
//! retyping, the masked e-mail beside it.
use serde_json::{Map, Value};

use super::html::escape;

/// A refused edit: the form the approver submitted, and why it was refused (`(field, why)`;
/// a field is a property name, `$` the whole input).
pub(super) struct Refused<'a> {
    pub(super) form: &'a [(String, String)],
    pub(super) errors: &'a [(String, String)],
}

/// The kind of input a schema property gets.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Text,
    Integer,
    Number,
    Boolean,
    /// Anything else: JSON text.
    Json,
}

fn kind(schema: &Value) -> Kind {
    let ty = match &schema["type"] {
        Value::String(t) => Some(t.as_str()),
        Value::Array(types) => types
            .iter()
            .filter_map(Value::as_str)
            .find(|t| *t != "null"),
        _ => None,
    };
    match ty {
        Some("string") => Kind::Text,
        Some("integer") => Kind::Integer,
        Some("number") => Kind::Number,
        Some("boolean") => Kind::Boolean,
        _ => Kind::Json,
    }
}

fn properties(schema: &Value) -> impl Iterator<Item = (&String, &Value)> {
    schema["properties"].as_object().into_iter().flatten()
}

/// The form's fields (HTML): one per property of `schema`, showing `masked`'s values; a value
/// the policies masked (it differs from `raw`'s) is shown empty, marked masked: submitting the
/// form keeps it. After a refused edit, `refused` holds the submitted form and its errors
/// (`(field, why)`): each field shows what the approver typed, and a field with an error is
/// marked invalid, its error under it.
pub(super) fn fields(
    schema: &Value,
    raw: &Value,
    masked: &Value,
    refused: Option<&Refused<'_>>,
) -> String {
    let mut out = String::new();
    for (name, prop) in properties(schema) {
        let error = refused.and_then(|r| r.errors.iter().find(|(field, _)| field == name));
        // What the approver submitted, when this is a refused edit's form.
        let typed = refused.map(|r| {
            r.form
                .iter()
                .find(|(k, _)| k.strip_prefix("f.") == Some(name.as_str()))
                .map(|(_, v)| v.as_str())
        });
        let was_masked = masked[name.as_str()] != raw[name.as_str()];
        let shown = if was_masked {
            &Value::Null
        } else {
            &masked[name.as_str()]
        };
        let keep = if was_masked {
            "masked: empty keeps it"
        } else {
            "empty: keep"
        };
        let label = prop["description"].as_str().unwrap_or(name);
        let id = format!("field-{}", escape(name));
        let invalid = if error.is_some() {
            format!(
                r#" aria-invalid="true" aria-describedby="error-{}""#,
                escape(name)
            )
        } else {
            String::new()
        };
        let input = match kind(prop) {
            Kind::Boolean => format!(
                r#"<input type="checkbox" id="{id}" name="f.{n}"{invalid}{}>"#,
                if typed.map_or(shown.as_bool() == Some(true), |t| t.is_some()) {
                    " checked"
                } else {
                    ""
                },
                n = escape(name)
            ),
            Kind::Json => format!(
                r#"<textarea id="{id}" name="f.{n}" rows="3" placeholder="{keep}"{invalid}>{}</textarea>"#,
                escape(&match typed {
                    Some(t) => t.unwrap_or_default().to_string(),
                    None if shown.is_null() => String::new(),
                    None => shown.to_string(),
                }),
                n = escape(name)
            ),
            k => {
                let value = match (typed, shown) {
                    (Some(t), _) => t.unwrap_or_default().to_string(),
                    (None, Value::String(s)) => s.clone(),
                    (None, Value::Null) => String::new(),
                    (None, v) => v.to_string(),
                };
                let ty = if k == Kind::Text { "text" } else { "number" };
                let step = if k == Kind::Number {
                    r#" step="any""#
                } else {
                    ""
                };
                format!(
                    r#"<input type="{ty}"{step} id="{id}" name="f.{n}" value="{}" placeholder="{keep}"{invalid}>"#,
                    escape(&value),
                    n = escape(name)
                )
            }
        };
        let error = error.map_or_else(String::new, |(_, why)| {
            format!(
                r#"<p class="field-error" id="error-{}">{}</p>"#,
                escape(name),
                escape(why)
            )
        });
        out.push_str(&format!(
            r#"<label for="{id}">{} <code>{}</code></label><div class="field">{input}{error}</div>"#,
            escape(label),
            escape(name)
        ));
    }
    out
}

/// The approver's input from the form's `f.<name>` fields: each typed by its schema property,
/// an empty field keeping `original`'s value (a checkbox is its own value). An unreadable
/// number or JSON is a field error (`(name, why)`).
pub(super) fn input(
    schema: &Value,
    original: &Value,
    form: &[(String, String)],
) -> Result<Value, Vec<(String, String)>> {
    let field = |name: &str| {
        form.iter()
            .find(|(k, _)| k.strip_prefix("f.") == Some(name))
            .map(|(_, v)| v.as_str())
    };
    let mut object = Map::new();
    let mut errors = Vec::new();
    for (name, prop) in properties(schema) {
        let kind = kind(prop);
        let given = field(name).map(str::trim);
        let value = match (kind, given) {
            (Kind::Boolean, given) => Ok(Value::Bool(given.is_some())),
            (_, None | Some("")) => match original.get(name.as_str()) {
                Some(v) => Ok(v.clone()),
                None => continue,
            },
            (Kind::Text, Some(_)) => Ok(Value::String(field(name).unwrap_or_default().into())),
            (Kind::Integer, Some(text)) => text
                .parse::<i64>()
                .map(Value::from)
                .map_err(|_| "is not a whole number".to_string()),
            (Kind::Number, Some(text)) => text
                .parse::<f64>()
                .ok()
                .and_then(serde_json::Number::from_f64)
                .map(Value::Number)
                .ok_or_else(|| "is not a number".to_string()),
            (Kind::Json, Some(text)) => {
                serde_json::from_str(text).map_err(|e| format!("is not JSON: {e}"))
            }
        };
        match value {
            Ok(v) => {
                object.insert(name.clone(), v);
            }
            Err(why) => errors.push((name.clone(), why)),
        }
    }
    if errors.is_empty() {
        Ok(Value::Object(object))
    } else {
        Err(errors)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({ "type": "object", "properties": {
            "orderId": { "type": "string" },
            "amountCents": { "type": "integer", "description": "Amount" },
            "urgent": { "type": "boolean" },
            "tags": { "type": "array" },
        }})
    }

    #[test]
    fn empty_fields_keep_the_calls_values_and_numbers_are_typed() {
        let original =
            json!({ "orderId": "A-1", "amountCents": 500, "urgent": true, "tags": ["x"] });
        let form = [
            ("f.amountCents".into(), "300".into()),
            ("f.orderId".into(), String::new()),
        ];
        let edited = input(&schema(), &original, &form).unwrap();
        assert_eq!(
            edited,
            json!({ "orderId": "A-1", "amountCents": 300, "urgent": false, "tags": ["x"] })
        );
        let bad = [
            ("f.amountCents".into(), "3.5".into()),
            ("f.tags".into(), "[".into()),
        ];
        let errors = input(&schema(), &original, &bad).unwrap_err();
        let names: Vec<_> = errors.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["amountCents", "tags"]);
    }

    #[test]
    fn fields_show_the_masked_values_escaped() {
        let raw = json!({ "orderId": "<b>A-1</b>", "amountCents": 5 });
        let masked = json!({ "orderId": "<b>A-1</b>", "amountCents": 5 });
        let shown = fields(&schema(), &raw, &masked, None);
        assert!(shown.contains("&lt;b&gt;A-1&lt;/b&gt;"), "{shown}");
        assert!(!shown.contains("<b>"), "{shown}");
        let secret = json!({ "orderId": "jane@example.com" });
        let hidden = fields(&schema(), &secret, &json!({ "orderId": "[EMAIL]" }), None);
        assert!(
            !hidden.contains("jane@") && !hidden.contains("[EMAIL]"),
            "{hidden}"
        );
        assert!(hidden.contains("masked: empty keeps it"), "{hidden}");
        let errors = [("amountCents".to_string(), "must be at least 1".to_string())];
        let form = [("f.amountCents".to_string(), "0".to_string())];
        let refused = Refused {
            form: &form,
            errors: &errors,
        };
        let refused = fields(&schema(), &raw, &masked, Some(&refused));
        assert!(
            refused.contains(r#"name="f.amountCents" value="0""#),
            "what the approver typed: {refused}"
        );
        assert!(
            refused.contains(r#"aria-invalid="true" aria-describedby="error-amountCents""#)
                && refused.contains(
                    r#"<p class="field-error" id="error-amountCents">must be at least 1</p>"#
                ),
            "{refused}"
        );
        assert_eq!(refused.matches("aria-invalid").count(), 1, "{refused}");
    }
}
