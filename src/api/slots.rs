//! The client's concurrency slots: first come, first served until told
//! otherwise ([`Slots::by_priority`], once a pass has started its last
//! unit), then by the work the waiter has left.
//!
//! Each unit pages one request at a time, and more units page at once than
//! there are slots (see `units_in_flight`). Served in arrival order, every
//! unit in flight advances at the same pace, so the units of the last wave
//! finish at different times, as their page counts differ, and slots stand
//! idle while the longest ones end the job. Served by the most requests
//! left first (the longest-remaining-work rule, which keeps every slot busy
//! as long as any unit's chain is shorter than what is left of the job),
//! the last units finish together.
//!
//! Invariants: at most `n` [`Slot`]s exist at once; a slot released while
//! someone waits goes to a waiter, never to nobody: to the one that has
//! waited longest if any has waited [`MAX_WAIT`] (so no request waits on
//! others' priority for much longer, whatever the units' sizes, and none
//! runs out of its time budget in the queue), else to the one with the
//! highest priority while priorities count (ties, and otherwise: the one
//! that asked first); a waiter that gave
//! up (its future dropped) is skipped, and a slot handed to a waiter that
//! then gives up returns when the channel holding it drops. Requests that
//! are not a unit's pages (a chain's head, a token) ask with [`URGENT`]:
//! they are few and others wait on them. The waiters are few (one a unit
//! in flight), so each release looks at all of them.

use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::oneshot;
use tokio::time::Instant;

/// The priority of a request that is not one of a unit's pages.
pub(crate) const URGENT: u64 = u64::MAX;

/// A waiter that has waited this long goes before any priority.
pub(crate) const MAX_WAIT: Duration = Duration::from_secs(2);

/// The slots of one client.
#[derive(Debug)]
pub(crate) struct Slots {
    inner: Mutex<Inner>,
}

#[derive(Debug)]
struct Inner {
    free: usize,
    waiting: Vec<Waiter>,
    asked: u64,
    /// Whether priorities count (else first come, first served, but
    /// [`URGENT`] first): decided when a slot is handed out, so requests
    /// that asked before the order changed are served by the new one.
    by_priority: bool,
}

#[derive(Debug)]
struct Waiter {
    priority: u64,
    /// Order of asking: earlier first among equal priorities.
    order: u64,
    since: Instant,
    give: oneshot::Sender<Slot>,
}

impl Inner {
    /// The waiter to serve next (see the module doc), removed.
    fn next(&mut self) -> Option<Waiter> {
        let now = Instant::now();
        // Aged waiters first, the longest waiting of them (the earliest to
        // ask); then the highest priority, then the earliest to ask.
        let by_priority = self.by_priority;
        let key = |w: &Waiter| {
            let aged = now.duration_since(w.since) >= MAX_WAIT;
            let priority = match w.priority {
                _ if aged => 0,
                URGENT => URGENT,
                p if by_priority => p,
                _ => 0,
            };
            (aged, priority, std::cmp::Reverse(w.order))
        };
        let best = (0..self.waiting.len()).max_by_key(|i| key(&self.waiting[*i]))?;
        Some(self.waiting.swap_remove(best))
    }
}

/// One slot, given back when dropped.
#[derive(Debug)]
pub struct Slot {
    slots: Option<Arc<Slots>>,
}

impl Drop for Slot {
    fn drop(&mut self) {
        if let Some(s) = self.slots.take() {
            Slots::release(s);
        }
    }
}

