//! The pace against a simulated quota, in paused (virtual) time: a token
//! bucket like the service's, units that each send one request at a time
//! and wait `Retry-After` (one second) after a 429.

use super::*;
use std::sync::atomic::{AtomicU64, Ordering};

/// A quota of `rate` requests a second, with a burst of a second's worth.
struct Quota {
    bucket: std::sync::Mutex<(f64, Instant)>,
    rate: std::sync::Mutex<f64>,
}

impl Quota {
    fn new(rate: f64, spent: bool) -> Arc<Quota> {
        Arc::new(Quota {
            bucket: std::sync::Mutex::new((if spent { 0.0 } else { rate }, Instant::now())),
            rate: std::sync::Mutex::new(rate),
        })
    }

    fn take(&self) -> bool {
        let rate = *self.rate.lock().unwrap();
        let mut b = self.bucket.lock().unwrap();
        let now = Instant::now();
        b.0 = (b.0 + now.duration_since(b.1).as_secs_f64() * rate).min(rate);
        b.1 = now;
        if b.0 >= 1.0 {
            b.0 -= 1.0;
            true
        } else {
            false
        }
    }
}

/// Accepted and throttled requests of one client, counted from `from`.
#[derive(Default)]
struct Tally {
    accepted: AtomicU64,
    throttled: AtomicU64,
}

