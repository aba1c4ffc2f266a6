//! A run's figures over time, kept in the run report (`series`) so that a
//! page can chart rows/s and requests/s beside the pace chainetl settled
//! on ([`Series`]).
//!
//! Bounded: a sample every [`FIRST_EVERY`] at first; when [`MAX_SAMPLES`]
//! are held, every other one is dropped and the interval doubles. So a run
//! of any length keeps about half to all of [`MAX_SAMPLES`] samples (a
//! day-long follow run: one every 4–9 minutes), a few kilobytes of the
//! report. The run's last sample, taken when it ends, replaces the one
//! before it when that is under half an interval old, so no rate is drawn
//! from a sliver of time. Counters are cumulative since the run began, so a dropped
//! sample loses resolution, never a row or a request: a rate is the
//! difference of two samples over their time apart. The pace is the
//! limiter's at the moment of the sample (null: unpaced).
//!
//! Serialised column-wise (each field one array, one entry a sample):
//! `{"every_secs", "t", "rows", "requests", "retries", "throttled",
//! "server_errors", "units_done", "pace"}`.

use serde::{Deserialize, Serialize};
use std::time::Duration;

/// Samples held at most.
pub const MAX_SAMPLES: usize = 240;
/// The interval of the first samples.
pub const FIRST_EVERY: Duration = Duration::from_secs(1);

/// The samples of one run, column-wise. Read back (the report page) with
/// a default for each column, as fields are added to it.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct Series {
    /// Seconds between samples now.
    pub every_secs: f64,
    /// Seconds since the run began.
    pub t: Vec<f64>,
    /// Rows fetched so far.
    pub rows: Vec<u64>,
    /// Requests sent so far (every attempt).
    pub requests: Vec<u64>,
    /// Retried attempts so far.
    pub retries: Vec<u64>,
    /// 429 answers so far.
    pub throttled: Vec<u64>,
    /// 5xx answers so far.
    pub server_errors: Vec<u64>,
    /// Units finished so far.
    pub units_done: Vec<u64>,
    /// The pace (requests a second) at the sample; None: unpaced.
    pub pace: Vec<Option<f64>>,
}

/// One sample, before it joins the columns.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Sample {
    /// Seconds since the run began.
    pub t: f64,
    /// Rows fetched so far.
    pub rows: u64,
    /// Requests so far.
    pub requests: u64,
    /// Retries so far.
    pub retries: u64,
    /// 429s so far.
    pub throttled: u64,
    /// 5xx so far.
    pub server_errors: u64,
    /// Units done so far.
    pub units_done: u64,
    /// The pace.
    pub pace: Option<f64>,
}

impl Series {
    /// An empty series sampled every [`FIRST_EVERY`].
    pub fn new() -> Series {
        Series {
            every_secs: FIRST_EVERY.as_secs_f64(),
            ..Series::default()
        }
    }

    /// Samples held.
    pub fn len(&self) -> usize {
        self.t.len()
    }

    /// Whether no sample is held.
    pub fn is_empty(&self) -> bool {
        self.t.is_empty()
    }

    /// The run's last sample: replaces the newest one (not the first) when
    /// that is less than half an interval older, else is added as [`push`]
    /// adds. Counters are cumulative, so the replaced sample loses nothing.
    ///
    /// [`push`]: Series::push
    pub fn push_last(&mut self, s: Sample) {
        let n = self.len();
        if n >= 2 && s.t - self.t[n - 1] < self.every_secs / 2.0 {
            self.retain(|i| i + 1 < n);
        }
        self.push(s);
    }

    /// Adds `s` (its time to the millisecond, its pace to a hundredth: the
    /// report's size); when [`MAX_SAMPLES`] are held, keeps every other one
    /// (the first and the newest always) and doubles the interval. Returns
    /// whether the interval doubled.
    pub fn push(&mut self, s: Sample) -> bool {
        self.t.push((s.t * 1000.0).round() / 1000.0);
        self.rows.push(s.rows);
        self.requests.push(s.requests);
        self.retries.push(s.retries);
        self.throttled.push(s.throttled);
        self.server_errors.push(s.server_errors);
        self.units_done.push(s.units_done);
        self.pace.push(s.pace.map(|p| (p * 100.0).round() / 100.0));
        if self.len() < MAX_SAMPLES {
            return false;
        }
        let last = self.len() - 1;
        self.retain(|i| i.is_multiple_of(2) || i == last);
        self.every_secs *= 2.0;
        true
    }

    /// Keeps the samples whose index `keep` accepts, in every column alike.
    fn retain(&mut self, keep: impl Fn(usize) -> bool) {
        thin(&mut self.t, &keep);
        thin(&mut self.rows, &keep);
        thin(&mut self.requests, &keep);
        thin(&mut self.retries, &keep);
        thin(&mut self.throttled, &keep);
        thin(&mut self.server_errors, &keep);
        thin(&mut self.units_done, &keep);
        thin(&mut self.pace, &keep);
    }
}

fn thin<T>(v: &mut Vec<T>, keep: impl Fn(usize) -> bool) {
    let mut i = 0;
    v.retain(|_| {
        let k = keep(i);
        i += 1;
        k
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(t: f64) -> Sample {
        Sample {
            t,
            rows: t as u64 * 10,
            requests: t as u64,
            pace: Some(t),
            ..Sample::default()
        }
    }

    #[test]
    fn a_series_stays_bounded_keeps_its_ends_and_doubles_its_interval() {
        let mut s = Series::new();
        let mut doubled = 0;
        for i in 0..100_000 {
            if s.push(at(i as f64)) {
                doubled += 1;
            }
            assert!(s.len() < MAX_SAMPLES, "{} samples after {i}", s.len());
        }
        assert!(s.len() >= MAX_SAMPLES / 2, "{}", s.len());
        assert_eq!(s.t[0], 0.0);
        assert_eq!(*s.t.last().unwrap(), 99_999.0);
        assert_eq!(*s.rows.last().unwrap(), 999_990);
        assert!(s.t.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(s.every_secs, 2f64.powi(doubled));
        assert!(doubled >= 8, "{doubled}");
        // Every column has one entry a sample.
        for n in [
            s.rows.len(),
            s.requests.len(),
            s.retries.len(),
            s.throttled.len(),
            s.units_done.len(),
            s.pace.len(),
        ] {
            assert_eq!(n, s.len());
        }
    }

    #[test]
    fn the_last_sample_replaces_one_taken_a_moment_before() {
        let mut s = Series::new();
        s.push(at(0.0));
        s.push_last(at(0.2));
        assert_eq!(s.t, [0.0, 0.2], "the first sample stays");
        s.push(at(1.0));
        s.push_last(at(1.3));
        assert_eq!(s.t, [0.0, 0.2, 1.3], "a sliver of time is no interval");
        s.push(at(2.3));
        s.push_last(at(3.3));
        assert_eq!(s.t, [0.0, 0.2, 1.3, 2.3, 3.3]);
        assert_eq!(s.rows.len(), 5);
        assert_eq!(s.pace.len(), 5);
        assert_eq!(*s.rows.last().unwrap(), 30);
    }

    #[test]
    fn a_short_run_keeps_every_sample() {
        let mut s = Series::new();
        for i in 0..10 {
            assert!(!s.push(at(i as f64)));
        }
        assert_eq!(s.len(), 10);
        assert_eq!(s.every_secs, 1.0);
    }
}
