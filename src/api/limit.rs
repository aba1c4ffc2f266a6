//! The client's request bounds: a global concurrency limit (a semaphore)
//! and a pace (requests per second) that adapts to the service's quota.
//!
//! The pace starts at `requests_per_second` (or unpaced). On a 429 it drops
//! to 97% of the rate the service accepted since the previous decrease —
//! while a client over-drives a quota, that rate *is* the quota (counting
//! from a decrease leaves out the quota's initial burst) — and then
//! creeps up 0.5% a second, so it settles just under the quota with rare
//! 429s. The first measurement, shorter than a second, is spread over a
//! whole second: a quota's burst is commonly a second's worth, and this
//! keeps the first estimate near the quota rather than far above it. One
//! decrease per 250 ms: a burst of 429s from requests already in flight
//! counts once. Requests are spaced by the pace, and a request still
//! waiting for a turn handed out before a decrease takes a new one, so
//! throttled callers never stampede back together; a throttled request
//! itself waits its `Retry-After` before retrying.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{Mutex, OwnedSemaphorePermit, Semaphore};
use tokio::time::Instant;

#[derive(Debug)]
struct Pace {
    /// Requests per second, `None`: unpaced.
    rate: Option<f64>,
    /// The user's bound, never exceeded.
    cap: Option<f64>,
    /// The earliest instant the next request may start.
    next: Instant,
    /// When the rate last moved.
    last_change: Instant,
    /// When it last went down.
    last_decrease: Option<Instant>,
    /// Start of the current measurement: the first request, then the last decrease.
    since: Option<Instant>,
    /// Completion times of successful requests since `since`, at most a second back.
    accepted: VecDeque<Instant>,
    /// Decreases so far: turns handed out before the latest one are stale.
    decreases: u64,
}

/// Shared pacing state.
#[derive(Debug)]
pub struct Limiter {
    permits: Arc<Semaphore>,
    /// Requests in flight at most.
    slots: usize,
    pace: Mutex<Pace>,
}

const WINDOW: Duration = Duration::from_secs(1);

impl Limiter {
    /// `max_concurrency` requests in flight; at most `rps` started per second.
    pub fn new(max_concurrency: usize, rps: Option<f64>) -> Limiter {
        let cap = rps.filter(|r| *r > 0.0);
        let now = Instant::now();
        Limiter {
            permits: Arc::new(Semaphore::new(max_concurrency.max(1))),
            slots: max_concurrency.max(1),
            pace: Mutex::new(Pace {
                rate: cap,
                cap,
                next: now,
                last_change: now,
                last_decrease: None,
                since: None,
                accepted: VecDeque::new(),
                decreases: 0,
            }),
        }
    }

    /// Waits for this request's turn in the pace, then for a concurrency slot.
    pub async fn acquire(&self) -> OwnedSemaphorePermit {
        loop {
            let (slot, generation) = self.turn().await;
            tokio::time::sleep_until(slot).await;
            // The semaphore is never closed, so acquiring cannot fail; fall
            // back to a fresh permit rather than panicking if it ever were.
            let permit = match self.permits.clone().acquire_owned().await {
                Ok(p) => p,
                Err(_) => Arc::new(Semaphore::new(1)).acquire_owned().await.unwrap_or_else(|_| unreachable!()),
            };
            // A turn handed out at the pace before a 429 would over-drive
            // the quota: queue again at the new pace.
            if self.pace.lock().await.decreases == generation {
                return permit;
            }
        }
    }

    /// The next start time in the pace, and the pace's generation.
    async fn turn(&self) -> (Instant, u64) {
        let mut p = self.pace.lock().await;
        let now = Instant::now();
        p.since.get_or_insert(now);
        if let Some(rate) = p.rate
            && now.duration_since(p.last_change) >= WINDOW
        {
            // Additive-ish increase, capped by the user's bound.
            let up = rate * 1.005;
            p.rate = Some(p.cap.map_or(up, |c| up.min(c)));
            p.last_change = now;
        }
        let slot = p.next.max(now);
        p.next = slot + p.rate.map_or(Duration::ZERO, |r| Duration::from_secs_f64(1.0 / r));
        (slot, p.decreases)
    }

    /// Records a request the service accepted.
    pub async fn accepted(&self) {
        let mut p = self.pace.lock().await;
        let now = Instant::now();
        p.accepted.push_back(now);
        while p.accepted.front().is_some_and(|t| now.duration_since(*t) > WINDOW) {
            p.accepted.pop_front();
        }
    }

