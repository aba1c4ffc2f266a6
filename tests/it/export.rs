//! `chainetl run` end to end against the simulator: the Parquet rows equal
//! the simulator's ground truth, row by row.

use crate::common::*;
use crate::truth;
use chainetl::sim::data::{EventKind, SimData};
use chainetl::vocab::chain::Chain;

#[test]
fn events_export_matches_the_source_row_by_row() {
    let sim = Sim::start(frozen());
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let spec = write_spec(
        dir.path(),
        "ev.toml",
        &format!(
            r#"name = "ev"
[source]
base_url = "{}"
page_size = 300
max_concurrency = 4
[output]
uri = "{}"
[[export]]
dataset = "events"
chains = ["ethereum", "base"]
window = "20000000..20000499"
chunk_blocks = 200
signatures = ["Transfer(address,address,uint256)", "0x1c411e9a96e071241c2f21f7726b17ae89e3cab4c78be50e062b03a9fffbbad1"]
"#,
            sim.url(),
            out.display()
        ),
    );
    let o = chainetl(&["run", &spec]);
    assert!(o.status.success(), "{}", text(&o));
    let got = read_rows(&out.join("events"), truth::EVENT_COLS);
    let data = SimData::new(42, 30);
    let topics = [EventKind::Transfer.topic0(), EventKind::Sync.topic0()];
    let mut want = truth::events(&data, Chain::Ethereum, 20_000_000, 20_000_499, &topics, None);
    want.extend(truth::events(&data, Chain::Base, 20_000_000, 20_000_499, &topics, None));
    want.sort();
    assert!(want.len() > 5_000, "too few rows to mean anything: {}", want.len());
    assert_eq!(got.len(), want.len());
    assert_eq!(got, want);
}

#[test]
fn a_window_without_chunk_blocks_is_cut_for_the_request_slots_and_stays_exact() {
    // One 10,000-block unit (the old default) would page 2,000 blocks one
    // request at a time whatever max_concurrency says.
    let sim = Sim::start(frozen());
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let spec = write_spec(
        dir.path(),
        "auto.toml",
        &spec_for(
            &sim.url(),
            &out,
            "page_size = 200\nmax_concurrency = 16",
            "[[export]]\ndataset = \"events\"\nchains = [\"ethereum\"]\nwindow = \"20000000..20001999\"\n",
        ),
    );
    let o = chainetl(&["plan", &spec]);
    assert!(o.status.success(), "{}", text(&o));
    let plan = String::from_utf8_lossy(&o.stdout).to_string();
    // Units of at least 8 estimated pages (40 events a block, 200 a page):
    // 35 units of 50 blocks, then the last eighth in 25 units of 10.
    assert!(plan.contains("60 units"), "{plan}");
    assert!(plan.contains("e0-events-ethereum-b20000000-20000050 "), "{plan}");
    assert!(plan.contains("e0-events-ethereum-b20001990-20002000 "), "{plan}");
    let o = chainetl(&["run", &spec]);
    assert!(o.status.success(), "{}", text(&o));
    let got = read_rows(&out.join("events"), truth::EVENT_COLS);
    let want = truth::events(&SimData::new(42, 30), Chain::Ethereum, 20_000_000, 20_001_999, &[], None);
    assert_eq!(got.len(), want.len());
    assert_eq!(got, want);
    // The cut is frozen with the job: a run with another page size finds
    // the same units, all done.
    let body = std::fs::read_to_string(&spec).unwrap().replace("page_size = 200", "page_size = 50");
    std::fs::write(&spec, body).unwrap();
    let o = chainetl(&["run", &spec]);
    assert!(
        o.status.success() && String::from_utf8_lossy(&o.stdout).contains(" 0 requests"),
        "{}",
        text(&o)
    );
}

fn spec_for(url: &str, out: &std::path::Path, source_extra: &str, exports: &str) -> String {
    format!(
        "name = \"job\"\n[source]\nbase_url = \"{url}\"\n{source_extra}\n[output]\nuri = \"{}\"\n{exports}",
        out.display()
    )
}

