//! Every change of a job, drawn from a seed: random job shapes (parquet,
//! Delta, Iceberg) and random sequences of spec changes (format, layout, hash encoding, derived
//! tables, columns left out, an appended export, changes to refuse), `chainetl compact` and
//! kill -9, run through the CLI. After each step readers see exactly the
//! rows of a fresh export of the last spec accepted, a change sent no
//! request, a refusal changed no byte, and `verify` passes. A failure
//! names its seed, the job and its steps, shrunk. `model` runs 8 cases
//! from `CHAINETL_MODEL_SEED` (or a fixed seed); `model_long` (ignored,
//! run by `make test-long`) runs `CHAINETL_MODEL_CASES` (200).

use crate::changing::{dead_url, run_without_requests};
use crate::common::*;
use crate::delta::{check, every_version_exact, keys_of};
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::path::{Path, PathBuf};
use std::process::Output;

/// Cases of the default test (`make test`), from [`SEED`]: under 30 s on
/// 2 cores beside other tests. `make test-long` runs `model_long`'s many
/// more.
const CASES: u64 = 8;

/// The default test's first seed: its cases include units across midnight
/// and a portfolio wallet active from mid-window, each re-partitioned.
const SEED: u64 = 34;

const TRANSFER: &str = "event Transfer(address indexed from, address indexed to, uint256 value)";

const PARTITIONS: [&[&str]; 4] = [&["chain", "date"], &["chain"], &["date"], &[]];

/// `bloom_filters`: the default, none, one column every block-ranged table has.
const BLOOMS: [Option<&str>; 3] = [None, Some("[]"), Some("[\"block_number\"]")];

/// Where a run is killed, by what it does (a point it never reaches lets
/// it finish).
const CONVERSION_KILLS: &[&str] = &[
    "conversion-recorded:1",
    "during-conversion:1",
    "during-conversion:2",
    "conversion-logs:1",
    "during-log-delete:1",
    "migration-recorded:1",
];
const REWRITE_KILLS: &[&str] = &[
    "rewrite-recorded:1",
    "during-rewrite:1",
    "during-rewrite:2",
    "rewrite-written:1",
    "during-rewrite-swap:1",
    "during-rewrite-swap:3",
    "rewrite-checkpointed:1",
    "rewrite-applied:1",
    "rewrite-published:1",
    "during-rewrite-commit:1",
    "rewrite-committed:1",
    "migration-recorded:1",
];
const FETCH_KILLS: &[&str] = &[
    "after-file-write:1",
    "after-file-write:3",
    "during-checkpoint:1",
    "before-delta-commit:1",
    "after-delta-commit:1",
];
const COMPACTION_KILLS: &[&str] = &[
    "compact-recorded:1",
    "compact-writing:1",
    "compact-written:1",
    "compact-swapping:1",
    "compact-deleting:1",
    "compact-published:1",
    "compact-committed:1",
    "during-compaction-fold:1",
];

/// splitmix64: a case is drawn from its seed alone.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn percent(&mut self, p: u64) -> bool {
        self.next() % 100 < p
    }

    fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[self.below(xs.len())]
    }
}

#[derive(Clone, Debug, PartialEq)]
struct Export {
    dataset: &'static str,
    /// `chains`, the selection and the unit size, as TOML lines.
    lines: String,
    /// A block window, apart: the selection change drawn (refused).
    blocks: Option<(u64, u64)>,
    /// Selects ERC-20 transfers: its decoding can be made from its rows.
    transfers: bool,
    decode: bool,
    u256: bool,
    /// Into its dataset's [`drops`]: the columns it leaves out.
    dropped: usize,
}

impl Export {
    fn toml(&self) -> String {
        let mut s = format!("dataset = \"{}\"\n{}", self.dataset, self.lines);
        if let Some((first, last)) = self.blocks {
            s += &format!("window = \"{first}..{last}\"\n");
        }
        if self.transfers {
            s += &format!("signatures = [\"{TRANSFER}\"]\n");
        }
        if self.decode {
            s += "decode = true\nalso_raw = true\ntable = \"transfers\"\n";
        }
        if self.u256 {
            s += "u256 = [\"decimal38\"]\n";
        }
        let drops = drops(self.dataset)[self.dropped];
        if !drops.is_empty() {
            s += &format!("exclude_columns = {drops:?}\n");
        }
        s
    }
}

/// `output.format`s.
const FORMATS: [&str; 3] = ["parquet", "delta", "iceberg"];

/// `[output]` keys, each at its default unless set.
#[derive(Clone, Debug, PartialEq)]
struct Layout {
    /// Into [`FORMATS`].
    format: usize,
    /// Into [`PARTITIONS`].
    partition_by: usize,
    snappy: bool,
    binary: bool,
    compact: bool,
    row_group_rows: bool,
    /// Into [`BLOOMS`].
    blooms: usize,
}

#[derive(Clone, Debug, PartialEq)]
struct Job {
    layout: Layout,
    exports: Vec<Export>,
}

