//! `Field<T>`: how the derive's code names a field's type. Its items are `T`'s own when `T` is
//! a DTO field type (inherent items) and placeholders otherwise (the items of [`NotAField`],
//! which a path finds when the inherent ones do not apply), so a field of a wrong type is
//! reported once, by the field's kind assertion, and nowhere else.
use std::marker::PhantomData;

use std::borrow::Cow;
use std::fmt;

use serde::de::{DeserializeOwned, MapAccess, Visitor};
use serde::ser::SerializeStruct;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use super::{Constraints, DtoValue, check_member, validate_member};
use crate::dto::{FieldError, JsonPath};

/// A DTO field of type `T`.
pub struct Field<T: ?Sized>(PhantomData<T>);

impl<T: DtoValue + Serialize + DeserializeOwned> Field<T> {
    /// Whether the member must be present.
    pub const REQUIRED: bool = T::REQUIRED;
    /// Whether a key given twice could reach its value unnoticed (`DtoValue::OPEN_KEYS`).
    pub const OPEN_KEYS: bool = T::OPEN_KEYS;

    /// The field's schema.
    pub fn schema(c: &Constraints) -> Value {
        T::schema(c)
    }

    /// Checks the field of a typed DTO.
    #[inline]
    pub fn validate(
        value: &T,
        key: &'static str,
        c: &Constraints,
        path: &mut JsonPath,
        errors: &mut Vec<FieldError>,
    ) {
        validate_member(value, key, c, path, errors);
    }

    /// Checks the member of a DTO's JSON object.
    #[inline]
    pub fn check(
        object: &Map<String, Value>,
        key: &'static str,
        c: &Constraints,
        path: &mut JsonPath,
        errors: &mut Vec<FieldError>,
    ) {
        check_member::<T>(object, key, c, path, errors);
    }

    /// Serializes the field.
    #[inline]
    pub fn serialize<S: Serializer>(value: &T, serializer: S) -> Result<S::Ok, S::Error> {
        value.serialize(serializer)
    }

    /// Whether the field is left out (`None`).
    #[inline]
    pub fn is_absent(value: &T) -> bool {
        value.is_absent()
    }

    /// Deserializes the field.
    #[inline]
    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<T, D::Error> {
        T::deserialize(deserializer)
    }

    /// Serializes the field as the member `key` of a struct.
    #[inline]
    pub fn serialize_field<S: SerializeStruct>(
        state: &mut S,
        key: &'static str,
        value: &T,
    ) -> Result<(), S::Error> {
        state.serialize_field(key, value)
    }

    /// Reads the field: the value of the map entry whose key was just read.
    #[inline]
    pub fn next_value<'de, A: MapAccess<'de>>(map: &mut A) -> Result<T, A::Error> {
        map.next_value::<T>()
    }
}

/// The placeholders of [`Field`] for a type that is no DTO field type (the crate does not
/// compile: the field's kind assertion says why).
#[allow(missing_docs)]
pub trait NotAField<T> {
    const REQUIRED: bool = true;
    const OPEN_KEYS: bool = true;

    fn schema(_: &Constraints) -> Value {
        Value::Null
    }
    fn validate(
        _: &T,
        _: &'static str,
        _: &Constraints,
        _: &mut JsonPath,
        _: &mut Vec<FieldError>,
    ) {
    }
    fn check(
        _: &Map<String, Value>,
        _: &'static str,
        _: &Constraints,
        _: &mut JsonPath,
        _: &mut Vec<FieldError>,
    ) {
    }
    fn serialize<S: Serializer>(_: &T, _: S) -> Result<S::Ok, S::Error> {
        unreachable!("a DTO field of a wrong type does not compile")
    }
    fn is_absent(_: &T) -> bool {
        false
    }
    fn deserialize<'de, D: Deserializer<'de>>(_: D) -> Result<T, D::Error> {
        unreachable!("a DTO field of a wrong type does not compile")
    }
    fn serialize_field<S: SerializeStruct>(
        _: &mut S,
        _: &'static str,
        _: &T,
    ) -> Result<(), S::Error> {
        unreachable!("a DTO field of a wrong type does not compile")
    }
    fn next_value<'de, A: MapAccess<'de>>(_: &mut A) -> Result<T, A::Error> {
        unreachable!("a DTO field of a wrong type does not compile")
    }
}
impl<T> NotAField<T> for Field<T> {}

/// A member name of a DTO's JSON object, borrowed from the input when it can be (the derive's
/// `Deserialize` matches it against the wire names).
pub struct MemberKey<'de>(Cow<'de, str>);

impl MemberKey<'_> {
    /// The name.
    #[inline]
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl<'de> Deserialize<'de> for MemberKey<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = MemberKey<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a member name")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(MemberKey(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
                Ok(MemberKey(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
                Ok(MemberKey(Cow::Owned(v)))
            }
        }
        deserializer.deserialize_identifier(KeyVisitor)
    }
}