#[test]
fn blocks_by_range_time_and_numbers_match_the_source() {
    let sim = Sim::start(frozen());
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let exports = r#"
[[export]]
dataset = "blocks"
chains = ["ethereum"]
window = "19999990..20000420"
chunk_blocks = 100
[[export]]
dataset = "blocks"
chains = ["arbitrum"]
window = "2025-05-31T23:30:00Z..2025-06-01T00:00:00Z"
chunk_duration = "1h"
[[export]]
dataset = "blocks"
chains = ["polygon"]
numbers = [5, 70000000, 70000001, 69999999, 5]
"#;
    let spec = write_spec(dir.path(), "b.toml", &spec_for(&sim.url(), &out, "page_size = 170", exports));
    let o = chainetl(&["run", &spec]);
    assert!(o.status.success(), "{}", text(&o));
    let data = SimData::new(42, 30);
    let (a, b) = data.blocks_in_time(Chain::Arbitrum, 1_748_734_200, 1_748_736_000, false);
    assert_eq!(b - a, 1800 * 4, "arbitrum makes 4 blocks a second");
    let mut want = truth::blocks(&data, Chain::Ethereum, 19_999_990..=20_000_420);
    want.extend(truth::blocks(&data, Chain::Arbitrum, a..b));
    want.extend(truth::blocks(
        &data,
        Chain::Polygon,
        [5, 69_999_999, 70_000_000, 70_000_001].into_iter(),
    ));
    want.sort();
    let got = read_rows(&out.join("blocks"), truth::BLOCK_COLS);
    assert_eq!(got.len(), want.len());
    assert_eq!(got, want);
    // Hive layout: chain and date partitions from each block's own time.
    assert!(out.join("blocks/chain=polygon/date=1970-01-01").exists() || out.join("blocks/chain=polygon").read_dir().unwrap().count() >= 2);
    assert!(out.join("blocks/chain=arbitrum/date=2025-05-31").is_dir());
}

#[test]
fn portfolio_and_tokens_match_the_source() {
    let sim = Sim::start(frozen());
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let data = SimData::new(42, 30);
    let usdc = "0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48";
    let pool: Vec<String> = (0..12)
        .map(|j| chainetl::vocab::evm::hex0x(&data.token_address(Chain::Base, j)))
        .collect();
    let missing = (0u64..)
        .map(|i| format!("0x{:016x}{:024x}", i * 7919 + 1, 0xdeadu64))
        .find(|a| {
            let mut b = [0u8; 20];
            hex::decode_to_slice(&a[2..], &mut b).unwrap();
            data.token(Chain::Base, &b).is_none()
        })
        .unwrap();
    let mut addrs = pool.clone();
    addrs.push(missing.clone());
    let first = chainetl::vocab::window::parse_date("2025-05-20").unwrap();
    let end = chainetl::vocab::window::parse_date("2025-06-01").unwrap();
    // A wallet holding a balance beyond 2^128, found in the ground truth.
    let whale = (1u64..)
        .map(|i| format!("0x{:040x}", i.wrapping_mul(0x9e37_79b9_7f4a_7c15)))
        .find(|w| {
            truth::portfolio(&data, Chain::Ethereum, w, first, end)
                .iter()
                .any(|r| r[4].len() > 39)
        })
        .unwrap();
    let wallets = [
        "0x28c6c06298d514db089934071355e5743bf21d60",
        "0xd8da6bf26964af9d7eed9e10e9029ca7ad5a3ba3",
        whale.as_str(),
    ];
    let exports = format!(
        r#"
[[export]]
dataset = "portfolio"
chains = ["ethereum"]
wallets = ["{}", "{}", "{}"]
window = "2025-05-20T00:00:00Z..2025-06-01T00:00:00Z"
[[export]]
dataset = "tokens"
chains = ["base"]
addresses = [{}]
[[export]]
dataset = "tokens"
chains = ["ethereum"]
addresses = ["{usdc}"]
"#,
        wallets[0].to_uppercase().replace("0X", "0x"),
        wallets[1],
        wallets[2],
        addrs.iter().map(|a| format!("\"{a}\"")).collect::<Vec<_>>().join(", ")
    );
    let spec = write_spec(dir.path(), "p.toml", &spec_for(&sim.url(), &out, "page_size = 7", &exports));
    let o = chainetl(&["run", &spec]);
    assert!(o.status.success(), "{}", text(&o));
    let mut want: Vec<Vec<String>> = wallets
        .iter()
        .flat_map(|w| truth::portfolio(&data, Chain::Ethereum, w, first, end))
        .collect();
    want.sort();
    let got = read_rows(&out.join("portfolio"), truth::PORTFOLIO_COLS);
    assert!(want.len() >= 12, "{}", want.len());
    assert_eq!(got, want);
    assert!(
        got.iter().any(|r| r[4].len() > 39),
        "some balance_raw beyond 2^128 must survive exactly"
    );

    let got = read_rows(&out.join("tokens"), &["chain", "address", "decimals", "name", "standard", "symbol"]);
    assert_eq!(got.len(), pool.len() + 1, "the 404 address yields no row: {got:?}");
    assert!(got.iter().all(|r| r[1] != missing));
    assert!(got.contains(&vec![
        "ethereum".into(),
        usdc.into(),
        "6".into(),
        "USD Coin".into(),
        "ERC-20".into(),
        "USDC".into()
    ]));
}

