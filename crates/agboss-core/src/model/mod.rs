//! Chat models.
