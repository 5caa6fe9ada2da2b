use agboss_core::pii_policy;

#[pii_policy(name = "a-pii-policy", description = "Unknown detector", detectors = [email, passport])]
pub struct APiiPolicy;

#[pii_policy(name = "b-pii-policy", description = "Nothing to detect", detectors = [])]
pub struct BPiiPolicy;

#[pii_policy(name = "c-pii-policy", description = "Listed twice", detectors = [card, card])]
pub struct CPiiPolicy;

pub struct NotADetector;

#[pii_policy(name = "d-pii-policy", description = "Custom detector without the trait",
             custom_detectors = [NotADetector])]
pub struct DPiiPolicy;

fn main() {}
