//! `store_trait!`: a store trait written once, with what every store trait needs beside it.
//!
//! From one list of methods it writes the trait (each method a `Send` future), its `dyn`-safe
//! twin (the boxed futures live only there) implemented for every implementor, the impl for
//! `Arc<S>` (keep a handle to a store you also give to an app) and the impl for
//! [`SharedStore`](super::SharedStore) through the twin. Every borrowed argument carries the
//! invocation's one lifetime, which the boxed future outlives.

/// Writes a store trait, its erased twin and its `Arc<S>` and `SharedStore` impls.
macro_rules! store_trait {
    (
        $(#[$meta:meta])*
        pub trait $Trait:ident, erased as $Erased:ident, $lt:lifetime {
            $(
                $(#[$method_meta:meta])*
                fn $method:ident(&self $(, $arg:ident: $ty:ty)* $(,)?) -> $out:ty;
            )*
        }
    ) => {
        $(#[$meta])*
        pub trait $Trait: Send + Sync + 'static {
            $(
                $(#[$method_meta])*
                fn $method<$lt>(
                    &$lt self $(, $arg: $ty)*
                ) -> impl ::std::future::Future<Output = $out> + Send;
            )*
        }

        /// The `dyn`-safe twin of the trait: the boxed futures live only here.
        trait $Erased: Send + Sync {
            $(
                fn $method<$lt>(
                    &$lt self $(, $arg: $ty)*
                ) -> ::futures::future::BoxFuture<$lt, $out>;
            )*
        }

        impl<S: $Trait> $Erased for S {
            $(
                fn $method<$lt>(
                    &$lt self $(, $arg: $ty)*
                ) -> ::futures::future::BoxFuture<$lt, $out> {
                    Box::pin(<S as $Trait>::$method(self $(, $arg)*))
                }
            )*
        }

        /// A shared store is a store (keep a handle to a store you also give to an app).
        impl<S: $Trait> $Trait for ::std::sync::Arc<S> {
            $(
                fn $method<$lt>(
                    &$lt self $(, $arg: $ty)*
                ) -> impl ::std::future::Future<Output = $out> + Send {
                    <S as $Trait>::$method(self $(, $arg)*)
                }
            )*
        }

        impl $Trait for SharedStore {
            $(
                fn $method<$lt>(
                    &$lt self $(, $arg: $ty)*
                ) -> impl ::std::future::Future<Output = $out> + Send {
                    <dyn ErasedStore as $Erased>::$method(&*self.0 $(, $arg)*)
                }
            )*
        }
    };
}
pub(super) use store_trait;
