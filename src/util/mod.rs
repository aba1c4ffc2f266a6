//! Cross-cutting support every stage may use: secret redaction on the way
//! out of the process, and the test-only crash points. Imports nothing of
//! the crate but [`crate::vocab`].

pub mod failpoint;
pub mod redact;
