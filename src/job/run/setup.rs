//! What a run sets up before its first pass: the client's settings (the
//! API key read from the environment here and nowhere else), the service
//! to talk to (a real one, or the built-in simulator started in-process),
//! and [`Shared`], what every unit task of the run shares.

use super::counters::ExportProgress;
use super::counters::{ExportKey, MarkProgress, Tally};
use crate::api::{Client, ClientConfig, Secret, Stats};
use crate::decode::abi::LogDecoder;
use crate::job::error::RunError;
use crate::plan::Unit;
use crate::sim::{self, SimHandle};
use crate::sink::Sink;
use crate::spec::{BaseUrl, Spec};
use crate::state::StateStore;
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;
use tokio::sync::watch;

/// Client settings from the spec; the key is read from the environment here
/// and nowhere else. The base URL is set by [`connect`] (the built-in
/// simulator's is known only once it listens), so that the key is checked
/// before anything starts.
pub fn client_config(spec: &Spec) -> Result<ClientConfig, RunError> {
    if let BaseUrl::Http(u) = &spec.source.base_url {
        crate::util::redact::register_url(u);
    }
    let mut cfg = ClientConfig::new(String::new());
    if let Some(var) = &spec.source.api_key_env {
        if let Some(message) = spec.source.unset_key_message() {
            // Unset, it may be a key pasted in the name's place: masked
            // wherever it could still be printed.
            if crate::spec::looks_like_a_key(var) {
                crate::util::redact::register(var);
            }
            return Err(RunError::MissingKey(message));
        }
        let key = api_key(var)?;
        crate::util::redact::register(&key);
        cfg.api_key = Some(Secret::new(key));
        cfg.api_key_env = Some(var.clone());
    }
    cfg.timeout = spec.source.timeout;
    cfg.max_retries = spec.source.max_retries;
    cfg.max_concurrency = spec.source.max_concurrency;
    cfg.requests_per_second = spec.source.requests_per_second;
    cfg.max_response_bytes = spec.source.max_response_bytes;
    cfg.max_retry_after = spec.source.max_retry_after;
    Ok(cfg)
}

/// The API key in `$var`. An empty key would send `Authorization: Bearer `
/// and a line break would fail every request: both are set-up mistakes
/// (exit 2), and the message names the variable, never the value.
fn api_key(var: &str) -> Result<String, RunError> {
    let bad = |why| RunError::BadKey { var: var.into(), why };
    let key = match std::env::var(var) {
        Ok(k) => k,
        Err(std::env::VarError::NotPresent) => return Err(RunError::MissingKey(format!("${var} is not set"))),
        Err(std::env::VarError::NotUnicode(_)) => return Err(bad("is not valid UTF-8")),
    };
    if key.is_empty() {
        return Err(bad("is empty"));
    }
    if key.chars().any(char::is_control) {
        return Err(bad("holds a line break or another control character"));
    }
    Ok(key)
}

/// The client for the spec's service, starting the built-in simulator when
/// the spec names it (its handle is returned: the run stops it at the end).
pub(crate) async fn connect(
    spec: &Spec,
    mut cfg: ClientConfig,
    cancel: &watch::Receiver<bool>,
) -> Result<(Client, Option<SimHandle>), RunError> {
    let mut handle = None;
    cfg.base_url = match &spec.source.base_url {
        BaseUrl::Http(u) => u.clone(),
        BaseUrl::Sim(o) => {
            let h = sim::spawn(o.clone()).await.map_err(|e| RunError::Sim(e.into()))?;
            let url = h.base_url();
            handle = Some(h);
            url
        }
    };
    Ok((Client::new(cfg)?.with_cancel(cancel.clone()), handle))
}

