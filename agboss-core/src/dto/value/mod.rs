//! Per-Rust-type behaviour of DTO fields, used by `#[derive(Dto)]`. Not public API.
//! Scalars (text, integers, numbers, booleans) are in `scalar`, nested DTOs, options and lists
//! in `container`.
mod container;
mod extra;
mod field;
mod foreign;
mod scalar;

pub use extra::{DtoEnum, check_enum, deserialize_enum, enum_schema, serialize_enum};
pub use field::{Field, MemberKey, NotAField};
pub use foreign::{
    NotASchemaField, SchemaField, SchemaKind, assert_schema, check_schema_member, schemars_schema,
    to_schemars,
};
use regex::Regex;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::error::code;
use super::{Dto, FieldError, JsonPath};

/// A compiled `pattern` of a `#[text]` field.
#[derive(Clone, Copy, Debug)]
pub struct Pattern {
    /// The regex as written (shown in the schema and in messages).
    pub source: &'static str,
    /// Returns the regex, compiled once (the derive emits a `LazyLock` per field).
    pub regex: fn() -> &'static Regex,
}

/// The constraints of one field, as written in its attribute. The derive emits one `const` per
/// field; the kind check guarantees only the keys of the field's kind are set.
#[derive(Clone, Copy, Debug)]
pub struct Constraints {
    /// `#[text(min_length)]`, in characters.
    pub min_length: Option<usize>,
    /// `#[text(max_length)]`, in characters.
    pub max_length: Option<usize>,
    /// `#[text(pattern)]`.
    pub pattern: Option<Pattern>,
    /// `#[text(choices)]`.
    pub choices: Option<&'static [&'static str]>,
    /// `#[integer(min)]`.
    pub min_int: Option<i128>,
    /// `#[integer(max)]`.
    pub max_int: Option<i128>,
    /// `#[number(min)]`.
    pub min_num: Option<f64>,
    /// `#[number(max)]`.
    pub max_num: Option<f64>,
    /// `min_items` (list fields).
    pub min_items: Option<usize>,
    /// `max_items` (list fields).
    pub max_items: Option<usize>,
}

impl Constraints {
    /// No constraint at all.
    pub const NONE: Self = Self {
        min_length: None,
        max_length: None,
        pattern: None,
        choices: None,
        min_int: None,
        max_int: None,
        min_num: None,
        max_num: None,
        min_items: None,
        max_items: None,
    };
}

impl Default for Constraints {
    fn default() -> Self {
        Self::NONE
    }
}

/// How a Rust type behaves as a DTO field: its schema, its checks on a typed value and on raw
/// JSON. Implemented for `String`, the integer types, `f32`/`f64`, `bool`, `Option<T>`, `Vec<T>`
/// and every [`Dto`].
#[diagnostic::on_unimplemented(
    message = "[dto.field-type] `{Self}` cannot be the type of a DTO field",
    label = "not a DTO field type",
    note = "DTO fields are String, integers, f32/f64, bool, serde_json::Value, a #[derive(Dto)] struct or enum, or Option<_>/Vec<_>/HashMap<String, _>/BTreeMap<String, _> of those"
)]
pub trait DtoValue {
    /// Whether the field must be present (`false` for `Option`).
    const REQUIRED: bool = true;

    /// Whether a key given twice could reach the value unnoticed (see `Dto::OPEN_KEYS`): a map,
    /// a raw JSON value, or a DTO that holds one. `false` for scalars.
    const OPEN_KEYS: bool = false;

    /// The JSON Schema of the field (without its `description`).
    fn schema(c: &Constraints) -> Value;

    /// Checks a typed value against `c`; pushes every failure. Must not allocate on success.
    fn validate_value(&self, c: &Constraints, path: &mut JsonPath, errors: &mut Vec<FieldError>);

    /// Checks a JSON value (type, range, constraints); pushes every failure. `value` is never
    /// the `null`/absence of an optional field (the caller handles those).
    fn check_json(
        value: &Value,
        c: &Constraints,
        path: &mut JsonPath,
        errors: &mut Vec<FieldError>,
    );

    /// Whether the value is left out when serializing (`None`).
    #[inline]
    fn is_absent(&self) -> bool {
        false
    }
}

/// `skip_serializing_if` of the derive's serialize mirror.
#[inline]
pub fn is_absent<T: DtoValue + ?Sized>(value: &&T) -> bool {
    T::is_absent(*value)
}

/// Inserts `"description": prompt` into a field's schema.
pub fn describe(mut schema: Value, prompt: &str) -> Value {
    if let Value::Object(map) = &mut schema {
        map.insert("description".to_owned(), Value::String(prompt.to_owned()));
    }
    schema
}

