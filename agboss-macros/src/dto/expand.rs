//! Expansion of a valid [`Model`]: serde impls (written out: a `SerializeStruct` and a map
//! visitor, no derive), an `impl agboss_core::dto::Dto` and an `impl schemars::JsonSchema`.
//!
//! Every use of a field's type goes through `Field::<T>` (a probe of the runtime): when `T`
//! is not a DTO field type, only the field's kind assertion (`assert_text::<T>()` ...) reports
//! it, once, at the field; the serde mirrors and the checks see a placeholder and are silent.
use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;

use super::model::{FieldModel, Kind, Model};

fn opt<T: quote::ToTokens>(value: Option<T>) -> TokenStream {
    match value {
        Some(v) => quote!(::core::option::Option::Some(#v)),
        None => quote!(::core::option::Option::None),
    }
}

/// `const __AGBOSS_Ci: Constraints = ..;` and the pattern's `LazyLock`, for field `i`.
fn constraints(i: usize, f: &FieldModel, support: &mut Vec<TokenStream>) -> syn::Ident {
    let rt = quote!(::agboss_core::__private::dto);
    let cname = format_ident!("__AGBOSS_C{}", i);
    let a = &f.args;
    let pattern = match &a.pattern {
        Some(p) => {
            let src = p.as_str();
            let fname = format_ident!("__agboss_pattern{}", i);
            support.push(quote! {
                fn #fname() -> &'static #rt::Regex {
                    static RE: #rt::LazyLock<#rt::Regex> = #rt::LazyLock::new(|| {
                        #rt::Regex::new(#src).expect("pattern checked by #[derive(Dto)]")
                    });
                    &RE
                }
            });
            quote!(::core::option::Option::Some(#rt::Pattern { source: #src, regex: #fname }))
        }
        None => quote!(::core::option::Option::None),
    };
    let choices = opt(a.choices.as_ref().map(|c| {
        let c = c.iter();
        quote!(&[#(#c),*])
    }));
    let min_length = opt(a.min_length.as_ref().map(|v| **v));
    let max_length = opt(a.max_length.as_ref().map(|v| **v));
    let min_items = opt(a.min_items.as_ref().map(|v| **v));
    let max_items = opt(a.max_items.as_ref().map(|v| **v));
    let (min_int, max_int, min_num, max_num) = if f.kind == Kind::Integer {
        (
            opt(a.min.as_ref().and_then(|v| v.int)),
            opt(a.max.as_ref().and_then(|v| v.int)),
            opt(None::<f64>),
            opt(None::<f64>),
        )
    } else {
        (
            opt(None::<i128>),
            opt(None::<i128>),
            opt(a.min.as_ref().map(|v| v.value)),
            opt(a.max.as_ref().map(|v| v.value)),
        )
    };
    support.push(quote! {
        const #cname: #rt::Constraints = #rt::Constraints {
            min_length: #min_length,
            max_length: #max_length,
            pattern: #pattern,
            choices: #choices,
            min_int: #min_int,
            max_int: #max_int,
            min_num: #min_num,
            max_num: #max_num,
            min_items: #min_items,
            max_items: #max_items,
        };
    });
    cname
}

pub fn generate(model: &Model) -> TokenStream {
    let name = &model.ident;
    let name_str = name.to_string();
    let rt = quote!(::agboss_core::__private::dto);
    let serde = quote!(::agboss_core::__private::serde);
    let json = quote!(::agboss_core::__private::serde_json);

    let mut support = Vec::new();
    let mut ser_stmts = Vec::new();
    let mut de_arms = Vec::new();
    let mut de_inits = Vec::new();
    let mut schema_stmts = Vec::new();
    let mut validate_stmts = Vec::new();
    let mut check_stmts = Vec::new();
    // `Dto::OPEN_KEYS`: whether a field can hold a map or raw JSON (a schemars type may).
    let mut open_keys = vec![quote!(false)];
    for (i, f) in model.fields.iter().enumerate() {
        let (ident, ty, wire, prompt) = (&f.ident, &f.ty, f.wire.as_str(), f.prompt.as_str());
        // The one check of the field's type, at the field.
        let assert = format_ident!("assert_{}", f.kind.name());
        support.push(quote_spanned! {ty.span()=>
            const _: () = #rt::#assert::<#ty>();
        });
        let slot = format_ident!("__f{}", i);
        // Read: a duplicate is refused, a missing optional field is `None`.
        let read = if f.kind == Kind::Schema {
            quote!(<#rt::SchemaField<#ty>>::next_value(&mut __map)?)
        } else {
            quote!(<#rt::Field<#ty>>::next_value(&mut __map)?)
        };
        de_arms.push(quote! {
            #wire => {
                if #slot.is_some() {
                    return ::core::result::Result::Err(
                        <__A::Error as #serde::de::Error>::duplicate_field(#wire),
                    );
                }
                #slot = ::core::option::Option::Some(#read);
            }
        });
        de_inits.push(if f.optional {
            quote!(#ident: #slot.unwrap_or(::core::option::Option::None),)
        } else {
            quote! {
                #ident: match #slot {
                    ::core::option::Option::Some(v) => v,
                    ::core::option::Option::None => {
                        return ::core::result::Result::Err(
                            <__A::Error as #serde::de::Error>::missing_field(#wire),
                        )
                    }
                },
            }
        });
        if f.kind == Kind::Schema {
            // Described by schemars and checked by serde as a whole.
            let write = quote!(<#rt::SchemaField<#ty>>::serialize_field(&mut __state, #wire, &self.#ident)?;);
            ser_stmts.push(if f.optional {
                quote! {
                    if self.#ident.is_none() {
                        #serde::ser::SerializeStruct::skip_field(&mut __state, #wire)?;
                    } else {
                        #write
                    }
                }
            } else {
                write
            });
            let required = !f.optional;
            schema_stmts.push(quote! {
                __properties.insert(
                    ::std::string::String::from(#wire),
                    #rt::describe(<#rt::SchemaField<#ty>>::schema(), #prompt),
                );
                if #required {
                    __required.push(#json::Value::from(#wire));
                }
            });
            check_stmts.push(quote! {
                <#rt::SchemaField<#ty>>::check(__object, #wire, #required, __path, __errors);
            });
            open_keys.push(quote!(true));
            continue;
        }
        let cname = constraints(i, f, &mut support);
        let field = quote!(<#rt::Field<#ty>>);
        open_keys.push(quote!(#field::OPEN_KEYS));
        ser_stmts.push(quote! {
            if #field::is_absent(&self.#ident) {
                #serde::ser::SerializeStruct::skip_field(&mut __state, #wire)?;
            } else {
                #field::serialize_field(&mut __state, #wire, &self.#ident)?;
            }
        });
        schema_stmts.push(quote! {
            __properties.insert(
                ::std::string::String::from(#wire),
                #rt::describe(#field::schema(&#cname), #prompt),
            );
            if #field::REQUIRED {
                __required.push(#json::Value::from(#wire));
            }
        });
        validate_stmts.push(quote! {
            #field::validate(&self.#ident, #wire, &#cname, __path, __errors);
        });
        check_stmts.push(quote! {
            #field::check(__object, #wire, &#cname, __path, __errors);
        });
    }
    let schemars_impl = schemars_impl(name);
    let count = model.fields.len();
    let expecting = format!("struct {name_str}");
    let slots: Vec<_> = (0..count).map(|i| format_ident!("__f{}", i)).collect();
    let tys: Vec<_> = model.fields.iter().map(|f| &f.ty).collect();
    let wires: Vec<_> = model.fields.iter().map(|f| f.wire.as_str()).collect();

    quote! {
        #[doc(hidden)]
        #[allow(non_upper_case_globals, clippy::all)]
        const _: () = {
            #[allow(unused_imports)]
            use #rt::{NotAField as _, NotASchemaField as _};
            #(#support)*

            #[automatically_derived]
            impl #serde::Serialize for #name {
                fn serialize<__S>(&self, __serializer: __S) -> ::core::result::Result<__S::Ok, __S::Error>
                where
                    __S: #serde::Serializer,
                {
                    let mut __state = #serde::Serializer::serialize_struct(__serializer, #name_str, #count)?;
                    #(#ser_stmts)*
                    #serde::ser::SerializeStruct::end(__state)
                }
            }

            #[automatically_derived]
            impl<'de> #serde::Deserialize<'de> for #name {
                fn deserialize<__D>(__deserializer: __D) -> ::core::result::Result<Self, __D::Error>
                where
                    __D: #serde::Deserializer<'de>,
                {
                    struct __Visitor;
                    impl<'de> #serde::de::Visitor<'de> for __Visitor {
                        type Value = #name;
                        fn expecting(&self, __f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                            __f.write_str(#expecting)
                        }
                        fn visit_map<__A>(self, mut __map: __A) -> ::core::result::Result<#name, __A::Error>
                        where
                            __A: #serde::de::MapAccess<'de>,
                        {
                            #(let mut #slots: ::core::option::Option<#tys> = ::core::option::Option::None;)*
                            while let ::core::option::Option::Some(__key) = __map.next_key::<#rt::MemberKey<'de>>()? {
                                match __key.as_str() {
                                    #(#de_arms)*
                                    _ => {
                                        __map.next_value::<#serde::de::IgnoredAny>()?;
                                    }
                                }
                            }
                            ::core::result::Result::Ok(#name { #(#de_inits)* })
                        }
                    }
                    #serde::Deserializer::deserialize_struct(__deserializer, #name_str, &[#(#wires),*], __Visitor)
                }
            }

            #[automatically_derived]
            impl #rt::Dto for #name {
                const DTO_NAME: &'static str = #name_str;
                const OPEN_KEYS: bool = #(#open_keys)||*;

                fn json_schema() -> #json::Value {
                    let mut __properties = #json::Map::new();
                    let mut __required = ::std::vec::Vec::new();
                    #(#schema_stmts)*
                    #rt::object_schema(__properties, __required)
                }

                #[inline]
                fn validate_into(
                    &self,
                    __path: &mut #rt::JsonPath,
                    __errors: &mut ::std::vec::Vec<#rt::FieldError>,
                ) {
                    #(#validate_stmts)*
                }

                fn check_json_into(
                    __value: &#json::Value,
                    __path: &mut #rt::JsonPath,
                    __errors: &mut ::std::vec::Vec<#rt::FieldError>,
                ) {
                    let ::core::option::Option::Some(__object) = #rt::expect_object(__value, __path, __errors) else {
                        return;
                    };
                    #(#check_stmts)*
                }
            }

            #schemars_impl
        };
    }
}

/// `impl JsonSchema` of a DTO (struct or enum): the very schema of `Dto::json_schema`, inlined.
pub fn schemars_impl(name: &syn::Ident) -> TokenStream {
    let rt = quote!(::agboss_core::__private::dto);
    let schemars = quote!(::agboss_core::__private::schemars);
    let name_str = name.to_string();
    quote! {
        #[automatically_derived]
        impl #schemars::JsonSchema for #name {
            fn inline_schema() -> bool {
                true
            }
            fn schema_name() -> ::std::borrow::Cow<'static, str> {
                ::std::borrow::Cow::Borrowed(#name_str)
            }
            fn json_schema(_: &mut #schemars::SchemaGenerator) -> #schemars::Schema {
                #rt::to_schemars(<#name as #rt::Dto>::json_schema())
            }
        }
    }
}

/// What a DTO with errors gets (thiserror's `fallback.rs` is the model): the serde, `Dto` and
/// `JsonSchema` impls with bodies that never run, so that the type is still a DTO wherever
/// it is named (`input = ThisDto`) and the derive's own errors are all the user reads.
pub fn fallback(name: &syn::Ident) -> TokenStream {
    let rt = quote!(::agboss_core::__private::dto);
    let serde = quote!(::agboss_core::__private::serde);
    let json = quote!(::agboss_core::__private::serde_json);
    let schemars = quote!(::agboss_core::__private::schemars);
    let name_str = name.to_string();
    quote! {
        const _: () = {
            impl #serde::Serialize for #name {
                fn serialize<__S: #serde::Serializer>(&self, _: __S) -> ::core::result::Result<__S::Ok, __S::Error> {
                    ::core::unreachable!()
                }
            }
            impl<'de> #serde::Deserialize<'de> for #name {
                fn deserialize<__D: #serde::Deserializer<'de>>(_: __D) -> ::core::result::Result<Self, __D::Error> {
                    ::core::unreachable!()
                }
            }
            impl #rt::Dto for #name {
                const DTO_NAME: &'static str = #name_str;
                fn json_schema() -> #json::Value {
                    ::core::unreachable!()
                }
                fn validate_into(&self, _: &mut #rt::JsonPath, _: &mut ::std::vec::Vec<#rt::FieldError>) {}
                fn check_json_into(_: &#json::Value, _: &mut #rt::JsonPath, _: &mut ::std::vec::Vec<#rt::FieldError>) {}
            }
            impl #schemars::JsonSchema for #name {
                fn schema_name() -> ::std::borrow::Cow<'static, str> {
                    ::std::borrow::Cow::Borrowed(#name_str)
                }
                fn json_schema(_: &mut #schemars::SchemaGenerator) -> #schemars::Schema {
                    ::core::unreachable!()
                }
            }
        };
    }
}