impl Job {
    fn spec(&self, name: &str, url: &str, uri: &Path) -> String {
        let l = &self.layout;
        let mut s = format!(
            "name = \"{name}\"\n[source]\nbase_url = \"{url}\"\nmax_retries = 1\n[output]\nuri = \"{}\"\n",
            uri.display()
        );
        let keys = [
            (l.format != 0, format!("format = \"{}\"", FORMATS[l.format])),
            (l.partition_by != 0, format!("partition_by = {:?}", PARTITIONS[l.partition_by])),
            (l.snappy, "compression = \"snappy\"".into()),
            (l.binary, "hash_encoding = \"binary\"".into()),
            (!l.compact, "compact = false".into()),
            (l.row_group_rows, "row_group_rows = 1000".into()),
            (l.blooms != 0, format!("bloom_filters = {}", BLOOMS[l.blooms].unwrap_or_default())),
        ];
        for (set, line) in keys {
            if set {
                s += &line;
                s += "\n";
            }
        }
        for e in &self.exports {
            s += "[[export]]\n";
            s += &e.toml();
        }
        s
    }

    /// The tables the job writes.
    fn tables(&self) -> BTreeSet<&'static str> {
        let decoded = |e: &Export| e.decode.then_some("transfers");
        self.exports.iter().flat_map(|e| [Some(e.dataset), decoded(e)]).flatten().collect()
    }
}

/// The columns an export of `dataset` may leave out, each choice a
/// superset of the one before (none of them one decoding or `u256` needs).
fn drops(dataset: &str) -> [&'static [&'static str]; 3] {
    match dataset {
        "blocks" => [&[], &["logs_bloom"], &["logs_bloom", "extra_data"]],
        "events" => [&[], &["topic3"], &["topic3", "transaction_index"]],
        "portfolio" => [&[], &["token_name"], &["token_name", "balance_raw"]],
        _ => [&[], &["name"], &["name", "standard"]],
    }
}

/// An export of `dataset` on `chain` over blocks `window`, in units of `chunk` blocks.
fn windowed(dataset: &'static str, chain: &str, window: (u64, u64), chunk: u64) -> Export {
    Export {
        dataset,
        lines: format!("chains = [\"{chain}\"]\nchunk_blocks = {chunk}\n"),
        blocks: Some(window),
        transfers: false,
        decode: false,
        u256: false,
        dropped: 0,
    }
}

fn selected(dataset: &'static str, lines: String) -> Export {
    Export {
        dataset,
        lines,
        blocks: None,
        transfers: false,
        decode: false,
        u256: false,
        dropped: 0,
    }
}

/// Base's block 30886926 is the last of 2025-05-29: in 35-block units, the
/// first window's first day holds two units' files and its second day
/// one; the second window the reverse.
const MIDNIGHT: [(u64, u64); 2] = [(30_886_870, 30_886_939), (30_886_905, 30_886_974)];

/// A portfolio on ethereum over `days` days from day `first` (since the
/// epoch) of two wallets, one holding tokens from the first day and one
/// from a day within: each wallet is one unit across every date
/// partition, and the first days' partitions hold one unit's file.
fn portfolio(first: i64, days: i64) -> Export {
    let opts = frozen();
    let data = chainetl::sim::data::SimData::new(opts.seed, opts.events_per_block);
    let wallet = |n: u64| {
        let mut w = [0u8; 20];
        w[12..].copy_from_slice(&n.to_be_bytes());
        w
    };
    let holds = |n: u64, day: i64| {
        !data
            .holdings(chainetl::vocab::chain::Chain::Ethereum, &wallet(n), day as i32, None)
            .is_empty()
    };
    let from_start = (1u64..).find(|&n| holds(n, first)).unwrap();
    let from_within = (1u64..).find(|&n| !holds(n, first) && holds(n, first + days - 1)).unwrap();
    let day = |d: i64| {
        chrono::DateTime::from_timestamp(d * 86_400, 0)
            .unwrap()
            .format("%Y-%m-%dT%H:%M:%SZ")
            .to_string()
    };
    selected(
        "portfolio",
        format!(
            "chains = [\"ethereum\"]\nwallets = [\"0x{from_start:040x}\", \"0x{from_within:040x}\"]\nwindow = \"{}..{}\"\n",
            day(first),
            day(first + days)
        ),
    )
}