/// Builds the schema of a DTO: `{"type":"object","properties":..,"required":..,"additionalProperties":false}`.
pub fn object_schema(properties: Map<String, Value>, required: Vec<Value>) -> Value {
    let mut map = Map::new();
    map.insert("type".to_owned(), Value::from("object"));
    map.insert("properties".to_owned(), Value::Object(properties));
    map.insert("required".to_owned(), Value::Array(required));
    map.insert("additionalProperties".to_owned(), Value::Bool(false));
    Value::Object(map)
}

/// The object of a DTO's JSON, or a `type` error.
pub fn expect_object<'v>(
    value: &'v Value,
    path: &JsonPath,
    errors: &mut Vec<FieldError>,
) -> Option<&'v Map<String, Value>> {
    match value {
        Value::Object(map) => Some(map),
        other => {
            errors.push(type_error(path, "an object", other));
            None
        }
    }
}

/// Checks the member `key` of a DTO's JSON object (absent/null → `required` unless optional).
#[inline]
pub fn check_member<T: DtoValue + ?Sized>(
    object: &Map<String, Value>,
    key: &'static str,
    c: &Constraints,
    path: &mut JsonPath,
    errors: &mut Vec<FieldError>,
) {
    path.push_key(key);
    match object.get(key) {
        Some(Value::Null) | None => {
            if T::REQUIRED {
                let message = if object.contains_key(key) {
                    "is required (got null)"
                } else {
                    "is required"
                };
                errors.push(FieldError::new(path, code::REQUIRED, message));
            }
        }
        Some(value) => T::check_json(value, c, path, errors),
    }
    path.pop();
}

/// Checks the field `key` of a typed DTO.
#[inline]
pub fn validate_member<T: DtoValue + ?Sized>(
    value: &T,
    key: &'static str,
    c: &Constraints,
    path: &mut JsonPath,
    errors: &mut Vec<FieldError>,
) {
    path.push_key(key);
    value.validate_value(c, path, errors);
    path.pop();
}

fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(n) if n.is_f64() => "a number",
        Value::Number(_) => "an integer",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn type_error(path: &JsonPath, expected: &str, got: &Value) -> FieldError {
    FieldError::new(
        path,
        code::TYPE,
        format!("expected {expected}, got {}", json_kind(got)),
    )
}

fn i128_value(v: i128) -> Value {
    if let Ok(v) = i64::try_from(v) {
        Value::from(v)
    } else if let Ok(v) = u64::try_from(v) {
        Value::from(v)
    } else {
        Value::from(v as f64)
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// What every kind's types are: a [`DtoValue`] with serde impls (the kind traits require it,
/// so that a type that passes its kind assertion is a full [`Field`]).
pub trait FieldType: DtoValue + Serialize + DeserializeOwned {}
impl<T: DtoValue + Serialize + DeserializeOwned> FieldType for T {}

/// Types a `#[text]` field may have.
#[diagnostic::on_unimplemented(
    message = "[dto.field-type] `{Self}` cannot be a #[text] field",
    label = "#[text] needs String, Option<String> or Vec<String>",
    note = "pick the attribute that matches the type: #[text] String, #[integer] i8..u128/isize/usize, #[number] f32/f64, #[boolean] bool, #[nested] a #[derive(Dto)] struct, #[choice] a #[derive(Dto)] enum of unit variants, #[json] serde_json::Value; for a Rust enum, add #[derive(Dto)] to it and use #[choice], or use a String with #[text(choices = [..])]"
)]
pub trait TextKind: FieldType {}
impl TextKind for String {}

/// Types an `#[integer]` field may have.
#[diagnostic::on_unimplemented(
    message = "[dto.field-type] `{Self}` cannot be an #[integer] field",
    label = "#[integer] needs an integer type (i8..i128, u8..u128, isize, usize), optionally in Option<_>/Vec<_>",
    note = "pick the attribute that matches the type: #[text] String, #[integer] i8..u128/isize/usize, #[number] f32/f64, #[boolean] bool, #[nested] a #[derive(Dto)] struct, #[choice] a #[derive(Dto)] enum of unit variants, #[json] serde_json::Value; for a Rust enum, add #[derive(Dto)] to it and use #[choice], or use a String with #[text(choices = [..])]"
)]
pub trait IntegerKind: FieldType {}

/// Types a `#[number]` field may have.
#[diagnostic::on_unimplemented(
    message = "[dto.field-type] `{Self}` cannot be a #[number] field",
    label = "#[number] needs f32 or f64, optionally in Option<_>/Vec<_>",
    note = "pick the attribute that matches the type: #[text] String, #[integer] i8..u128/isize/usize, #[number] f32/f64, #[boolean] bool, #[nested] a #[derive(Dto)] struct, #[choice] a #[derive(Dto)] enum of unit variants, #[json] serde_json::Value; for a Rust enum, add #[derive(Dto)] to it and use #[choice], or use a String with #[text(choices = [..])]"
)]
pub trait NumberKind: FieldType {}

