//! A Rust enum without `#[derive(Dto)]` as a DTO field: one error, saying what to do.
use agboss_core::dto::Dto;

#[derive(serde::Serialize, serde::Deserialize)]
pub enum Shipping {
    Standard,
    Express,
}

#[derive(Dto)]
pub struct Order {
    #[text(prompt = "How to ship")]
    pub shipping: Shipping,
}

fn main() {}