/// Exports a step may append: none overlaps an export a shape draws.
fn appendable() -> [Export; 3] {
    [
        windowed("events", "avalanche", (20_000_000, 20_000_029), 15),
        windowed("blocks", "polygon", (20_000_000, 20_000_029), 15),
        selected(
            "tokens",
            "chains = [\"base\"]\naddresses = [\"0x833589fcd6edb6e08f4c7c32d4f71b54bda02913\"]\n".into(),
        ),
    ]
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Change {
    /// The format `n` places on in [`FORMATS`].
    Format(usize),
    /// The partition keys `n` places on in [`PARTITIONS`].
    PartitionBy(usize),
    Codec,
    RowGroups,
    /// The bloom filters `n` places on in [`BLOOMS`].
    Blooms(usize),
    HashEncoding,
    /// Decoding added to the first events export (with its `signatures`
    /// if it had none: refused).
    Decode,
    /// `u256 = ["decimal38"]` added to, or removed from, the decoding export.
    U256,
    /// `compact` on or off.
    Compaction,
    /// The exports of the job's `n`th dataset (in name order) leave out
    /// more columns — or, from the last choice of [`drops`], bring them
    /// back: refused.
    Columns(usize),
    /// `appendable()[n]` appended.
    Append(usize),
    /// The first block window a block longer: refused.
    Window,
    /// The last export removed: refused (exports may be appended, not
    /// removed).
    Remove,
    /// The format and the partition keys at once: refused.
    FormatAndLayout,
}

/// What docs/changing-a-job.md says a run of a change does.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Expect {
    Made,
    Refused,
    /// The docs leave it to what the output holds (which exports' rows a
    /// compacted partition holds).
    Either,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Step {
    /// A run of the spec with `change` made, killed at `kill` and then run
    /// again — or (`back`) the spec before the change run first.
    Run {
        change: Change,
        kill: Option<&'static str>,
        back: bool,
    },
    /// `chainetl compact`, killed at `kill` and then run again.
    Compact { kill: Option<&'static str> },
}

/// `job` with `change` made, and what a run of it does; None where the
/// change is not one of this job's (nothing to decode, already appended).
/// `other`: the job sharing the output.
fn changed(job: &Job, other: Option<&Job>, change: Change) -> Option<(Job, Expect)> {
    use Expect::*;
    let mut new = job.clone();
    // A table folder the other job writes too keeps one format and one
    // layout (docs/output.md, *Jobs sharing an output*).
    let shared = other.is_some_and(|o| !o.tables().is_disjoint(&job.tables()));
    let layout = &mut new.layout;
    let expect = match change {
        Change::Format(n) => {
            layout.format = (layout.format + n) % FORMATS.len();
            if shared { Refused } else { Made }
        }
        Change::PartitionBy(n) => {
            layout.partition_by = (layout.partition_by + n) % PARTITIONS.len();
            if shared { Refused } else { Made }
        }
        Change::HashEncoding => {
            layout.binary = !layout.binary;
            if shared { Refused } else { Made }
        }
        Change::Codec => {
            layout.snappy = !layout.snappy;
            Made
        }
        Change::RowGroups => {
            layout.row_group_rows = !layout.row_group_rows;
            Made
        }
        Change::Blooms(n) => {
            layout.blooms = (layout.blooms + n) % BLOOMS.len();
            Made
        }
        Change::Compaction => {
            layout.compact = !layout.compact;
            Made
        }
        Change::FormatAndLayout => {
            layout.format = (layout.format + 1) % FORMATS.len();
            layout.partition_by = (layout.partition_by + 1) % PARTITIONS.len();
            Refused
        }
        Change::Decode => {
            let raw = new.exports.iter().filter(|e| e.dataset == "events").count();
            let by_chain = PARTITIONS[new.layout.partition_by].contains(&"chain");
            let e = new.exports.iter_mut().find(|e| e.dataset == "events")?;
            if e.decode {
                return None;
            }
            let was_selected = e.transfers;
            (e.transfers, e.decode) = (true, true);
            match (was_selected, raw) {
                (false, _) => Refused,
                // Refused if a compacted partition holds the other raw
                // export's rows too (each on a chain of its own).
                (true, 2..) if !by_chain => Either,
                (true, _) => Made,
            }
        }
        Change::U256 => {
            // A Delta table's columns are only ever added.
            let delta = FORMATS[new.layout.format] == "delta";
            let e = new.exports.iter_mut().find(|e| e.decode)?;
            e.u256 = !e.u256;
            if delta && !e.u256 { Refused } else { Made }
        }
        Change::Append(n) => {
            let mut e = appendable()[n].clone();
            if new.exports.iter().any(|x| x.dataset == e.dataset && x.lines == e.lines) {
                return None;
            }
            // It writes its table with the columns the job's exports do.
            e.dropped = new.exports.iter().find(|x| x.dataset == e.dataset).map_or(0, |x| x.dropped);
            let theirs = other.filter(|o| o.tables().contains(e.dataset)).map(|o| &o.layout);
            let dropped = e.dropped;
            new.exports.push(e);
            let keys = |l: &Layout| (l.format, l.partition_by, l.binary);
            match theirs {
                Some(l) if keys(l) != keys(&new.layout) || dropped != 0 => Refused,
                _ => Made,
            }
        }
        Change::Columns(n) => {
            let datasets: BTreeSet<&str> = new.exports.iter().map(|e| e.dataset).collect();
            let dataset = *datasets.iter().nth(n % datasets.len())?;
            let level = new.exports.iter().find(|e| e.dataset == dataset).map_or(0, |e| e.dropped);
            let next = if level + 1 < drops(dataset).len() { level + 1 } else { 0 };
            for e in new.exports.iter_mut().filter(|e| e.dataset == dataset) {
                e.dropped = next;
            }
            // The other job writes its table with every column.
            let theirs = other.is_some_and(|o| o.tables().contains(dataset));
            if next == 0 || theirs { Refused } else { Made }
        }
        Change::Remove => {
            if new.exports.len() < 2 {
                return None;
            }
            new.exports.pop();
            Refused
        }
        Change::Window => {
            let e = new.exports.iter_mut().find(|e| e.blocks.is_some())?;
            e.blocks = e.blocks.map(|(first, last)| (first, last + 1));
            Refused
        }
    };
    Some((new, expect))
}

/// A job shape, a second job sharing its output (or none), and steps.
#[derive(Clone, Debug)]
struct Case {
    seed: u64,
    job: Job,
    other: Option<Job>,
    steps: Vec<Step>,
}

impl Case {
    fn draw(seed: u64) -> Case {
        let mut rng = Rng(seed);
        let layout = Layout {
            format: match rng.below(100) {
                0..60 => 0,
                60..80 => 1,
                _ => 2,
            },
            partition_by: if rng.percent(60) { 0 } else { rng.below(PARTITIONS.len()) },
            snappy: rng.percent(25),
            binary: rng.percent(25),
            compact: rng.percent(60),
            row_group_rows: false,
            blooms: 0,
        };
        let mut exports = Vec::new();
        if rng.percent(80) {
            let window = rng.pick(&[(20_000_000, 20_000_059), MIDNIGHT[0], MIDNIGHT[1]]);
            let chain = if window.0 == 20_000_000 { "ethereum" } else { "base" };
            let mut e = windowed("events", chain, window, if chain == "base" { 35 } else { 20 });
            e.transfers = rng.percent(50);
            e.decode = e.transfers && rng.percent(35);
            e.u256 = e.decode && rng.percent(30);
            exports.push(e);
            if rng.percent(30) {
                exports.push(windowed("events", "polygon", (20_000_000, 20_000_039), 20));
            }
        }
        if rng.percent(50) {
            let window = rng.pick(&[(20_000_000, 20_000_099), MIDNIGHT[0], MIDNIGHT[1]]);
            let (chain, chunk) = if window.0 == 20_000_000 { ("ethereum", 50) } else { ("base", 35) };
            exports.push(windowed("blocks", chain, window, chunk));
        }
        if exports.is_empty() || rng.percent(35) {
            // Days in 2024 (from 2024-01-01, day 19723).
            let first = 19_723 + 30 * rng.below(11) as i64;
            exports.push(portfolio(first, 10 + rng.below(5) as i64));
        }
        if rng.percent(25) {
            exports.push(selected(
                "tokens",
                "chains = [\"ethereum\"]\naddresses = [\"0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48\", \"0xdac17f958d2ee523a2206206994597c13d831ec7\"]\n"
                    .into(),
            ));
        }
        let other = rng.percent(20).then(|| Job {
            layout: layout.clone(),
            exports: vec![windowed("events", "arbitrum", (20_000_000, 20_000_029), 15)],
        });
        let steps = (0..3 + rng.below(4)).map(|_| Case::step(&mut rng)).collect();
        Case {
            seed,
            job: Job { layout, exports },
            other,
            steps,
        }
    }

    /// A step, killed (if at all) at a crash point of what its run does.
    fn step(rng: &mut Rng) -> Step {
        let (change, kills) = match rng.below(100) {
            0..12 => (Change::Format(1 + rng.below(2)), CONVERSION_KILLS),
            12..24 => (Change::PartitionBy(1 + rng.below(3)), REWRITE_KILLS),
            24..30 => (Change::Columns(rng.below(4)), REWRITE_KILLS),
            30..38 => (Change::Codec, REWRITE_KILLS),
            38..43 => (Change::RowGroups, REWRITE_KILLS),
            43..48 => (Change::Blooms(1 + rng.below(2)), REWRITE_KILLS),
            48..58 => (Change::HashEncoding, REWRITE_KILLS),
            58..66 => (Change::Decode, REWRITE_KILLS),
            66..72 => (Change::U256, REWRITE_KILLS),
            72..78 => (Change::Compaction, COMPACTION_KILLS),
            78..86 => (
                Change::Append(rng.below(3)),
                if rng.percent(50) { FETCH_KILLS } else { COMPACTION_KILLS },
            ),
            86..88 => (Change::Window, &[][..]),
            88..90 => (Change::Remove, &[][..]),
            90..93 => (Change::FormatAndLayout, &[][..]),
            _ => {
                let kill = rng.percent(30).then(|| rng.pick(COMPACTION_KILLS));
                return Step::Compact { kill };
            }
        };
        let kill = (!kills.is_empty() && rng.percent(25)).then(|| rng.pick(kills));
        Step::Run {
            change,
            kill,
            back: kill.is_some() && rng.percent(35),
        }
    }

    /// The case as a failure report: how to run it again, the jobs, the
    /// steps with what each did, and the failure.
    fn report(&self, drawn: usize, failure: &Failure) -> String {
        let mut s = format!(
            "seed {} (CHAINETL_MODEL_SEED={} CHAINETL_MODEL_CASES=1 cargo test --release --test it model_long -- --ignored), \
             its {drawn} steps shrunk to {}\njob `m`:\n{}",
            self.seed,
            self.seed,
            self.steps.len(),
            self.job.spec("m", "<simulator>", Path::new("<out>"))
        );
        if let Some(other) = &self.other {
            s += &format!(
                "job `mb`, sharing the output:\n{}",
                other.spec("mb", "<simulator>", Path::new("<out>"))
            );
        }
        s += "steps:\n";
        for (i, line) in failure.log.iter().enumerate() {
            s += &format!("  {}. {line}\n", i + 1);
        }
        s + &format!("failed: {}", failure.message)
    }
}

/// Fresh exports by spec text: the rows readers of a job should see.
struct Fresh<'a> {
    sim: &'a Sim,
    dirs: HashMap<String, tempfile::TempDir>,
}

impl Fresh<'_> {
    /// A fresh parquet export of `job` in its layout, with `other`'s into
    /// the same output when a reader of `job`'s format reads its rows too
    /// (a Delta reader sees no parquet job's files).
    fn of(&mut self, job: &Job, other: Option<&Job>) -> PathBuf {
        let jobs: Vec<(&str, Job)> = [("m", Some(job)), ("mb", other.filter(|o| o.layout.format == job.layout.format))]
            .into_iter()
            .filter_map(|(name, j)| {
                let mut j = j?.clone();
                j.layout.format = 0;
                Some((name, j))
            })
            .collect();
        let key: String = jobs.iter().map(|(name, j)| j.spec(name, "sim", Path::new("out"))).collect();
        let sim = self.sim;
        let dir = self.dirs.entry(key).or_insert_with(|| {
            let dir = tempfile::tempdir().unwrap();
            for (name, j) in &jobs {
                let spec = write_spec(
                    dir.path(),
                    &format!("{name}.toml"),
                    &j.spec(name, &sim.url(), &dir.path().join("out")),
                );
                let o = chainetl(&["run", &spec, "-q"]);
                assert!(o.status.success(), "a fresh export: {}", text(&o));
            }
            dir
        });
        dir.path().join("out")
    }
}

