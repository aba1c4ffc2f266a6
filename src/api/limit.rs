//! The client's request bounds: a global concurrency limit (slots handed
//! to the request with the most work left behind it, [`super::slots`])
//! and a pace (requests per second) that finds the service's quota and
//! shares it with whoever else spends it.
//!
//! # The algorithm
//!
//! The pace starts at `requests_per_second` (or unpaced) and moves on two
//! signals: a 429, and a quiet interval with the pace binding.
//!
//! - **Decrease**, on a 429 for a request sent at the current pace (one
//!   sent before the last decrease says nothing new, so a volley of 429s
//!   from requests already in flight counts once), at most one per
//!   [`MIN_GAP`]:
//!   - once the client has sent for a whole [`WINDOW`], to [`BELOW`] × the
//!     rate the service accepted over the last [`WINDOW`] (never above the
//!     pace): while a client over-drives a quota, that rate is its share
//!     of the quota (a token bucket refills at the quota whatever is asked
//!     of it; shared, each client's acceptances are its share);
//!   - in the first [`WINDOW`] (a sub-second sample, never sized from): to
//!     half the pace — or, unpaced, to what was accepted so far spread
//!     over a whole [`WINDOW`] (a quota's burst is commonly a second's
//!     worth), but no less than [`START_PER_SLOT`] requests a second per
//!     slot, since an empty sample (a burst another job spent) says
//!     nothing about the quota.
//! - **Increase**, once [`QUIET`] has passed since the pace last moved, with
//!   no 429 meanwhile and requests waiting for their turn (the pace, not
//!   latency or work, was the bound): + [`FIRST_STEP`] requests a second,
//!   each consecutive step double the last (+1, +2, +4, … /s, never more
//!   than doubling the pace), so a pace far under the quota finds it in
//!   seconds and one near it probes gently; a decrease starts the steps
//!   over. The steps are the same for every client whatever its share
//!   (additive, not a percentage), so clients sharing a quota converge on
//!   equal shares: with multiplicative steps the largest share grows
//!   fastest, and a shard left with a small one ends the job late. Until a
//!   decrease has been
//!   sized from a whole [`WINDOW`] (a start from a guess), the pace
//!   doubles every [`RAMP_QUIET`] instead. The pace never exceeds the
//!   user's bound, nor twice the rate accepted over the last [`WINDOW`].
//!
//! Several clients on one quota each measure their own acceptances when
//! they over-drive it, so their paces after a decrease add up to
//! [`BELOW`] of it, and each then probes up again by equal steps:
//! together they hold the quota with few 429s, and their shares even out.
//!
//! Requests are spaced by the pace. A request still waiting for the time
//! of a turn handed out before a decrease takes a new one at once (one
//! waiting for a concurrency slot, when it gets the slot), so throttled
//! callers never stampede back together. The new pace starts [`CUSHION`]
//! and a gap after the decrease, the same for every client, not after
//! the stale turns' times: that pause would last the turns waiting divided
//! by the old pace, longest for the smallest share, and the next decrease,
//! sized from what the client accepted over a window that holds it, would
//! cut the smallest share most, so shards of one job would drift apart
//! and the last end late. A throttled request itself waits its `Retry-After`
//! before its next attempt.

use super::slots::{Slot, Slots, URGENT};
use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use tokio::sync::Mutex;
use tokio::time::Instant;

/// The span of acceptances a decrease is sized from.
pub(crate) const WINDOW: Duration = Duration::from_secs(1);
/// Fewest time between two decreases.
pub(crate) const MIN_GAP: Duration = Duration::from_millis(250);
/// A decrease sets the pace this far under the accepted rate.
pub(crate) const BELOW: f64 = 0.97;
/// Quiet time (no 429) before the pace steps up.
pub(crate) const QUIET: Duration = Duration::from_secs(1);
/// Quiet time before the pace doubles, while ramping from a guess.
pub(crate) const RAMP_QUIET: Duration = Duration::from_millis(500);
/// The first step up after a decrease, in requests a second.
pub(crate) const FIRST_STEP: f64 = 1.0;
/// After a decrease, the new pace starts this long (and a gap) later: a
/// token-bucket quota refills a few requests' worth meanwhile (its burst
/// holds them, so they are spent later, not lost), and the requests that
/// follow do not meet an empty bucket at once. The same for every client,
/// whatever its share (`benches/pacing.py`: docs/performance.md).
pub(crate) const CUSHION: Duration = Duration::from_millis(100);
/// Requests a second per concurrency slot a guess starts from.
pub(crate) const START_PER_SLOT: f64 = 2.0;

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
    /// The first request.
    since: Option<Instant>,
    /// Completion times of accepted requests, at most a [`WINDOW`] back.
    accepted: VecDeque<Instant>,
    /// Decreases so far: turns handed out before the latest one are stale.
    decreases: u64,
    /// The next step up, in requests a second.
    step: f64,
    /// Whether the pace was last set from a full window of acceptances.
    measured: bool,
    /// When a request last waited for its turn (the pace binding).
    last_wait: Option<Instant>,
}

