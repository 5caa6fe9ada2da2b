//! Fields of any type that has a `schemars` schema and serde impls (`#[schema(prompt = ..)]`):
//! serde decodes and so validates them; schemars describes them. And the way back: every DTO's
//! schema as a `schemars::Schema`.
use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, Schema};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::code;
use crate::dto::{FieldError, JsonPath};

/// Types a `#[schema]` field may have.
#[diagnostic::on_unimplemented(
    message = "[dto.field-type] `{Self}` cannot be a #[schema] field",
    label = "#[schema] needs a type with `schemars::JsonSchema`, `serde::Serialize` and `serde::Deserialize`",
    note = "derive them (`#[derive(schemars::JsonSchema, serde::Serialize, serde::Deserialize)]`), or use #[text], #[integer], #[number], #[boolean] or #[nested]"
)]
pub trait SchemaKind {}
#[diagnostic::do_not_recommend]
impl<T: JsonSchema + Serialize + DeserializeOwned> SchemaKind for T {}

/// How the derive's code names a `#[schema]` field's type: `T`'s own items when it has the
/// traits, placeholders otherwise (the items of [`NotASchemaField`]), so that only the
/// field's kind assertion reports a wrong type (as [`Field`](super::Field) for the other kinds).
pub struct SchemaField<T>(std::marker::PhantomData<T>);

impl<T: JsonSchema + Serialize + DeserializeOwned> SchemaField<T> {
    /// The field's schema, from schemars.
    pub fn schema() -> Value {
        schemars_schema::<T>()
    }

    /// Checks the member of a DTO's JSON object as serde decodes a `T`.
    pub fn check(
        object: &Map<String, Value>,
        key: &'static str,
        required: bool,
        path: &mut JsonPath,
        errors: &mut Vec<FieldError>,
    ) {
        check_schema_member::<T>(object, key, required, path, errors);
    }

    /// Serializes the field as the member `key` of a struct.
    #[inline]
    pub fn serialize_field<S: serde::ser::SerializeStruct>(
        state: &mut S,
        key: &'static str,
        value: &T,
    ) -> Result<(), S::Error> {
        state.serialize_field(key, value)
    }

    /// Reads the field from the map entry whose key was just read.
    #[inline]
    pub fn next_value<'de, A: serde::de::MapAccess<'de>>(map: &mut A) -> Result<T, A::Error> {
        map.next_value::<T>()
    }
}

/// The placeholders of [`SchemaField`] (the crate does not compile).
#[allow(missing_docs)]
pub trait NotASchemaField<T> {
    fn schema() -> Value {
        Value::Null
    }
    fn check(
        _: &Map<String, Value>,
        _: &'static str,
        _: bool,
        _: &mut JsonPath,
        _: &mut Vec<FieldError>,
    ) {
    }
    fn serialize_field<S: serde::ser::SerializeStruct>(
        _: &mut S,
        _: &'static str,
        _: &T,
    ) -> Result<(), S::Error> {
        unreachable!("a #[schema] field of a wrong type does not compile")
    }
    fn next_value<'de, A: serde::de::MapAccess<'de>>(_: &mut A) -> Result<T, A::Error> {
        unreachable!("a #[schema] field of a wrong type does not compile")
    }
}
impl<T> NotASchemaField<T> for SchemaField<T> {}

/// Compile-time kind check emitted by the derive.
pub const fn assert_schema<T: SchemaKind + ?Sized>() {}

/// The schema schemars gives `T`, self-contained (subschemas inlined, no `$schema`), as the
/// schema of one DTO field.
pub fn schemars_schema<T: JsonSchema>() -> Value {
    let mut settings = SchemaSettings::draft2020_12();
    settings.inline_subschemas = true;
    let mut schema = settings
        .into_generator()
        .into_root_schema_for::<T>()
        .to_value();
    if let Value::Object(map) = &mut schema {
        map.remove("$schema");
    }
    schema
}

/// Checks the member `key` of a DTO's JSON object as serde decodes a `T`.
pub fn check_schema_member<T: DeserializeOwned>(
    object: &Map<String, Value>,
    key: &'static str,
    required: bool,
    path: &mut JsonPath,
    errors: &mut Vec<FieldError>,
) {
    path.push_key(key);
    match object.get(key) {
        Some(Value::Null) | None if required => {
            errors.push(FieldError::new(path, code::REQUIRED, "is required"));
        }
        Some(Value::Null) | None => {}
        Some(value) => {
            if let Err(e) = T::deserialize(value) {
                errors.push(FieldError::new(path, code::TYPE, e.to_string()));
            }
        }
    }
    path.pop();
}

/// A DTO's JSON Schema as a `schemars::Schema` (for the `JsonSchema` impl the derive emits).
pub fn to_schemars(schema: Value) -> Schema {
    match schema {
        Value::Object(map) => Schema::from(map),
        // Every DTO schema is an object; anything else would be a bug of the derive.
        other => Schema::try_from(other).unwrap_or_default(),
    }
}
