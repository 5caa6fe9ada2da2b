//! Paths used by macro-generated code. Not public API.
pub use inventory;
pub use serde;
pub use serde_json;