/// One request of a unit on `quota`: its turn, 5 ms on the wire, then the
/// answer told to the limiter (a 429 waits its one-second `Retry-After`).
/// Whether it was accepted, and when it was answered.
async fn send(l: &Limiter, q: &Quota) -> (bool, Instant) {
    let turn = l.acquire().await;
    tokio::time::sleep(Duration::from_millis(5)).await;
    let ok = q.take();
    drop(turn.permit);
    let at = Instant::now();
    if ok {
        l.accepted().await;
    } else {
        l.throttled(turn.generation).await;
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    (ok, at)
}

/// A client of `units` units on `quota`, counting after `from`, until `until`.
fn client(quota: Arc<Quota>, units: usize, from: Instant, until: Instant) -> (Arc<Limiter>, Arc<Tally>) {
    let l = Arc::new(Limiter::new(16, None));
    let tally = Arc::new(Tally::default());
    for _ in 0..units {
        let (l, q, t) = (l.clone(), quota.clone(), tally.clone());
        tokio::spawn(async move {
            while Instant::now() < until {
                let (ok, at) = send(&l, &q).await;
                if at >= from {
                    let counter = if ok { &t.accepted } else { &t.throttled };
                    counter.fetch_add(1, Ordering::Relaxed);
                }
            }
        });
    }
    (l, tally)
}

/// (share of the quota, share of requests answered 429) over `secs`.
fn shares(tallies: &[Arc<Tally>], rate: f64, secs: f64) -> (f64, f64) {
    let a: u64 = tallies.iter().map(|t| t.accepted.load(Ordering::Relaxed)).sum();
    let t: u64 = tallies.iter().map(|t| t.throttled.load(Ordering::Relaxed)).sum();
    (a as f64 / (rate * secs), t as f64 / (a + t).max(1) as f64)
}

#[tokio::test(start_paused = true)]
async fn after_a_burst_another_job_spent_the_pace_finds_the_quota_within_seconds() {
    let quota = Quota::new(100.0, true);
    let start = Instant::now();
    let (_l, tally) = client(quota, 16, start + Duration::from_secs(5), start + Duration::from_secs(25));
    tokio::time::sleep(Duration::from_secs(26)).await;
    let (share, throttled) = shares(&[tally], 100.0, 20.0);
    assert!(share >= 0.9, "{share:.3} of the quota from the 5th second on");
    assert!(throttled <= 0.02, "{throttled:.4} of requests answered 429");
}

#[tokio::test(start_paused = true)]
async fn a_fresh_start_holds_the_quota_with_few_429s() {
    let quota = Quota::new(100.0, false);
    let start = Instant::now();
    let (_l, tally) = client(quota, 16, start, start + Duration::from_secs(20));
    tokio::time::sleep(Duration::from_secs(21)).await;
    let (share, throttled) = shares(&[tally], 100.0, 20.0);
    assert!(share >= 0.9, "{share:.3} of the quota");
    // The first volley (every slot in flight when the burst runs out) and
    // the probes up.
    assert!(throttled <= 0.02, "{throttled:.4} of requests answered 429");
}

#[tokio::test(start_paused = true)]
async fn three_clients_on_one_quota_hold_it_together() {
    let quota = Quota::new(100.0, false);
    let start = Instant::now();
    let (from, until) = (start + Duration::from_secs(5), start + Duration::from_secs(35));
    let tallies: Vec<_> = (0..3).map(|_| client(quota.clone(), 16, from, until).1).collect();
    tokio::time::sleep(Duration::from_secs(36)).await;
    let (share, throttled) = shares(&tallies, 100.0, 30.0);
    assert!(share >= 0.85, "{share:.3} of the quota together");
    assert!(throttled <= 0.05, "{throttled:.4} of requests answered 429");
}

#[tokio::test(start_paused = true)]
async fn the_pace_climbs_back_when_the_quota_grows() {
    let quota = Quota::new(30.0, false);
    let start = Instant::now();
    let (l, tally) = client(quota.clone(), 16, start + Duration::from_secs(15), start + Duration::from_secs(30));
    tokio::time::sleep(Duration::from_secs(10)).await;
    assert!(l.rate().await.is_some_and(|r| r < 40.0), "{:?}", l.rate().await);
    *quota.rate.lock().unwrap() = 100.0;
    tokio::time::sleep(Duration::from_secs(21)).await;
    let (share, _) = shares(&[tally], 100.0, 15.0);
    assert!(share >= 0.85, "{share:.3} of the grown quota, 5 s after it grew");
}

#[tokio::test(start_paused = true)]
async fn a_volley_of_429s_from_requests_already_in_flight_counts_once() {
    let l = Limiter::new(4, None);
    let turns: Vec<Turn> = vec![l.acquire().await, l.acquire().await, l.acquire().await];
    for _ in 0..100 {
        l.accepted().await;
    }
    tokio::time::advance(Duration::from_secs(1)).await;
    l.throttled(turns[0].generation).await;
    let r = l.rate().await.unwrap();
    assert!((90.0..=100.0).contains(&r), "{r}");
    // The same generation, later than the gap: still stale.
    tokio::time::advance(Duration::from_secs(1)).await;
    l.throttled(turns[1].generation).await;
    l.throttled(turns[2].generation).await;
    assert_eq!(l.rate().await, Some(r));
}

/// 40 requests queued at 100/s (turns up to 390 ms ahead), then a 429
/// at once, with nothing measured: the pace halves to 50/s. When each
/// request started, in seconds from the queueing, earliest first.
async fn forty_queued_then_a_429() -> Vec<f64> {
    let l = Arc::new(Limiter::new(64, Some(100.0)));
    let t = Instant::now();
    let waiters: Vec<_> = (0..40)
        .map(|_| {
            let l = l.clone();
            tokio::spawn(async move {
                drop(l.acquire().await);
                Instant::now().duration_since(t).as_secs_f64()
            })
        })
        .collect();
    tokio::task::yield_now().await;
    l.throttled(0).await;
    assert_eq!(l.rate().await, Some(50.0));
    let mut started = Vec::new();
    for w in waiters {
        started.push(w.await.unwrap());
    }
    started.sort_by(f64::total_cmp);
    started
}

#[tokio::test(start_paused = true)]
async fn turns_handed_out_before_a_429_are_taken_again_at_the_new_pace() {
    // The queued turns follow the new pace instead of firing at 100/s.
    let started = forty_queued_then_a_429().await;
    assert!(started[39] >= 39.0 / 50.0, "the last request started after {} s", started[39]);
}

#[tokio::test(start_paused = true)]
async fn after_a_decrease_the_new_pace_starts_after_the_cushion_not_after_the_stale_turns() {
    let started = forty_queued_then_a_429().await;
    // At 50/s from the 429 on: the second request the cushion and a gap
    // (20 ms) after it, the last 38 gaps after that, with no idle stretch
    // where the stale turns were (waiting them out would start the second
    // at 0.4 s, later the slower the pace).
    let first = CUSHION.as_secs_f64() + 0.02;
    assert!(
        (started[1] - first).abs() <= 0.001,
        "the second request started after {} s",
        started[1]
    );
    assert!(
        started[39] <= first + 38.0 / 50.0 + 0.001,
        "the last request started after {} s",
        started[39]
    );
    for w in started.windows(2).skip(1) {
        let gap = w[1] - w[0];
        assert!(
            (0.019..=0.021).contains(&gap),
            "{gap} s from {} s to {} s, not the new pace's gap",
            w[0],
            w[1]
        );
    }
}

#[tokio::test(start_paused = true)]
async fn a_429_before_anything_was_accepted_does_not_stall_the_job() {
    let l = Limiter::new(8, None);
    l.throttled(0).await;
    assert_eq!(l.rate().await, Some(16.0));
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

/// A client of `units` units on `quota` with `work` requests to get
/// accepted; returns when it got them all.
async fn job(quota: Arc<Quota>, units: usize, work: u64) -> Instant {
    let l = Arc::new(Limiter::new(16, None));
    let left = Arc::new(AtomicU64::new(work));
    let mut tasks = Vec::new();
    for _ in 0..units {
        let (l, q, left) = (l.clone(), quota.clone(), left.clone());
        tasks.push(tokio::spawn(async move {
            while left.load(Ordering::Relaxed) > 0 {
                if send(&l, &q).await.0 {
                    let _ = left.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1));
                }
            }
        }));
    }
    for t in tasks {
        let _ = t.await;
    }
    Instant::now()
}

