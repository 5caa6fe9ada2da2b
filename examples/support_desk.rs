//! `cargo run --example support_desk`: the support-desk application's resolved cascade.
use agboss_core::App;
use agboss_e2e::support_desk::SupportDeskApplication;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let app = App::builder()
        .application::<SupportDeskApplication>()
        .build()?;
    println!("{}", app.describe());
    Ok(())
}
