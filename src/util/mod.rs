//! Cross-cutting support every stage may use: secret redaction on the way
//! out of the process, the TLS provider of every HTTP client, the
//! open-file limit, what this build is, counted nouns in messages, and the
//! test-only crash points. Imports nothing of the crate but [`crate::vocab`].

pub mod build;
pub mod failpoint;
pub mod fd_limit;
pub mod redact;
pub mod tls;
pub mod words;

/// The cases a property test runs: `default` in `make test`, or
/// `CHAINETL_PROPTEST_CASES` where set (`make test-long` sets it higher).
#[cfg(test)]
pub(crate) fn proptest_cases(default: u32) -> u32 {
    std::env::var("CHAINETL_PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}
