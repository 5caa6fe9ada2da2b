//! `#[derive(Dto)]`: parse (darling) into a typed model, validate it (every error of the item,
//! each naming a rule such as `[dto.prompt-missing]`), then expand into serde impls through
//! hidden mirror structs and an `impl agboss_core::dto::Dto`.
use darling::FromMeta;
use darling::util::SpannedValue;
use heck::ToLowerCamelCase;
use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{Data, DeriveInput, Expr, Fields, Ident, Lit, Type, UnOp};

pub fn expand(input: TokenStream) -> TokenStream {
    let input: DeriveInput = match syn::parse2(input) {
        Ok(input) => input,
        Err(e) => return e.to_compile_error(),
    };
    match parse(&input) {
        Ok(model) => generate(&model),
        Err(e) => e.write_errors(),
    }
}

// ---------------------------------------------------------------------------------------------
// model

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    Text,
    Integer,
    Number,
    Boolean,
    Nested,
    /// Any type with a `schemars::JsonSchema` and serde impls: serde decodes (and so validates)
    /// it, schemars describes it.
    Schema,
}

impl Kind {
    const ALL: [Kind; 6] = [
        Kind::Text,
        Kind::Integer,
        Kind::Number,
        Kind::Boolean,
        Kind::Nested,
        Kind::Schema,
    ];

    fn name(self) -> &'static str {
        match self {
            Kind::Text => "text",
            Kind::Integer => "integer",
            Kind::Number => "number",
            Kind::Boolean => "boolean",
            Kind::Nested => "nested",
            Kind::Schema => "schema",
        }
    }

    fn of_attr(attr: &syn::Attribute) -> Option<Kind> {
        Kind::ALL
            .into_iter()
            .find(|k| attr.path().is_ident(k.name()))
    }

    /// The keys this kind accepts (list keys only on `Vec` fields).
    fn keys(self, list: bool) -> String {
        let own: &[&str] = match self {
            Kind::Text => &["prompt", "min_length", "max_length", "pattern", "choices"],
            Kind::Integer | Kind::Number => &["prompt", "min", "max"],
            Kind::Boolean | Kind::Nested | Kind::Schema => &["prompt"],
        };
        let mut keys = own.join(", ");
        if list {
            keys.push_str(", min_items, max_items");
        }
        keys
    }

    /// Best guess of the kind from the (syntactic) leaf type, for hints.
    fn guess(leaf: &Type) -> Kind {
        let ident = match leaf {
            Type::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()),
            _ => None,
        };
        match ident.as_deref() {
            Some("String") => Kind::Text,
            Some(
                "i8" | "i16" | "i32" | "i64" | "i128" | "isize" | "u8" | "u16" | "u32" | "u64"
                | "u128" | "usize",
            ) => Kind::Integer,
            Some("f32" | "f64") => Kind::Number,
            Some("bool") => Kind::Boolean,
            _ => Kind::Nested,
        }
    }
}

/// `prompt = "..."`.
#[derive(Debug, Clone)]
struct Prompt(String);

impl FromMeta for Prompt {
    fn from_string(value: &str) -> darling::Result<Self> {
        Ok(Prompt(value.to_owned()))
    }

    fn from_word() -> darling::Result<Self> {
        Err(darling::Error::custom(
            "[dto.prompt-missing] `prompt` needs a text: prompt = \"...\"",
        ))
    }
}

/// A number literal, possibly negative: `min = -5`, `max = 2.5`.
#[derive(Debug, Clone)]
struct NumLit {
    value: f64,
    int: Option<i128>,
    span: Span,
}

impl FromMeta for NumLit {
    fn from_expr(expr: &Expr) -> darling::Result<Self> {
        let (negative, lit) = match expr {
            Expr::Group(g) => return Self::from_expr(&g.expr),
            Expr::Lit(l) => (false, &l.lit),
            Expr::Unary(u) if matches!(u.op, UnOp::Neg(_)) => match &*u.expr {
                Expr::Lit(l) => (true, &l.lit),
                _ => return Err(darling::Error::unexpected_expr_type(expr).with_span(expr)),
            },
            _ => return Err(darling::Error::unexpected_expr_type(expr).with_span(expr)),
        };
        let sign = if negative { -1.0 } else { 1.0 };
        match lit {
            Lit::Int(i) => {
                let v: i128 = i
                    .base10_parse()
                    .map_err(|e| darling::Error::from(e).with_span(expr))?;
                let v = if negative { -v } else { v };
                Ok(NumLit {
                    value: v as f64,
                    int: Some(v),
                    span: expr.span(),
                })
            }
            Lit::Float(f) => {
                let v: f64 = f
                    .base10_parse()
                    .map_err(|e| darling::Error::from(e).with_span(expr))?;
                Ok(NumLit {
                    value: sign * v,
                    int: None,
                    span: expr.span(),
                })
            }
            other => Err(darling::Error::unexpected_lit_type(other).with_span(expr)),
        }
    }
}

