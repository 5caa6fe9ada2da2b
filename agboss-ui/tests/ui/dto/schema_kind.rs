use agboss_core::dto::Dto;

/// Neither `schemars::JsonSchema` nor serde.
pub struct Opaque;

#[derive(Dto)]
pub struct Shipment {
    #[schema(prompt = "What is inside")]
    pub contents: Opaque,
}

fn main() {}
