//! Fuzz target `agent_turns`: see `agboss_testing::fuzz::agent_turns`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| agboss_testing::fuzz::agent_turns(data));