impl Pace {
    fn forget_old(&mut self, now: Instant) {
        while self.accepted.front().is_some_and(|t| now.duration_since(*t) > WINDOW) {
            self.accepted.pop_front();
        }
    }

    fn set(&mut self, rate: f64, now: Instant) {
        let rate = self.cap.map_or(rate, |c| rate.min(c)).max(0.5);
        self.rate = Some(rate);
        self.last_change = now;
    }

    /// A step up, if the pace has been quiet and binding long enough.
    fn step_up(&mut self, now: Instant) {
        let Some(rate) = self.rate else { return };
        let quiet = if self.measured { QUIET } else { RAMP_QUIET };
        if now.duration_since(self.last_change) < quiet || self.last_wait.is_none_or(|t| now.duration_since(t) >= quiet) {
            return;
        }
        self.forget_old(now);
        // Never far above what the service has been taking lately: a pace
        // that grew while something else was the bound (latency, work, or
        // turns handed out before a decrease) would over-drive later.
        let span = (quiet * 4).min(WINDOW);
        let recent = self.accepted.iter().rev().take_while(|t| now.duration_since(**t) <= span).count();
        let lately = recent as f64 / span.as_secs_f64();
        let step = if self.measured { self.step.min(rate) } else { rate };
        let up = (rate + step).min((2.0 * lately).max(rate));
        self.set(up, now);
        let now_rate = self.rate.unwrap_or(up);
        if now_rate > rate {
            tracing::debug!(target: "chainetl::pace", "pace up to {now_rate:.1}/s (accepted lately {lately:.1}/s)");
        }
        // Only a step taken whole grows the next: one held back (by the
        // recent acceptances or the user's bound) would otherwise come out
        // later as a leap far past the quota.
        if now_rate >= rate + step * 0.999 {
            self.step *= 2.0;
        }
    }
}

/// Shared pacing state.
#[derive(Debug)]
pub struct Limiter {
    permits: Arc<Slots>,
    /// Requests in flight at most.
    slots: usize,
    pace: Mutex<Pace>,
    /// Woken at each decrease: requests waiting for a turn handed out
    /// before it take a new one at once, instead of first sleeping to the
    /// old turn's time.
    decreased: tokio::sync::Notify,
    /// The pace's rate as f64 bits (0: unpaced), for readers that cannot
    /// wait for the lock (metrics, the run's series).
    shown: AtomicU64,
}

/// A turn to send a request: the concurrency slot, held for the exchange,
/// and the pace's generation it was given in.
#[derive(Debug)]
pub struct Turn {
    /// The concurrency slot.
    pub permit: Slot,
    /// Decreases of the pace before this turn.
    pub generation: u64,
}

impl Limiter {
    /// `max_concurrency` requests in flight; at most `rps` started per second.
    pub fn new(max_concurrency: usize, rps: Option<f64>) -> Limiter {
        let cap = rps.filter(|r| *r > 0.0);
        let now = Instant::now();
        Limiter {
            permits: Slots::new(max_concurrency),
            slots: max_concurrency.max(1),
            shown: AtomicU64::new(cap.map_or(0, f64::to_bits)),
            decreased: tokio::sync::Notify::new(),
            pace: Mutex::new(Pace {
                rate: cap,
                cap,
                next: now,
                last_change: now,
                last_decrease: None,
                since: None,
                accepted: VecDeque::new(),
                decreases: 0,
                step: FIRST_STEP,
                measured: false,
                last_wait: None,
            }),
        }
    }

    /// Waits for this request's turn in the pace, then for a concurrency
    /// slot, as a request that is not one of a unit's pages.
    pub async fn acquire(&self) -> Turn {
        self.acquire_for(URGENT).await
    }

