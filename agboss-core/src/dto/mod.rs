//! DTOs: typed tool inputs and outputs.
//!
//! `#[derive(Dto)]` on a struct with named fields gives it
//!
//! * serde `Serialize`/`Deserialize` with camelCase wire names (`order_id` ↔ `orderId`;
//!   unknown JSON members are ignored, `None` is left out);
//! * a JSON Schema for the model ([`Dto::json_schema`]), each field's `prompt` being its
//!   `description`;
//! * validation of typed values ([`Dto::validate`]) and of raw JSON ([`Dto::from_json_str`],
//!   [`Dto::from_json_value`]) that reports **every** failure with its JSON path.
//!
//! Every field carries exactly one kind attribute, with a `prompt` (what the model should put
//! there) and the constraints of its kind:
//!
#![doc = include_str!("../../doc/dto_kinds.md")]
//!
//! Mistakes are compile errors that name a rule, e.g. `[dto.prompt-missing]`,
//! `[dto.constraint-kind]` (a key of another kind), `[dto.pattern]` (a regex that does not
//! compile), `[dto.range]` (`min` above `max`), `[dto.field-type]` (`#[text]` on an `i64`, or a
//! Rust enum without `#[derive(Dto)]`: one error, at the field).
//!
//! Patterns use the syntax of the `regex` crate and match anywhere in the text unless anchored
//! with `^...$` (as JSON Schema's `pattern`). Integer fields also reject JSON numbers outside
//! the range of their Rust type (`300` for a `u8` is a `max` failure). Recursive DTOs are not
//! supported (the schema inlines nested DTOs).
//!
//! # Example
//!
//! ```
//! use agboss_core::dto::Dto;
//! use serde_json::json;
//!
//! #[derive(Dto, Debug, Clone, PartialEq)]
//! pub struct OrderLine {
//!     #[text(prompt = "Stock keeping unit, e.g. SKU-123", pattern = "^SKU-[0-9]+$")]
//!     pub sku: String,
//!     #[integer(prompt = "How many", min = 1, max = 99)]
//!     pub quantity: u32,
//! }
//!
//! #[derive(Dto, Debug, Clone, PartialEq)]
//! pub struct CreateOrder {
//!     #[text(prompt = "The customer's order reference", min_length = 3)]
//!     pub order_id: String,
//!     #[nested(prompt = "What to order", min_items = 1)]
//!     pub lines: Vec<OrderLine>,
//!     #[text(prompt = "Delivery note", max_length = 200)]
//!     pub note: Option<String>,
//! }
//!
//! // The schema handed to the model.
//! let schema = CreateOrder::json_schema();
//! assert_eq!(schema["properties"]["orderId"]["description"], "The customer's order reference");
//! assert_eq!(schema["properties"]["lines"]["minItems"], 1);
//! assert_eq!(schema["properties"]["lines"]["items"]["properties"]["quantity"]["maximum"], 99);
//! assert_eq!(schema["required"], json!(["orderId", "lines"]));
//!
//! // Valid arguments decode on the fast path.
//! let order = CreateOrder::from_json_str(
//!     r#"{"orderId": "A-17", "lines": [{"sku": "SKU-1", "quantity": 2}]}"#,
//! ).unwrap();
//! assert_eq!(order.lines[0].quantity, 2);
//!
//! // Invalid ones report every failure, with its path.
//! let err = CreateOrder::from_json_str(
//!     r#"{"lines": [{"sku": "sku-1", "quantity": 0}, {"sku": "SKU-2", "quantity": "3"}]}"#,
//! ).unwrap_err();
//! assert_eq!(err.to_string(), "\
//! invalid CreateOrder (4 errors):
//! - $.orderId: is required
//! - $.lines[0].sku: must match the pattern `^SKU-[0-9]+$`
//! - $.lines[0].quantity: must be at least 1 (got 0)
//! - $.lines[1].quantity: expected an integer, got a string");
//! assert_eq!(err.errors[1].code, "pattern");
//! ```

pub(crate) mod duplicate;
mod error;
mod path;
mod strict;
mod value;

pub use agboss_macros::Dto;
pub(crate) use error::bounded;
pub use error::{FieldError, MAX_ERROR_TEXT, MAX_REPORTED_ERRORS, ValidationError, code};
pub use path::{JsonPath, Segment};
pub use strict::strict_schema;
pub use value::DtoEnum;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// Items used by the code `#[derive(Dto)]` generates. Not public API.
#[doc(hidden)]
pub mod __private {
    pub use super::value::{
        BooleanKind, ChoiceKind, Constraints, DtoEnum, DtoValue, Field, IntegerKind, JsonKind,
        MemberKey, NestedKind, NotAField, NotASchemaField, NumberKind, Pattern, SchemaField,
        SchemaKind, TextKind, assert_boolean, assert_choice, assert_integer, assert_json,
        assert_nested, assert_number, assert_schema, assert_text, check_enum, check_member,
        check_schema_member, describe, deserialize_enum, enum_schema, expect_object, is_absent,
        object_schema, schemars_schema, serialize_enum, to_schemars, validate_member,
    };
    pub use super::{Dto, FieldError, JsonPath};
    pub use regex::Regex;
    pub use std::sync::LazyLock;
}

