use agboss_core::*;

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
