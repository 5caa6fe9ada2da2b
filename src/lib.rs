//! End-to-end tests (`tests/`) and examples (`examples/`) of agboss-rs; no library code.