/// Types a `#[boolean]` field may have.
#[diagnostic::on_unimplemented(
    message = "[dto.field-type] `{Self}` cannot be a #[boolean] field",
    label = "#[boolean] needs bool, Option<bool> or Vec<bool>",
    note = "pick the attribute that matches the type: #[text] String, #[integer] i8..u128/isize/usize, #[number] f32/f64, #[boolean] bool, #[nested] a #[derive(Dto)] struct, #[choice] a #[derive(Dto)] enum of unit variants, #[json] serde_json::Value; for a Rust enum, add #[derive(Dto)] to it and use #[choice], or use a String with #[text(choices = [..])]"
)]
pub trait BooleanKind: FieldType {}
impl BooleanKind for bool {}

/// Types a `#[nested]` field may have.
#[diagnostic::on_unimplemented(
    message = "[dto.field-type] `{Self}` cannot be a #[nested] field",
    label = "#[nested] needs a #[derive(Dto)] struct, optionally in Option<_>/Vec<_>/a map",
    note = "pick the attribute that matches the type: #[text] String, #[integer] i8..u128/isize/usize, #[number] f32/f64, #[boolean] bool, #[nested] a #[derive(Dto)] struct, #[choice] a #[derive(Dto)] enum of unit variants, #[json] serde_json::Value; for a Rust enum, add #[derive(Dto)] to it and use #[choice], or use a String with #[text(choices = [..])]"
)]
pub trait NestedKind: FieldType {}
impl<T: Dto> NestedKind for T {}

/// Types a `#[choice]` field may have.
#[diagnostic::on_unimplemented(
    message = "[dto.field-type] `{Self}` cannot be a #[choice] field",
    label = "#[choice] needs a #[derive(Dto)] enum of unit variants, optionally in Option<_>/Vec<_>/a map",
    note = "pick the attribute that matches the type: #[text] String, #[integer] i8..u128/isize/usize, #[number] f32/f64, #[boolean] bool, #[nested] a #[derive(Dto)] struct, #[choice] a #[derive(Dto)] enum of unit variants, #[json] serde_json::Value; for a Rust enum, add #[derive(Dto)] to it and use #[choice], or use a String with #[text(choices = [..])]"
)]
pub trait ChoiceKind: FieldType {}
impl<T: DtoEnum> ChoiceKind for T {}

/// Types a `#[json]` field may have.
#[diagnostic::on_unimplemented(
    message = "[dto.field-type] `{Self}` cannot be a #[json] field",
    label = "#[json] needs serde_json::Value, optionally in Option<_>/Vec<_>/a map",
    note = "pick the attribute that matches the type: #[text] String, #[integer] i8..u128/isize/usize, #[number] f32/f64, #[boolean] bool, #[nested] a #[derive(Dto)] struct, #[choice] a #[derive(Dto)] enum of unit variants, #[json] serde_json::Value; for a Rust enum, add #[derive(Dto)] to it and use #[choice], or use a String with #[text(choices = [..])]"
)]
pub trait JsonKind: FieldType {}
impl JsonKind for Value {}

macro_rules! container_kinds {
    ($($k:ident),*) => {$(
        impl<T: $k> $k for Option<T> {}
        impl<T: $k> $k for Vec<T> {}
        impl<T: $k> $k for std::collections::HashMap<String, T> {}
        impl<T: $k> $k for std::collections::BTreeMap<String, T> {}
    )*};
}
container_kinds!(
    TextKind,
    IntegerKind,
    NumberKind,
    BooleanKind,
    NestedKind,
    ChoiceKind,
    JsonKind
);

/// Compile-time kind check emitted by the derive.
pub const fn assert_text<T: TextKind>() {}
/// Compile-time kind check emitted by the derive.
pub const fn assert_integer<T: IntegerKind>() {}
/// Compile-time kind check emitted by the derive.
pub const fn assert_number<T: NumberKind>() {}
/// Compile-time kind check emitted by the derive.
pub const fn assert_boolean<T: BooleanKind>() {}
/// Compile-time kind check emitted by the derive.
pub const fn assert_nested<T: NestedKind>() {}
/// Compile-time kind check emitted by the derive.
pub const fn assert_choice<T: ChoiceKind>() {}
/// Compile-time kind check emitted by the derive.
pub const fn assert_json<T: JsonKind>() {}
