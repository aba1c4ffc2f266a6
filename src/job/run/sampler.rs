//! Sampling a running job into its series ([`super::series`]): the run's
//! counters now, taken every interval the series asks for by a task the
//! run holds, and once more as it ends.

use super::series::{FIRST_EVERY, Sample, Series};
use super::setup::Shared;
use std::sync::Arc;
use std::sync::atomic::Ordering;

impl Shared {
    /// The run's counters now.
    pub(crate) fn sample(&self) -> Sample {
        let mut s = Sample {
            t: self.started.elapsed().as_secs_f64(),
            pace: self.client.pace(),
            ..Sample::default()
        };
        for p in &self.progress {
            s.rows += p.rows.load(Ordering::Relaxed);
            s.units_done += p.units_done.load(Ordering::Relaxed);
        }
        for st in self.stats.values() {
            s.requests += st.requests.load(Ordering::Relaxed);
            s.retries += st.retries.load(Ordering::Relaxed);
            s.throttled += st.throttled.load(Ordering::Relaxed);
            s.server_errors += st.server_errors.load(Ordering::Relaxed);
        }
        s
    }

    /// Takes a sample into the run's series now.
    pub(crate) fn take_sample(&self) -> bool {
        let s = self.sample();
        self.series.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push(s)
    }

    /// Takes the run's last sample ([`Series::push_last`]).
    pub(crate) fn take_last_sample(&self) {
        let s = self.sample();
        self.series.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push_last(s);
    }

    /// The series as it stands.
    pub(crate) fn series(&self) -> Series {
        self.series.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
    }
}

/// The task sampling a run; dropping it stops it (also when the run's
/// future is dropped half way).
pub(crate) struct Sampler(tokio::task::JoinHandle<()>);

impl Drop for Sampler {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Samples `shared` until the returned [`Sampler`] is dropped (the run's
/// end takes the last sample itself).
pub(crate) fn spawn_sampler(shared: Arc<Shared>) -> Sampler {
    Sampler(tokio::spawn(async move {
        let mut every = FIRST_EVERY;
        loop {
            tokio::time::sleep(every).await;
            if shared.take_sample() {
                every *= 2;
            }
        }
    }))
}
