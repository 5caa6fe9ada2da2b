use agboss_core::dto::Dto;

#[derive(Dto)]
pub struct Product {
    #[text(prompt = "Stock keeping unit", pattern = "^SKU-([0-9]+$")]
    pub sku: String,
}

fn main() {}
