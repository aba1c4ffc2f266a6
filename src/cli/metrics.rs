//! A run's figures as Prometheus metrics, in the text exposition format
//! (0.0.4: what Prometheus scrapes and node-exporter's textfile collector
//! reads): `--metrics-file PATH` rewrites a file atomically (temporary
//! name in the same directory, then rename) at each tick and when the run
//! ends; `--metrics-addr HOST:PORT` serves `GET /metrics` for as long as
//! the process runs. Both render the same snapshot of the job's live
//! figures ([`Live`]); names and labels are listed in docs/reports-and-metrics.md
//! ("Metrics"). Every series carries `pipeline` (the job's name), so jobs
//! sharing one textfile directory never collide.

use super::CliError;
use crate::job::{ExportKey, Live, RunStatus};
use prometheus::{Encoder, GaugeVec, IntCounterVec, IntGaugeVec, Opts, Registry, TextEncoder};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

/// Labels of every per-export series.
const KEY_LABELS: [&str; 4] = ["pipeline", "export", "dataset", "chain"];

/// What the metrics are rendered from.
#[derive(Debug)]
pub(super) struct Metrics {
    pipeline: String,
    live: Mutex<Option<Live>>,
    /// None while running.
    status: Mutex<Option<RunStatus>>,
    file: Option<PathBuf>,
    started_unix: f64,
}

/// Starts what the flags ask for: the HTTP listener (bound now, so a bad
/// address fails before the run) and the file's writer, every `every`.
pub(super) async fn start(
    pipeline: &str,
    file: Option<String>,
    addr: Option<String>,
    every: Duration,
) -> Result<Option<Arc<Metrics>>, CliError> {
    if file.is_none() && addr.is_none() {
        return Ok(None);
    }
    let m = Arc::new(Metrics {
        pipeline: pipeline.into(),
        live: Mutex::default(),
        status: Mutex::default(),
        file: file.map(PathBuf::from),
        started_unix: chrono::Utc::now().timestamp_micros() as f64 / 1e6,
    });
    if let Some(addr) = addr {
        let listener = tokio::net::TcpListener::bind(&addr)
            .await
            .map_err(|e| CliError::Usage(format!("--metrics-addr {addr}: cannot listen there: {e}")))?;
        let app = axum::Router::new()
            .route("/metrics", axum::routing::get(serve_metrics))
            .with_state(m.clone());
        tokio::spawn(async move {
            if let Err(e) = axum::serve(listener, app).await {
                tracing::warn!("the metrics endpoint stopped: {e}");
            }
        });
    }
    if m.file.is_some() {
        m.write_file();
        let w = m.clone();
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(every).await;
                w.write_file();
            }
        });
    }
    Ok(Some(m))
}

async fn serve_metrics(axum::extract::State(m): axum::extract::State<Arc<Metrics>>) -> impl axum::response::IntoResponse {
    let content_type = [(axum::http::header::CONTENT_TYPE, prometheus::TEXT_FORMAT)];
    match m.render() {
        Ok(text) => (axum::http::StatusCode::OK, content_type, text),
        Err(e) => (axum::http::StatusCode::INTERNAL_SERVER_ERROR, content_type, format!("# {e}\n")),
    }
}

impl Metrics {
    /// Follows `live` from now on, lag included.
    pub(super) fn attach(&self, live: &Live) {
        live.watch_lag();
        *self.live.lock().unwrap_or_else(PoisonError::into_inner) = Some(live.clone());
    }

    /// The run ended with `status`: the file is written a last time.
    pub(super) fn finish(&self, status: RunStatus) {
        *self.status.lock().unwrap_or_else(PoisonError::into_inner) = Some(status);
        self.write_file();
    }

    /// Rewrites the file; a failure is logged (the run goes on).
    fn write_file(&self) {
        let Some(path) = &self.file else {
            return;
        };
        let result = self
            .render()
            .map_err(std::io::Error::other)
            .and_then(|text| crate::storage::replace_file(path, text.as_bytes()));
        if let Err(e) = result {
            tracing::warn!("could not write the metrics file {}: {e}", path.display());
        }
    }

