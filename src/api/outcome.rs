//! What one attempt of a request comes to ([`Attempt`]), and how a 2xx
//! body is read into its type ([`Parser`]): the words the client and its
//! attempts share.

use super::ApiError;
use std::time::Duration;

/// How one attempt ended.
pub(super) enum Attempt<T> {
    /// The answer, read.
    Done(T),
    /// Worth another attempt.
    Retry {
        /// What went wrong, for the error if no attempt succeeds.
        why: String,
        /// The server's `Retry-After`, capped.
        after: Option<Duration>,
        /// A connection error, reset or timeout.
        transport: bool,
        /// No connection was made.
        connect: bool,
    },
    /// Not worth another attempt.
    Fail(ApiError),
}

impl<T> Attempt<T> {
    /// A retry after anything but a transport error.
    pub(super) fn retry(why: String, after: Option<Duration>) -> Attempt<T> {
        Attempt::Retry {
            why,
            after,
            transport: false,
            connect: false,
        }
    }
}

/// Reads a 2xx body into `T`, and on failure says where in the body
/// (`events[3].log_index`) the first bad value is.
pub(super) struct Parser<'p, T> {
    pub(super) parse: &'p (dyn Fn(&[u8]) -> Result<T, serde_json::Error> + Sync),
    pub(super) locate: &'p (dyn Fn(&[u8]) -> Option<String> + Sync),
}
