//! The UI tests of agboss-rs' macros live in `tests/ui.rs`; this crate has no code.
