use agboss_core::dto::Dto;

pub struct NotADto {
    pub name: String,
}

#[derive(Dto)]
pub struct CreateOrder {
    #[text(prompt = "Order number")]
    pub order_id: i64,
    #[integer(prompt = "Ratio")]
    pub ratio: Option<f64>,
    #[nested(prompt = "Customer")]
    pub customer: NotADto,
    #[boolean(prompt = "Flags")]
    pub flags: Vec<String>,
}

fn main() {}