/// How a run ended.
enum Ran {
    Made,
    Refused,
    /// At its crash point.
    Killed,
}

/// How the run `o` ended; one that ended well without `fetching` sent no request.
fn ran(o: &Output, fetching: bool) -> Ran {
    if o.status.success() {
        if !fetching {
            let summary: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(o)));
            assert_eq!(summary["requests"], 0, "a change sent requests: {summary}");
        }
        Ran::Made
    } else if o.status.code() == Some(2) {
        assert!(
            !text(o).contains(" in the spec:"),
            "the model wrote a spec that is not valid: {}",
            text(o)
        );
        Ran::Refused
    } else if String::from_utf8_lossy(&o.stderr).contains("failpoint") {
        Ran::Killed
    } else {
        panic!("the run failed: {}", text(o))
    }
}

/// One case being run: the output, and the last spec it accepted.
struct Model<'a, 'f> {
    sim: &'a Sim,
    fresh: &'a mut Fresh<'f>,
    dir: tempfile::TempDir,
    out: PathBuf,
    job: Job,
    other: Option<Job>,
    specs: usize,
}

impl Model<'_, '_> {
    fn spec(&mut self, job: &Job, name: &str, url: &str) -> String {
        self.specs += 1;
        write_spec(self.dir.path(), &format!("{}.toml", self.specs), &job.spec(name, url, &self.out))
    }

