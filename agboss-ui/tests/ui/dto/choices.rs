use agboss_core::dto::Dto;

#[derive(Dto)]
pub struct CreateOrder {
    #[text(prompt = "Shipping speed", choices = [])]
    pub speed: String,
    #[text(prompt = "Colour", choices = ["red", "blue", "red"])]
    pub colour: String,
}

fn main() {}