    /// The metrics as they stand, in the text format.
    pub(super) fn render(&self) -> Result<String, prometheus::Error> {
        let r = Registry::new();
        let live = self.live.lock().unwrap_or_else(PoisonError::into_inner).clone();
        self.run_families(&r, live.as_ref())?;
        if let Some(live) = &live {
            self.export_families(&r, live)?;
            self.mark_families(&r, live)?;
            conversion_families(&r, &self.pipeline, live)?;
        }
        let mut out = Vec::new();
        TextEncoder::new().encode(&r.gather(), &mut out)?;
        Ok(String::from_utf8_lossy(&out).into_owned())
    }

    fn run_families(&self, r: &Registry, live: Option<&Live>) -> Result<(), prometheus::Error> {
        let status = *self.status.lock().unwrap_or_else(PoisonError::into_inner);
        let st = gauge(
            r,
            "chainetl_run_status",
            "1 for the run's status (running until it ends), 0 for the others",
            &["pipeline", "status"],
        )?;
        st.with_label_values(&[&self.pipeline, "running"])
            .set(f64::from(u8::from(status.is_none())));
        for s in RunStatus::ALL {
            st.with_label_values(&[&self.pipeline, s.as_str()])
                .set(f64::from(u8::from(status == Some(s))));
        }
        let start = gauge(
            r,
            "chainetl_run_start_timestamp_seconds",
            "When the run started (unix seconds)",
            &["pipeline"],
        )?;
        start
            .with_label_values(&[&self.pipeline])
            .set(live.map_or(self.started_unix, Live::started_unix));
        let info = gauge(
            r,
            "chainetl_build_info",
            "1, labelled with chainetl's version",
            &["pipeline", "version"],
        )?;
        info.with_label_values(&[&self.pipeline, env!("CARGO_PKG_VERSION")]).set(1.0);
        Ok(())
    }

    fn export_families(&self, r: &Registry, live: &Live) -> Result<(), prometheus::Error> {
        let c = |name: &str, help: &str| counter(r, name, help);
        let rows = c("chainetl_rows_total", "Rows committed by this run")?;
        let files = c("chainetl_files_total", "Parquet files committed by this run")?;
        let bytes = c("chainetl_bytes_total", "Bytes of Parquet committed by this run")?;
        let requests = c("chainetl_requests_total", "HTTP requests sent, every attempt")?;
        let retries = c("chainetl_retries_total", "Attempts that were retries")?;
        let throttled = c("chainetl_throttled_total", "429 (rate limited) answers")?;
        let server_errors = c("chainetl_server_errors_total", "5xx answers")?;
        let units = int_gauge(r, "chainetl_units", "Work units of this run (done earlier included)")?;
        let units_done = int_gauge(r, "chainetl_units_done", "Work units complete")?;
        let units_failed = int_gauge(r, "chainetl_units_failed", "Work units that failed in this run")?;
        let pace = gauge(
            r,
            "chainetl_pace_requests_per_second",
            "The pace requests are sent at (found from the service's 429s; absent: unpaced)",
            &["pipeline"],
        )?;
        if let Some(p) = live.pace() {
            pace.with_label_values(&[&self.pipeline]).set(p);
        }
        let last_commit = gauge(
            r,
            "chainetl_last_commit_timestamp_seconds",
            "When this run last committed (unix seconds)",
            &KEY_LABELS,
        )?;
        for (k, t) in live.tallies() {
            let l = self.labels(&k);
            let l: [&str; 4] = [&l[0], &l[1], &l[2], &l[3]];
            for (family, v) in [
                (&rows, t.rows),
                (&files, t.files),
                (&bytes, t.bytes),
                (&requests, t.requests),
                (&retries, t.retries),
                (&throttled, t.throttled),
                (&server_errors, t.server_errors),
            ] {
                family.with_label_values(&l).inc_by(v);
            }
            units.with_label_values(&l).set(clamp(t.units));
            units_done.with_label_values(&l).set(clamp(t.units_done));
            units_failed.with_label_values(&l).set(clamp(t.units_failed));
            if let Some(at) = live.last_commit_unix(&t) {
                last_commit.with_label_values(&l).set(at);
            }
        }
        Ok(())
    }

