//! The open-file limit: a job at the documented maximum
//! concurrency finishes exactly under Linux's default soft limit of 1,024
//! (it raises its soft limit to the hard one), and where the hard limit is
//! too low it runs at the concurrency that fits and says so, instead of
//! failing units with "Too many open files" (or calling the local limit an
//! unreachable service).

use crate::common::*;
use crate::truth;
use chainetl::sim::data::SimData;
use chainetl::spec::SimOptions;
use chainetl::vocab::chain::Chain;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Output;

/// The chains whose simulated head is past the window (apechain's is not).
fn chains() -> impl Iterator<Item = Chain> {
    Chain::ALL.into_iter().filter(|c| *c != Chain::Apechain)
}

/// 2,802 one-block units of events on six chains at `max_concurrency =
/// 1024`, against a simulator answering after 100 ms, so about that many
/// requests are in flight at once.
fn wide_job(dir: &Path, url: &str) -> String {
    let chains: Vec<String> = chains().map(|c| format!("\"{c}\"")).collect();
    write_spec(
        dir,
        "wide.toml",
        &format!(
            "name = \"wide\"\n[source]\nbase_url = \"{url}\"\nmax_concurrency = 1024\n[output]\nuri = \"{}\"\n\
             [[export]]\ndataset = \"events\"\nchains = [{}]\nwindow = \"20000000..20000466\"\nchunk_blocks = 1\n",
            dir.join("out").display(),
            chains.join(", ")
        ),
    )
}

/// Runs `chainetl run SPEC` with the open-file limit set to `soft` / `hard`.
fn run_with_nofile(spec: &str, soft: u64, hard: u64) -> Output {
    let mut c = bin();
    c.args(["run", spec, "--progress-secs", "0"]).env_remove("RUST_LOG");
    // SAFETY: setrlimit is async-signal-safe and touches only the child.
    unsafe {
        c.pre_exec(move || {
            let lim = libc::rlimit {
                rlim_cur: soft,
                rlim_max: hard,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &lim) == 0 {
                Ok(())
            } else {
                Err(std::io::Error::last_os_error())
            }
        });
    }
    c.output().unwrap()
}

fn assert_exact(out: &Path) {
    let data = SimData::new(42, 3);
    let mut want = Vec::new();
    for chain in chains() {
        want.extend(truth::events(&data, chain, 20_000_000, 20_000_466, &[], None));
    }
    want.sort();
    let got = read_rows(&out.join("events"), truth::EVENT_COLS);
    assert_eq!(got.len(), want.len());
    assert_eq!(got, want);
}

fn slow_sim() -> Sim {
    // The simulator serves from this test process: ~1,000 sockets of its own.
    chainetl::util::fd_limit::raise();
    Sim::start(SimOptions {
        latency_ms: 100,
        events_per_block: 3,
        ..frozen()
    })
}

#[test]
fn max_concurrency_1024_under_the_default_soft_limit_of_1024_is_exact() {
    let (_, hard) = chainetl::util::fd_limit::limits().expect("the open-file limits");
    assert!(hard >= 8192, "this test needs a hard open-file limit of 8192 or more, not {hard}");
    let sim = slow_sim();
    let dir = tempfile::tempdir().unwrap();
    let spec = wide_job(dir.path(), &sim.url());
    let o = run_with_nofile(&spec, 1024, hard);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(0), "{}", &t[t.len().saturating_sub(3000)..]);
    assert!(!t.contains("Too many open files") && !t.contains("open-file limit"), "{t}");
    assert_exact(&dir.path().join("out"));
}

#[test]
fn under_a_low_hard_limit_the_job_runs_at_the_concurrency_that_fits_and_says_so() {
    let sim = slow_sim();
    let dir = tempfile::tempdir().unwrap();
    let spec = wide_job(dir.path(), &sim.url());
    let o = run_with_nofile(&spec, 256, 256);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(0), "{}", &t[t.len().saturating_sub(3000)..]);
    let fits = chainetl::util::fd_limit::concurrency_within(256, 1024);
    assert!(
        t.contains("the open-file limit is 256")
            && t.contains(&format!("running {fits} requests at once instead of max_concurrency = 1024")),
        "{t}"
    );
    assert!(!t.contains("Too many open files") && !t.contains("cannot reach"), "{t}");
    assert_exact(&dir.path().join("out"));
}
