//! TLS for the HTTP clients (model providers, MCP over streamable HTTP): rustls with the
//! `ring` provider, so the default tree needs no C build of aws-lc.
//!
//! reqwest is built with `rustls-no-provider`: a client finds its crypto provider in the
//! process default, which [`ensure_provider`] installs before agboss-core builds a client. An
//! application that installed its own provider first (aws-lc-rs, a FIPS build) keeps it.

/// Installs rustls' `ring` provider as the process default unless one is installed already.
/// Cheap after the first call; safe from any thread.
pub fn ensure_provider() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        if rustls::crypto::CryptoProvider::get_default().is_none() {
            // Another thread may install one in between: its provider then stays, which is
            // what the caller wanted too.
            let _ = rustls::crypto::ring::default_provider().install_default();
        }
    });
}
