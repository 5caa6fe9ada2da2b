//! `schemars` interop both ways: every DTO is a `schemars::JsonSchema` with the very schema the
//! derive produces, and a `schemars` type can be a DTO field (`#[schema]`: serde decodes it,
//! schemars describes it).
use agboss_core::dto::Dto;
use agboss_core::prelude::*;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct SiOrderDto {
    #[text(prompt = "Order ID", min_length = 3)]
    pub order_id: String,
    #[integer(prompt = "Total in cents", min = 0)]
    pub amount_cents: i64,
    #[text(prompt = "A note")]
    pub note: Option<String>,
}

/// A type of another crate's world: schemars and serde only.
#[derive(JsonSchema, Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct GeoPoint {
    pub lat: f64,
    pub lon: f64,
}

#[derive(JsonSchema, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(rename_all = "snake_case")]
pub enum Carrier {
    Ups,
    Dhl,
}

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct SiPlaceDto {
    #[text(prompt = "Place name")]
    pub name: String,
    #[schema(prompt = "Where the parcel is")]
    pub point: GeoPoint,
    #[schema(prompt = "Who carries it")]
    pub carrier: Option<Carrier>,
}

fn without_dollar_schema(mut v: serde_json::Value) -> serde_json::Value {
    v.as_object_mut().unwrap().remove("$schema");
    v
}

#[test]
fn a_dto_is_a_json_schema_with_the_same_schema() {
    // As a root, schemars adds its `$schema` and a `title`; the rest is ours, unchanged.
    let mut from_schemars = without_dollar_schema(schemars::schema_for!(SiOrderDto).to_value());
    assert_eq!(
        from_schemars.as_object_mut().unwrap().remove("title"),
        Some(json!("SiOrderDto"))
    );
    assert_eq!(from_schemars, <SiOrderDto as Dto>::json_schema());
    assert_eq!(SiOrderDto::schema_name(), "SiOrderDto");
}

#[test]
fn a_dto_inside_a_schemars_type_is_inlined_as_is() {
    #[derive(JsonSchema)]
    #[allow(dead_code)]
    struct Envelope {
        order: SiOrderDto,
    }
    let envelope = schemars::schema_for!(Envelope).to_value();
    assert_eq!(
        envelope["properties"]["order"],
        <SiOrderDto as Dto>::json_schema()
    );
}

#[test]
fn a_schemars_type_is_a_dto_field_described_by_schemars() {
    let schema = <SiPlaceDto as Dto>::json_schema();
    let mut point = without_dollar_schema(schemars::schema_for!(GeoPoint).to_value());
    point
        .as_object_mut()
        .unwrap()
        .insert("description".into(), json!("Where the parcel is"));
    assert_eq!(schema["properties"]["point"], point);
    assert_eq!(
        schema["properties"]["carrier"]["description"],
        "Who carries it"
    );
    assert_eq!(schema["required"], json!(["name", "point"]));
}

#[test]
fn a_schema_field_is_decoded_and_validated_by_serde() {
    let place = SiPlaceDto::from_json_str(
        r#"{"name":"depot","point":{"lat":52.5,"lon":13.4},"carrier":"dhl"}"#,
    )
    .unwrap();
    assert_eq!(
        place.point,
        GeoPoint {
            lat: 52.5,
            lon: 13.4
        }
    );
    assert_eq!(place.carrier, Some(Carrier::Dhl));
    // Absent optional member: fine, and left out when serialized.
    let place = SiPlaceDto::from_json_str(r#"{"name":"depot","point":{"lat":1,"lon":2}}"#).unwrap();
    assert_eq!(
        serde_json::to_string(&place).unwrap(),
        r#"{"name":"depot","point":{"lat":1.0,"lon":2.0}}"#
    );
    // Wrong shapes are field errors at their paths, every one of them.
    let err =
        SiPlaceDto::from_json_str(r#"{"name":"depot","point":{"lat":"north"},"carrier":"fedex"}"#)
            .unwrap_err();
    let paths: Vec<&str> = err.errors.iter().map(|e| e.path.as_str()).collect();
    assert_eq!(paths, ["$.point", "$.carrier"], "{err}");
    let err = SiPlaceDto::from_json_str(r#"{"name":"depot"}"#).unwrap_err();
    assert_eq!(err.errors[0].path, "$.point");
    assert_eq!(err.errors[0].code, "required");
}

#[tool(name = "si-locate-tool", description = "Locates a parcel", input = SiPlaceDto,
       output = SiPlaceDto)]
pub struct SiLocateTool;

impl ToolHandler<SiPlaceDto, SiPlaceDto> for SiLocateTool {
    async fn run(&self, input: SiPlaceDto) -> Result<SiPlaceDto, ToolError> {
        Ok(input)
    }
}

#[tokio::test]
async fn a_tool_with_a_schema_field_runs_the_whole_pipeline() {
    let app = App::builder().tool::<SiLocateTool>().build().unwrap();
    let out = app
        .tool::<SiLocateTool>()
        .invoke_json(r#"{"name":"depot","point":{"lat":1.5,"lon":2.5}}"#)
        .await
        .unwrap();
    assert_eq!(out, r#"{"name":"depot","point":{"lat":1.5,"lon":2.5}}"#);
    let err = app
        .tool::<SiLocateTool>()
        .invoke_json(r#"{"name":"depot","point":{"lat":1.5}}"#)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("$.point"), "{err}");
    // The model sees schemars' description of the field in the tool's parameters.
    let definition = app.bound_tools().next().unwrap().definition();
    assert_eq!(
        definition.parameters["properties"]["point"]["type"],
        "object"
    );
}
