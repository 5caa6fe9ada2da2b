//! [`MetaRef`]: registration data that is a constant of the program (what the macros
//! generate) or owned by the app (a tool that exists only at run time: each tool of a whole MCP
//! server). The runtime holds a component's data through it, so a tool known only at run time
//! is freed with the app that listed it instead of being leaked.
use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

/// Registration data a component runs under: `&'static` for what the macros generate, an
/// [`Arc`] for data made at run time (the tools of a whole MCP server, owned by the app that
/// listed them). Reading it costs what reading a reference does; cloning it copies a reference
/// or bumps a count.
///
/// ```
/// use std::sync::Arc;
/// use agboss_core::contract::MetaRef;
///
/// static CONSTANT: &str = "made by a macro";
/// let fixed: MetaRef<str> = MetaRef::Static(CONSTANT);
/// let owned: MetaRef<str> = MetaRef::Shared(Arc::from("listed at run time"));
/// assert_eq!(&*fixed, "made by a macro");
/// assert_eq!(owned.len(), 18);
/// assert!(fixed.as_static().is_some() && owned.as_static().is_none());
/// ```
pub enum MetaRef<T: ?Sized + 'static> {
    /// A constant of the program.
    Static(&'static T),
    /// Data made at run time, freed with its last holder.
    Shared(Arc<T>),
}

impl<T: ?Sized> MetaRef<T> {
    /// The data as a constant of the program, when it is one.
    pub fn as_static(&self) -> Option<&'static T> {
        match self {
            Self::Static(data) => Some(data),
            Self::Shared(_) => None,
        }
    }
}

impl<T: ?Sized> Deref for MetaRef<T> {
    type Target = T;
    #[inline]
    fn deref(&self) -> &T {
        match self {
            Self::Static(data) => data,
            Self::Shared(data) => data,
        }
    }
}

impl<T: ?Sized> Clone for MetaRef<T> {
    #[inline]
    fn clone(&self) -> Self {
        match self {
            Self::Static(data) => Self::Static(data),
            Self::Shared(data) => Self::Shared(Arc::clone(data)),
        }
    }
}

impl<T: ?Sized> From<&'static T> for MetaRef<T> {
    fn from(data: &'static T) -> Self {
        Self::Static(data)
    }
}

impl<T: ?Sized> From<Arc<T>> for MetaRef<T> {
    fn from(data: Arc<T>) -> Self {
        Self::Shared(data)
    }
}

impl<T: ?Sized + fmt::Debug> fmt::Debug for MetaRef<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        (**self).fmt(f)
    }
}

impl<T: ?Sized + fmt::Display> fmt::Display for MetaRef<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        (**self).fmt(f)
    }
}
