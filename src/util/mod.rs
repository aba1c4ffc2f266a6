//! Cross-cutting support every stage may use: secret redaction on the way
//! out of the process, the TLS provider of every HTTP client, the
//! open-file limit, what this build is, and the test-only crash points. Imports nothing of the crate but [`crate::vocab`].

pub mod build;
pub mod failpoint;
pub mod fd_limit;
pub mod redact;
pub mod tls;