/// The service's silent corners, taken the other way: inclusive interval
/// ends, topics as JSON numbers, and every kind of fault. The rows must
/// still be exactly the source's.
#[test]
fn export_is_exact_through_faults_numeric_topics_and_inclusive_ends() {
    let mut opts = frozen();
    opts.inclusive_end = true;
    opts.topics_as_numbers = true;
    opts.error_rate = 0.08;
    opts.reset_rate = 0.05;
    opts.truncate_rate = 0.05;
    let sim = Sim::start(opts);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let exports = r#"
[[export]]
dataset = "events"
chains = ["bsc"]
window = "2025-05-31T22:00:00Z..2025-06-01T00:00:00Z"
chunk_duration = "1h"
[[export]]
dataset = "blocks"
chains = ["base"]
window = "2025-05-31T23:00:00Z..2025-06-01T00:00:00Z"
"#;
    let spec = write_spec(
        dir.path(),
        "f.toml",
        &spec_for(&sim.url(), &out, "page_size = 250\nmax_retries = 30\nmax_concurrency = 6", exports),
    );
    let o = chainetl(&["run", &spec]);
    assert!(o.status.success(), "{}", text(&o));
    let data = SimData::new(42, 30);
    let (a, b) = data.blocks_in_time(Chain::Bsc, 1_748_728_800, 1_748_736_000, false);
    let want = truth::events(&data, Chain::Bsc, a, b - 1, &[], None);
    let got = read_rows(&out.join("events"), truth::EVENT_COLS);
    assert_eq!(got.len(), want.len());
    assert_eq!(got, want);
    let (a, b) = data.blocks_in_time(Chain::Base, 1_748_732_400, 1_748_736_000, false);
    assert_eq!(
        read_rows(&out.join("blocks"), truth::BLOCK_COLS),
        truth::blocks(&data, Chain::Base, a..b)
    );
    let run = std::fs::read_dir(out.join("_chainetl/job/runs"))
        .unwrap()
        .flatten()
        .next()
        .unwrap()
        .path();
    let report: serde_json::Value = serde_json::from_slice(&std::fs::read(run).unwrap()).unwrap();
    let retries = report["retries"].as_u64().unwrap();
    let summary = text(&o);
    assert!(retries > 5, "faults must have been retried: {summary}");
}