/// Everything a kind attribute may say; which keys a kind accepts is checked afterwards, so
/// that a key of another kind is `[dto.constraint-kind]` rather than an unknown key.
#[derive(Debug, Default, FromMeta)]
struct KindArgs {
    prompt: Option<SpannedValue<Prompt>>,
    min_length: Option<SpannedValue<usize>>,
    max_length: Option<SpannedValue<usize>>,
    pattern: Option<SpannedValue<String>>,
    choices: Option<SpannedValue<Vec<syn::LitStr>>>,
    min: Option<NumLit>,
    max: Option<NumLit>,
    min_items: Option<SpannedValue<usize>>,
    max_items: Option<SpannedValue<usize>>,
}

struct FieldModel {
    ident: Ident,
    ty: Type,
    /// The type is `Option<_>` (the member may be absent).
    optional: bool,
    wire: String,
    kind: Kind,
    prompt: String,
    args: KindArgs,
}

struct Model {
    ident: Ident,
    fields: Vec<FieldModel>,
}

fn error(span: Span, message: impl std::fmt::Display) -> darling::Error {
    syn::Error::new(span, message).into()
}

/// `Some(T)` when `ty` is `Name<T>` (any path ending in `Name`).
fn generic_arg<'a>(ty: &'a Type, name: &str) -> Option<&'a Type> {
    match ty {
        Type::Group(g) => generic_arg(&g.elem, name),
        Type::Paren(p) => generic_arg(&p.elem, name),
        Type::Path(p) if p.qself.is_none() => {
            let last = p.path.segments.last()?;
            if last.ident != name {
                return None;
            }
            match &last.arguments {
                syn::PathArguments::AngleBracketed(args) if args.args.len() == 1 => {
                    match args.args.first()? {
                        syn::GenericArgument::Type(t) => Some(t),
                        _ => None,
                    }
                }
                _ => None,
            }
        }
        _ => None,
    }
}

/// (is a list, leaf type) of a field type: `Option<Vec<T>>` → (true, T).
fn shape(ty: &Type) -> (bool, &Type) {
    let inner = generic_arg(ty, "Option").unwrap_or(ty);
    match generic_arg(inner, "Vec") {
        Some(elem) => (true, generic_arg(elem, "Option").unwrap_or(elem)),
        None => (false, inner),
    }
}

