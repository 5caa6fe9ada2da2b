//! Error accumulation: every error of one item is reported, and the user's item is kept in the
//! output so that one mistake does not cascade into unrelated "cannot find type" errors.
use proc_macro2::TokenStream;

#[derive(Default)]
pub struct Errors {
    errors: Vec<syn::Error>,
}

impl Errors {
    pub fn push(&mut self, err: syn::Error) {
        self.errors.push(err);
    }
    pub fn is_empty(&self) -> bool {
        self.errors.is_empty()
    }
    pub fn to_compile_errors(&self) -> TokenStream {
        self.errors
            .iter()
            .map(syn::Error::to_compile_error)
            .collect()
    }
}
