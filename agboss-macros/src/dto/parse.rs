//! Parsing a `#[derive(Dto)]` struct into its [`Model`], accumulating every error of the item.
use darling::FromMeta;
use heck::ToLowerCamelCase;
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{Data, DeriveInput, Fields, Type};

use super::check::{check_keys, check_values};
use super::model::{FieldModel, Kind, KindArgs, Model, error, generic_arg, shape};

/// The text of a field's doc comment (`/// ...` lines, trimmed and joined by spaces), if any.
pub fn doc_text(attrs: &[syn::Attribute]) -> Option<String> {
    let lines: Vec<String> = attrs
        .iter()
        .filter(|a| a.path().is_ident("doc"))
        .filter_map(|a| match &a.meta {
            syn::Meta::NameValue(nv) => match &nv.value {
                syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(s),
                    ..
                }) => Some(s.value().trim().to_owned()),
                _ => None,
            },
            _ => None,
        })
        .filter(|l| !l.is_empty())
        .collect();
    (!lines.is_empty()).then(|| lines.join(" "))
}

pub fn parse(input: &DeriveInput) -> darling::Result<Model> {
    let mut acc = darling::Error::accumulator();
    let name = &input.ident;

    let generics = &input.generics;
    if !generics.params.is_empty() || generics.where_clause.is_some() {
        let span = if generics.params.is_empty() {
            generics.where_clause.span()
        } else {
            generics.params.span()
        };
        acc.push(error(
            span,
            format_args!(
                "[dto.generics] a DTO cannot be generic: `{name}` has type, lifetime or const \
                 parameters; make one concrete struct per shape"
            ),
        ));
    }

    let named = match &input.data {
        Data::Struct(s) => match &s.fields {
            Fields::Named(named) => Some(named),
            Fields::Unnamed(_) | Fields::Unit => {
                acc.push(error(
                    if let Fields::Unnamed(u) = &s.fields {
                        u.span()
                    } else {
                        name.span()
                    },
                    format_args!(
                        "[dto.not-a-struct] #[derive(Dto)] needs a struct with named fields; \
                         `{name}` is a tuple or unit struct: write `struct {name} {{ field: Type, .. }}`"
                    ),
                ));
                None
            }
        },
        // Enums are parsed by `enums`; this is only reached for a union-like mistake.
        Data::Enum(e) => {
            acc.push(error(
                e.enum_token.span,
                format_args!("[dto.not-a-struct] `{name}` is an enum; see `enums`"),
            ));
            None
        }
        Data::Union(u) => {
            acc.push(error(
                u.union_token.span,
                format_args!(
                    "[dto.not-a-struct] #[derive(Dto)] needs a struct with named fields, and \
                     `{name}` is a union"
                ),
            ));
            None
        }
    };

    let mut fields = Vec::new();
    if let Some(named) = named {
        for field in &named.named {
            if let Some(model) = parse_field(field, &mut acc) {
                fields.push(model);
            }
        }
        for f in &fields {
            let (_, leaf) = shape(&f.ty);
            if let Type::Path(p) = leaf
                && p.qself.is_none()
                && p.path.segments.len() == 1
                && (p.path.segments[0].ident == *name || p.path.segments[0].ident == "Self")
            {
                acc.push(error(
                    leaf.span(),
                    format_args!(
                        "[dto.recursive] field `{}` makes `{name}` contain itself; DTO schemas \
                         inline nested DTOs, so recursive DTOs are not supported: bound the \
                         depth with distinct structs",
                        f.ident
                    ),
                ));
            }
        }
        for (i, a) in fields.iter().enumerate() {
            if let Some(b) = fields[..i].iter().find(|b| b.wire == a.wire) {
                acc.push(error(
                    a.ident.span(),
                    format_args!(
                        "[dto.name-clash] fields `{}` and `{}` have the same wire name `{}`; \
                         rename one of them",
                        b.ident, a.ident, a.wire
                    ),
                ));
            }
        }
    }

    acc.finish_with(Model {
        ident: name.clone(),
        fields,
    })
}

/// Parses one field; `None` when it has any error (all of them pushed to `acc`).
pub fn parse_field(
    field: &syn::Field,
    acc: &mut darling::error::Accumulator,
) -> Option<FieldModel> {
    let mut local = darling::Error::accumulator();
    let model = parse_field_into(field, &mut local);
    let errors = local.into_inner();
    let failed = !errors.is_empty();
    for e in errors {
        acc.push(e);
    }
    if failed { None } else { model }
}

