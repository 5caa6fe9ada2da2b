//! `#[derive(Dto)]`: parse (darling) into a typed model ([`model`], [`parse`]), validate it
//! ([`check`]: every error of the item, each naming a rule such as `[dto.prompt-missing]`),
//! then expand ([`expand`]) into serde impls through hidden mirror structs and an
//! `impl agboss_core::dto::Dto`; on error, the errors and a fallback impl. An enum of unit
//! variants is a string enum ([`enums`]).
mod check;
mod enums;
mod expand;
mod model;
mod parse;

use proc_macro2::TokenStream;
use quote::quote;
use syn::{Data, DeriveInput};

pub fn expand(input: TokenStream) -> TokenStream {
    let input: DeriveInput = match syn::parse2(input) {
        Ok(input) => input,
        Err(e) => return e.to_compile_error(),
    };
    if let Data::Enum(data) = &input.data {
        return enums::expand(&input, data);
    }
    match parse::parse(&input) {
        Ok(model) => expand::generate(&model),
        Err(e) => {
            let errors = e.write_errors();
            // Only a concrete struct gets the fallback impls (a generic one cannot).
            let fallback =
                if input.generics.params.is_empty() && input.generics.where_clause.is_none() {
                    expand::fallback(&input.ident)
                } else {
                    TokenStream::new()
                };
            quote!(#errors #fallback)
        }
    }
}
