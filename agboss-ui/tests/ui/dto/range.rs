use agboss_core::dto::Dto;

#[derive(Dto)]
pub struct CreateOrder {
    #[text(prompt = "Order reference", min_length = 10, max_length = 3)]
    pub order_id: String,
    #[integer(prompt = "How many", min = 5, max = -5)]
    pub quantity: i32,
    #[number(prompt = "Discount", min = 0.5, max = 0.25)]
    pub discount: f64,
    #[text(prompt = "Tags", min_items = 4, max_items = 2)]
    pub tags: Vec<String>,
}

fn main() {}