    /// Runs `step`; returns what it did, or None where it is not one of
    /// this job's.
    fn step(&mut self, step: Step) -> Option<String> {
        let (change, kill, back) = match step {
            Step::Compact { kill } => {
                let spec = self.spec(&self.job.clone(), "m", &dead_url());
                if let Some(point) = kill {
                    let o = crash_bin(point).args(["compact", &spec]).output().unwrap();
                    assert!(o.status.success() || matches!(ran(&o, true), Ran::Killed), "{}", text(&o));
                }
                let o = chainetl(&["compact", &spec]);
                assert!(o.status.success(), "compact: {}", text(&o));
                return Some("compacted".into());
            }
            Step::Run { change, kill, back } => (change, kill, back),
        };
        let (new, expect) = changed(&self.job, self.other.as_ref(), change)?;
        let fetching = matches!(change, Change::Append(_));
        let url = if fetching { self.sim.url() } else { dead_url() };
        let spec = self.spec(&new, "m", &url);
        let before = snapshot(&self.out);
        let mut c = kill.map_or_else(bin, crash_bin);
        let o = c.args(["run", &spec, "--summary", "json"]).env_remove("RUST_LOG").output().unwrap();
        let did = match ran(&o, fetching) {
            Ran::Refused => {
                assert!(expect != Expect::Made, "refused: {}", text(&o));
                same_bytes(&before, &snapshot(&self.out), "a refused run");
                return Some("refused".into());
            }
            Ran::Made => "made",
            Ran::Killed => {
                assert!(expect != Expect::Refused, "not refused before its crash point: {}", text(&o));
                if back {
                    let killed = snapshot(&self.out);
                    let old = self.spec(&self.job.clone(), "m", &dead_url());
                    let o = bin()
                        .args(["run", &old, "--summary", "json"])
                        .env_remove("RUST_LOG")
                        .output()
                        .unwrap();
                    match ran(&o, false) {
                        Ran::Made => return Some("killed; the spec before it took the job back".into()),
                        Ran::Refused => same_bytes(&killed, &snapshot(&self.out), "the spec before the change, refused,"),
                        Ran::Killed => unreachable!("no crash point armed"),
                    }
                }
                if fetching {
                    let o = chainetl(&["run", &spec]);
                    assert!(o.status.success(), "run again: {}", text(&o));
                } else {
                    run_without_requests(bin().args(["run", &spec, "--summary", "json"]));
                }
                if back {
                    "killed; the spec before it refused; made by the next run"
                } else {
                    "killed; made by the next run"
                }
            }
        };
        assert!(
            expect != Expect::Refused,
            "made, though docs/changing-a-job.md refuses it: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        self.job = new;
        Some(did.into())
    }

    /// Readers see the rows of a fresh export of the last spec accepted,
    /// and `verify` passes for each job.
    fn check(&mut self) {
        let fresh = self.fresh.of(&self.job, self.other.as_ref());
        let (job, other) = (&self.job, self.other.as_ref());
        // A table only the other job writes is laid out as it is.
        let writer = |t: &str| match other {
            Some(o) if !job.tables().contains(t) => o,
            _ => job,
        };
        let partition_by = |t: &str| PARTITIONS[writer(t).layout.partition_by];
        match FORMATS[job.layout.format] {
            format @ ("delta" | "iceberg") => table_format_exact(format, &self.out, &fresh, partition_by),
            _ => {
                // The other job's tables in a table format are no parquet reader's.
                let theirs = other.filter(|o| o.layout.format != 0).map(Job::tables).unwrap_or_default();
                parquet_exact(&self.out, &fresh, &theirs);
            }
        }
        for (name, job) in [("m", Some(self.job.clone())), ("mb", self.other.clone())] {
            if let Some(job) = job {
                let spec = self.spec(&job, name, &dead_url());
                let v = chainetl(&["verify", &spec]);
                assert!(v.status.success(), "verify {name}: {}", text(&v));
            }
        }
    }
}

/// The tables under `out` in `format`: folders holding Parquet files, a
/// Delta log, or Iceberg metadata.
fn tables(out: &Path, format: &str) -> BTreeSet<String> {
    std::fs::read_dir(out)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|t| !t.starts_with('_'))
        .filter(|t| match format {
            "delta" => out.join(t).join("_delta_log").is_dir(),
            "iceberg" => out.join(t).join("metadata").is_dir(),
            _ => !parquet_files(&out.join(t)).is_empty(),
        })
        .collect()
}

