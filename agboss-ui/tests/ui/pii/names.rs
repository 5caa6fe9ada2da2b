use agboss_core::pii_policy;

#[pii_policy(name = "ContactPolicy", description = "Masks contacts")]
pub struct ContactPiiPolicy;

#[pii_policy(name = "contact-policy", description = "Masks contacts")]
pub struct OtherPiiPolicy;

#[pii_policy(name = "third-pii-policy", description = "  ")]
pub struct ThirdPolicy;

fn main() {}
