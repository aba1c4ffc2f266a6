//! The client's two request bounds: a global concurrency limit (a
//! semaphore) and an optional requests-per-second pace, which a 429 pauses
//! for everyone at once so throttled callers do not stampede back together.

use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{Mutex, OwnedSemaphorePermit, Semaphore};
use tokio::time::Instant;

/// Shared pacing state.
#[derive(Debug)]
pub struct Limiter {
    permits: Arc<Semaphore>,
    /// Minimum spacing between request starts (None: unpaced).
    interval: Option<Duration>,
    /// The earliest instant the next request may start.
    next: Mutex<Instant>,
}

impl Limiter {
    /// `max_concurrency` requests in flight; at most `rps` started per second.
    pub fn new(max_concurrency: usize, rps: Option<f64>) -> Limiter {
        Limiter {
            permits: Arc::new(Semaphore::new(max_concurrency.max(1))),
            interval: rps.filter(|r| *r > 0.0).map(|r| Duration::from_secs_f64(1.0 / r)),
            next: Mutex::new(Instant::now()),
        }
    }

    /// Waits for a concurrency slot and for this request's turn in the pace.
    pub async fn acquire(&self) -> OwnedSemaphorePermit {
        let slot = {
            let mut next = self.next.lock().await;
            let now = Instant::now();
            let slot = (*next).max(now);
            *next = slot + self.interval.unwrap_or(Duration::ZERO);
            slot
        };
        tokio::time::sleep_until(slot).await;
        // The semaphore is never closed, so acquiring cannot fail; fall back
        // to a fresh permit rather than panicking if it ever were.
        match self.permits.clone().acquire_owned().await {
            Ok(p) => p,
            Err(_) => Arc::new(Semaphore::new(1)).acquire_owned().await.unwrap_or_else(|_| unreachable!()),
        }
    }

    /// Holds every request back until `wait` from now (after a 429).
    pub async fn pause(&self, wait: Duration) {
        let mut next = self.next.lock().await;
        let until = Instant::now() + wait;
        if *next < until {
            *next = until;
        }
    }
}
