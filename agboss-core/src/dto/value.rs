//! Per-Rust-type behaviour of DTO fields, used by `#[derive(Dto)]`. Not public API.
use regex::Regex;
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
    note = "DTO fields are String, integers, f32/f64, bool, a #[derive(Dto)] struct, or Option<_>/Vec<_> of those"
)]
pub trait DtoValue {
    /// Whether the field must be present (`false` for `Option`).
    const REQUIRED: bool = true;

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

// ---------------------------------------------------------------------------------------------
// text

impl DtoValue for String {
    fn schema(c: &Constraints) -> Value {
        let mut map = Map::new();
        map.insert("type".to_owned(), Value::from("string"));
        if let Some(n) = c.min_length {
            map.insert("minLength".to_owned(), Value::from(n));
        }
        if let Some(n) = c.max_length {
            map.insert("maxLength".to_owned(), Value::from(n));
        }
        if let Some(p) = c.pattern {
            map.insert("pattern".to_owned(), Value::from(p.source));
        }
        if let Some(choices) = c.choices {
            map.insert(
                "enum".to_owned(),
                Value::Array(choices.iter().map(|s| Value::from(*s)).collect()),
            );
        }
        Value::Object(map)
    }

    #[inline]
    fn validate_value(&self, c: &Constraints, path: &mut JsonPath, errors: &mut Vec<FieldError>) {
        validate_str(self, c, path, errors);
    }

