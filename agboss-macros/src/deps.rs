//! `deps = [...]`: each dependency maps, in order, to one field of the struct. A field is the
//! dependency itself (`TenantContext`, `S: Clone`) or an `Arc<S>` of a service.
use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Fields, GenericArgument, ItemStruct, Path, PathArguments, Type};

use crate::attr::value::{PathList, paths};
use crate::diag::{Errors, path_text, type_text};

/// The typed model of a component's dependencies.
pub struct Deps {
    /// Field name (None for unit structs) and field type, in order.
    fields: Vec<(syn::Ident, Type)>,
    unit: bool,
}

fn last_ident(path: &Path) -> Option<String> {
    path.segments.last().map(|s| s.ident.to_string())
}

/// `X` of a field type `Arc<X>` (or `std::sync::Arc<X>`).
fn arc_inner(ty: &Type) -> Option<&Type> {
    let Type::Path(tp) = ty else { return None };
    let last = tp.path.segments.last()?;
    if last.ident == "Arc"
        && let PathArguments::AngleBracketed(args) = &last.arguments
        && let Some(GenericArgument::Type(inner)) = args.args.first()
    {
        return Some(inner);
    }
    None
}

/// The dependency a field type stands for: `X` for `X`, `Arc<X>` and `std::sync::Arc<X>`.
fn field_dep_name(ty: &Type) -> Option<String> {
    let ty = arc_inner(ty).unwrap_or(ty);
    let Type::Path(tp) = ty else { return None };
    last_ident(&tp.path)
}

impl Deps {
    /// Reads and checks `deps` against the struct's fields (`[deps.mismatch]`).
    pub fn check(item: &ItemStruct, deps: &Option<PathList>, errors: &mut Errors) -> Deps {
        let deps = paths(deps);
        let mut fields = Vec::new();
        let unit;
        match &item.fields {
            Fields::Unit => {
                unit = true;
                if let Some(first) = deps.first() {
                    errors.push(syn::Error::new(
                        first.span(),
                        format!(
                            "[deps.mismatch] `{}` is a unit struct, so it cannot receive deps; add one field per dep, in order, e.g. `{}: {}`",
                            item.ident,
                            to_snake(&last_ident(first).unwrap_or_default()),
                            path_text(first)
                        ),
                    ));
                }
            }
            Fields::Unnamed(u) => {
                unit = false;
                errors.push(syn::Error::new(
                    u.span(),
                    "[deps.mismatch] use named fields (one per dep, in the order of `deps`), not a tuple struct",
                ));
            }
            Fields::Named(named) => {
                unit = false;
                for (i, field) in named.named.iter().enumerate() {
                    let Some(ident) = field.ident.clone() else {
                        continue;
                    };
                    match deps.get(i) {
                        None => errors.push(syn::Error::new(
                            field.span(),
                            format!(
                                "[deps.mismatch] field `{ident}` is not listed in `deps`; every field is injected: add its type to `deps = [...]` (in field order)"
                            ),
                        )),
                        Some(dep) => {
                            let want = last_ident(dep);
                            let have = field_dep_name(&field.ty);
                            if want != have {
                                let ty = &field.ty;
                                errors.push(syn::Error::new(
                                    dep.span(),
                                    format!(
                                        "[deps.mismatch] dep #{} is `{}` but field `{ident}` has type `{}`; list deps in field order, and give each field the dep's type (or `Arc<Dep>` for a service)",
                                        i + 1,
                                        path_text(dep),
                                        type_text(ty)
                                    ),
                                ));
                            }
                        }
                    }
                    fields.push((ident, field.ty.clone()));
                }
                for dep in deps.iter().skip(named.named.len()) {
                    errors.push(syn::Error::new(
                        dep.span(),
                        format!(
                            "[deps.mismatch] dep `{}` has no field; add a field of that type (or `Arc<{}>`), in the order of `deps`",
                            path_text(dep),
                            path_text(dep)
                        ),
                    ));
                }
            }
        }
        Deps { fields, unit }
    }

    /// `&[Dep::<FieldTy>::DEP, ...]` (a placeholder for a type that cannot be injected, which
    /// only [`assertions`](Self::assertions) reports).
    pub fn dep_metas(&self) -> TokenStream {
        let p = quote!(::agboss_core::__private);
        let metas = self
            .fields
            .iter()
            .map(|(_, ty)| quote!(<#p::Dep<#ty>>::DEP));
        quote!(&[#(#metas),*])
    }

    /// `Ty { field: Dep::<FieldTy>::inject(resolver)?, ... }`
    pub fn construct(&self, ty: &TokenStream) -> TokenStream {
        if self.unit {
            return quote!(#ty);
        }
        let p = quote!(::agboss_core::__private);
        let inits = self
            .fields
            .iter()
            .map(|(ident, ty)| quote!(#ident: <#p::Dep<#ty>>::inject(resolver)?));
        quote!(#ty { #(#inits),* })
    }

    /// One assertion per field, at its type: `[deps.not-injectable]` once for a type that
    /// cannot be injected (for `Arc<S>`, at `S`: "add `#[injectable]` to `S`").
    pub fn assertions(&self) -> TokenStream {
        let p = quote!(::agboss_core::__private);
        let checks = self.fields.iter().map(|(_, ty)| match arc_inner(ty) {
            Some(inner) => {
                quote_spanned!(inner.span()=> const _: () = #p::assert_service::<#inner>();)
            }
            None => quote_spanned!(ty.span()=> const _: () = #p::assert_inject::<#ty>();),
        });
        quote!(#(#checks)*)
    }
}

fn to_snake(name: &str) -> String {
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}
