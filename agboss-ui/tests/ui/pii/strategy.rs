use agboss_core::pii_policy;

#[pii_policy(name = "a-pii-policy", description = "Unknown strategy", strategy = "scramble")]
pub struct APiiPolicy;

#[pii_policy(name = "b-pii-policy", description = "Keep without partial", keep = 2)]
pub struct BPiiPolicy;

#[pii_policy(name = "c-pii-policy", description = "Hash without a key", strategy = "hash")]
pub struct CPiiPolicy;

#[pii_policy(name = "d-pii-policy", description = "Key without hash", hash_key_env = "KEY")]
pub struct DPiiPolicy;

fn main() {}
