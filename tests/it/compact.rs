//! Compaction: each finished partition becomes one sorted file with the
//! same rows, exactly once under kill -9; other jobs' files are untouched;
//! every engine reads every table alike.

use crate::common::*;
use parquet::file::reader::FileReader;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Events across a midnight in 10-minute units, blocks in 15-minute ones:
/// several files per date partition before compaction.
pub(crate) fn spec(dir: &Path, out: &Path, url: &str, name: &str, output_extra: &str) -> String {
    write_spec(
        dir,
        &format!("{name}.toml"),
        &format!(
            r#"name = "{name}"
[source]
base_url = "{url}"
[output]
uri = "{}"
{output_extra}
[[export]]
dataset = "events"
chains = ["ethereum"]
window = "2025-05-30T23:00:00Z..2025-05-31T01:00:00Z"
chunk_duration = "10m"
[[export]]
dataset = "blocks"
chains = ["base"]
window = "2025-05-30T23:00:00Z..2025-05-31T01:00:00Z"
chunk_duration = "15m"
"#,
            out.display()
        ),
    )
}

pub(crate) const EVENT_KEY: &[&str] = &["chain", "block_number", "log_index", "transaction_hash", "topic0", "data"];
pub(crate) const BLOCK_KEY: &[&str] = &["chain", "number", "hash", "timestamp"];

/// Files of `job` under `dir` by partition directory.
pub(crate) fn files_by_partition(dir: &Path, job: &str) -> BTreeMap<PathBuf, Vec<String>> {
    let mut out: BTreeMap<PathBuf, Vec<String>> = BTreeMap::new();
    for f in parquet_files(dir) {
        let name = f.file_name().unwrap().to_string_lossy().to_string();
        if name.starts_with(&format!("{job}-")) {
            out.entry(f.parent().unwrap().to_path_buf()).or_default().push(name);
        }
    }
    out
}

/// Everything that is not a finished Parquet file or a state document.
fn leftovers(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            let name = p.file_name().unwrap().to_string_lossy().to_string();
            if p.is_dir() {
                stack.push(p);
            } else if !(name.ends_with(".parquet") || name.ends_with(".json") || name.ends_with(".lock")) || name.starts_with('_') {
                out.push(p);
            }
        }
    }
    out
}

pub(crate) fn reference(sim: &Sim) -> (tempfile::TempDir, Vec<Vec<String>>, Vec<Vec<String>>) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let s = spec(dir.path(), &out, &sim.url(), "job", "compact = false");
    let o = chainetl(&["run", &s, "-q"]);
    assert!(o.status.success(), "{}", text(&o));
    let by = files_by_partition(&out, "job");
    assert!(
        by.values().any(|f| f.len() > 2),
        "the reference must have several files per partition: {by:?}"
    );
    let ev = read_rows(&out.join("events"), EVENT_KEY);
    let bl = read_rows(&out.join("blocks"), BLOCK_KEY);
    (dir, ev, bl)
}

/// Each partition of the job is one compacted file, its rows as the reference's.
pub(crate) fn assert_compacted_exact(out: &Path, ev: &[Vec<String>], bl: &[Vec<String>]) {
    assert_eq!(
        read_rows(&out.join("events"), EVENT_KEY),
        ev,
        "events differ from an uncompacted run"
    );
    assert_eq!(
        read_rows(&out.join("blocks"), BLOCK_KEY),
        bl,
        "blocks differ from an uncompacted run"
    );
    let by = files_by_partition(out, "job");
    assert_eq!(by.len(), 4, "two dates of events and of blocks: {by:?}");
    for (dir, files) in &by {
        assert_eq!(files.len(), 1, "{dir:?}: {files:?}");
        assert!(files[0].starts_with("job-compacted-"), "{files:?}");
    }
    assert!(leftovers(out).is_empty(), "left behind: {:?}", leftovers(out));
    for rec in std::fs::read_dir(out.join("_chainetl/job/compacted")).unwrap().flatten() {
        let v: serde_json::Value = serde_json::from_slice(&std::fs::read(rec.path()).unwrap()).unwrap();
        assert!(v.get("pending").is_none(), "a swap left unfinished: {v}");
    }
}

