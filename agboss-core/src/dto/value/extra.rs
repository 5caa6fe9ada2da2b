//! The newer field kinds: `#[choice]` (a `#[derive(Dto)]` enum of unit variants), `#[json]`
//! (a free `serde_json::Value`) and maps with text keys (`HashMap<String, T>`,
//! `BTreeMap<String, T>`, whose values have the field's kind).
use std::collections::{BTreeMap, HashMap};

use serde::de::{Deserializer, Error as _};
use serde::{Deserialize, Serializer};
use serde_json::{Map, Value};

use super::{Constraints, DtoValue, type_error};
use crate::dto::{Dto, FieldError, JsonPath};

/// A `#[derive(Dto)]` enum of unit variants: one text of a fixed set on the wire.
pub trait DtoEnum: Dto + Sized {
    /// The wire names of the variants, in order.
    const VARIANTS: &'static [&'static str];
    /// The wire name of a variant.
    fn wire(&self) -> &'static str;
    /// The variant of a wire name.
    fn from_wire(wire: &str) -> Option<Self>;
}

/// `Serialize` of a DTO enum: its wire name.
pub fn serialize_enum<E: DtoEnum, S: Serializer>(
    value: &E,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(value.wire())
}

/// `Deserialize` of a DTO enum: one of its wire names.
pub fn deserialize_enum<'de, E: DtoEnum, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<E, D::Error> {
    let text = std::borrow::Cow::<'de, str>::deserialize(deserializer)?;
    E::from_wire(&text).ok_or_else(|| D::Error::unknown_variant(&text, E::VARIANTS))
}

/// The constraints of a DTO enum's text.
fn enum_constraints(variants: &'static [&'static str]) -> Constraints {
    Constraints {
        choices: Some(variants),
        ..Constraints::NONE
    }
}

/// The schema of a DTO enum: `{"type": "string", "enum": [..]}`.
pub fn enum_schema(variants: &'static [&'static str]) -> Value {
    String::schema(&enum_constraints(variants))
}

/// Checks the JSON of a DTO enum: a string among its wire names.
pub fn check_enum(
    value: &Value,
    variants: &'static [&'static str],
    path: &mut JsonPath,
    errors: &mut Vec<FieldError>,
) {
    String::check_json(value, &enum_constraints(variants), path, errors);
}

// ---------------------------------------------------------------------------------------------
// `#[json]`

impl DtoValue for Value {
    const OPEN_KEYS: bool = true;

    fn schema(_: &Constraints) -> Value {
        Value::Object(Map::new())
    }

    #[inline]
    fn validate_value(&self, _: &Constraints, _: &mut JsonPath, _: &mut Vec<FieldError>) {}

    fn check_json(_: &Value, _: &Constraints, _: &mut JsonPath, _: &mut Vec<FieldError>) {}
}

// ---------------------------------------------------------------------------------------------
// maps

/// Re-roots the errors found under a map's entry `key`: `$.x` → `<path>["key"].x`. Allocates
/// only when there are errors.
fn push_entry_errors(
    path: &JsonPath,
    key: &str,
    entry: Vec<FieldError>,
    errors: &mut Vec<FieldError>,
) {
    if entry.is_empty() {
        return;
    }
    let prefix = format!("{path}[{}]", Value::from(key));
    for e in entry {
        let rest = e.path.strip_prefix('$').unwrap_or(&e.path);
        errors.push(FieldError::at(format!("{prefix}{rest}"), e.code, e.message));
    }
}

fn map_schema<T: DtoValue>(c: &Constraints) -> Value {
    let mut map = Map::new();
    map.insert("type".to_owned(), Value::from("object"));
    map.insert("additionalProperties".to_owned(), T::schema(c));
    Value::Object(map)
}

fn check_map_json<T: DtoValue>(
    value: &Value,
    c: &Constraints,
    path: &mut JsonPath,
    errors: &mut Vec<FieldError>,
) {
    let Value::Object(object) = value else {
        errors.push(type_error(path, "an object", value));
        return;
    };
    for (key, item) in object {
        let mut entry = Vec::new();
        let mut root = JsonPath::new();
        if item.is_null() && T::REQUIRED {
            entry.push(FieldError::new(
                &root,
                crate::dto::code::REQUIRED,
                "is required (got null)",
            ));
        } else if !item.is_null() {
            T::check_json(item, c, &mut root, &mut entry);
        }
        push_entry_errors(path, key, entry, errors);
    }
}

macro_rules! map_value {
    ($map:ident) => {
        impl<T: DtoValue> DtoValue for $map<String, T> {
            const OPEN_KEYS: bool = true;

            fn schema(c: &Constraints) -> Value {
                map_schema::<T>(c)
            }

            fn validate_value(
                &self,
                c: &Constraints,
                path: &mut JsonPath,
                errors: &mut Vec<FieldError>,
            ) {
                for (key, item) in self {
                    let mut entry = Vec::new();
                    item.validate_value(c, &mut JsonPath::new(), &mut entry);
                    push_entry_errors(path, key, entry, errors);
                }
            }

            fn check_json(
                value: &Value,
                c: &Constraints,
                path: &mut JsonPath,
                errors: &mut Vec<FieldError>,
            ) {
                check_map_json::<T>(value, c, path, errors);
            }
        }
    };
}
map_value!(HashMap);
map_value!(BTreeMap);
