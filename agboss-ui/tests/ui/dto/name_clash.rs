use agboss_core::dto::Dto;

#[derive(Dto)]
#[allow(non_snake_case)]
pub struct CreateOrder {
    #[text(prompt = "Order reference")]
    pub order_id: String,
    #[text(prompt = "Order reference again")]
    pub orderId: String,
}

fn main() {}
