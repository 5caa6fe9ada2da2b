use agboss_core::dto::Dto;

#[derive(Dto)]
pub struct CreateOrder {
    #[text(prompt = "Order reference")]
    #[integer(prompt = "Order number")]
    pub order_id: String,
}

fn main() {}