    fn check_json(
        value: &Value,
        c: &Constraints,
        path: &mut JsonPath,
        errors: &mut Vec<FieldError>,
    ) {
        match value {
            Value::String(s) => validate_str(s, c, path, errors),
            other => errors.push(type_error(path, "a string", other)),
        }
    }
}

#[inline]
fn validate_str(s: &str, c: &Constraints, path: &JsonPath, errors: &mut Vec<FieldError>) {
    if c.min_length.is_some() || c.max_length.is_some() {
        // Byte length bounds the character count from above: skip counting when it can't fail.
        let bytes = s.len();
        let needs_count =
            c.min_length.is_some_and(|min| min > 0) || c.max_length.is_some_and(|max| bytes > max);
        if needs_count {
            let chars = s.chars().count();
            if let Some(min) = c.min_length
                && chars < min
            {
                errors.push(FieldError::new(
                    path,
                    code::MIN_LENGTH,
                    format!(
                        "must be at least {min} character{} long (got {chars})",
                        plural(min)
                    ),
                ));
            }
            if let Some(max) = c.max_length
                && chars > max
            {
                errors.push(FieldError::new(
                    path,
                    code::MAX_LENGTH,
                    format!(
                        "must be at most {max} character{} long (got {chars})",
                        plural(max)
                    ),
                ));
            }
        }
    }
    if let Some(p) = c.pattern
        && !(p.regex)().is_match(s)
    {
        errors.push(FieldError::new(
            path,
            code::PATTERN,
            format!("must match the pattern `{}`", p.source),
        ));
    }
    if let Some(choices) = c.choices
        && !choices.contains(&s)
    {
        let list = choices
            .iter()
            .map(|c| format!("{c:?}"))
            .collect::<Vec<_>>()
            .join(", ");
        errors.push(FieldError::new(
            path,
            code::CHOICES,
            format!("must be one of {list}"),
        ));
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

// ---------------------------------------------------------------------------------------------
// integer

/// Largest magnitude of a type bound shown in the schema (JSON's safe integer range).
const SAFE_INT: i128 = (1 << 53) - 1;

fn int_bounds(c: &Constraints, type_min: i128, type_max: i128) -> (i128, i128) {
    (
        c.min_int.map_or(type_min, |m| m.max(type_min)),
        c.max_int.map_or(type_max, |m| m.min(type_max)),
    )
}

fn int_schema(c: &Constraints, type_min: i128, type_max: i128) -> Value {
    let mut map = Map::new();
    map.insert("type".to_owned(), Value::from("integer"));
    let (lo, hi) = int_bounds(c, type_min, type_max);
    if c.min_int.is_some() || lo.abs() <= SAFE_INT {
        map.insert("minimum".to_owned(), i128_value(lo));
    }
    if c.max_int.is_some() || hi.abs() <= SAFE_INT {
        map.insert("maximum".to_owned(), i128_value(hi));
    }
    Value::Object(map)
}

#[inline]
fn check_int(
    v: i128,
    c: &Constraints,
    type_min: i128,
    type_max: i128,
    path: &JsonPath,
    errors: &mut Vec<FieldError>,
) {
    if c.min_int.is_none() && c.max_int.is_none() && v >= type_min && v <= type_max {
        return;
    }
    let (lo, hi) = int_bounds(c, type_min, type_max);
    if v < lo {
        errors.push(FieldError::new(
            path,
            code::MIN,
            format!("must be at least {lo} (got {v})"),
        ));
    } else if v > hi {
        errors.push(FieldError::new(
            path,
            code::MAX,
            format!("must be at most {hi} (got {v})"),
        ));
    }
}

fn check_json_int(
    value: &Value,
    c: &Constraints,
    type_min: i128,
    type_max: i128,
    path: &JsonPath,
    errors: &mut Vec<FieldError>,
) {
    let v = match value {
        Value::Number(n) => {
            if let Some(v) = n.as_i64() {
                i128::from(v)
            } else if let Some(v) = n.as_u64() {
                i128::from(v)
            } else {
                errors.push(FieldError::new(
                    path,
                    code::TYPE,
                    format!("expected an integer, got {n}"),
                ));
                return;
            }
        }
        other => {
            errors.push(type_error(path, "an integer", other));
            return;
        }
    };
    check_int(v, c, type_min, type_max, path, errors);
}

macro_rules! integer_impls {
    ($($t:ty),*) => {$(
        impl DtoValue for $t {
            fn schema(c: &Constraints) -> Value {
                int_schema(c, <$t>::MIN as i128, i128::try_from(<$t>::MAX).unwrap_or(i128::MAX))
            }

            #[inline]
            fn validate_value(&self, c: &Constraints, path: &mut JsonPath, errors: &mut Vec<FieldError>) {
                if c.min_int.is_none() && c.max_int.is_none() {
                    return;
                }
                let v = i128::try_from(*self).unwrap_or(i128::MAX);
                check_int(v, c, <$t>::MIN as i128, i128::try_from(<$t>::MAX).unwrap_or(i128::MAX), path, errors);
            }

            fn check_json(value: &Value, c: &Constraints, path: &mut JsonPath, errors: &mut Vec<FieldError>) {
                check_json_int(value, c, <$t>::MIN as i128, i128::try_from(<$t>::MAX).unwrap_or(i128::MAX), path, errors);
            }
        }
        impl IntegerKind for $t {}
    )*};
}

integer_impls!(
    i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize
);

// ---------------------------------------------------------------------------------------------
// number

fn num_schema(c: &Constraints) -> Value {
    let mut map = Map::new();
    map.insert("type".to_owned(), Value::from("number"));
    if let Some(m) = c.min_num {
        map.insert("minimum".to_owned(), Value::from(m));
    }
    if let Some(m) = c.max_num {
        map.insert("maximum".to_owned(), Value::from(m));
    }
    Value::Object(map)
}

#[inline]
fn check_num(v: f64, c: &Constraints, path: &JsonPath, errors: &mut Vec<FieldError>) {
    if !v.is_finite() {
        errors.push(FieldError::new(
            path,
            code::TYPE,
            format!("must be a finite number (got {v})"),
        ));
        return;
    }
    if let Some(min) = c.min_num
        && v < min
    {
        errors.push(FieldError::new(
            path,
            code::MIN,
            format!("must be at least {min} (got {v})"),
        ));
    }
    if let Some(max) = c.max_num
        && v > max
    {
        errors.push(FieldError::new(
            path,
            code::MAX,
            format!("must be at most {max} (got {v})"),
        ));
    }
}

macro_rules! float_impls {
    ($($t:ty),*) => {$(
        impl DtoValue for $t {
            fn schema(c: &Constraints) -> Value {
                num_schema(c)
            }

            #[inline]
            fn validate_value(&self, c: &Constraints, path: &mut JsonPath, errors: &mut Vec<FieldError>) {
                check_num(f64::from(*self), c, path, errors);
            }

            fn check_json(value: &Value, c: &Constraints, path: &mut JsonPath, errors: &mut Vec<FieldError>) {
                match value {
                    // Same conversion as serde_json's (f64 → f32 may overflow to infinity).
                    Value::Number(n) => match n.as_f64() {
                        Some(v) => check_num(f64::from(v as $t), c, path, errors),
                        None => errors.push(type_error(path, "a number", value)),
                    },
                    other => errors.push(type_error(path, "a number", other)),
                }
            }
        }
        impl NumberKind for $t {}
    )*};
}

float_impls!(f32, f64);

// ---------------------------------------------------------------------------------------------
// boolean

impl DtoValue for bool {
    fn schema(_: &Constraints) -> Value {
        let mut map = Map::new();
        map.insert("type".to_owned(), Value::from("boolean"));
        Value::Object(map)
    }

    #[inline]
    fn validate_value(&self, _: &Constraints, _: &mut JsonPath, _: &mut Vec<FieldError>) {}

    fn check_json(
        value: &Value,
        _: &Constraints,
        path: &mut JsonPath,
        errors: &mut Vec<FieldError>,
    ) {
        if !value.is_boolean() {
            errors.push(type_error(path, "a boolean", value));
        }
    }
}

// ---------------------------------------------------------------------------------------------
// nested

impl<T: Dto> DtoValue for T {
    fn schema(_: &Constraints) -> Value {
        T::json_schema()
    }

    #[inline]
    fn validate_value(&self, _: &Constraints, path: &mut JsonPath, errors: &mut Vec<FieldError>) {
        self.validate_into(path, errors);
    }

    fn check_json(
        value: &Value,
        _: &Constraints,
        path: &mut JsonPath,
        errors: &mut Vec<FieldError>,
    ) {
        T::check_json_into(value, path, errors);
    }
}

// ---------------------------------------------------------------------------------------------
// containers

impl<T: DtoValue> DtoValue for Option<T> {
    const REQUIRED: bool = false;

    fn schema(c: &Constraints) -> Value {
        T::schema(c)
    }

    #[inline]
    fn validate_value(&self, c: &Constraints, path: &mut JsonPath, errors: &mut Vec<FieldError>) {
        if let Some(v) = self {
            v.validate_value(c, path, errors);
        }
    }

    fn check_json(
        value: &Value,
        c: &Constraints,
        path: &mut JsonPath,
        errors: &mut Vec<FieldError>,
    ) {
        if !value.is_null() {
            T::check_json(value, c, path, errors);
        }
    }

    #[inline]
    fn is_absent(&self) -> bool {
        self.is_none()
    }
}

#[inline]
fn check_items(len: usize, c: &Constraints, path: &JsonPath, errors: &mut Vec<FieldError>) {
    if let Some(min) = c.min_items
        && len < min
    {
        errors.push(FieldError::new(
            path,
            code::MIN_ITEMS,
            format!("must have at least {min} item{} (got {len})", plural(min)),
        ));
    }
    if let Some(max) = c.max_items
        && len > max
    {
        errors.push(FieldError::new(
            path,
            code::MAX_ITEMS,
            format!("must have at most {max} item{} (got {len})", plural(max)),
        ));
    }
}

impl<T: DtoValue> DtoValue for Vec<T> {
    fn schema(c: &Constraints) -> Value {
        let mut map = Map::new();
        map.insert("type".to_owned(), Value::from("array"));
        map.insert("items".to_owned(), T::schema(c));
        if let Some(n) = c.min_items {
            map.insert("minItems".to_owned(), Value::from(n));
        }
        if let Some(n) = c.max_items {
            map.insert("maxItems".to_owned(), Value::from(n));
        }
        Value::Object(map)
    }

    #[inline]
    fn validate_value(&self, c: &Constraints, path: &mut JsonPath, errors: &mut Vec<FieldError>) {
        check_items(self.len(), c, path, errors);
        for (i, item) in self.iter().enumerate() {
            path.push_index(i);
            item.validate_value(c, path, errors);
            path.pop();
        }
    }

    fn check_json(
        value: &Value,
        c: &Constraints,
        path: &mut JsonPath,
        errors: &mut Vec<FieldError>,
    ) {
        match value {
            Value::Array(items) => {
                check_items(items.len(), c, path, errors);
                for (i, item) in items.iter().enumerate() {
                    path.push_index(i);
                    T::check_json(item, c, path, errors);
                    path.pop();
                }
            }
            other => errors.push(type_error(path, "an array", other)),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// kind checks: `#[text]` etc. on a field of the wrong Rust type

/// Types a `#[text]` field may have.
#[diagnostic::on_unimplemented(
    message = "[dto.field-type] `{Self}` cannot be a #[text] field",
    label = "#[text] needs String, Option<String> or Vec<String>",
    note = "pick the attribute that matches the type: #[text] String, #[integer] i8..u128/isize/usize, #[number] f32/f64, #[boolean] bool, #[nested] a #[derive(Dto)] struct"
)]
pub trait TextKind {}
impl TextKind for String {}

/// Types an `#[integer]` field may have.
#[diagnostic::on_unimplemented(
    message = "[dto.field-type] `{Self}` cannot be an #[integer] field",
    label = "#[integer] needs an integer type (i8..i128, u8..u128, isize, usize), optionally in Option<_>/Vec<_>",
    note = "pick the attribute that matches the type: #[text] String, #[integer] i8..u128/isize/usize, #[number] f32/f64, #[boolean] bool, #[nested] a #[derive(Dto)] struct"
)]
pub trait IntegerKind {}

/// Types a `#[number]` field may have.
#[diagnostic::on_unimplemented(
    message = "[dto.field-type] `{Self}` cannot be a #[number] field",
    label = "#[number] needs f32 or f64, optionally in Option<_>/Vec<_>",
    note = "pick the attribute that matches the type: #[text] String, #[integer] i8..u128/isize/usize, #[number] f32/f64, #[boolean] bool, #[nested] a #[derive(Dto)] struct"
)]
pub trait NumberKind {}

