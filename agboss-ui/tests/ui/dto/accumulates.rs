// Every error of one item is reported at once, not only the first.
use agboss_core::dto::Dto;

#[derive(Dto)]
pub struct CreateOrder {
    pub order_id: String,
    #[integer(min = 1, max_length = 3)]
    pub quantity: u32,
    #[text(prompt = "Sku", pattern = "(", choices = ["a", "a"])]
    pub sku: String,
}

fn main() {}
