use agboss_core::dto::Dto;

#[derive(Dto)]
pub struct Pair(String, String);

#[derive(Dto)]
pub struct Unit;

fn main() {}
