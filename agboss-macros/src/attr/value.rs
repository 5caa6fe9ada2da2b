//! The value shapes of attribute keys, as darling `FromMeta` types. Each one keeps the span of
//! what the user wrote; a value of the wrong shape is an `[attr.value]` error whose text
//! [`super::parse`] completes with the key's example.
use darling::FromMeta;
use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::{Expr, Lit};

/// The marker of a value-shape error, replaced with the key's own example by `parse`.
pub const VALUE_ERROR: &str = "[attr.value]";

fn wrong_shape(expr: &Expr) -> darling::Error {
    darling::Error::custom(VALUE_ERROR).with_span(&expr.span())
}

/// `key` alone and `key(..)` are `[attr.value]` errors for a key that takes `key = value`.
macro_rules! not_a_word_or_list {
    () => {
        fn from_word() -> darling::Result<Self> {
            Err(darling::Error::custom(VALUE_ERROR))
        }
        fn from_list(_: &[darling::ast::NestedMeta]) -> darling::Result<Self> {
            Err(darling::Error::custom(VALUE_ERROR))
        }
    };
}

fn strip_groups(expr: &Expr) -> &Expr {
    match expr {
        Expr::Group(g) => strip_groups(&g.expr),
        Expr::Paren(p) => strip_groups(&p.expr),
        other => other,
    }
}

/// `key = "text"`.
#[derive(Clone)]
pub struct Str(pub syn::LitStr);

impl FromMeta for Str {
    fn from_expr(expr: &Expr) -> darling::Result<Self> {
        match strip_groups(expr) {
            Expr::Lit(l) => match &l.lit {
                Lit::Str(s) => Ok(Str(s.clone())),
                _ => Err(wrong_shape(expr)),
            },
            _ => Err(wrong_shape(expr)),
        }
    }
    not_a_word_or_list!();
}

/// `key = 123` (checked positive by `check::positive` where the rule says so).
#[derive(Clone)]
pub struct Int(pub syn::LitInt);

impl FromMeta for Int {
    fn from_expr(expr: &Expr) -> darling::Result<Self> {
        match strip_groups(expr) {
            Expr::Lit(l) => match &l.lit {
                Lit::Int(i) => Ok(Int(i.clone())),
                _ => Err(wrong_shape(expr)),
            },
            _ => Err(wrong_shape(expr)),
        }
    }
    not_a_word_or_list!();
}

/// `key = SomeType` (a path without `<T as Trait>`).
#[derive(Clone)]
pub struct TypePath(pub syn::Path);

impl FromMeta for TypePath {
    fn from_expr(expr: &Expr) -> darling::Result<Self> {
        match strip_groups(expr) {
            Expr::Path(p) if p.qself.is_none() => Ok(TypePath(p.path.clone())),
            _ => Err(wrong_shape(expr)),
        }
    }
    not_a_word_or_list!();
}

/// `key = [TypeA, TypeB]`, with the span of the brackets.
#[derive(Clone)]
pub struct PathList {
    pub paths: Vec<syn::Path>,
    pub span: Span,
}

impl FromMeta for PathList {
    fn from_expr(expr: &Expr) -> darling::Result<Self> {
        let Expr::Array(arr) = strip_groups(expr) else {
            return Err(wrong_shape(expr));
        };
        let mut paths = Vec::new();
        for elem in &arr.elems {
            match strip_groups(elem) {
                Expr::Path(p) if p.qself.is_none() => paths.push(p.path.clone()),
                other => return Err(wrong_shape(other)),
            }
        }
        Ok(PathList {
            paths,
            span: arr.span(),
        })
    }
    not_a_word_or_list!();
}

/// `key = ["a", "b"]`.
#[derive(Clone)]
pub struct StrList {
    pub items: Vec<syn::LitStr>,
}

impl FromMeta for StrList {
    fn from_expr(expr: &Expr) -> darling::Result<Self> {
        let Expr::Array(arr) = strip_groups(expr) else {
            return Err(wrong_shape(expr));
        };
        let mut items = Vec::new();
        for elem in &arr.elems {
            match strip_groups(elem) {
                Expr::Lit(syn::ExprLit {
                    lit: Lit::Str(s), ..
                }) => items.push(s.clone()),
                other => return Err(wrong_shape(other)),
            }
        }
        Ok(StrList { items })
    }
    not_a_word_or_list!();
}

/// `key(TypeA = 1, TypeB = 2)`: a whole number per type, with the span of the list.
#[derive(Clone)]
pub struct PathCounts {
    pub entries: Vec<(syn::Path, syn::LitInt)>,
}

impl FromMeta for PathCounts {
    fn from_list(items: &[darling::ast::NestedMeta]) -> darling::Result<Self> {
        let mut entries = Vec::new();
        for item in items {
            let darling::ast::NestedMeta::Meta(syn::Meta::NameValue(nv)) = item else {
                return Err(darling::Error::custom(VALUE_ERROR).with_span(item));
            };
            match strip_groups(&nv.value) {
                Expr::Lit(syn::ExprLit {
                    lit: Lit::Int(n), ..
                }) => entries.push((nv.path.clone(), n.clone())),
                other => return Err(wrong_shape(other)),
            }
        }
        Ok(PathCounts { entries })
    }
    fn from_word() -> darling::Result<Self> {
        Err(darling::Error::custom(VALUE_ERROR))
    }
    fn from_expr(expr: &Expr) -> darling::Result<Self> {
        Err(wrong_shape(expr))
    }
}

/// The paths of an optional list (empty when the key is absent).
pub fn paths(list: &Option<PathList>) -> &[syn::Path] {
    list.as_ref().map_or(&[], |l| &l.paths)
}

/// A bare `key`.
#[derive(Clone, Copy, Default)]
pub struct Flag(pub bool);

impl FromMeta for Flag {
    fn from_word() -> darling::Result<Self> {
        Ok(Flag(true))
    }
    fn from_expr(expr: &Expr) -> darling::Result<Self> {
        Err(wrong_shape(expr))
    }
    fn from_list(_: &[darling::ast::NestedMeta]) -> darling::Result<Self> {
        Err(darling::Error::custom(VALUE_ERROR))
    }
    fn from_none() -> Option<Self> {
        Some(Flag(false))
    }
}
