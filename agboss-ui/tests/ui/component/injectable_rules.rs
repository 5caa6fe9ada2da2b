use agboss_core::prelude::*;

#[injectable]
pub struct Db;

#[injectable(provided, deps = [Db])]
pub struct Cache {
    db: std::sync::Arc<Db>,
}

#[injectable(default, provided)]
#[derive(Default)]
pub struct Clock;

#[injectable(singleton)]
pub struct Mailer;

fn main() {}
