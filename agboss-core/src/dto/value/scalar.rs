//! Text, integer, number and boolean fields.
use serde_json::Value;

use super::*;
use crate::dto::{FieldError, JsonPath};

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
