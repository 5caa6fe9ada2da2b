//! The error context of one item (serde_derive's `Ctxt` is the model): every error of the
//! item is collected here, then either the generated code or the errors (with a fallback impl,
//! see `fallback`) are emitted.
use proc_macro2::TokenStream;
use quote::ToTokens;

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

/// A type or path as the user wrote it: `std::sync::Arc<X>`, not `std :: sync :: Arc < X >`.
pub fn type_text(tokens: &impl ToTokens) -> String {
    let raw = tokens.to_token_stream().to_string();
    let mut out = String::with_capacity(raw.len());
    let chars: Vec<char> = raw.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if c == ' ' {
            let prev = i.checked_sub(1).map(|j| chars[j]);
            let next = chars.get(i + 1).copied();
            // Keep the spaces a person writes: after `,`, around `=`/`+` and after `dyn`/`impl`/`mut`.
            let keep = matches!(prev, Some(',') | Some('=') | Some('+'))
                || matches!(next, Some('=') | Some('+'))
                || (prev.is_some_and(char::is_alphanumeric)
                    && next.is_some_and(|n| n.is_alphanumeric() || n == '_' || n == '\''));
            if !keep {
                continue;
            }
        }
        out.push(c);
    }
    out
}

/// [`type_text`] of a path.
pub fn path_text(path: &syn::Path) -> String {
    type_text(path)
}

#[cfg(test)]
mod tests {
    use super::type_text;

    #[test]
    fn types_read_as_written() {
        let ty: syn::Type = syn::parse_quote!(std::sync::Arc<X>);
        assert_eq!(type_text(&ty), "std::sync::Arc<X>");
        let ty: syn::Type = syn::parse_quote!(Option<Vec<(u8, String)>>);
        assert_eq!(type_text(&ty), "Option<Vec<(u8, String)>>");
        let ty: syn::Type = syn::parse_quote!(&'static dyn Fn(u8) -> u8);
        assert_eq!(type_text(&ty), "&'static dyn Fn(u8)->u8");
    }
}