impl Slots {
    /// `n` slots (at least one), first come, first served until
    /// [`Slots::by_priority`].
    pub(crate) fn new(n: usize) -> Arc<Slots> {
        Arc::new(Slots {
            inner: Mutex::new(Inner {
                free: n.max(1),
                waiting: Vec::new(),
                asked: 0,
                // Until told: see `Limiter::order_by_work_left`.
                by_priority: false,
            }),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether priorities count when a slot is handed out (else first
    /// come, first served, but [`URGENT`] first).
    pub(crate) fn by_priority(&self, on: bool) {
        self.lock().by_priority = on;
    }

    /// A slot, once one is free and no waiter with a higher `priority`
    /// (requests left) is before this one; `since`: when the request first
    /// asked (for [`MAX_WAIT`]).
    pub(crate) async fn acquire(self: &Arc<Self>, priority: u64, since: Instant) -> Slot {
        loop {
            let taken = {
                let mut g = self.lock();
                if g.free > 0 {
                    g.free -= 1;
                    None
                } else {
                    let (give, taken) = oneshot::channel();
                    g.asked += 1;
                    let order = g.asked;
                    g.waiting.push(Waiter {
                        priority,
                        order,
                        since,
                        give,
                    });
                    Some(taken)
                }
            };
            let Some(taken) = taken else {
                return Slot { slots: Some(self.clone()) };
            };
            // A sender is dropped unsent only with the slots themselves,
            // which this holds: ask again rather than fail.
            if let Ok(slot) = taken.await {
                return slot;
            }
        }
    }

    /// The slots free now.
    #[cfg(test)]
    fn free(&self) -> usize {
        self.lock().free
    }

    /// Hands a released slot to the next waiter ([`Inner::next`]) still
    /// waiting, or frees it.
    fn release(slots: Arc<Slots>) {
        let this = slots.clone();
        let mut g = this.lock();
        let mut slot = Slot { slots: Some(slots) };
        while let Some(w) = g.next() {
            match w.give.send(slot) {
                Ok(()) => return,
                Err(back) => slot = back,
            }
        }
        g.free += 1;
        // Freed, not given back a second time.
        slot.slots = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn a_freed_slot_goes_to_the_waiter_with_the_most_left_then_the_first_to_ask() {
        let s = Slots::new(1);
        s.by_priority(true);
        let held = s.acquire(0, Instant::now()).await;
        let order = Arc::new(Mutex::new(Vec::new()));
        let mut tasks = Vec::new();
        for (name, priority) in [("a", 5u64), ("b", 9), ("c", 5), ("d", 1)] {
            let (s, order) = (s.clone(), order.clone());
            tasks.push(tokio::spawn(async move {
                let slot = s.acquire(priority, Instant::now()).await;
                order.lock().unwrap().push(name);
                tokio::time::sleep(Duration::from_millis(2)).await;
                drop(slot);
            }));
            // Asked in this order.
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        drop(held);
        for t in tasks {
            t.await.unwrap();
        }
        assert_eq!(*order.lock().unwrap(), ["b", "a", "c", "d"]);
        assert_eq!(s.free(), 1);
    }

    #[tokio::test(start_paused = true)]
    async fn a_waiter_of_low_priority_waits_no_longer_than_max_wait_behind_others() {
        let s = Slots::new(1);
        s.by_priority(true);
        let held = s.acquire(0, Instant::now()).await;
        let asked = Instant::now();
        let starved = tokio::spawn({
            let s = s.clone();
            async move {
                drop(s.acquire(1, Instant::now()).await);
                Instant::now()
            }
        });
        tokio::time::sleep(Duration::from_millis(1)).await;
        // Others with more left keep asking, each holding the slot 50 ms.
        let others = tokio::spawn({
            let s = s.clone();
            async move {
                for _ in 0..200 {
                    let s = s.clone();
                    tokio::spawn(async move {
                        let slot = s.acquire(100, Instant::now()).await;
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        drop(slot);
                    });
                    tokio::time::sleep(Duration::from_millis(25)).await;
                }
            }
        });
        // One of them is waiting too when the slot comes free.
        tokio::time::sleep(Duration::from_millis(30)).await;
        drop(held);
        let waited = starved.await.unwrap().duration_since(asked);
        others.abort();
        assert!(waited >= MAX_WAIT, "served after {waited:?}, before others with more left");
        assert!(waited < MAX_WAIT + Duration::from_millis(200), "starved for {waited:?}");
    }

    #[tokio::test]
    async fn a_waiter_that_gives_up_is_skipped_and_no_slot_is_lost() {
        let s = Slots::new(2);
        s.by_priority(true);
        let (a, b) = (s.acquire(0, Instant::now()).await, s.acquire(0, Instant::now()).await);
        // Gives up while waiting.
        let gave_up = tokio::time::timeout(Duration::from_millis(20), s.acquire(7, Instant::now())).await;
        assert!(gave_up.is_err());
        let later = tokio::spawn({
            let s = s.clone();
            async move { s.acquire(1, Instant::now()).await }
        });
        tokio::time::sleep(Duration::from_millis(10)).await;
        drop(a);
        let c = tokio::time::timeout(Duration::from_secs(5), later).await.unwrap().unwrap();
        drop((b, c));
        assert_eq!(s.free(), 2);
        // Handed to a waiter whose future is then dropped unpolled: the
        // slot comes back with the channel.
        let held = s.acquire(0, Instant::now()).await;
        let other = s.acquire(0, Instant::now()).await;
        let mut waiting = Box::pin(s.acquire(3, Instant::now()));
        assert!(futures::poll!(&mut waiting).is_pending());
        drop(held);
        drop(waiting);
        drop(other);
        assert_eq!(s.free(), 2);
        let all: Vec<Slot> = vec![s.acquire(0, Instant::now()).await, s.acquire(0, Instant::now()).await];
        assert_eq!(s.free(), 0);
        drop(all);
        assert_eq!(s.free(), 2);
    }
}