#[test]
fn compaction_merges_each_partition_into_one_sorted_file_with_the_same_rows() {
    let sim = Sim::start(frozen());
    let (_r, ev, bl) = reference(&sim);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    // `output.compact` is on by default.
    let s = spec(dir.path(), &out, &sim.url(), "job", "");
    let o = chainetl(&["run", &s]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("compacted 4 partitions"),
        "{}",
        text(&o)
    );
    assert_compacted_exact(&out, &ev, &bl);

    // Sorted by the natural key, declared so; statistics, page index and
    // bloom filters where people look rows up.
    for f in parquet_files(&out.join("events")) {
        let r = parquet::file::reader::SerializedFileReader::new(std::fs::File::open(&f).unwrap()).unwrap();
        let meta = r.metadata();
        let schema = meta.file_metadata().schema_descr();
        let idx = |name: &str| {
            (0..schema.num_columns())
                .find(|&i| schema.column(i).path().string() == name)
                .unwrap()
        };
        let rg = meta.row_group(0);
        let sorting: Vec<i32> = rg.sorting_columns().unwrap().iter().map(|c| c.column_idx).collect();
        assert_eq!(sorting, vec![idx("block_number") as i32, idx("log_index") as i32], "{f:?}");
        assert!(
            rg.column(idx("transaction_hash")).bloom_filter_offset().is_some(),
            "no bloom filter in {f:?}"
        );
        assert!(rg.column(idx("topic0")).bloom_filter_offset().is_some());
        assert!(rg.column(idx("block_number")).statistics().is_some());
        assert!(
            rg.column(idx("block_number")).column_index_offset().is_some(),
            "no page index in {f:?}"
        );
        // Partition keys live only in the path.
        assert!((0..schema.num_columns()).all(|i| schema.column(i).path().string() != "chain"));
        let rows = read_rows(f.parent().unwrap(), &["block_number", "log_index"]);
        let mut in_file: Vec<(i64, i64)> = Vec::new();
        let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(std::fs::File::open(&f).unwrap())
            .unwrap()
            .build()
            .unwrap();
        for b in reader {
            let b = b.unwrap();
            let n = b.column_by_name("block_number").unwrap();
            let l = b.column_by_name("log_index").unwrap();
            let n = n.as_any().downcast_ref::<arrow_array::Int64Array>().unwrap();
            let l = l.as_any().downcast_ref::<arrow_array::Int64Array>().unwrap();
            in_file.extend((0..b.num_rows()).map(|i| (n.value(i), l.value(i))));
        }
        assert_eq!(in_file.len(), rows.len());
        assert!(in_file.windows(2).all(|w| w[0] <= w[1]), "rows of {f:?} are not sorted");
    }

    // Verified clean; a second run and `chainetl compact` have nothing to do.
    let v = chainetl(&["verify", &s]);
    assert!(v.status.success(), "{}", text(&v));
    let before = files_by_partition(&out, "job");
    assert!(chainetl(&["run", &s, "-q"]).status.success());
    let c = chainetl(&["compact", &s]);
    assert!(c.status.success(), "{}", text(&c));
    assert!(String::from_utf8_lossy(&c.stdout).contains("nothing to compact"), "{}", text(&c));
    assert_eq!(files_by_partition(&out, "job"), before);
}

#[test]
fn kill_9_at_every_step_of_compaction_loses_and_doubles_nothing() {
    let sim = Sim::start(frozen());
    let (_r, ev, bl) = reference(&sim);
    for point in [
        "compact-recorded:1",
        "compact-writing:2",
        "compact-written:1",
        "compact-swapping:2",
        "compact-deleting:1",
        "compact-deleting:9",
        "during-compaction-fold:1",
    ] {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let s = spec(dir.path(), &out, &sim.url(), "job", "");
        let o = crash_bin(point).args(["run", &s, "-q"]).output().unwrap();
        assert!(!o.status.success(), "{point}: the failpoint must crash the run");
        assert!(String::from_utf8_lossy(&o.stderr).contains("failpoint"), "{point}: {}", text(&o));
        let o = chainetl(&["run", &s, "-q"]);
        assert!(o.status.success(), "{point}: {}", text(&o));
        assert_compacted_exact(&out, &ev, &bl);
        let v = chainetl(&["verify", &s]);
        assert!(v.status.success(), "{point}: {}", text(&v));
    }
}

