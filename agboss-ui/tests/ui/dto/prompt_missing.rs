use agboss_core::dto::Dto;

#[derive(Dto)]
pub struct CreateOrder {
    #[text(min_length = 3)]
    pub order_id: String,
    #[integer]
    pub quantity: u32,
    #[boolean(prompt = "  ")]
    pub express: bool,
    #[text(prompt)]
    pub note: Option<String>,
}

fn main() {}