#[test]
fn duckdb_reads_the_output_with_hive_partitions_and_exact_types() {
    let sim = Sim::start(frozen());
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let exports = r#"
[[export]]
dataset = "events"
chains = ["ethereum", "base"]
window = "20000000..20000099"
[[export]]
dataset = "blocks"
chains = ["ethereum"]
window = "20000000..20000099"
[[export]]
dataset = "portfolio"
chains = ["ethereum"]
wallets = ["0x28c6c06298d514db089934071355e5743bf21d60"]
window = "2025-05-22..2025-06-01"
"#;
    let spec = write_spec(dir.path(), "d.toml", &spec_for(&sim.url(), &out, "", exports));
    let o = chainetl(&["run", &spec]);
    assert!(o.status.success(), "{}", text(&o));
    let root = out.display();
    let n_events = read_rows(&out.join("events"), &["chain"]).len();
    let rows = duckdb(&format!(
        "select count(*), count(distinct chain), min(date) is not null from read_parquet('{root}/events/**/*.parquet', hive_partitioning = true)"
    ));
    assert_eq!(rows[0][0], n_events.to_string());
    assert_eq!(rows[0][1], "2");
    let types = duckdb(&format!(
        "select column_name, column_type from (describe select * from read_parquet('{root}/blocks/**/*.parquet', hive_partitioning = true)) where column_name in ('timestamp', 'total_difficulty', 'number', 'date')"
    ));
    let types: Vec<String> = types
        .as_array()
        .unwrap()
        .iter()
        .map(|r| format!("{}={}", r[0].as_str().unwrap(), r[1].as_str().unwrap()))
        .collect();
    for want in [
        "number=BIGINT",
        "timestamp=TIMESTAMP WITH TIME ZONE",
        "total_difficulty=DECIMAL(38,0)",
        "date=DATE",
    ] {
        assert!(types.contains(&want.to_string()), "{types:?} lacks {want}");
    }
    let td = duckdb(&format!(
        "select total_difficulty::varchar from read_parquet('{root}/blocks/**/*.parquet') where number = 20000000"
    ));
    let b = SimData::new(42, 30).block(Chain::Ethereum, 20_000_000);
    assert_eq!(td[0][0], b.total_difficulty.to_string(), "beyond 2^64, exact");
    let pushdown = duckdb(&format!(
        "select count(*) from read_parquet('{root}/events/**/*.parquet', hive_partitioning = true) where topic0 = '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef' and chain = 'base'"
    ));
    assert!(pushdown[0][0].as_str().unwrap().parse::<u64>().unwrap() > 100);
    let p = duckdb(&format!(
        "select count(*), count(distinct date), min(typeof(date)) from read_parquet('{root}/portfolio/**/*.parquet', hive_partitioning = true)"
    ));
    assert_eq!(p[0][1], "10", "10d is ten whole days: {p:?}");
    assert_eq!(p[0][2], "DATE");
}

#[test]
fn invalid_spec_reports_every_error_with_its_line_and_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let spec = write_spec(
        dir.path(),
        "bad.toml",
        r#"name = "bad"
[source]
base_url = "sim"
page_size = 5000
[output]
uri = "out"
[[export]]
dataset = "events"
chains = ["ethereum", "solana"]
window = "2024-13-01..2024-02-01"
contract_address = "0xnothex"
[[export]]
dataset = "blocks"
chains = ["base"]
[[export]]
dataset = "nfts"
chains = ["base"]
"#,
    );
    for cmd in ["validate", "run", "plan"] {
        let o = chainetl(&[cmd, &spec]);
        assert_eq!(o.status.code(), Some(2), "{cmd}: {}", text(&o));
        let t = text(&o);
        for want in [
            "bad.toml:4:13: source.page_size: must be an integer from 1 to 1000, got 5000",
            "bad.toml:9:23: export[0].chains: unknown chain `solana`",
            "bad.toml:10:10: export[0].window:",
            "bad.toml:11:20: export[0].contract_address: `0xnothex` is not an address",
            "bad.toml:13:11: export[1].window: dataset `blocks` needs a `window` or `numbers`",
            "bad.toml:16:11: export[2].dataset: unknown dataset `nfts`",
        ] {
            assert!(t.contains(want), "{cmd}: missing `{want}` in:\n{t}");
        }
    }
    assert!(!dir.path().join("out").exists(), "an invalid spec writes nothing");
}