/// A killed compaction's upload of an output may still land after the
/// next run rolled its swap back and compacted the partition again (a
/// request the kernel had sent: *One writer per job* in
/// docs/exactly-once.md). The next compaction writes outputs of a new
/// generation, so the late upload takes no name a published file, or its
/// hidden upload before the rename, has; readers and `verify` never see it.
#[test]
fn a_rolled_back_compactions_late_upload_takes_no_name_a_later_compaction_writes() {
    let k = Killed::then_run_again();
    land_late_uploads(&k, "the next compaction");
}

/// A swap rolled back leaves its names taken even after `verify --repair`
/// dissolves the partition's compaction: the compaction after the repair
/// writes none of the names a killed run's upload may still land under.
#[test]
fn a_rolled_back_compactions_names_stay_taken_after_a_repair_dissolves_the_partition() {
    let k = Killed::then_run_again();
    let (out, s) = (&k.out, &k.s);

    // The compacted file of a partition the killed run's upload belongs
    // to is lost; the repair dissolves that partition's compaction.
    let partition = k.late[0].0.parent().unwrap().to_path_buf();
    let lost = std::fs::read_dir(&partition)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.file_name().unwrap().to_string_lossy().starts_with("job-compacted"))
        .unwrap();
    std::fs::remove_file(&lost).unwrap();
    let r = chainetl(&["verify", s, "--repair"]);
    assert!(r.status.success(), "{}", text(&r));
    let o = chainetl(&["run", s, "-q"]);
    assert!(o.status.success(), "{}", text(&o));
    assert_compacted_exact(out, &k.ev, &k.bl);
    land_late_uploads(&k, "the compaction after the repair");
}

/// `--fresh` after a killed compaction starts the job's generations
/// above the killed run's: the fresh run's compactions write none of the
/// names its uploads may still land under (the records that kept them
/// taken went with the state).
#[test]
fn after_fresh_the_compactions_write_none_of_a_killed_runs_names() {
    let k = Killed::then_run_fresh();
    land_late_uploads(&k, "the compaction after --fresh");
}

/// A job whose run was killed once its compaction had written its
/// outputs, then run again to the end (the swap rolled back, the
/// partitions compacted anew).
struct Killed {
    _sim: Sim,
    _dir: tempfile::TempDir,
    ev: Vec<Vec<String>>,
    bl: Vec<Vec<String>>,
    out: PathBuf,
    s: String,
    /// The killed run's hidden uploads (path, bytes): what may still land.
    late: Vec<(PathBuf, Vec<u8>)>,
}

impl Killed {
    fn then_run_again() -> Killed {
        Killed::then(&[])
    }

    /// The same, run again with `--fresh`: the output starts over.
    fn then_run_fresh() -> Killed {
        Killed::then(&["--fresh"])
    }

    fn then(flags: &[&str]) -> Killed {
        let sim = Sim::start(frozen());
        let (_r, ev, bl) = reference(&sim);
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let s = spec(dir.path(), &out, &sim.url(), "job", "");
        let o = crash_bin("compact-written:1").args(["run", &s, "-q"]).output().unwrap();
        assert!(!o.status.success(), "the failpoint must crash the run: {}", text(&o));
        let late: Vec<(PathBuf, Vec<u8>)> = leftovers(&out)
            .into_iter()
            .filter(|p| p.to_string_lossy().ends_with(".parquet.pending"))
            .map(|p| (p.clone(), std::fs::read(&p).unwrap()))
            .collect();
        assert!(!late.is_empty(), "the killed run left no unpublished output: {:?}", leftovers(&out));
        let o = chainetl(&[&["run", &s, "-q"], flags].concat());
        assert!(o.status.success(), "{}", text(&o));
        assert_compacted_exact(&out, &ev, &bl);
        Killed {
            _sim: sim,
            _dir: dir,
            ev,
            bl,
            out,
            s,
            late,
        }
    }
}