/// `t` without its nested fields' metadata: the field ids an Iceberg
/// writer gives list items, which a file converted from Iceberg keeps
/// and readers of plain Parquet pass over.
fn plain(t: &arrow_schema::DataType) -> arrow_schema::DataType {
    match t {
        arrow_schema::DataType::List(f) => arrow_schema::DataType::List(std::sync::Arc::new(arrow_schema::Field::new(
            f.name(),
            plain(f.data_type()),
            f.is_nullable(),
        ))),
        t => t.clone(),
    }
}

/// Each file's columns under `table`, as readers see them: its own, with
/// their Arrow types, and the hive keys of its path.
fn file_columns(table: &Path) -> Vec<BTreeSet<(String, String)>> {
    parquet_files(table)
        .iter()
        .map(|f| {
            let file = std::fs::File::open(f).unwrap();
            let builder = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file).unwrap();
            let mut columns: BTreeSet<(String, String)> = builder
                .schema()
                .fields()
                .iter()
                .map(|c| (c.name().clone(), plain(c.data_type()).to_string()))
                .collect();
            for part in f.strip_prefix(table).unwrap().iter() {
                if let Some((key, _)) = part.to_string_lossy().split_once('=') {
                    columns.insert((key.to_string(), "path".into()));
                }
            }
            columns
        })
        .collect()
}

/// Readers of the parquet tables under `out` (but `theirs`) see the rows
/// of `fresh`'s, each as often, every column, with its columns and types.
fn parquet_exact(out: &Path, fresh: &Path, theirs: &BTreeSet<&str>) {
    let want = tables(fresh, "parquet");
    let mut got = tables(out, "parquet");
    got.retain(|t| !theirs.contains(t.as_str()));
    assert_eq!(got, want, "the tables of a fresh export");
    for t in &want {
        assert!(
            !out.join(t).join("_delta_log").exists() && !out.join(t).join("metadata").exists(),
            "{t}: a Delta log or Iceberg metadata left in a parquet output"
        );
        let (got, fresh_files) = (file_columns(&out.join(t)), file_columns(&fresh.join(t)));
        let all = |files: &[BTreeSet<(String, String)>]| files.iter().flatten().cloned().collect::<BTreeSet<_>>();
        assert_eq!(all(&got), all(&fresh_files), "{t}: the columns and types of a fresh export");
        // The columns every file has (another job's files may be laid out otherwise).
        let mut names: Vec<String> = all(&got).into_iter().map(|(name, _)| name).collect();
        names.dedup();
        names.retain(|n| got.iter().chain(&fresh_files).all(|f| f.iter().any(|(name, _)| name == n)));
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        let d = diff(&read_rows(&out.join(t), &names), &read_rows(&fresh.join(t), &names));
        assert!(d.is_empty(), "{t}: {d}");
    }
}