    /// Waits for this request's turn in the pace, then for a concurrency
    /// slot: once [`Limiter::order_by_work_left`] says so, before requests
    /// with less than `left` (the requests its unit has left, this one
    /// included) behind them.
    pub async fn acquire_for(&self, left: u64) -> Turn {
        let asked = Instant::now();
        loop {
            // Listening before the turn is taken, so no decrease after it
            // goes unheard.
            let decreased = self.decreased.notified();
            tokio::pin!(decreased);
            decreased.as_mut().enable();
            let (slot, generation) = self.turn().await;
            let stale = loop {
                tokio::select! {
                    () = tokio::time::sleep_until(slot) => break false,
                    () = &mut decreased => {
                        // Heard a decrease, maybe one this turn was given
                        // after: listen again before looking, so a later
                        // one is heard too.
                        decreased.set(self.decreased.notified());
                        decreased.as_mut().enable();
                        if self.pace.lock().await.decreases != generation {
                            break true;
                        }
                    }
                }
            };
            if stale {
                // Every turn handed out before a decrease is stale: the
                // new pace starts at once, and this request takes its
                // place in it now, not at the old turn's time.
                continue;
            }
            let permit = self.permits.acquire(left, asked).await;
            // A turn handed out at the pace before a 429 would over-drive
            // the quota: queue again at the new pace.
            if self.pace.lock().await.decreases == generation {
                return Turn { permit, generation };
            }
        }
    }

    /// Whether a free slot goes to the waiting request with the most work
    /// left behind it (`on`) or to the first to ask. While units are still
    /// to start, first come, first served lets units finish, and the next
    /// ones start, early; once every unit has started, the most work left
    /// first has the last ones finish together instead of leaving slots
    /// idle while the longest of them end the pass.
    pub fn order_by_work_left(&self, on: bool) {
        self.permits.by_priority(on);
    }

    /// The next start time in the pace, and the pace's generation.
    async fn turn(&self) -> (Instant, u64) {
        let mut p = self.pace.lock().await;
        let now = Instant::now();
        p.since.get_or_insert(now);
        p.step_up(now);
        self.show(&p);
        let slot = p.next.max(now);
        if slot > now {
            p.last_wait = Some(now);
        }
        p.next = slot + p.rate.map_or(Duration::ZERO, |r| Duration::from_secs_f64(1.0 / r));
        (slot, p.decreases)
    }

    /// Records a request the service accepted.
    pub async fn accepted(&self) {
        let mut p = self.pace.lock().await;
        let now = Instant::now();
        p.accepted.push_back(now);
        p.forget_old(now);
    }

    /// A 429 for a request sent in pace generation `generation`: slow down
    /// to just under what the service accepts.
    pub async fn throttled(&self, generation: u64) {
        let mut p = self.pace.lock().await;
        let now = Instant::now();
        if generation < p.decreases || p.last_decrease.is_some_and(|t| now.duration_since(t) < MIN_GAP) {
            return;
        }
        p.forget_old(now);
        let sample = p.since.map_or(Duration::ZERO, |f| now.duration_since(f));
        let accepted = p.accepted.len() as f64;
        let (new, measured) = if sample >= WINDOW && accepted > 0.0 {
            let share = accepted / WINDOW.as_secs_f64() * BELOW;
            (p.rate.map_or(share, |r| share.min(r)), true)
        } else {
            match p.rate {
                Some(r) => (r * 0.5, p.measured),
                None => {
                    // Unpaced: what was accepted so far, over a whole
                    // window, is a fair first estimate where a burst was
                    // there to spend; a spent burst accepts next to
                    // nothing, which says nothing, so the pace starts from
                    // a guess and ramps.
                    let seen = accepted / WINDOW.as_secs_f64() * BELOW;
                    let floor = START_PER_SLOT * self.slots as f64;
                    (seen.max(floor), seen >= floor)
                }
            }
        };
        p.set(new, now);
        self.show(&p);
        tracing::debug!(target: "chainetl::pace", "429: pace down to {:.1}/s (accepted {accepted} in the last {:.2} s)", p.rate.unwrap_or(new), sample.min(WINDOW).as_secs_f64());
        p.measured = measured;
        p.step = FIRST_STEP;
        p.last_decrease = Some(now);
        p.decreases += 1;
        // The turns handed out so far are stale and taken again
        // (`acquire_for`): the new pace's first turn is a cushion and a
        // gap from now, not after them.
        p.next = now + CUSHION + Duration::from_secs_f64(1.0 / p.rate.unwrap_or(new));
        drop(p);
        self.decreased.notify_waiters();
    }

    /// The current pace in requests per second (None: unpaced).
    pub async fn rate(&self) -> Option<f64> {
        self.pace.lock().await.rate
    }

    /// The pace as last set, without waiting for the lock.
    pub fn rate_now(&self) -> Option<f64> {
        Some(f64::from_bits(self.shown.load(Ordering::Relaxed))).filter(|r| *r > 0.0)
    }

    fn show(&self, p: &Pace) {
        self.shown.store(p.rate.map_or(0, f64::to_bits), Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests;