#[test]
fn schema_files_match_what_the_writer_writes() {
    for d in chainetl::vocab::Dataset::ALL {
        let file = std::fs::read_to_string(format!("{}/schemas/{}.json", env!("CARGO_MANIFEST_DIR"), d.name())).unwrap();
        assert_eq!(
            file,
            chainetl::decode::schema_json(d),
            "schemas/{}.json is stale: regenerate with `chainetl schema {}`",
            d.name(),
            d.name()
        );
        let o = chainetl(&["schema", d.name()]);
        assert_eq!(String::from_utf8_lossy(&o.stdout), file);
    }
    let o = chainetl(&["schema", "nfts"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn spark_reads_every_dataset_with_no_casts() {
    let sim = Sim::start(frozen());
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let exports = r#"
[[export]]
dataset = "events"
chains = ["ethereum", "base"]
window = "20000000..20000049"
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
"#;
    let spec = write_spec(dir.path(), "s.toml", &spec_for(&sim.url(), &out, "", exports));
    assert!(chainetl(&["run", &spec, "-q"]).status.success());
    let r = check_script(
        "spark_check.py",
        &[out.to_str().unwrap(), "events", "blocks", "portfolio", "tokens"],
        &[],
    );
    let t = |d: &str, c: &str| r[d]["types"][c].as_str().unwrap_or("missing").to_string();
    assert_eq!(
        r["events"]["rows"].as_u64().unwrap() as usize,
        read_rows(&out.join("events"), &["chain"]).len()
    );
    assert_eq!(t("events", "block_timestamp"), "timestamp");
    assert_eq!(t("events", "topics"), "array<string>");
    assert_eq!(t("events", "date"), "date", "hive partition typed as a date");
    assert_eq!(t("events", "chain"), "string");
    assert_eq!(t("blocks", "total_difficulty"), "decimal(38,0)");
    assert_eq!(t("blocks", "number"), "bigint");
    assert_eq!(t("portfolio", "date"), "date");
    assert_eq!(t("portfolio", "balance_raw"), "string");
    assert_eq!(r["tokens"]["rows"], 1);
    // The suite's Spark read-backs share one process and session
    // (tests/warm_python.py --spark): what one sets, the next does not see.
    let merged = check_script("spark_check.py", &[out.to_str().unwrap(), "blocks"], &[("SPARK_MERGE_SCHEMA", "1")]);
    assert!(merged["blocks"]["nulls"].is_object(), "{merged}");
    let plain = check_script("spark_check.py", &[out.to_str().unwrap(), "blocks"], &[]);
    assert!(
        plain["blocks"].get("nulls").is_none(),
        "a variable of the read-back before reached this one: {plain}"
    );
}

#[test]
fn files_roll_by_rows_and_by_size() {
    let sim = Sim::start(frozen());
    let data = SimData::new(42, 30);
    for (name, roll, check) in [("rows", "file_rows = 5000", 0usize), ("size", "file_mb = 1", 1)] {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let exports = "[[export]]\ndataset = \"events\"\nchains = [\"ethereum\"]\nwindow = \"20000000..20000999\"\nchunk_blocks = 1000\n";
        let body = spec_for(&sim.url(), &out, "page_size = 500", exports).replace(
            "[output]\n",
            &format!("[output]\n{roll}\ncommit_pages = 10000\ncommit_interval_secs = 3600\ncompact = false\n"),
        );
        let spec = write_spec(dir.path(), "r.toml", &body);
        let o = chainetl(&["run", &spec, "-q"]);
        assert!(o.status.success(), "{}", text(&o));
        let files = parquet_files(&out);
        assert!(files.len() >= 3, "{name}: expected several rolled files, got {}", files.len());
        for f in &files {
            if check == 0 {
                let n = parquet::file::reader::SerializedFileReader::new(std::fs::File::open(f).unwrap()).unwrap();
                let rows = parquet::file::reader::FileReader::metadata(&n).file_metadata().num_rows();
                assert!(rows <= 5000 + 500, "{name}: {rows} rows in {f:?}");
            } else {
                let len = std::fs::metadata(f).unwrap().len();
                assert!(len <= 2 * 1024 * 1024, "{name}: {len} bytes in {f:?}");
            }
        }
        let want = truth::events(&data, Chain::Ethereum, 20_000_000, 20_000_999, &[], None);
        assert_eq!(read_rows(&out.join("events"), truth::EVENT_COLS), want, "{name}: rows");
    }
}
