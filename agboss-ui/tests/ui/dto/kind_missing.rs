use agboss_core::dto::Dto;

#[derive(Dto)]
pub struct CreateOrder {
    pub order_id: String,
    #[integer(prompt = "How many")]
    pub quantity: u32,
    pub express: Option<bool>,
}

fn main() {}
