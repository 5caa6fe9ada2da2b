//! Macros of agboss-rs. Use them through `agboss_core` (it re-exports every one).
use proc_macro::TokenStream;

mod dto;

/// Derives `agboss_core::dto::Dto`: serde with camelCase wire names, a JSON Schema and validation.
#[proc_macro_derive(Dto, attributes(text, integer, number, boolean, nested))]
pub fn derive_dto(input: TokenStream) -> TokenStream {
    dto::expand(input.into()).into()
}