/// No file published under a name of the killed run's uploads (by `by`,
/// the compaction since); then they land, and readers and `verify` see
/// every row once.
fn land_late_uploads(k: &Killed, by: &str) {
    for (hidden, _) in &k.late {
        let name = hidden.file_name().unwrap().to_string_lossy();
        let published = hidden.with_file_name(&name[1..name.len() - ".pending".len()]);
        assert!(
            !published.exists(),
            "{by} wrote {published:?} again, the name of the killed run's output"
        );
    }
    for (hidden, bytes) in &k.late {
        std::fs::write(hidden, bytes).unwrap();
    }
    assert_eq!(read_rows(&k.out.join("events"), EVENT_KEY), k.ev);
    assert_eq!(read_rows(&k.out.join("blocks"), BLOCK_KEY), k.bl);
    let v = chainetl(&["verify", &k.s]);
    assert!(v.status.success(), "{}", text(&v));
}

/// A unit's files back in a partition whose compacted file holds their
/// rows (the record names them as replaced: a killed run's late upload,
/// or the unit exported again while its checkpoint was missing) are
/// removed by the next compaction pass that lists the partition, so no
/// reader sees those rows twice from then on; the run says so and ends
/// well.
#[test]
fn unit_files_back_beside_the_compacted_file_holding_their_rows_are_removed() {
    let sim = Sim::start(frozen());
    let (reference_dir, ev, bl) = reference(&sim);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let s = spec(dir.path(), &out, &sim.url(), "job", "");
    assert!(chainetl(&["run", &s, "-q"]).status.success());
    assert_compacted_exact(&out, &ev, &bl);
    // The reference is the same job uncompacted: the same unit files,
    // by the same names. Those of one partition come back.
    let reference = reference_dir.path().join("out");
    let (partition, files) = files_by_partition(&reference, "job")
        .into_iter()
        .find(|(_, f)| f.len() > 2)
        .unwrap();
    let rel = partition.strip_prefix(&reference).unwrap();
    for f in &files {
        std::fs::copy(partition.join(f), out.join(rel).join(f)).unwrap();
    }
    // The next pass that lists the output (one after the state changed:
    // here the target size) removes them.
    let s = spec(dir.path(), &out, &sim.url(), "job", "target_file_mb = 100");
    let o = chainetl(&["run", &s]);
    assert!(o.status.success(), "{}", text(&o));
    assert_compacted_exact(&out, &ev, &bl);
    assert!(text(&o).contains("already holds their rows"), "{}", text(&o));
    let v = chainetl(&["verify", &s]);
    assert!(v.status.success(), "{}", text(&v));
}

#[test]
fn two_jobs_in_one_output_one_compacting_leaves_the_others_files_alone() {
    let sim = Sim::start(frozen());
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let keep = spec(dir.path(), &out, &sim.url(), "job-keep", "compact = false");
    assert!(chainetl(&["run", &keep, "-q"]).status.success());
    let snapshot = |job: &str| -> BTreeMap<PathBuf, Vec<u8>> {
        parquet_files(&out)
            .into_iter()
            .filter(|f| f.file_name().unwrap().to_string_lossy().starts_with(&format!("{job}-e")))
            .map(|f| (f.clone(), std::fs::read(&f).unwrap()))
            .collect()
    };
    let before = snapshot("job-keep");
    assert!(before.len() > 4);
    // A job whose name the other's starts with, compacting the same partitions.
    let s = spec(dir.path(), &out, &sim.url(), "job", "");
    let o = chainetl(&["run", &s]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("compacted 4 partitions"),
        "{}",
        text(&o)
    );
    assert_eq!(snapshot("job-keep"), before, "the compaction of one job touched the other's files");
    let c = chainetl(&["compact", &keep]);
    assert!(c.status.success(), "{}", text(&c));
    let compacted: Vec<_> = files_by_partition(&out, "job")
        .into_values()
        .flatten()
        .filter(|n| n.starts_with("job-compacted"))
        .collect();
    assert_eq!(compacted.len(), 4);
    // job-keep's own compact run did merge its files (it was asked to).
    assert!(files_by_partition(&out, "job-keep").values().all(|f| f.len() == 1));
}

