//! The one setup of outgoing HTTP clients (the remote harness, OpenAI-compatible model servers).
//!
//! TLS is rustls with the `ring` crypto provider, installed here once per process. reqwest's own
//! choice, aws-lc-rs, builds a large C library through CMake, which was most of a fresh release build
//! on two cores (tests/bench/results/build_time.md); ring is the other provider rustls ships.

use std::time::Duration;

/// A client builder with the provider installed and the project's connect timeout.
pub fn client_builder() -> reqwest::ClientBuilder {
    static INSTALL: std::sync::Once = std::sync::Once::new();
    INSTALL.call_once(|| {
        // Err only when another provider is already the default: then that one serves.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
    reqwest::Client::builder().connect_timeout(Duration::from_secs(10))
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_client_with_tls_can_be_built() {
        // Without an installed provider, building a rustls client panics.
        assert!(super::client_builder().build().is_ok());
        assert!(super::client_builder().https_only(true).build().is_ok());
    }
}
