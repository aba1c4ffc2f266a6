//! The process's one TLS crypto provider: rustls on ring, for the service
//! client and the S3 client alike (both are reqwest clients built with
//! `rustls-no-provider`, which take the process default and panic without
//! one). Every place that builds an HTTP client calls [`install`] first.

use std::sync::Once;

/// Installs ring as the process's rustls crypto provider; idempotent, and
/// a provider some other code installed first is left in place.
pub fn install() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        // Err: a provider is installed already, which serves as well.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}