#[test]
fn verify_repair_of_a_lost_compacted_file_exports_its_rows_again() {
    let sim = Sim::start(frozen());
    let (_r, ev, bl) = reference(&sim);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let s = spec(dir.path(), &out, &sim.url(), "job", "");
    assert!(chainetl(&["run", &s, "-q"]).status.success());
    let lost = parquet_files(&out.join("events")).into_iter().next().unwrap();
    std::fs::remove_file(&lost).unwrap();
    let v = chainetl(&["verify", &s]);
    assert_eq!(v.status.code(), Some(1), "{}", text(&v));
    assert!(text(&v).contains("compacted"), "{}", text(&v));
    // Every unit whose rows the file held is named (the list
    // `--repair` acts on), not just one of them.
    let t = text(&v);
    let named = t
        .split("(rows of ")
        .nth(1)
        .and_then(|r| r.split(" units").next())
        .and_then(|n| n.parse::<usize>().ok());
    assert!(named.is_some_and(|n| n > 1), "{t}");
    assert!(t.contains(&format!("in {} units", named.unwrap())), "{t}");
    let r = chainetl(&["verify", &s, "--repair"]);
    assert!(r.status.success(), "{}", text(&r));
    assert_compacted_exact(&out, &ev, &bl);
    assert!(chainetl(&["verify", &s]).status.success());
}

#[test]
fn every_engine_reads_every_table_alike_with_no_hints() {
    let sim = Sim::start(frozen());
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    std::fs::create_dir_all(dir.path().join("abis")).unwrap();
    let body = format!(
        r#"name = "engines"
[source]
base_url = "{}"
[output]
uri = "{}"
[[export]]
dataset = "events"
chains = ["ethereum", "base"]
window = "20000000..20000049"
decode = true
also_raw = true
signatures = ["Transfer(address indexed from, address indexed to, uint256 value)"]
[[export]]
dataset = "blocks"
chains = ["ethereum"]
window = "20000000..20000049"
[[export]]
dataset = "portfolio"
chains = ["ethereum"]
wallets = ["0x28c6c06298d514db089934071355e5743bf21d60"]
window = "2025-05-25..2025-06-01"
[[export]]
dataset = "tokens"
chains = ["ethereum"]
addresses = ["0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48"]
"#,
        sim.url(),
        out.display()
    );
    let s = write_spec(dir.path(), "e.toml", &body);
    let o = chainetl(&["run", &s, "-q"]);
    assert!(o.status.success(), "{}", text(&o));
    let tables = ["events", "transfer", "blocks", "portfolio", "tokens"];
    let root = out.to_string_lossy();
    let mut args = vec![root.as_ref()];
    args.extend(tables);
    let r = check_script("engines_check.py", &args, &[]);
    for t in tables {
        let rows = read_rows(&out.join(t), &["chain"]).len() as u64;
        assert!(rows > 0, "{t}: no rows");
        let duck = &r[t]["duckdb"]["types"];
        assert_eq!(duck["chain"], "string", "{t}");
        for engine in ["duckdb", "polars", "pyarrow", "spark"] {
            assert_eq!(r[t][engine]["rows"].as_u64(), Some(rows), "{t}: {engine} counts differently");
            let types = r[t][engine]["types"].as_object().unwrap();
            assert_eq!(
                types.len(),
                duck.as_object().unwrap().len(),
                "{t}: {engine} sees other columns: {types:?}"
            );
            for (col, ty) in types {
                // pyarrow's hive discovery types partition keys only as
                // int32 or string: `date` from the path is a string there.
                if engine == "pyarrow" && col == "date" {
                    assert_eq!(ty, "string");
                    continue;
                }
                assert_eq!(ty, &duck[col], "{t}.{col}: {engine} reads {ty}, duckdb {}", duck[col]);
            }
        }
        if t != "tokens" {
            assert_eq!(duck["date"], "date", "{t}: date is a date");
            assert_eq!(r[t]["spark"]["types"]["date"], "date");
            assert_eq!(r[t]["polars"]["types"]["date"], "date");
        }
    }
}