fn parse(input: &DeriveInput) -> darling::Result<Model> {
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
        Data::Enum(e) => {
            acc.push(error(
                e.enum_token.span,
                format_args!(
                    "[dto.not-a-struct] #[derive(Dto)] needs a struct with named fields, and \
                     `{name}` is an enum; for a fixed set of texts use a String field with \
                     #[text(prompt = \"...\", choices = [\"a\", \"b\"])]"
                ),
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
fn parse_field(field: &syn::Field, acc: &mut darling::error::Accumulator) -> Option<FieldModel> {
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
                 #[boolean], #[nested] and #[schema]"
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
        None => {
            acc.push(error(
                attr.path().span(),
                format_args!(
                    "[dto.prompt-missing] field `{ident}` needs a prompt: #[{}(prompt = \"...\")]",
                    kind.name()
                ),
            ));
            String::new()
        }
    };

    check_keys(&ident, kind, list, ty, &args, acc);
    check_values(&ident, kind, &args, acc);

    let wire = ident.unraw().to_string().to_lower_camel_case();
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

/// `[dto.constraint-kind]`: keys of another kind, list keys on a non-list.
fn check_keys(
    ident: &Ident,
    kind: Kind,
    list: bool,
    ty: &Type,
    args: &KindArgs,
    acc: &mut darling::error::Accumulator,
) {
    let text_keys = [
        ("min_length", args.min_length.as_ref().map(|v| v.span())),
        ("max_length", args.max_length.as_ref().map(|v| v.span())),
        ("pattern", args.pattern.as_ref().map(|v| v.span())),
        ("choices", args.choices.as_ref().map(|v| v.span())),
    ];
    let number_keys = [
        ("min", args.min.as_ref().map(|v| v.span)),
        ("max", args.max.as_ref().map(|v| v.span)),
    ];
    let mut wrong = Vec::new();
    if kind != Kind::Text {
        wrong.extend(
            text_keys
                .iter()
                .filter_map(|(k, s)| s.map(|s| (*k, s, "#[text]"))),
        );
    }
    if !matches!(kind, Kind::Integer | Kind::Number) {
        wrong.extend(
            number_keys
                .iter()
                .filter_map(|(k, s)| s.map(|s| (*k, s, "#[integer] and #[number]"))),
        );
    }
    for (key, span, owner) in wrong {
        acc.push(error(
            span,
            format_args!(
                "[dto.constraint-kind] `{key}` applies to {owner} fields, not to #[{}] field \
                 `{ident}`; #[{}] accepts: {}",
                kind.name(),
                kind.name(),
                kind.keys(list)
            ),
        ));
    }
    if kind == Kind::Schema {
        for v in [&args.min_items, &args.max_items].into_iter().flatten() {
            acc.push(error(
                v.span(),
                format_args!(
                    "[dto.constraint-kind] #[schema] field `{ident}` takes only a prompt: \
                     schemars describes it and serde checks it; put the rule in its type"
                ),
            ));
        }
        return;
    }
    if !list {
        let ty = quote!(#ty).to_string().replace(' ', "");
        for (key, value) in [
            ("min_items", &args.min_items),
            ("max_items", &args.max_items),
        ] {
            if let Some(v) = value {
                acc.push(error(
                    v.span(),
                    format_args!(
                        "[dto.constraint-kind] `{key}` applies to list fields (Vec<_>), and \
                         `{ident}` is a `{ty}`; remove it or make the field a Vec"
                    ),
                ));
            }
        }
    }
}

/// `[dto.range]`, `[dto.pattern]`, `[dto.choices]`, integer literals for `#[integer]`.
fn check_values(ident: &Ident, kind: Kind, args: &KindArgs, acc: &mut darling::error::Accumulator) {
    let range = |acc: &mut darling::error::Accumulator, span, lo: &str, hi: &str, a, b| {
        acc.push(error(
            span,
            format_args!(
                "[dto.range] field `{ident}` has {lo} = {a} above {hi} = {b}; no value could \
                 pass: swap or fix them"
            ),
        ));
    };
    if let (Some(lo), Some(hi)) = (&args.min_length, &args.max_length)
        && **lo > **hi
    {
        range(
            acc,
            hi.span(),
            "min_length",
            "max_length",
            lo.to_string(),
            hi.to_string(),
        );
    }
    if let (Some(lo), Some(hi)) = (&args.min_items, &args.max_items)
        && **lo > **hi
    {
        range(
            acc,
            hi.span(),
            "min_items",
            "max_items",
            lo.to_string(),
            hi.to_string(),
        );
    }
    if kind == Kind::Integer {
        for (key, value) in [("min", &args.min), ("max", &args.max)] {
            if let Some(v) = value
                && v.int.is_none()
            {
                acc.push(error(
                    v.span,
                    format_args!(
                        "[dto.constraint-kind] `{key}` of #[integer] field `{ident}` must be an \
                         integer literal (e.g. {key} = 1); use #[number] for f32/f64 fields"
                    ),
                ));
            }
        }
    }
    if let (Some(lo), Some(hi)) = (&args.min, &args.max) {
        let inverted = match (lo.int, hi.int) {
            (Some(a), Some(b)) => a > b,
            _ => lo.value > hi.value,
        };
        if inverted {
            range(
                acc,
                hi.span,
                "min",
                "max",
                lo.int.map_or(lo.value.to_string(), |v| v.to_string()),
                hi.int.map_or(hi.value.to_string(), |v| v.to_string()),
            );
        }
    }
    if let Some(p) = &args.pattern
        && let Err(e) = regex::Regex::new(p.as_str())
    {
        acc.push(error(
            p.span(),
            format_args!(
                "[dto.pattern] the pattern of field `{ident}` is not a valid regex (syntax of \
                 the `regex` crate): {e}"
            ),
        ));
    }
    if let Some(choices) = &args.choices {
        if choices.is_empty() {
            acc.push(error(
                choices.span(),
                format_args!(
                    "[dto.choices] `choices` of field `{ident}` is empty; list the allowed \
                     texts, e.g. choices = [\"a\", \"b\"]"
                ),
            ));
        }
        for (i, c) in choices.iter().enumerate() {
            if choices[..i].iter().any(|d| d.value() == c.value()) {
                acc.push(error(
                    c.span(),
                    format_args!(
                        "[dto.choices] `choices` of field `{ident}` lists {:?} twice",
                        c.value()
                    ),
                ));
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// expansion

fn opt<T: quote::ToTokens>(value: Option<T>) -> TokenStream {
    match value {
        Some(v) => quote!(::core::option::Option::Some(#v)),
        None => quote!(::core::option::Option::None),
    }
}

fn generate(model: &Model) -> TokenStream {
    let name = &model.ident;
    let name_str = name.to_string();
    let rt = quote!(::agboss_core::__private::dto);
    let serde = quote!(::agboss_core::__private::serde);
    let json = quote!(::agboss_core::__private::serde_json);
    let serde_crate = "::agboss_core::__private::serde";

    let mut support = Vec::new();
    let mut consts = Vec::new();
    for (i, f) in model.fields.iter().enumerate() {
        let ty = &f.ty;
        let cname = format_ident!("__AGBOSS_C{}", i);
        consts.push(cname.clone());
        let a = &f.args;

        let assert = format_ident!("assert_{}", f.kind.name());
        support.push(quote_spanned! {ty.span()=>
            const _: () = #rt::#assert::<#ty>();
        });

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
    }

    let idents: Vec<_> = model.fields.iter().map(|f| &f.ident).collect();
    let tys: Vec<_> = model.fields.iter().map(|f| &f.ty).collect();
    let wires: Vec<_> = model.fields.iter().map(|f| f.wire.as_str()).collect();
    let skip = "::agboss_core::__private::dto::is_absent";
    let schemars = quote!(::agboss_core::__private::schemars);

    // Per field: how it serializes, its schema, its checks. `#[schema]` fields go through
    // schemars and serde; every other kind through `DtoValue`.
    let mut ser_fields = Vec::new();
    let mut schema_stmts = Vec::new();
    let mut validate_stmts = Vec::new();
    let mut check_stmts = Vec::new();
    for (f, cname) in model.fields.iter().zip(&consts) {
        let (ident, ty, wire, prompt) = (&f.ident, &f.ty, f.wire.as_str(), f.prompt.as_str());
        if f.kind == Kind::Schema {
            let skip_none = if f.optional {
                quote!(#[serde(rename = #wire, skip_serializing_if = "::core::option::Option::is_none")])
            } else {
                quote!(#[serde(rename = #wire)])
            };
            ser_fields.push(quote!(#skip_none #ident: &'__a #ty,));
            let required = !f.optional;
            schema_stmts.push(quote! {
                __properties.insert(
                    ::std::string::String::from(#wire),
                    #rt::describe(#rt::schemars_schema::<#ty>(), #prompt),
                );
                if #required {
                    __required.push(#json::Value::from(#wire));
                }
            });
            check_stmts.push(quote! {
                #rt::check_schema_member::<#ty>(__object, #wire, #required, __path, __errors);
            });
        } else {
            ser_fields.push(quote! {
                #[serde(rename = #wire, skip_serializing_if = #skip)]
                #ident: &'__a #ty,
            });
            schema_stmts.push(quote! {
                __properties.insert(
                    ::std::string::String::from(#wire),
                    #rt::describe(<#ty as #rt::DtoValue>::schema(&#cname), #prompt),
                );
                if <#ty as #rt::DtoValue>::REQUIRED {
                    __required.push(#json::Value::from(#wire));
                }
            });
            validate_stmts.push(quote! {
                #rt::validate_member::<#ty>(&self.#ident, #wire, &#cname, __path, __errors);
            });
            check_stmts.push(quote! {
                #rt::check_member::<#ty>(__object, #wire, &#cname, __path, __errors);
            });
        }
    }

    quote! {
        #[doc(hidden)]
        #[allow(non_upper_case_globals, clippy::all)]
        const _: () = {
            #(#support)*

            #[automatically_derived]
            impl #serde::Serialize for #name {
                fn serialize<__S>(&self, __serializer: __S) -> ::core::result::Result<__S::Ok, __S::Error>
                where
                    __S: #serde::Serializer,
                {
                    #[derive(#serde::Serialize)]
                    #[serde(crate = #serde_crate)]
                    struct __AgbossSer<'__a> {
                        #(#ser_fields)*
                    }
                    #serde::Serialize::serialize(
                        &__AgbossSer { #(#idents: &self.#idents,)* },
                        __serializer,
                    )
                }
            }

            #[automatically_derived]
            impl<'de> #serde::Deserialize<'de> for #name {
                fn deserialize<__D>(__deserializer: __D) -> ::core::result::Result<Self, __D::Error>
                where
                    __D: #serde::Deserializer<'de>,
                {
                    #[derive(#serde::Deserialize)]
                    #[serde(crate = #serde_crate)]
                    struct __AgbossDe {
                        #(
                            #[serde(rename = #wires)]
                            #idents: #tys,
                        )*
                    }
                    let __m = <__AgbossDe as #serde::Deserialize<'de>>::deserialize(__deserializer)?;
                    ::core::result::Result::Ok(#name { #(#idents: __m.#idents,)* })
                }
            }

            #[automatically_derived]
            impl #rt::Dto for #name {
                const DTO_NAME: &'static str = #name_str;

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

            /// The same schema as [`Dto::json_schema`](::agboss_core::dto::Dto::json_schema),
            /// so the DTO can be used wherever a `schemars::JsonSchema` is expected.
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
        };
    }
}