/// Every table under `out` in `format` (delta, iceberg): each version or
/// snapshot exact (no key twice; none shorter than the one before, an
/// Iceberg append or replace holding its parent's rows); the latest holds
/// the rows of the parquet tables under `fresh`, each as often,
/// partitioned as `partition_by` says of each (a table a fresh export has
/// not holds none).
fn table_format_exact(format: &str, out: &Path, fresh: &Path, partition_by: impl Fn(&str) -> &'static [&'static str]) {
    let (got, want) = (tables(out, format), tables(fresh, "parquet"));
    let missing: Vec<&String> = want.difference(&got).collect();
    assert!(missing.is_empty(), "tables of a fresh export missing: {missing:?}");
    let read = |table: &Path, keys: &[&str], reference: Option<&Path>| match format {
        "delta" => check(table, keys, reference),
        _ => crate::iceberg_format::check(table, keys, reference),
    };
    // One reader a table at once: each is a Python start-up.
    let docs: Vec<(&String, serde_json::Value)> = std::thread::scope(|s| {
        let running: Vec<_> = got
            .iter()
            .map(|t| {
                let reference = want.contains(t).then(|| fresh.join(t));
                (t, s.spawn(move || read(&out.join(t), keys_of(t), reference.as_deref())))
            })
            .collect();
        running
            .into_iter()
            .map(|(t, h)| (t, h.join().unwrap_or_else(|e| resume_unwind(e))))
            .collect()
    });
    for (t, doc) in docs {
        if format == "delta" {
            every_version_exact(&doc, t);
        } else {
            crate::iceberg_format::every_snapshot_exact(&doc, t);
        }
        let rows = |k: &str| -> Vec<String> { serde_json::from_value(doc[k].clone()).unwrap() };
        let fresh_rows = if want.contains(t) { rows("parquet_rows") } else { Vec::new() };
        let d = diff(&rows("rows"), &fresh_rows);
        assert!(d.is_empty(), "{t}: {d}");
        if want.contains(t) {
            let keys: Vec<&str> = partition_by(t).iter().copied().filter(|k| t != "tokens" || *k != "date").collect();
            // Delta names its partition columns; Iceberg its fields as
            // `name=transform(source)`.
            let names: Vec<&str> = doc["partitions"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(|p| p.as_str()?.split('=').next())
                .collect();
            assert_eq!(names, keys, "{t}: the partition columns");
        }
    }
}

/// How the sorted `got` differs from the sorted `want` as multisets (a few
/// rows of each kind), or "" where they are the same.
fn diff<T: Ord + std::fmt::Debug>(got: &[T], want: &[T]) -> String {
    let (mut extra, mut missing) = (Vec::new(), Vec::new());
    let (mut i, mut j) = (0, 0);
    while i < got.len() || j < want.len() {
        match (got.get(i), want.get(j)) {
            (Some(a), Some(b)) if a == b => (i, j) = (i + 1, j + 1),
            (Some(a), b) if b.is_none_or(|b| a < b) => {
                extra.push(a);
                i += 1;
            }
            (_, b) => {
                missing.push(b.unwrap());
                j += 1;
            }
        }
    }
    if extra.is_empty() && missing.is_empty() {
        return String::new();
    }
    format!(
        "{} rows where a fresh export has {}: {} more, such as {:?}; {} missing, such as {:?}",
        got.len(),
        want.len(),
        extra.len(),
        &extra[..extra.len().min(3)],
        missing.len(),
        &missing[..missing.len().min(3)]
    )
}

/// Every file under `out` with its bytes, but leases and run reports,
/// which a refused run may write.
fn snapshot(out: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut files = BTreeMap::new();
    let mut todo = vec![out.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            let rel = p.strip_prefix(out).unwrap().to_path_buf();
            let parts: Vec<_> = rel.iter().map(|c| c.to_string_lossy()).collect();
            if parts.len() >= 3 && parts[0] == "_chainetl" && (parts[2] == "leases" || parts[2] == "runs") {
                continue;
            }
            if p.is_dir() {
                todo.push(p);
            } else {
                files.insert(rel, std::fs::read(&p).unwrap());
            }
        }
    }
    files
}