#[test]
fn incremental_runs_compact_each_day_once_it_is_over_and_below_the_reorg_horizon() {
    use chainetl::vocab::chain::Chain;
    let sim = Sim::start(frozen());
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let data = chainetl::sim::data::SimData::new(42, 30);
    let head = data.head(
        Chain::Ethereum,
        chainetl::vocab::window::parse_instant("2025-06-01T00:00:00Z").unwrap() * 1000,
    );
    let start = head - 8_000;
    let s = write_spec(
        dir.path(),
        "inc.toml",
        &format!(
            r#"name = "job"
[source]
base_url = "{}"
[output]
uri = "{}"
[[export]]
dataset = "blocks"
chains = ["ethereum"]
incremental = true
start = {start}
confirmations = 10
chunk_blocks = 500
"#,
            sim.url(),
            out.display()
        ),
    );
    let run = || {
        let o = chainetl(&["run", &s, "-q", "--as-of", "2025-06-01T02:00:00Z"]);
        assert!(o.status.success(), "{}", text(&o));
    };
    let per_day = || -> BTreeMap<String, Vec<String>> {
        files_by_partition(&out.join("blocks"), "job")
            .into_iter()
            .map(|(d, f)| (d.file_name().unwrap().to_string_lossy().to_string(), f))
            .collect()
    };
    run();
    let first = per_day();
    assert_eq!(first["date=2025-05-30"].len(), 1, "a finished day is one file: {first:?}");
    assert!(first["date=2025-05-30"][0].starts_with("job-compacted-"));
    // Rolls of the day still open (as of 02:00 on June 1) stay unit files.
    for _ in 0..3 {
        let o = chainetl(&["run", &s, "-q"]);
        assert!(o.status.success(), "{}", text(&o));
    }
    for _ in 0..3 {
        let url = format!("{}/_sim/advance?secs=2400", sim.url());
        let status = sim.rt.block_on(async { http_client().post(url).send().await.unwrap().status() });
        assert!(status.is_success());
        run();
    }
    let days = per_day();
    assert_eq!(days["date=2025-05-30"].len(), 1, "{days:?}");
    assert_eq!(
        days["date=2025-05-31"].len(),
        1,
        "a day over and below the reorg horizon is one file: {days:?}"
    );
    assert!(
        days["date=2025-06-01"].len() > 1,
        "the open day is not rewritten on every roll: {days:?}"
    );
    assert!(days["date=2025-06-01"].iter().all(|f| !f.starts_with("job-compacted-")));
    let next: u64 = {
        let v: serde_json::Value =
            serde_json::from_slice(&std::fs::read(out.join("_chainetl/job/marks/e0-ethereum.json")).unwrap()).unwrap();
        v["next"].as_u64().unwrap()
    };
    let rows = read_rows(&out.join("blocks"), crate::truth::BLOCK_COLS);
    assert_eq!(rows, crate::truth::blocks(&data, Chain::Ethereum, start..next));
}

/// Flips one bit in the middle of a file: same size, same name, as bit rot
/// or a bad copy leaves it.
pub(crate) fn flip_a_byte(file: &Path) {
    let mut b = std::fs::read(file).unwrap();
    let mid = b.len() / 2;
    b[mid] ^= 0x01;
    std::fs::write(file, b).unwrap();
}

/// `verify` reads content. A byte flipped in a compacted file
/// (same size) is named with every unit it holds, `--quick` (sizes and row
/// counts) does not see it, and `--repair` restores exact rows.
#[test]
fn a_flipped_byte_in_a_compacted_file_is_found_by_verify_and_repaired() {
    let sim = Sim::start(frozen());
    let (_r, ev, bl) = reference(&sim);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let s = spec(dir.path(), &out, &sim.url(), "job", "");
    assert!(chainetl(&["run", &s, "-q"]).status.success());
    let ok = chainetl(&["verify", &s]);
    assert!(ok.status.success() && text(&ok).contains("by content"), "{}", text(&ok));
    let rotten = parquet_files(&out.join("events")).into_iter().next().unwrap();
    assert!(rotten.file_name().unwrap().to_string_lossy().starts_with("job-compacted"));
    flip_a_byte(&rotten);
    let v = chainetl(&["verify", &s]);
    let t = text(&v);
    assert_eq!(v.status.code(), Some(1), "{t}");
    let name = rotten.file_name().unwrap().to_string_lossy().to_string();
    assert!(t.contains(&name) && t.contains("content is not what was compacted"), "{t}");
    assert!(t.contains("(rows of "), "every unit it holds is named: {t}");
    let q = chainetl(&["verify", &s, "--quick"]);
    assert!(q.status.success(), "sizes and row counts cannot see it: {}", text(&q));
    let r = chainetl(&["verify", &s, "--repair"]);
    assert!(r.status.success(), "{}", text(&r));
    assert_compacted_exact(&out, &ev, &bl);
    let again = chainetl(&["verify", &s]);
    assert!(again.status.success(), "{}", text(&again));
}
