//! Fuzz target `openai_stream`: see `agboss_testing::fuzz::openai_stream`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| agboss_testing::fuzz::openai_stream(data));