    fn mark_families(&self, r: &Registry, live: &Live) -> Result<(), prometheus::Error> {
        let marks = live.marks();
        if marks.is_empty() {
            return Ok(());
        }
        let mark = int_gauge(
            r,
            "chainetl_mark",
            "Incremental exports: first block (portfolios: day, unix seconds) not exported yet",
        )?;
        let head = int_gauge(
            r,
            "chainetl_confirmed_head_block",
            "The head less the chain's confirmations, at the last poll",
        )?;
        let lag_blocks = int_gauge(r, "chainetl_lag_blocks", "Confirmed blocks not exported yet")?;
        let lag_secs = gauge(
            r,
            "chainetl_lag_seconds",
            "Time between the last exported block (or day) and the confirmed head (or the end of yesterday)",
            &KEY_LABELS,
        )?;
        for (k, m) in marks {
            let l = self.labels(&k);
            let l: [&str; 4] = [&l[0], &l[1], &l[2], &l[3]];
            mark.with_label_values(&l).set(clamp(m.next));
            if let Some(c) = m.confirmed {
                head.with_label_values(&l).set(clamp(c));
            }
            if let Some(b) = m.lag_blocks {
                lag_blocks.with_label_values(&l).set(clamp(b));
            }
            if let Some(s) = m.lag_seconds {
                lag_secs.with_label_values(&l).set(s);
            }
        }
        Ok(())
    }

    fn labels(&self, k: &ExportKey) -> [String; 4] {
        [
            self.pipeline.clone(),
            k.export.to_string(),
            k.dataset.to_string(),
            k.chain.to_string(),
        ]
    }
}

fn clamp(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

fn counter(r: &Registry, name: &str, help: &str) -> Result<IntCounterVec, prometheus::Error> {
    let c = IntCounterVec::new(Opts::new(name, help), &KEY_LABELS)?;
    r.register(Box::new(c.clone()))?;
    Ok(c)
}

/// What the run's change of output format kept, by the formats it went
/// between (made from the stored files, with no request).
fn conversion_families(r: &Registry, pipeline: &str, live: &Live) -> Result<(), prometheus::Error> {
    let Some(c) = live.conversion() else {
        return Ok(());
    };
    let labels = ["pipeline", "from", "to"];
    let files = IntGaugeVec::new(
        Opts::new(
            "chainetl_converted_files",
            "Files the output's conversion to another format kept (no request)",
        ),
        &labels,
    )?;
    let rows = IntGaugeVec::new(
        Opts::new("chainetl_converted_rows", "Rows in the files the output's conversion kept"),
        &labels,
    )?;
    r.register(Box::new(files.clone()))?;
    r.register(Box::new(rows.clone()))?;
    files.with_label_values(&[pipeline, &c.from, &c.to]).set(clamp(c.files as u64));
    rows.with_label_values(&[pipeline, &c.from, &c.to]).set(clamp(c.rows));
    Ok(())
}

fn int_gauge(r: &Registry, name: &str, help: &str) -> Result<IntGaugeVec, prometheus::Error> {
    let g = IntGaugeVec::new(Opts::new(name, help), &KEY_LABELS)?;
    r.register(Box::new(g.clone()))?;
    Ok(g)
}

fn gauge(r: &Registry, name: &str, help: &str, labels: &[&str]) -> Result<GaugeVec, prometheus::Error> {
    let g = GaugeVec::new(Opts::new(name, help), labels)?;
    r.register(Box::new(g.clone()))?;
    Ok(g)
}
