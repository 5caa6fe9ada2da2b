//! Probes that keep one mistake one error: generated code names a dependency's or a DTO
//! field's type through these, so only the macro's single assertion reports a type that does
//! not fit. `Dep::<T>::DEP` is `T`'s own when `T: Inject` (an inherent item) and a placeholder
//! otherwise (the item of [`NotInjectable`], which the path finds when the inherent one does not
//! apply).
use std::marker::PhantomData;

use crate::di::{DepKind, DepMeta, DiError, Inject, Injectable, Resolver};

/// The dependency a field of type `T` stands for.
pub struct Dep<T>(PhantomData<T>);

impl<T: Inject> Dep<T> {
    pub const DEP: DepMeta = T::DEP;
    #[inline]
    pub fn inject(resolver: &Resolver<'_>) -> Result<T, DiError> {
        T::inject(resolver)
    }
}

/// The placeholders of [`Dep`] for a type that cannot be injected (the crate does not compile).
pub trait NotInjectable<T> {
    const DEP: DepMeta = DepMeta {
        type_name: "",
        kind: DepKind::Tenant,
    };
    fn inject(_: &Resolver<'_>) -> Result<T, DiError> {
        unreachable!("a type that cannot be injected does not compile")
    }
}
impl<T> NotInjectable<T> for Dep<T> {}

/// The assertion of a dep field `Arc<S>`: `S` is an `#[injectable]` service.
pub const fn assert_service<S: Injectable>() {}
/// The assertion of any other dep field.
pub const fn assert_inject<T: Inject>() {}
