use agboss_core::dto::Dto;

#[derive(Dto)]
pub struct CreateOrder {
    #[integer(prompt = "How many", min_length = 1)]
    pub quantity: u32,
    #[text(prompt = "Order reference", min_items = 1)]
    pub order_id: String,
    #[text(prompt = "Note", min = 0, max = 10)]
    pub note: String,
    #[integer(prompt = "Priority", max = 2.5)]
    pub priority: i32,
    #[boolean(prompt = "Express?", pattern = "^yes$")]
    pub express: bool,
    #[schema(prompt = "Labels", min_items = 1)]
    pub labels: Vec<String>,
}

fn main() {}
