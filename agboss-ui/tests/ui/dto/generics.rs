use agboss_core::dto::Dto;

#[derive(Dto)]
pub struct Wrapper<T> {
    #[nested(prompt = "The payload")]
    pub payload: T,
}

#[derive(Dto)]
pub struct Borrowed<'a> {
    #[text(prompt = "A name")]
    pub name: &'a str,
}

fn main() {}