    /// A 429: slow down to just under what the service accepts.
    pub async fn throttled(&self) {
        let mut p = self.pace.lock().await;
        let now = Instant::now();
        if p.last_decrease.is_some_and(|t| now.duration_since(t) < Duration::from_millis(250)) {
            return;
        }
        while p.accepted.front().is_some_and(|t| now.duration_since(*t) > WINDOW) {
            p.accepted.pop_front();
        }
        let window = p.since.map_or(Duration::ZERO, |f| now.duration_since(f)).min(WINDOW);
        let new = if p.last_decrease.is_none() && !p.accepted.is_empty() {
            // The first 429: what was accepted so far, over at least a second.
            p.accepted.len() as f64 / WINDOW.as_secs_f64() * 0.97
        } else if window >= Duration::from_millis(200) && !p.accepted.is_empty() {
            p.accepted.len() as f64 / window.as_secs_f64() * 0.97
        } else {
            // Too little to measure: halve whatever we were doing (unpaced
            // with nothing accepted yet: start from a request per slot per
            // second, rather than from nothing).
            let measured = p.accepted.len() as f64 / window.as_secs_f64().max(0.05);
            p.rate.unwrap_or(measured.max(2.0 * self.slots as f64)) * 0.5
        };
        p.since = Some(now);
        p.accepted.clear();
        let new = new.max(0.5);
        p.rate = Some(p.cap.map_or(new, |c| new.min(c)));
        p.last_change = now;
        p.last_decrease = Some(now);
        p.decreases += 1;
        let gap = Duration::from_secs_f64(1.0 / new);
        if p.next < now + gap {
            p.next = now + gap;
        }
    }

    /// The current pace in requests per second (None: unpaced).
    pub async fn rate(&self) -> Option<f64> {
        self.pace.lock().await.rate
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn a_429_paces_requests_just_under_the_accepted_rate() {
        let l = Limiter::new(4, None);
        // 100 requests accepted over one second, then a 429.
        for _ in 0..100 {
            drop(l.acquire().await);
            l.accepted().await;
            tokio::time::advance(Duration::from_millis(10)).await;
        }
        l.throttled().await;
        let r = l.rate().await.unwrap();
        assert!((90.0..=100.0).contains(&r), "{r}");
        // A burst of 429s from requests already in flight counts once.
        l.throttled().await;
        assert_eq!(l.rate().await, Some(r));
        // Then the pace spaces requests and creeps back up.
        let t = Instant::now();
        for _ in 0..50 {
            drop(l.acquire().await);
        }
        let spent = t.elapsed().as_secs_f64();
        assert!(spent >= 49.0 / r * 0.99, "{spent}");
        tokio::time::advance(Duration::from_secs(2)).await;
        drop(l.acquire().await);
        assert!(l.rate().await.unwrap() > r);
    }

    #[tokio::test(start_paused = true)]
    async fn turns_handed_out_before_a_429_are_taken_again_at_the_new_pace() {
        let l = Arc::new(Limiter::new(64, Some(100.0)));
        // 40 requests queue at 100/s: turns up to 390 ms ahead.
        let t = Instant::now();
        let waiters: Vec<_> = (0..40)
            .map(|_| {
                let l = l.clone();
                tokio::spawn(async move {
                    drop(l.acquire().await);
                    Instant::now()
                })
            })
            .collect();
        tokio::task::yield_now().await;
        // A 429 at once, with nothing measured: the pace halves to 50/s, and
        // the queued turns follow it instead of firing at 100/s.
        l.throttled().await;
        assert_eq!(l.rate().await, Some(50.0));
        let mut done = Vec::new();
        for w in waiters {
            done.push(w.await.unwrap());
        }
        done.sort();
        let spent = done[39].duration_since(t).as_secs_f64();
        assert!(spent >= 39.0 / 50.0, "the last request started after {spent} s");
    }

    #[tokio::test(start_paused = true)]
    async fn a_429_before_anything_was_accepted_does_not_stall_the_job() {
        let l = Limiter::new(8, None);
        l.throttled().await;
        assert_eq!(l.rate().await, Some(8.0));
    }

    #[tokio::test(start_paused = true)]
    async fn the_configured_bound_is_never_exceeded() {
        let l = Limiter::new(4, Some(10.0));
        let t = Instant::now();
        for _ in 0..21 {
            drop(l.acquire().await);
        }
        assert!(t.elapsed() >= Duration::from_secs(2));
        tokio::time::advance(Duration::from_secs(30)).await;
        drop(l.acquire().await);
        assert_eq!(l.rate().await, Some(10.0));
    }
}
