//! Fuzz target `pipeline_call`: see `agboss_testing::fuzz::pipeline_call`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| agboss_testing::fuzz::pipeline_call(data));