fn parse_field_into(
    field: &syn::Field,
    acc: &mut darling::error::Accumulator,
) -> Option<FieldModel> {
    let ident = field.ident.clone()?;
    let ty = &field.ty;
    let (list, leaf) = shape(ty);

    let mut found: Option<(Kind, &syn::Attribute)> = None;
    for attr in &field.attrs {
        let Some(kind) = Kind::of_attr(attr) else {
            continue;
        };
        match found {
            Some((first, _)) => {
                acc.push(error(
                    attr.path().span(),
                    format_args!(
                        "[dto.kind-conflict] field `{ident}` has both #[{}] and #[{}]; keep \
                         only the one that matches its type (here probably #[{}])",
                        first.name(),
                        kind.name(),
                        Kind::guess(leaf).name()
                    ),
                ));
            }
            None => found = Some((kind, attr)),
        }
    }
    let Some((kind, attr)) = found else {
        let guess = Kind::guess(leaf).name();
        acc.push(error(
            ident.span(),
            format_args!(
                "[dto.kind-missing] field `{ident}` needs a kind attribute with a prompt, e.g. \
                 #[{guess}(prompt = \"...\")]; the kinds are #[text], #[integer], #[number], \
                 #[boolean], #[nested], #[choice], #[json] and #[schema]"
            ),
        ));
        return None;
    };

    // A `#[schema]` field is described by schemars as a whole (lists included).
    let list = list && kind != Kind::Schema;
    let args = match &attr.meta {
        syn::Meta::Path(_) => KindArgs::default(),
        meta => match KindArgs::from_meta(meta) {
            Ok(args) => args,
            Err(e) => {
                let e: syn::Error = e.into();
                for single in e {
                    let message = single.to_string();
                    let message = if message.starts_with("[dto.") {
                        message
                    } else if let Some(rest) = message.strip_prefix("Unknown field: ") {
                        let (key, hint) = rest.split_once(". ").unwrap_or((rest, ""));
                        let hint = if hint.is_empty() {
                            String::new()
                        } else {
                            format!(" {hint}")
                        };
                        format!(
                            "[dto.unknown-key] unknown key {key} in #[{}] of field `{ident}`.{hint} \
                             It accepts: {}",
                            kind.name(),
                            kind.keys(list)
                        )
                    } else {
                        format!(
                            "[dto.attr-value] {message} in #[{}] of field `{ident}`; keys take \
                             literals: prompt = \"...\", min_length = 3, min = -1.5, \
                             pattern = \"^[a-z]+$\", choices = [\"a\", \"b\"]",
                            kind.name()
                        )
                    };
                    acc.push(error(single.span(), message));
                }
                return None;
            }
        },
    };

    let prompt = match &args.prompt {
        Some(p) if !p.0.trim().is_empty() => p.0.clone(),
        Some(p) => {
            acc.push(error(
                p.span(),
                format_args!(
                    "[dto.prompt-missing] the prompt of field `{ident}` is empty; say what the \
                     model should put there"
                ),
            ));
            String::new()
        }
        None => match doc_text(&field.attrs) {
            Some(doc) => doc,
            None => {
                acc.push(error(
                    attr.path().span(),
                    format_args!(
                        "[dto.prompt-missing] field `{ident}` needs a prompt: a doc comment \
                         (`/// What the model should put here`) or #[{}(prompt = \"...\")]",
                        kind.name()
                    ),
                ));
                String::new()
            }
        },
    };

    check_keys(&ident, kind, list, ty, &args, acc);
    check_values(&ident, kind, &args, acc);

    let wire = match &args.rename {
        Some(r) if r.trim().is_empty() => {
            acc.push(error(
                r.span(),
                format_args!(
                    "[dto.rename] the wire name of field `{ident}` is empty; write \
                     rename = \"name\" or leave it out for camelCase"
                ),
            ));
            String::new()
        }
        Some(r) => r.as_str().to_owned(),
        None => ident.unraw().to_string().to_lower_camel_case(),
    };
    Some(FieldModel {
        ident,
        optional: generic_arg(ty, "Option").is_some(),
        ty: ty.clone(),
        wire,
        kind,
        prompt,
        args,
    })
}
