//! A field with neither a doc comment nor a `prompt` is `[dto.prompt-missing]`; a doc
//! comment alone is its prompt.
use agboss_core::dto::Dto;

#[derive(Dto)]
pub struct Order {
    /// The order number.
    #[text]
    pub order_id: String,
    #[integer]
    pub quantity: u32,
}

fn main() {}
