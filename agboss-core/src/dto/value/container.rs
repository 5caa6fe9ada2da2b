//! Nested DTOs, optional fields and lists.
use serde_json::Value;

use super::*;
use crate::dto::error::MAX_REPORTED_ERRORS;
use crate::dto::{Dto, FieldError, JsonPath};

// ---------------------------------------------------------------------------------------------
// nested

impl<T: Dto> DtoValue for T {
    const OPEN_KEYS: bool = T::OPEN_KEYS;

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
    const OPEN_KEYS: bool = T::OPEN_KEYS;

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

/// Checks a list's length; returns how many of its items to check: all of them within
/// `max_items`, else only the first `max_items + MAX_REPORTED_ERRORS` (a hostile list of
/// millions of items costs bounded work; a list just over its limit still has its items
/// reported).
#[inline]
fn check_items(
    len: usize,
    c: &Constraints,
    path: &JsonPath,
    errors: &mut Vec<FieldError>,
) -> usize {
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
        return len.min(max.saturating_add(MAX_REPORTED_ERRORS));
    }
    len
}

/// Whether checking should stop: enough failures to report (see [`MAX_REPORTED_ERRORS`]).
#[inline]
fn enough(errors: &[FieldError]) -> bool {
    errors.len() > MAX_REPORTED_ERRORS
}

impl<T: DtoValue> DtoValue for Vec<T> {
    const OPEN_KEYS: bool = T::OPEN_KEYS;

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
        let checked = check_items(self.len(), c, path, errors);
        for (i, item) in self.iter().take(checked).enumerate() {
            if enough(errors) {
                return;
            }
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
                let checked = check_items(items.len(), c, path, errors);
                for (i, item) in items.iter().take(checked).enumerate() {
                    if enough(errors) {
                        return;
                    }
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
