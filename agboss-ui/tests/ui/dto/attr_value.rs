use agboss_core::dto::Dto;

#[derive(Dto)]
pub struct CreateOrder {
    #[text(prompt = "Order reference", min_length = "three")]
    pub order_id: String,
    #[integer(prompt = "How many", min = one)]
    pub quantity: u32,
    #[text(prompt = 42)]
    pub note: String,
}

fn main() {}
