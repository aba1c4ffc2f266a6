//! Whether the service can be reached, as every request of a client sees
//! it: a client whose requests have all failed to connect for a whole
//! `down_after` declares the service down, once, and wakes every request
//! waiting to retry so that the job stops instead of retrying unit by unit.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};
use tokio::sync::watch;

/// Whether the service can be reached, shared by every request. The
/// service is declared down when connections have failed, with nothing
/// reaching it in between, for a whole `down_after`: counted from the
/// first failure, so that a long idle spell (follow mode between polls)
/// is not mistaken for an outage.
#[derive(Debug)]
pub(super) struct Health {
    start: Instant,
    /// Milliseconds after `start` of the last exchange that reached the service.
    last_contact_ms: AtomicU64,
    /// Milliseconds after `start` of the first failed connection since
    /// then (`NONE`: none).
    failing_since_ms: AtomicU64,
    /// Set once, when the service is declared down: how long nothing
    /// connected, and the last connection error.
    pub(super) down: OnceLock<(Duration, String)>,
    /// Wakes requests waiting to retry when the service is declared down.
    pub(super) down_tx: watch::Sender<bool>,
}

const NONE: u64 = u64::MAX;

impl Health {
    pub(super) fn new() -> Health {
        Health {
            start: Instant::now(),
            last_contact_ms: AtomicU64::new(0),
            failing_since_ms: AtomicU64::new(NONE),
            down: OnceLock::new(),
            down_tx: watch::Sender::new(false),
        }
    }

    fn now_ms(&self) -> u64 {
        u64::try_from(self.start.elapsed().as_millis()).unwrap_or(NONE - 1)
    }

    /// An exchange reached the service.
    pub(super) fn contact(&self) {
        self.last_contact_ms.fetch_max(self.now_ms(), Ordering::Relaxed);
        self.failing_since_ms.store(NONE, Ordering::Relaxed);
    }

    /// How long connections have failed with nothing reaching the service.
    fn failing_for(&self) -> Duration {
        let since = self.failing_since_ms.load(Ordering::Relaxed);
        if since == NONE {
            return Duration::ZERO;
        }
        let since = since.max(self.last_contact_ms.load(Ordering::Relaxed));
        Duration::from_millis(self.now_ms().saturating_sub(since))
    }

    /// How long until the service would be declared down, if nothing reaches it.
    pub(super) fn down_in(&self, after: Duration) -> Duration {
        after.saturating_sub(self.failing_for())
    }

    /// A connection failed: declares the service down when connections
    /// have failed, with nothing reaching it, for `after`.
    pub(super) fn connect_failed(&self, after: Duration, why: &str) {
        let _ = self
            .failing_since_ms
            .compare_exchange(NONE, self.now_ms(), Ordering::Relaxed, Ordering::Relaxed);
        let silent = self.failing_for();
        if silent >= after && self.down.set((silent, why.to_string())).is_ok() {
            self.down_tx.send_replace(true);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_service_is_down_after_failing_for_the_whole_time_not_after_idling() {
        let h = Health {
            start: Instant::now() - Duration::from_secs(100),
            last_contact_ms: AtomicU64::new(0),
            failing_since_ms: AtomicU64::new(NONE),
            down: OnceLock::new(),
            down_tx: watch::Sender::new(false),
        };
        // 100 s idle, then a failure: not down yet.
        h.connect_failed(Duration::from_secs(5), "refused");
        assert!(h.down.get().is_none());
        assert!(h.down_in(Duration::from_secs(5)) > Duration::from_secs(4));
        // Failing since 6 s ago: down.
        h.failing_since_ms.store(h.now_ms() - 6000, Ordering::Relaxed);
        h.connect_failed(Duration::from_secs(5), "refused");
        assert!(h.down.get().is_some_and(|(d, w)| *d >= Duration::from_secs(6) && w == "refused"));
        assert!(*h.down_tx.borrow());
        // Contact resets the count.
        let h2 = Health {
            failing_since_ms: AtomicU64::new(0),
            ..h
        };
        h2.contact();
        assert_eq!(h2.failing_for(), Duration::ZERO);
    }
}