fn same_bytes(before: &BTreeMap<PathBuf, Vec<u8>>, after: &BTreeMap<PathBuf, Vec<u8>>, what: &str) {
    let changed: Vec<&PathBuf> = before
        .keys()
        .chain(after.keys())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .filter(|p| before.get(*p) != after.get(*p))
        .collect();
    assert!(changed.is_empty(), "{what} changed the output: {changed:?}");
}

/// A failed case: what each step did, up to the one that failed, and why.
struct Failure {
    log: Vec<String>,
    message: String,
}

/// Runs `case`: the jobs exported against the simulator, then each step
/// and the checks after it.
fn attempt(sim: &Sim, fresh: &mut Fresh, case: &Case) -> Result<(), Failure> {
    let log = RefCell::new(Vec::new());
    let run = || {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let mut m = Model {
            sim,
            fresh,
            dir,
            out,
            job: case.job.clone(),
            other: case.other.clone(),
            specs: 0,
        };
        for (name, job) in [("m", Some(case.job.clone())), ("mb", case.other.clone())] {
            if let Some(job) = job {
                let spec = m.spec(&job, name, &sim.url());
                let o = chainetl(&["run", &spec, "-q"]);
                assert!(o.status.success(), "the first run of {name}: {}", text(&o));
            }
        }
        for &step in &case.steps {
            let before = m.job.spec("m", "", Path::new(""));
            log.borrow_mut().push(format!("{step:?}"));
            let Some(did) = m.step(step) else {
                log.borrow_mut().last_mut().unwrap().push_str(": not this job's");
                continue;
            };
            let after = m.job.spec("m", "", Path::new(""));
            let mut line = format!(": {did}");
            if let Step::Run {
                change: Change::Append(n), ..
            } = step
            {
                line += &format!(" [[export]] {}", appendable()[n].toml().replace('\n', " "));
            } else {
                for (sign, a, b) in [("-", &before, &after), ("+", &after, &before)] {
                    for l in a.lines().filter(|l| !b.lines().any(|x| x == *l)) {
                        line += &format!(" {sign}{l}");
                    }
                }
            }
            log.borrow_mut().last_mut().unwrap().push_str(&line);
            m.check();
        }
    };
    catch_unwind(AssertUnwindSafe(run)).map_err(|e| Failure {
        log: log.take(),
        message: e
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default(),
    })
}

/// `case`, failing with `failure`, made smaller while it still fails:
/// each step left out, then each kill, the job sharing the output, each
/// export; as a report.
fn shrink(sim: &Sim, fresh: &mut Fresh, mut case: Case, mut failure: Failure) -> String {
    let drawn = case.steps.len();
    case.steps.truncate(failure.log.len());
    let mut smaller = |case: &mut Case, failure: &mut Failure, simpler: Case| {
        if let Err(f) = attempt(sim, fresh, &simpler) {
            (*case, *failure) = (simpler, f);
        }
    };
    for i in (0..case.steps.len()).rev() {
        let mut simpler = case.clone();
        simpler.steps.remove(i);
        smaller(&mut case, &mut failure, simpler);
    }
    for i in 0..case.steps.len() {
        let mut simpler = case.clone();
        match &mut simpler.steps[i] {
            Step::Run {
                kill: kill @ Some(_),
                back,
                ..
            } => (*kill, *back) = (None, false),
            Step::Compact { kill: kill @ Some(_) } => *kill = None,
            _ => continue,
        }
        smaller(&mut case, &mut failure, simpler);
    }
    if case.other.is_some() {
        let simpler = Case {
            other: None,
            ..case.clone()
        };
        smaller(&mut case, &mut failure, simpler);
    }
    for i in (0..case.job.exports.len()).rev() {
        if case.job.exports.len() > 1 {
            let mut simpler = case.clone();
            simpler.job.exports.remove(i);
            smaller(&mut case, &mut failure, simpler);
        }
    }
    case.report(drawn, &failure)
}

/// Runs `count` cases from seed `first` on, and fails naming each failing
/// one, shrunk.
fn cases(first: u64, count: u64) {
    let sim = Sim::start(frozen());
    let mut fresh = Fresh {
        sim: &sim,
        dirs: HashMap::new(),
    };
    let mut failures = Vec::new();
    for seed in first..first + count {
        let t = std::time::Instant::now();
        let case = Case::draw(seed);
        let result = attempt(&sim, &mut fresh, &case);
        eprintln!(
            "model: seed {seed}: {} steps, {}, {:.1} s",
            case.steps.len(),
            if result.is_ok() { "ok" } else { "failed" },
            t.elapsed().as_secs_f64()
        );
        if let Err(failure) = result {
            failures.push(shrink(&sim, &mut fresh, case, failure));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {count} cases failed:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

fn env(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .map_or(default, |v| v.parse().unwrap_or_else(|e| panic!("{name}: {e}")))
}

#[test]
fn model() {
    cases(env("CHAINETL_MODEL_SEED", SEED), CASES);
}

#[test]
#[ignore = "minutes: CHAINETL_MODEL_CASES cases"]
fn model_long() {
    cases(env("CHAINETL_MODEL_SEED", SEED), env("CHAINETL_MODEL_CASES", 200));
}
