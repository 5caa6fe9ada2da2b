//! A small typed reader for `#[macro(key = value, ...)]` arguments shared by every component
//! macro: it knows each macro's keys, accumulates every error of one attribute (unknown and
//! duplicate keys, wrong value shapes, missing required keys) and points at the offending token.
use proc_macro2::{Span, TokenStream};
use syn::parse::Parser;
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Expr, Lit, LitInt, LitStr, Meta, Path, Token};

use crate::diag::Errors;

/// The shape a key's value must have.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// `key = "text"`
    Str,
    /// `key = 123`
    Int,
    /// `key = SomeType`
    Path,
    /// `key = [A, B]`
    PathList,
    /// bare `key`
    Flag,
}

impl Shape {
    fn example(self, key: &str) -> String {
        match self {
            Shape::Str => format!("{key} = \"...\""),
            Shape::Int => format!("{key} = 4096"),
            Shape::Path => format!("{key} = SomeType"),
            Shape::PathList => format!("{key} = [TypeA, TypeB]"),
            Shape::Flag => key.to_string(),
        }
    }
}

/// One key a macro accepts.
pub struct KeySpec {
    pub key: &'static str,
    pub shape: Shape,
    pub required: bool,
}

pub const fn key(key: &'static str, shape: Shape, required: bool) -> KeySpec {
    KeySpec {
        key,
        shape,
        required,
    }
}

/// A parsed value.
pub enum Value {
    Str(LitStr),
    Int(LitInt),
    Path(Path),
    PathList(Vec<Path>, Span),
    Flag,
}

/// The parsed arguments of one attribute.
pub struct Args {
    values: Vec<(&'static str, Value)>,
}

impl Args {
    /// Parses `attr` against `specs`, pushing every problem into `errors`.
    pub fn parse(
        macro_name: &str,
        attr: TokenStream,
        specs: &[KeySpec],
        errors: &mut Errors,
    ) -> Args {
        let mut values: Vec<(&'static str, Value)> = Vec::new();
        let mut seen: Vec<&'static str> = Vec::new();
        let metas = match Punctuated::<Meta, Token![,]>::parse_terminated.parse2(attr) {
            Ok(m) => m,
            Err(e) => {
                errors.push(syn::Error::new(
                    e.span(),
                    format!("[attr.syntax] cannot read the arguments of `#[{macro_name}]`: {e}; write `#[{macro_name}(key = value, ...)]`"),
                ));
                return Args { values };
            }
        };
        let known: Vec<&str> = specs.iter().map(|s| s.key).collect();
        // Keys suggested for a misspelt one: not reported again as missing.
        let mut suggested: Vec<&str> = Vec::new();
        for meta in metas {
            let path = meta.path();
            let Some(ident) = path.get_ident() else {
                errors.push(syn::Error::new(
                    path.span(),
                    format!(
                        "[attr.unknown-key] unknown key in `#[{macro_name}]`; the keys are: {}",
                        known.join(", ")
                    ),
                ));
                continue;
            };
            let name = ident.to_string();
            let Some(spec) = specs.iter().find(|s| s.key == name) else {
                let close = suggest(&name, &known);
                suggested.extend(close);
                let hint = close
                    .map(|k| format!("did you mean `{k}`? "))
                    .unwrap_or_default();
                errors.push(syn::Error::new(
                    ident.span(),
                    format!("[attr.unknown-key] unknown key `{name}` in `#[{macro_name}]`: {hint}the keys are: {}", known.join(", ")),
                ));
                continue;
            };
            if seen.contains(&spec.key) {
                errors.push(syn::Error::new(
                    ident.span(),
                    format!("[attr.duplicate-key] `{name}` is given twice in `#[{macro_name}]`; keep one"),
                ));
                continue;
            }
            seen.push(spec.key);
            match read_value(spec, &meta) {
                Ok(v) => values.push((spec.key, v)),
                Err(span) => errors.push(syn::Error::new(
                    span,
                    format!(
                        "[attr.value] `{name}` expects `{}`",
                        spec.shape.example(spec.key)
                    ),
                )),
            }
        }
        for spec in specs.iter().filter(|s| s.required) {
            if !seen.contains(&spec.key) && !suggested.contains(&spec.key) {
                errors.push(syn::Error::new(
                    Span::call_site(),
                    format!(
                        "[attr.missing-key] `#[{macro_name}]` needs `{}`",
                        spec.shape.example(spec.key)
                    ),
                ));
            }
        }
        Args { values }
    }

    fn get(&self, key: &str) -> Option<&Value> {
        self.values.iter().find(|(k, _)| *k == key).map(|(_, v)| v)
    }
    pub fn str(&self, key: &str) -> Option<&LitStr> {
        match self.get(key) {
            Some(Value::Str(s)) => Some(s),
            _ => None,
        }
    }
    pub fn int(&self, key: &str) -> Option<&LitInt> {
        match self.get(key) {
            Some(Value::Int(i)) => Some(i),
            _ => None,
        }
    }
    pub fn path(&self, key: &str) -> Option<&Path> {
        match self.get(key) {
            Some(Value::Path(p)) => Some(p),
            _ => None,
        }
    }
    pub fn paths(&self, key: &str) -> &[Path] {
        match self.get(key) {
            Some(Value::PathList(p, _)) => p,
            _ => &[],
        }
    }
    pub fn paths_span(&self, key: &str) -> Option<Span> {
        match self.get(key) {
            Some(Value::PathList(_, s)) => Some(*s),
            _ => None,
        }
    }
    pub fn flag(&self, key: &str) -> bool {
        matches!(self.get(key), Some(Value::Flag))
    }
}

fn read_value(spec: &KeySpec, meta: &Meta) -> Result<Value, Span> {
    match (spec.shape, meta) {
        (Shape::Flag, Meta::Path(p)) => {
            let _ = p;
            Ok(Value::Flag)
        }
        (Shape::Flag, other) => Err(other.span()),
        (_, Meta::NameValue(nv)) => {
            let expr = strip_groups(&nv.value);
            match (spec.shape, expr) {
                (Shape::Str, Expr::Lit(l)) => match &l.lit {
                    Lit::Str(s) => Ok(Value::Str(s.clone())),
                    other => Err(other.span()),
                },
                (Shape::Int, Expr::Lit(l)) => match &l.lit {
                    Lit::Int(i) => Ok(Value::Int(i.clone())),
                    other => Err(other.span()),
                },
                (Shape::Path, Expr::Path(p)) if p.qself.is_none() => {
                    Ok(Value::Path(p.path.clone()))
                }
                (Shape::PathList, Expr::Array(arr)) => {
                    let mut out = Vec::new();
                    for elem in &arr.elems {
                        match strip_groups(elem) {
                            Expr::Path(p) if p.qself.is_none() => out.push(p.path.clone()),
                            other => return Err(other.span()),
                        }
                    }
                    Ok(Value::PathList(out, arr.span()))
                }
                (_, other) => Err(other.span()),
            }
        }
        (_, other) => Err(other.span()),
    }
}

fn strip_groups(expr: &Expr) -> &Expr {
    match expr {
        Expr::Group(g) => strip_groups(&g.expr),
        Expr::Paren(p) => strip_groups(&p.expr),
        other => other,
    }
}

/// The closest known key, if any is close (edit distance ≤ 2).
fn suggest<'a>(name: &str, known: &[&'a str]) -> Option<&'a str> {
    known
        .iter()
        .map(|k| (levenshtein(name, k), *k))
        .filter(|(d, _)| *d <= 2)
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

fn levenshtein(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != *cb);
            cur.push((prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()]
}