#[tokio::test(start_paused = true)]
async fn three_jobs_of_equal_work_on_one_quota_share_it_and_end_together() {
    // The shards of one job: whichever gets the smallest share sets when
    // the whole job ends, so the shares must converge, not just add up.
    for seed in 0..6u64 {
        let quota = Quota::new(100.0, false);
        let start = Instant::now();
        let mut jobs = Vec::new();
        for k in 0..3u64 {
            let q = quota.clone();
            // Starts a few milliseconds apart, as processes do.
            let delay = Duration::from_millis((seed * 11 + k * 17) % 50);
            jobs.push(tokio::spawn(async move {
                tokio::time::sleep(delay).await;
                job(q, 16, 1_000).await
            }));
        }
        let mut ends = Vec::new();
        for j in jobs {
            ends.push(j.await.unwrap().duration_since(start).as_secs_f64());
        }
        let last = ends.iter().cloned().fold(0.0, f64::max);
        assert!(
            3_000.0 / last / 100.0 >= 0.85,
            "seed {seed}: ended at {ends:?} s: {:.3} of the quota",
            3_000.0 / last / 100.0
        );
    }
}

/// Which of the waiting requests gets the one slot freed, in which order:
/// first come, first served until the limiter is told every unit has
/// started, then the most work left first; a request that is not a unit's
/// page goes first either way.
async fn served_in(by_work_left: bool, switched_while_waiting: bool) -> Vec<u64> {
    let l = Arc::new(Limiter::new(1, None));
    l.order_by_work_left(by_work_left != switched_while_waiting);
    let held = l.acquire_for(1).await;
    let order = Arc::new(std::sync::Mutex::new(Vec::new()));
    let mut tasks = Vec::new();
    for left in [3, 50, 7, super::URGENT, 20] {
        let (l, order) = (l.clone(), order.clone());
        tasks.push(tokio::spawn(async move {
            let turn = l.acquire_for(left).await;
            order.lock().unwrap().push(left);
            tokio::time::sleep(Duration::from_millis(1)).await;
            drop(turn);
        }));
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    if switched_while_waiting {
        l.order_by_work_left(by_work_left);
    }
    drop(held);
    for t in tasks {
        t.await.unwrap();
    }
    order.lock().unwrap().clone()
}

#[tokio::test(start_paused = true)]
async fn a_free_slot_goes_first_come_first_served_until_every_unit_has_started_then_to_the_most_work_left() {
    assert_eq!(served_in(false, false).await, [super::URGENT, 3, 50, 7, 20]);
    assert_eq!(served_in(true, false).await, [super::URGENT, 50, 20, 7, 3]);
    // The order is the one in force when a slot comes free, for requests
    // that asked before it changed too.
    assert_eq!(served_in(true, true).await, [super::URGENT, 50, 20, 7, 3]);
    assert_eq!(served_in(false, true).await, [super::URGENT, 3, 50, 7, 20]);
}
