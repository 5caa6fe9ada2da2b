use agboss_core::dto::Dto;

#[derive(Dto)]
pub struct CreateOrder {
    #[text(prompt = "Order reference", min_lenght = 3)]
    pub order_id: String,
    #[integer(prompt = "How many", minimum = 1)]
    pub quantity: u32,
}

fn main() {}
