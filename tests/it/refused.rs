//! A key the service refuses: the run stops at the first refusal instead of
//! spending a request on it per unit, exits 2 at once with one line naming
//! the key's variable (never the key), and leaves the units it did not try
//! not started; `status` and the report say it once. A later run with the
//! right key does the whole job. A 403 refuses one chain's endpoint: only
//! its requests stop.

use crate::common::*;
use crate::truth;
use chainetl::sim::data::SimData;
use chainetl::spec::SimOptions;
use chainetl::vocab::chain::Chain;
use std::path::Path;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

const RIGHT: &str = "right-key-7731-abcd";
const WRONG: &str = "wrong-key-0420-wxyz";
const VAR: &str = "BDS_API_KEY";
const MAX_CONCURRENCY: u64 = 8;
/// Events a block in the simulator (few: the job has many small units).
const EVENTS_PER_BLOCK: u32 = 2;

fn sim(forbid: &[&str]) -> Sim {
    Sim::start(SimOptions {
        api_key: Some(RIGHT.into()),
        events_per_block: EVENTS_PER_BLOCK,
        forbid: forbid.iter().map(|f| f.to_string()).collect(),
        ..frozen()
    })
}

/// `GET /_sim/stats`: what the simulator answered.
fn sim_stats(sim: &Sim) -> serde_json::Value {
    let url = format!("{}/_sim/stats", sim.url());
    sim.rt.block_on(async {
        let r = http_client().get(url).send().await.unwrap();
        assert_eq!(r.status().as_u16(), 200);
        serde_json::from_slice(&r.bytes().await.unwrap()).unwrap()
    })
}

/// An events job on `chains` over `blocks`, ten blocks a unit.
fn spec(dir: &Path, url: &str, chains: &str, blocks: &str) -> String {
    write_spec(
        dir,
        "job.toml",
        &format!(
            "name = \"keyed\"\n[source]\nbase_url = \"{url}\"\napi_key_env = \"{VAR}\"\nmax_concurrency = {MAX_CONCURRENCY}\n\
             [output]\nuri = \"{}\"\n[[export]]\ndataset = \"events\"\nchains = [{chains}]\nwindow = \"{blocks}\"\nchunk_blocks = 10\n",
            dir.join("out").display()
        ),
    )
}

/// How a run went.
struct Ran {
    code: Option<i32>,
    out: String,
    /// Unix ms when it was seen to have exited.
    ended_ms: i64,
    secs: f64,
}

fn unix_ms() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_millis() as i64
}

/// `chainetl run SPEC` with the key `key`, its exit watched closely.
fn run(spec: &str, key: &str) -> Ran {
    let dir = tempfile::tempdir().unwrap();
    let (o, e) = (dir.path().join("out"), dir.path().join("err"));
    let t = Instant::now();
    let mut child = bin()
        .args(["run", spec])
        .env_remove("RUST_LOG")
        .env(VAR, key)
        .stdout(std::fs::File::create(&o).unwrap())
        .stderr(std::fs::File::create(&e).unwrap())
        .spawn()
        .unwrap();
    let code = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break st.code();
        }
        if t.elapsed() > Duration::from_secs(600) {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    let ended_ms = unix_ms();
    let out = format!("{}{}", std::fs::read_to_string(o).unwrap(), std::fs::read_to_string(e).unwrap());
    eprintln!("chainetl run: exit {code:?} in {:.2} s", t.elapsed().as_secs_f64());
    Ran {
        code,
        out,
        ended_ms,
        secs: t.elapsed().as_secs_f64(),
    }
}

/// `chainetl CMD SPEC --format json`, with the right key.
fn view(cmd: &str, spec: &str) -> serde_json::Value {
    let o = bin().args([cmd, spec, "--format", "json"]).env(VAR, RIGHT).output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&o)))
}

/// Everything the job keeps beside its files: state, run reports.
fn state_text(out: &Path) -> String {
    let mut all = String::new();
    let mut stack = vec![out.join("_chainetl")];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                all.push_str(&String::from_utf8_lossy(&std::fs::read(p).unwrap()));
            }
        }
    }
    all
}

/// The units of the report's strips in `state`.
fn cells_in(doc: &serde_json::Value, chain: &str, state: &str) -> usize {
    doc["coverage"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["chain"] == chain)
        .flat_map(|s| s["cells"].as_array().unwrap())
        .filter(|c| c["state"] == state)
        .count()
}