/// A typed tool input or output: serde with camelCase wire names, a JSON Schema and
/// validation that reports every failure. Implement it with `#[derive(Dto)]` (see the
/// [module docs](self)).
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a DTO",
    label = "not a DTO",
    note = "add #[derive(Dto)] (from agboss_core::dto::Dto) to `{Self}`"
)]
pub trait Dto: Serialize + DeserializeOwned + Send + Sync + 'static {
    /// The type name, for messages.
    const DTO_NAME: &'static str;

    /// Whether a key given twice in the JSON text could reach the value unnoticed: `true` when
    /// the DTO (or one of its fields, at any depth) holds a map or a raw `#[json]` value, whose
    /// decoding keeps the last of two equal keys. Then [`from_json_str`](Dto::from_json_str)
    /// scans the text for duplicate keys before decoding; a DTO of fields only
    /// (`#[derive(Dto)]` works it out) refuses a field given twice in its typed decode and is
    /// scanned only when that decode fails. `true` for an impl that does not say (safe).
    #[doc(hidden)]
    const OPEN_KEYS: bool = true;

    /// JSON Schema of the wire form (the draft 2020-12 subset that OpenAI and Anthropic accept
    /// for tool parameters): `{"type":"object","properties":{..},"required":[..],
    /// "additionalProperties":false}`; each field's `prompt` is its `description`, nested DTOs
    /// are inlined, constraints appear as `minLength`, `maxLength`, `pattern`, `enum`,
    /// `minimum`, `maximum`, `minItems`, `maxItems`.
    fn json_schema() -> Value;

    /// The strict variant of [`json_schema`](Dto::json_schema), for OpenAI's `strict: true`
    /// tools and structured outputs: `additionalProperties: false` and every property
    /// `required` in every object, an `Option` field nullable instead of optional (see
    /// [`strict_schema`]).
    fn strict_json_schema() -> Value {
        strict_schema(Self::json_schema())
    }

    /// Checks the constraints of a typed value, pushing every failure with its JSON path
    /// (`path` is where `self` is; it is left as it was). Allocates nothing when all pass.
    fn validate_into(&self, path: &mut JsonPath, errors: &mut Vec<FieldError>);

    /// Checks raw JSON: missing required fields, wrong JSON types, numbers out of the range of
    /// their Rust type and constraint failures, pushing every failure.
    fn check_json_into(value: &Value, path: &mut JsonPath, errors: &mut Vec<FieldError>);

    /// Checks the constraints of a typed value.
    #[inline]
    fn validate(&self) -> Result<(), ValidationError> {
        let mut errors = Vec::new();
        self.validate_into(&mut JsonPath::new(), &mut errors);
        if errors.is_empty() {
            Ok(())
        } else {
            Err(ValidationError::new(Self::DTO_NAME, errors))
        }
    }

    /// Decodes and validates tool-call arguments.
    ///
    /// Valid input takes the fast path (serde straight into `Self`, then [`validate`](Dto::validate)).
    /// Otherwise the input is checked as a JSON value and every failure is reported; text that
    /// is not JSON at all is one `json` error at `$`. A key that appears twice in one object,
    /// anywhere in the text (a field, an entry of a map field, inside a `#[json]` value; its
    /// first occurrence valid or not), is a `duplicate` error at its path, never "the last one
    /// wins": a listener or an audit log reading the raw text could otherwise see another value
    /// than the tool. (A DTO of fields only ignores keys it does not have, a repeated one too.)
    fn from_json_str(s: &str) -> Result<Self, ValidationError> {
        // A DTO of fields only (`!OPEN_KEYS`) refuses a field given twice in its typed decode:
        // its text is scanned only when that decode fails (a first occurrence of the wrong type,
        // or null, then a valid one), off the fast path.
        let duplicate = |s: &str| duplicate::first_duplicate(s).map(duplicate_key::<Self>);
        if Self::OPEN_KEYS
            && let Some(refused) = duplicate(s)
        {
            return Err(refused);
        }
        match serde_json::from_str::<Self>(s) {
            Ok(value) => value.validate().map(|()| value),
            Err(_)
                if !Self::OPEN_KEYS
                    && let Some(refused) = duplicate(s) =>
            {
                Err(refused)
            }
            Err(serde_error) => match serde_json::from_str::<Value>(s) {
                Ok(json) => diagnose::<Self>(&json),
                Err(_) => Err(ValidationError::single(
                    Self::DTO_NAME,
                    "$",
                    code::JSON,
                    &format!("the arguments are not valid JSON ({serde_error})"),
                )),
            },
        }
    }

    /// Decodes and validates a JSON value, reporting every failure.
    fn from_json_value(v: &Value) -> Result<Self, ValidationError> {
        match Self::deserialize(v) {
            Ok(value) => value.validate().map(|()| value),
            Err(_) => diagnose::<Self>(v),
        }
    }
}

/// The `duplicate` error of a text with a key twice in one object, at the key's path.
#[cold]
fn duplicate_key<T: Dto>(duplicate: duplicate::Duplicate) -> ValidationError {
    ValidationError::single(
        T::DTO_NAME,
        &duplicate.path,
        code::DUPLICATE,
        &format!(
            "the key `{}` appears more than once; send each key once",
            duplicate.key
        ),
    )
}

/// Slow path of decoding: report every structural and constraint failure of `json`.
#[cold]
fn diagnose<T: Dto>(json: &Value) -> Result<T, ValidationError> {
    let mut errors = Vec::new();
    T::check_json_into(json, &mut JsonPath::new(), &mut errors);
    if !errors.is_empty() {
        return Err(ValidationError::new(T::DTO_NAME, errors));
    }
    // The checks found nothing serde objects to (they are meant to agree): report serde's
    // own error, at its path.
    match serde_path_to_error::deserialize::<_, T>(json) {
        Ok(value) => value.validate().map(|()| value),
        Err(e) => {
            let path = e.path().to_string();
            let path = if path == "." {
                "$".to_owned()
            } else {
                format!("$.{path}")
            };
            Err(ValidationError::single(
                T::DTO_NAME,
                &path,
                code::TYPE,
                &e.into_inner().to_string(),
            ))
        }
    }
}