/// Types a `#[boolean]` field may have.
#[diagnostic::on_unimplemented(
    message = "[dto.field-type] `{Self}` cannot be a #[boolean] field",
    label = "#[boolean] needs bool, Option<bool> or Vec<bool>",
    note = "pick the attribute that matches the type: #[text] String, #[integer] i8..u128/isize/usize, #[number] f32/f64, #[boolean] bool, #[nested] a #[derive(Dto)] struct"
)]
pub trait BooleanKind {}
impl BooleanKind for bool {}

/// Types a `#[nested]` field may have.
#[diagnostic::on_unimplemented(
    message = "[dto.field-type] `{Self}` cannot be a #[nested] field",
    label = "#[nested] needs a #[derive(Dto)] struct, optionally in Option<_>/Vec<_>",
    note = "pick the attribute that matches the type: #[text] String, #[integer] i8..u128/isize/usize, #[number] f32/f64, #[boolean] bool, #[nested] a #[derive(Dto)] struct"
)]
pub trait NestedKind {}
impl<T: Dto> NestedKind for T {}

macro_rules! container_kinds {
    ($($k:ident),*) => {$(
        impl<T: $k> $k for Option<T> {}
        impl<T: $k> $k for Vec<T> {}
    )*};
}
container_kinds!(TextKind, IntegerKind, NumberKind, BooleanKind, NestedKind);

/// Compile-time kind check emitted by the derive.
pub const fn assert_text<T: TextKind + ?Sized>() {}
/// Compile-time kind check emitted by the derive.
pub const fn assert_integer<T: IntegerKind + ?Sized>() {}
/// Compile-time kind check emitted by the derive.
pub const fn assert_number<T: NumberKind + ?Sized>() {}
/// Compile-time kind check emitted by the derive.
pub const fn assert_boolean<T: BooleanKind + ?Sized>() {}
/// Compile-time kind check emitted by the derive.
pub const fn assert_nested<T: NestedKind + ?Sized>() {}
