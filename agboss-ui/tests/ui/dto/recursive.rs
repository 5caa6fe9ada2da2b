use agboss_core::dto::Dto;

#[derive(Dto)]
pub struct Category {
    #[text(prompt = "Name")]
    pub name: String,
    #[nested(prompt = "Sub-categories")]
    pub children: Vec<Category>,
    #[nested(prompt = "Parents")]
    pub parents: Option<Vec<Self>>,
}

fn main() {}