/// What every unit task of a run shares.
pub(crate) struct Shared {
    pub(crate) client: Client,
    pub(crate) sink: Arc<Sink>,
    pub(crate) state: StateStore,
    pub(crate) spec: Arc<Spec>,
    tallies: Mutex<BTreeMap<ExportKey, Tally>>,
    /// Request counters per export and chain (the client counts into them).
    pub(crate) stats: HashMap<ExportKey, Arc<Stats>>,
    /// Live counters per export, by export index.
    pub(crate) progress: Vec<Arc<ExportProgress>>,
    /// Decoding exports' decoders of logs, by export index.
    pub(crate) decoders: Vec<Option<Arc<LogDecoder>>>,
    pub(crate) started: Instant,
    pub(crate) cancel: watch::Receiver<bool>,
    /// Incremental exports' marks and lag as the run sees them ([`super::live`]).
    pub(crate) marks: Mutex<BTreeMap<ExportKey, MarkProgress>>,
    /// Whether to measure lag (someone watches it).
    pub(crate) watch_lag: AtomicBool,
    /// The change of output format this run made first, from the stored files.
    pub(crate) conversion: Mutex<Option<crate::job::change::convert::Converted>>,
    /// The run's figures over time ([`super::series`]).
    pub(crate) series: Mutex<super::series::Series>,
}

impl Shared {
    /// Each table a unit writes, and its schema (the table's, partition
    /// columns included), in the order of its writers.
    pub(crate) fn unit_tables(&self, unit: &Unit) -> Vec<(String, arrow_schema::SchemaRef)> {
        let Some(export) = self.spec.exports.get(unit.export) else {
            return Vec::new();
        };
        let logs = self.decoders.get(unit.export).cloned().flatten();
        crate::job::tables::export_tables(&self.spec, export, logs.as_deref())
    }

    pub(crate) fn new(
        spec: Spec,
        client: Client,
        sink: Arc<Sink>,
        state: StateStore,
        started: Instant,
        cancel: watch::Receiver<bool>,
    ) -> Result<Shared, RunError> {
        let decoders = crate::job::tables::decoders(&spec)?;
        let keys: Vec<ExportKey> = spec
            .exports
            .iter()
            .flat_map(|e| {
                e.chains.iter().map(|&chain| ExportKey {
                    export: e.index,
                    dataset: e.dataset,
                    chain,
                })
            })
            .collect();
        let stats: HashMap<ExportKey, Arc<Stats>> = keys.iter().map(|k| (*k, Arc::new(Stats::default()))).collect();
        let progress = spec
            .exports
            .iter()
            .map(|e| {
                let chains: Vec<&str> = e.chains.iter().map(|c| c.name()).collect();
                Arc::new(ExportProgress {
                    label: format!("export[{}] {} ({})", e.index, e.dataset, chains.join(", ")),
                    stats: keys
                        .iter()
                        .filter(|k| k.export == e.index)
                        .filter_map(|k| stats.get(k).cloned())
                        .collect(),
                    ..Default::default()
                })
            })
            .collect();
        Ok(Shared {
            client,
            sink,
            state,
            decoders,
            spec: Arc::new(spec),
            tallies: Mutex::new(keys.into_iter().map(|k| (k, Tally::default())).collect()),
            stats,
            progress,
            started,
            cancel,
            marks: Mutex::default(),
            watch_lag: AtomicBool::new(false),
            conversion: Mutex::default(),
            series: Mutex::new(super::series::Series::new()),
        })
    }

    /// Updates the tally of `key`. A unit task that panicked while holding
    /// the lock leaves the figures as they were; they are still counted.
    pub(crate) fn tally(&self, key: ExportKey, f: impl FnOnce(&mut Tally)) {
        let mut tallies = self.tallies.lock().unwrap_or_else(PoisonError::into_inner);
        f(tallies.entry(key).or_default());
    }

    /// The tallies as they stand.
    pub(crate) fn tallies(&self) -> BTreeMap<ExportKey, Tally> {
        self.tallies.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// The client counting into the tallies of `key`.
    pub(crate) fn client_for(&self, key: ExportKey) -> Client {
        match self.stats.get(&key) {
            Some(s) => self.client.with_stats(s.clone()),
            None => self.client.clone(),
        }
    }

    /// Whether the run must stop starting work: a signal, the service
    /// unreachable, or the key refused.
    pub(crate) fn stopping(&self) -> bool {
        *self.cancel.borrow() || self.client.service_down().is_some() || self.client.key_refused()
    }
}

/// Units paged at once: a quarter again the request slots, so that while
/// some units commit or start, others have a request ready for every slot
/// (decoding happens as pages arrive, off the unit's loop); each unit in
/// flight holds pages and open files, so not more.
pub fn units_in_flight(spec: &Spec) -> usize {
    spec.source.max_concurrency + spec.source.max_concurrency.div_ceil(4)
}
