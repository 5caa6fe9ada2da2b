//! What a meta's build function makes, opaque to the contract: the runtime's erased form of a
//! component (a tool type's call slot, an interceptor's hook table), which only the pipeline
//! knows and reads back. The contract names no type of the runtime; a build happens once per
//! app, so the one box and downcast cost nothing per call.
use std::any::Any;

/// A component built for the runtime (see the module).
#[doc(hidden)]
pub struct Built(Box<dyn Any + Send + Sync>);

impl Built {
    /// Wraps what the runtime built.
    pub fn new<S: Any + Send + Sync>(built: S) -> Self {
        Self(Box::new(built))
    }
    /// What was built, if it is an `S`.
    pub fn downcast<S: Any>(self) -> Option<S> {
        self.0.downcast::<S>().ok().map(|s| *s)
    }
}