#[test]
fn a_refused_key_sends_a_request_a_slot_exits_2_at_once_and_the_right_key_then_does_the_whole_job() {
    let sim = sim(&[]);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    // 3,528 units of ten blocks.
    let (first, last) = (18_000_000u64, 18_035_279u64);
    let spec = spec(dir.path(), &sim.url(), "\"ethereum\"", &format!("{first}..{last}"));

    let r = run(&spec, WRONG);
    assert_eq!(r.code, Some(2), "{}", r.out);
    let stats = sim_stats(&sim);
    let requests = stats["requests"].as_u64().unwrap();
    let since_401 = r.ended_ms - stats["first_refusal_ms"].as_i64().expect("a 401 was answered");
    eprintln!(
        "refused key: {requests} requests, exit 2 {since_401} ms after the first 401 ({:.2} s in all)",
        r.secs
    );
    assert!(
        (1..=MAX_CONCURRENCY + 1).contains(&requests),
        "{requests} requests for a refused key: {stats}"
    );
    assert_eq!(stats["unauthorized"], requests, "{stats}");
    assert!(since_401 < 1000, "exited {since_401} ms after the first 401");
    // One line, naming the variable and what to check; never the key
    // (the simulator quotes it back in its 401).
    let errors: Vec<&str> = r.out.lines().filter(|l| l.starts_with("error")).collect();
    assert_eq!(errors.len(), 1, "one error line: {}", r.out);
    let line = errors[0];
    assert!(
        line.contains(&format!("${VAR}")) && line.contains("401") && line.contains("refused"),
        "{line}"
    );
    assert!(line.contains("check"), "says what to check: {line}");
    assert!(line.contains("committed"), "says committed work stays: {line}");
    assert_eq!(r.out.matches(VAR).count(), 1, "said once: {}", r.out);
    let kept = state_text(&out);
    for secret in [WRONG, RIGHT] {
        assert!(!r.out.contains(secret) && !kept.contains(secret), "`{secret}` shown or stored");
    }

    // Not started, not failed: `status`, the report and the run report say
    // the key was refused, once.
    let status = view("status", &spec);
    assert_eq!(
        (status["units"].as_u64(), status["units_done"].as_u64()),
        (Some(3528), Some(0)),
        "{status}"
    );
    let refused = status["refused"].as_array().unwrap_or_else(|| panic!("{status}"));
    assert_eq!(refused.len(), 1, "{status}");
    assert_eq!(
        (refused[0]["status"].as_u64(), refused[0]["variable"].as_str()),
        (Some(401), Some(VAR))
    );
    let o = bin().args(["status", &spec]).env(VAR, RIGHT).output().unwrap();
    assert_eq!(text(&o).matches("refused").count(), 1, "{}", text(&o));
    let doc = view("report", &spec);
    assert_eq!(cells_in(&doc, "ethereum", "not_started"), 3528, "{}", doc["counts"]);
    assert_eq!(doc["counts"].get("failed"), None, "{}", doc["counts"]);
    assert!(doc["failures"].as_array().unwrap().is_empty());
    assert_eq!(doc["refused"].as_array().map(Vec::len), Some(1), "{}", doc["refused"]);
    let latest = read_json(&out.join("_chainetl/keyed/runs/latest.json"));
    assert_eq!(latest["status"], "failed");
    assert!(
        latest["failed"].as_array().unwrap().is_empty(),
        "no unit failed: {}",
        latest["failed"]
    );
    assert_eq!(latest["refused"][0]["status"], 401);

    // The right key: the whole job, exactly.
    let r = run(&spec, RIGHT);
    assert_eq!(r.code, Some(0), "{}", r.out);
    let data = SimData::new(42, EVENTS_PER_BLOCK);
    let want = truth::events(&data, Chain::Ethereum, first, last, &[], None);
    let got = read_rows(&out.join("events"), truth::EVENT_COLS);
    assert_eq!(got.len(), want.len());
    assert!(got == want, "the rows differ from the source's");
    let status = view("status", &spec);
    assert_eq!(
        (status["state"].as_str(), status["units_done"].as_u64()),
        (Some("complete"), Some(3528))
    );
    assert_eq!(status.get("refused"), None, "{status}");
}

#[test]
fn a_forbidden_chain_stops_only_its_own_requests_and_is_said_once() {
    let sim = sim(&["arbitrum/events"]);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let (first, last) = (18_000_000u64, 18_000_999u64);
    let spec = spec(dir.path(), &sim.url(), "\"ethereum\", \"arbitrum\"", &format!("{first}..{last}"));
    let r = run(&spec, RIGHT);
    assert_eq!(r.code, Some(2), "{}", r.out);
    let stats = sim_stats(&sim);
    let forbidden = stats["forbidden"].as_u64().unwrap();
    assert!(
        (1..=MAX_CONCURRENCY + 1).contains(&forbidden),
        "{forbidden} requests to a forbidden chain: {stats}"
    );
    let errors: Vec<&str> = r.out.lines().filter(|l| l.starts_with("error")).collect();
    assert_eq!(errors.len(), 1, "one error line: {}", r.out);
    assert!(
        errors[0].contains("403") && errors[0].contains("events on arbitrum") && errors[0].contains(&format!("${VAR}")),
        "{}",
        errors[0]
    );
    // The other chain is done; the forbidden one's units are not started.
    let data = SimData::new(42, EVENTS_PER_BLOCK);
    let ethereum = truth::events(&data, Chain::Ethereum, first, last, &[], None);
    assert_eq!(read_rows(&out.join("events"), truth::EVENT_COLS), ethereum);
    let doc = view("report", &spec);
    assert_eq!(cells_in(&doc, "ethereum", "committed"), 100, "{}", doc["counts"]);
    assert_eq!(cells_in(&doc, "arbitrum", "not_started"), 100, "{}", doc["counts"]);
    assert!(doc["failures"].as_array().unwrap().is_empty(), "{}", doc["failures"]);
    let status = view("status", &spec);
    assert_eq!(status["refused"][0]["status"], 403, "{status}");
    assert_eq!(status["refused"][0]["chain"], "arbitrum", "{status}");

    // Once the plan includes it, the next run does the rest.
    let open = self::sim(&[]);
    let spec = spec_at(&spec, &sim.url(), &open.url());
    let r = run(&spec, RIGHT);
    assert_eq!(r.code, Some(0), "{}", r.out);
    let mut want = ethereum;
    want.extend(truth::events(&data, Chain::Arbitrum, first, last, &[], None));
    want.sort();
    assert_eq!(read_rows(&out.join("events"), truth::EVENT_COLS), want);
}

/// The spec at `path` pointed from `old` to the service at `new`.
fn spec_at(path: &str, old: &str, new: &str) -> String {
    let body = std::fs::read_to_string(path).unwrap().replace(old, new);
    std::fs::write(path, body).unwrap();
    path.to_string()
}
