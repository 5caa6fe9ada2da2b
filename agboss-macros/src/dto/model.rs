//! The typed model of a `#[derive(Dto)]` struct: its fields, each with one kind attribute
//! parsed by darling ([`KindArgs`]), and the syntactic shape of its type.
use darling::FromMeta;
use darling::util::SpannedValue;
use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::{Expr, Ident, Lit, Type, UnOp};

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Kind {
    Text,
    Integer,
    Number,
    Boolean,
    Nested,
    /// A `#[derive(Dto)]` enum of unit variants: one of its wire names.
    Choice,
    /// A free `serde_json::Value`.
    Json,
    /// Any type with a `schemars::JsonSchema` and serde impls: serde decodes (and so validates)
    /// it, schemars describes it.
    Schema,
}

impl Kind {
    pub const ALL: [Kind; 8] = [
        Kind::Text,
        Kind::Integer,
        Kind::Number,
        Kind::Boolean,
        Kind::Nested,
        Kind::Choice,
        Kind::Json,
        Kind::Schema,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Kind::Text => "text",
            Kind::Integer => "integer",
            Kind::Number => "number",
            Kind::Boolean => "boolean",
            Kind::Nested => "nested",
            Kind::Choice => "choice",
            Kind::Json => "json",
            Kind::Schema => "schema",
        }
    }

    pub fn of_attr(attr: &syn::Attribute) -> Option<Kind> {
        Kind::ALL
            .into_iter()
            .find(|k| attr.path().is_ident(k.name()))
    }

    /// The keys this kind accepts (list keys only on `Vec` fields).
    pub fn keys(self, list: bool) -> String {
        let own: &[&str] = match self {
            Kind::Text => &[
                "prompt",
                "rename",
                "min_length",
                "max_length",
                "pattern",
                "choices",
            ],
            Kind::Integer | Kind::Number => &["prompt", "rename", "min", "max"],
            Kind::Boolean | Kind::Nested | Kind::Choice | Kind::Json | Kind::Schema => {
                &["prompt", "rename"]
            }
        };
        let mut keys = own.join(", ");
        if list {
            keys.push_str(", min_items, max_items");
        }
        keys
    }

    /// Best guess of the kind from the (syntactic) leaf type, for hints.
    pub fn guess(leaf: &Type) -> Kind {
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
            Some("Value") => Kind::Json,
            _ => Kind::Nested,
        }
    }
}

/// `prompt = "..."`.
#[derive(Debug, Clone)]
pub struct Prompt(pub String);

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
pub struct NumLit {
    pub value: f64,
    pub int: Option<i128>,
    pub span: Span,
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
pub struct KindArgs {
    pub prompt: Option<SpannedValue<Prompt>>,
    pub rename: Option<SpannedValue<String>>,
    pub min_length: Option<SpannedValue<usize>>,
    pub max_length: Option<SpannedValue<usize>>,
    pub pattern: Option<SpannedValue<String>>,
    pub choices: Option<SpannedValue<Vec<syn::LitStr>>>,
    pub min: Option<NumLit>,
    pub max: Option<NumLit>,
    pub min_items: Option<SpannedValue<usize>>,
    pub max_items: Option<SpannedValue<usize>>,
}

pub struct FieldModel {
    pub ident: Ident,
    pub ty: Type,
    /// The type is `Option<_>` (the member may be absent or `null`).
    pub optional: bool,
    pub wire: String,
    pub kind: Kind,
    pub prompt: String,
    pub args: KindArgs,
}

pub struct Model {
    pub ident: Ident,
    pub fields: Vec<FieldModel>,
}

pub fn error(span: Span, message: impl std::fmt::Display) -> darling::Error {
    syn::Error::new(span, message).into()
}

/// The generic arguments of `ty` when it is `Name<..>` (any path ending in `Name`).
fn generic_args<'a>(ty: &'a Type, name: &str) -> Option<Vec<&'a Type>> {
    match ty {
        Type::Group(g) => generic_args(&g.elem, name),
        Type::Paren(p) => generic_args(&p.elem, name),
        Type::Path(p) if p.qself.is_none() => {
            let last = p.path.segments.last()?;
            if last.ident != name {
                return None;
            }
            match &last.arguments {
                syn::PathArguments::AngleBracketed(args) => args
                    .args
                    .iter()
                    .map(|a| match a {
                        syn::GenericArgument::Type(t) => Some(t),
                        _ => None,
                    })
                    .collect(),
                _ => None,
            }
        }
        _ => None,
    }
}

/// `Some(T)` when `ty` is `Name<T>` (any path ending in `Name`).
pub fn generic_arg<'a>(ty: &'a Type, name: &str) -> Option<&'a Type> {
    match generic_args(ty, name)?.as_slice() {
        [t] => Some(t),
        _ => None,
    }
}

/// `Some(V)` when `ty` is `HashMap<K, V>` or `BTreeMap<K, V>`.
pub fn map_value(ty: &Type) -> Option<&Type> {
    ["HashMap", "BTreeMap"]
        .into_iter()
        .find_map(|m| match generic_args(ty, m)?.as_slice() {
            [_, v] => Some(*v),
            _ => None,
        })
}

/// (is a list, leaf type) of a field type: `Option<Vec<T>>` → (true, T); the values of a
/// map are its leaf (`HashMap<String, u32>` → (false, u32)).
pub fn shape(ty: &Type) -> (bool, &Type) {
    let inner = generic_arg(ty, "Option").unwrap_or(ty);
    let inner = map_value(inner).unwrap_or(inner);
    match generic_arg(inner, "Vec") {
        Some(elem) => (true, generic_arg(elem, "Option").unwrap_or(elem)),
        None => (false, inner),
    }
}
