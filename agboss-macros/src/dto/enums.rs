//! `#[derive(Dto)]` on an enum of unit variants: a string enum. Each variant's wire name is
//! its name in kebab-case (`InProgress` → `in-progress`) or `#[dto(rename = "...")]`; the
//! schema is `{"type": "string", "enum": [..]}`, and a `#[choice]` field holds one.
use darling::FromMeta;
use darling::util::SpannedValue;
use heck::ToKebabCase;
use proc_macro2::TokenStream;
use quote::quote;
use syn::spanned::Spanned;
use syn::{DataEnum, DeriveInput, Fields};

use super::model::error;

/// `#[dto(..)]` on a variant.
#[derive(Default, FromMeta)]
struct VariantArgs {
    rename: Option<SpannedValue<String>>,
}

struct Variant {
    ident: syn::Ident,
    wire: String,
}

fn parse(input: &DeriveInput, data: &DataEnum) -> darling::Result<Vec<Variant>> {
    let mut acc = darling::Error::accumulator();
    let name = &input.ident;
    if !input.generics.params.is_empty() {
        acc.push(error(
            input.generics.params.span(),
            format_args!(
                "[dto.generics] a DTO cannot be generic: `{name}` has parameters; make it concrete"
            ),
        ));
    }
    if data.variants.is_empty() {
        acc.push(error(
            name.span(),
            format_args!(
                "[dto.enum-variant] `{name}` has no variants; a DTO enum lists the texts a \
                 field may hold, e.g. `enum {name} {{ Open, Closed }}`"
            ),
        ));
    }
    let mut variants: Vec<Variant> = Vec::new();
    for v in &data.variants {
        if !matches!(v.fields, Fields::Unit) {
            acc.push(error(
                v.fields.span(),
                format_args!(
                    "[dto.enum-variant] variant `{}` of `{name}` has fields; a DTO enum has unit \
                     variants only (it is one text of a fixed set): remove the fields, or make \
                     `{name}` a struct",
                    v.ident
                ),
            ));
        }
        let mut args = VariantArgs::default();
        for attr in v.attrs.iter().filter(|a| a.path().is_ident("dto")) {
            match VariantArgs::from_meta(&attr.meta) {
                Ok(a) => args = a,
                Err(e) => {
                    for single in e.flatten() {
                        let message = single.to_string();
                        let text = match message.strip_prefix("Unknown field: ") {
                            Some(rest) => format!(
                                "[dto.unknown-key] unknown key `{}` in #[dto] of variant `{}`; it accepts: rename = \"...\"",
                                rest.split('`').nth(1).unwrap_or("?"),
                                v.ident
                            ),
                            None => format!(
                                "[dto.attr-value] {message} in #[dto] of variant `{}`; write #[dto(rename = \"wire-name\")]",
                                v.ident
                            ),
                        };
                        acc.push(error(single.span(), text));
                    }
                }
            }
        }
        let wire = match &args.rename {
            Some(r) if r.trim().is_empty() => {
                acc.push(error(
                    r.span(),
                    format_args!(
                        "[dto.rename] the wire name of variant `{}` is empty",
                        v.ident
                    ),
                ));
                String::new()
            }
            Some(r) => r.as_str().to_owned(),
            None => v.ident.to_string().to_kebab_case(),
        };
        if let Some(other) = variants.iter().find(|o| o.wire == wire) {
            acc.push(error(
                v.ident.span(),
                format_args!(
                    "[dto.name-clash] variants `{}` and `{}` have the same wire name `{wire}`; \
                     rename one of them",
                    other.ident, v.ident
                ),
            ));
        }
        variants.push(Variant {
            ident: v.ident.clone(),
            wire,
        });
    }
    acc.finish_with(variants)
}

pub fn expand(input: &DeriveInput, data: &DataEnum) -> TokenStream {
    let variants = match parse(input, data) {
        Ok(v) => v,
        Err(e) => {
            let fallback = if input.generics.params.is_empty() {
                super::expand::fallback(&input.ident)
            } else {
                TokenStream::new()
            };
            let errors = e.write_errors();
            return quote!(#errors #fallback);
        }
    };
    let name = &input.ident;
    let name_str = name.to_string();
    let rt = quote!(::agboss_core::__private::dto);
    let serde = quote!(::agboss_core::__private::serde);
    let json = quote!(::agboss_core::__private::serde_json);
    let schemars_impl = super::expand::schemars_impl(name);
    let idents: Vec<_> = variants.iter().map(|v| &v.ident).collect();
    let wires: Vec<_> = variants.iter().map(|v| v.wire.as_str()).collect();
    quote! {
        #[doc(hidden)]
        #[allow(non_upper_case_globals, clippy::all)]
        const _: () = {
            #[automatically_derived]
            impl #rt::DtoEnum for #name {
                const VARIANTS: &'static [&'static str] = &[#(#wires),*];
                fn wire(&self) -> &'static str {
                    match self {
                        #(#name::#idents => #wires,)*
                    }
                }
                fn from_wire(wire: &str) -> ::core::option::Option<Self> {
                    match wire {
                        #(#wires => ::core::option::Option::Some(#name::#idents),)*
                        _ => ::core::option::Option::None,
                    }
                }
            }

            #[automatically_derived]
            impl #serde::Serialize for #name {
                fn serialize<__S: #serde::Serializer>(&self, __serializer: __S) -> ::core::result::Result<__S::Ok, __S::Error> {
                    #rt::serialize_enum(self, __serializer)
                }
            }

            #[automatically_derived]
            impl<'de> #serde::Deserialize<'de> for #name {
                fn deserialize<__D: #serde::Deserializer<'de>>(__deserializer: __D) -> ::core::result::Result<Self, __D::Error> {
                    #rt::deserialize_enum(__deserializer)
                }
            }

            #[automatically_derived]
            impl #rt::Dto for #name {
                const DTO_NAME: &'static str = #name_str;
                fn json_schema() -> #json::Value {
                    #rt::enum_schema(<#name as #rt::DtoEnum>::VARIANTS)
                }
                #[inline]
                fn validate_into(&self, _: &mut #rt::JsonPath, _: &mut ::std::vec::Vec<#rt::FieldError>) {}
                fn check_json_into(
                    __value: &#json::Value,
                    __path: &mut #rt::JsonPath,
                    __errors: &mut ::std::vec::Vec<#rt::FieldError>,
                ) {
                    #rt::check_enum(__value, <#name as #rt::DtoEnum>::VARIANTS, __path, __errors);
                }
            }

            #schemars_impl
        };
    }
}
