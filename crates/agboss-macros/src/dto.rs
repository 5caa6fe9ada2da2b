//! `#[derive(Dto)]`.
use proc_macro2::TokenStream;

pub fn expand(_input: TokenStream) -> TokenStream {
    TokenStream::new()
}
