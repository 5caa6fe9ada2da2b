use agboss_core::dto::Dto;

#[derive(Dto)]
pub enum Shipping {
    Standard,
    Express(u8),
    #[dto(rename = "standard")]
    Slow,
    #[dto(color = "red")]
    Fast,
}

#[derive(Dto)]
pub enum Never {}

#[derive(Dto)]
pub struct Order {
    #[choice(prompt = "A text is no DTO enum")]
    pub shipping: String,
}

#[derive(Dto)]
pub struct Note {
    #[text(prompt = "Renamed to nothing", rename = "")]
    pub note: String,
}

fn main() {}
