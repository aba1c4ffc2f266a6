//! Decoded events end to end: typed tables from signatures, an ABI file and
//! presets; ERC-20 and ERC-721 transfers split exactly; values checked
//! against the raw table by DuckDB and Spark; exactly-once across kill -9.

use crate::common::*;
use std::path::Path;

const ERC20: &str = "event Transfer(address indexed from, address indexed to, uint256 value)";
const ERC721: &str = "event Transfer(address indexed from, address indexed to, uint256 indexed tokenId)";

fn spec(url: &str, out: &Path, commit_pages: u32, exports: &str) -> String {
    format!(
        "name = \"dec\"\n[source]\nbase_url = \"{url}\"\npage_size = 200\n[output]\nuri = \"{}\"\ncommit_pages = {commit_pages}\n{exports}",
        out.display()
    )
}

/// Both Transfer standards decoded from one filter, the raw table kept.
fn both_transfers() -> String {
    format!(
        r#"
[[export]]
dataset = "events"
chains = ["ethereum", "base"]
window = "20000000..20000149"
decode = true
signatures = ["{ERC20}", "{ERC721};"]
u256 = ["decimal38", "binary"]
also_raw = true
"#
    )
}

/// The run report's tallies of export 0.
fn report_tally(out: &Path, field: &str) -> u64 {
    let runs = out.join("_chainetl/dec/runs");
    let mut total = 0;
    let latest = std::fs::read_dir(&runs).unwrap().flatten().map(|e| e.path()).max().unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(latest).unwrap()).unwrap();
    for (k, t) in doc["exports"].as_object().unwrap() {
        if k.starts_with("e0 ") {
            total += t[field].as_u64().unwrap();
        }
    }
    total
}

#[test]
fn erc20_and_erc721_transfers_land_in_exactly_one_table_each() {
    let sim = Sim::start(frozen());
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let s = write_spec(dir.path(), "s.toml", &spec(&sim.url(), &out, 25, &both_transfers()));
    let o = chainetl(&["run", &s, "-q"]);
    assert!(o.status.success(), "{}", text(&o));
    let tables: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !n.starts_with('_'))
        .collect();
    let nft = tables
        .iter()
        .find(|t| t.starts_with("transfer_"))
        .expect("a table for the ERC-721 Transfer")
        .clone();
    let q = |sql: &str| duckdb(&sql.replace("OUT", out.to_str().unwrap()).replace("NFT", &nft));
    let counts = q("select (select count(*) from read_parquet('OUT/events/**/*.parquet')),
                           (select count(*) from read_parquet('OUT/transfer/**/*.parquet')),
                           (select count(*) from read_parquet('OUT/NFT/**/*.parquet'))");
    let n = |i: usize| counts[0][i].as_str().unwrap().parse::<u64>().unwrap();
    assert!(n(1) > 100 && n(2) > 10, "both standards occur: {counts}");
    assert_eq!(
        n(0),
        n(1) + n(2) + report_tally(&out, "undecodable"),
        "every raw log is decoded once or counted"
    );
    // By key: no raw log in both tables, none in neither (ERC-721 logs have four topics).
    let split = q(
        "with d as (select chain, block_number, log_index, 20 k from read_parquet('OUT/transfer/**/*.parquet')
                              union all select chain, block_number, log_index, 721 from read_parquet('OUT/NFT/**/*.parquet'))
                   select count(*) filter (where d.k is null), count(*) filter (where d.k = 20 and len(r.topics) <> 3),
                          count(*) filter (where d.k = 721 and len(r.topics) <> 4),
                          (select count(*) - count(distinct (chain, block_number, log_index)) from d)
                   from read_parquet('OUT/events/**/*.parquet') r left join d using (chain, block_number, log_index)",
    );
    assert_eq!(split, serde_json::json!([["0", "0", "0", "0"]]));
}

#[test]
fn decoded_values_match_the_raw_logs_in_duckdb_and_spark() {
    let sim = Sim::start(frozen());
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let s = write_spec(dir.path(), "s.toml", &spec(&sim.url(), &out, 25, &both_transfers()));
    assert!(chainetl(&["run", &s, "-q"]).status.success());
    // Per-day top senders and their exact sums, computed in Python from the
    // raw table's topics and data (not from the decoder's output).
    let script = r#"
import duckdb, json, sys, pyarrow.dataset as ds
raw = ds.dataset(sys.argv[1] + "/events", format="parquet", partitioning="hive").to_table(columns=["block_timestamp", "topics", "data"]).to_pylist()
sums = {}
for r in raw:
    if len(r["topics"]) != 3:
        continue
    key = (str(r["block_timestamp"].date()), "0x" + r["topics"][1][26:])
    sums[key] = sums.get(key, 0) + int(r["data"], 16)
top = sorted(sums.items(), key=lambda kv: -kv[1])[:5]
dec = duckdb.sql(f"""select block_timestamp::date::varchar d, "from", sum(value::hugeint)::varchar s, sum(value_f64) f
                     from read_parquet('{sys.argv[1]}/transfer/**/*.parquet') group by all order by sum(value::hugeint) desc limit 5""").fetchall()
print(json.dumps({"raw": [[k[0], k[1], str(v)] for k, v in top], "decoded": [[d, f, s] for d, f, s, _ in dec],
                  "f64_ok": all(abs(f - int(s)) <= 1e-9 * int(s) for _, _, s, f in dec)}))
"#;
    let o = python_output(std::process::Command::new(python()).args(["-c", script, out.to_str().unwrap()])).unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(r["decoded"], r["raw"]);
    assert_eq!(r["f64_ok"], true);
    // Spark reads the decoded table with no casts.
    let sp = check_script("spark_check.py", &[out.to_str().unwrap(), "transfer"], &[]);
    let t = |c: &str| sp["transfer"]["types"][c].as_str().unwrap_or("missing").to_string();
    assert_eq!(t("value"), "string");
    assert_eq!(t("value_f64"), "double");
    assert_eq!(t("value_decimal38"), "decimal(38,0)");
    assert_eq!(t("value_binary"), "binary");
    assert_eq!(t("from"), "string");
    assert_eq!(t("block_number"), "bigint");
    assert_eq!(t("date"), "date");
    let decoded_rows = read_rows(&out.join("transfer"), &["chain"]).len() as u64;
    assert_eq!(sp["transfer"]["rows"].as_u64().unwrap(), decoded_rows);
}

#[test]
fn decoded_tables_are_exact_across_kill_9() {
    let sim = Sim::start(frozen());
    let clean = tempfile::tempdir().unwrap();
    let clean_out = clean.path().join("out");
    let s = write_spec(clean.path(), "s.toml", &spec(&sim.url(), &clean_out, 3, &both_transfers()));
    assert!(chainetl(&["run", &s, "-q"]).status.success());
    let cols = ["chain", "block_number", "log_index", "from", "to", "value", "value_decimal38"];
    let want = read_rows(&clean_out.join("transfer"), &cols);
    for nth in [2, 5] {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let s = write_spec(dir.path(), "s.toml", &spec(&sim.url(), &out, 3, &both_transfers()));
        let o = crash_bin(&format!("after-file-write:{nth}"))
            .args(["run", &s, "-q"])
            .output()
            .unwrap();
        assert!(!o.status.success(), "the failpoint must crash the run");
        // Resume with another cadence, so uncommitted files are not just overwritten.
        let s = write_spec(dir.path(), "s.toml", &spec(&sim.url(), &out, 1, &both_transfers()));
        let o = chainetl(&["run", &s, "-q"]);
        assert!(o.status.success(), "{}", text(&o));
        assert_eq!(
            read_rows(&out.join("transfer"), &cols),
            want,
            "kill at file {nth}: decoded rows exact"
        );
        assert_eq!(
            read_rows(&out.join("events"), &["chain", "block_number", "log_index"]),
            read_rows(&clean_out.join("events"), &["chain", "block_number", "log_index"])
        );
        let v = chainetl(&["verify", &s]);
        assert!(v.status.success(), "{}", text(&v));
    }
}

#[test]
fn abi_files_and_presets_decode_and_bad_decoding_specs_are_refused() {
    let sim = Sim::start(frozen());
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    std::fs::create_dir_all(dir.path().join("abis")).unwrap();
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("pipelines/abis/erc20.json"),
        dir.path().join("abis/erc20.json"),
    )
    .unwrap();
    let exports = r#"
[[export]]
dataset = "events"
chains = ["ethereum"]
window = "20000000..20000099"
abi = "abis/erc20.json"
[[export]]
dataset = "erc20_approvals"
chains = ["base"]
window = "20000000..20000099"
table = "base_approvals"
"#;
    let s = write_spec(dir.path(), "s.toml", &spec(&sim.url(), &out, 25, exports));
    let o = chainetl(&["run", &s, "-q"]);
    assert!(o.status.success(), "{}", text(&o));
    let approvals = read_rows(&out.join("approval"), &["owner", "spender", "value"]);
    assert!(!approvals.is_empty());
    // The simulator's unlimited approvals: 2^256 - 1, exact.
    let max = "115792089237316195423570985008687907853269984665640564039457584007913129639935";
    assert!(approvals.iter().any(|r| r[2] == max), "an unlimited approval decodes exactly");
    assert!(!read_rows(&out.join("base_approvals"), &["owner"]).is_empty());
    assert!(!out.join("events").exists(), "no raw table without also_raw");
    // Refused with a clear error, exit 2.
    for (body, want) in [
        (
            "decode = true\nsignatures = [\"0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef\"]",
            "is a topic0 hash",
        ),
        ("abi = \"missing.json\"", "cannot read"),
        ("table = \"x\"", "applies only to a decoding export"),
        (
            "decode = true\nsignatures = [\"event A(uint256 a)\", \"event B(uint256 b)\"]\ntable = \"t\"",
            "names one table",
        ),
        (
            "decode = true\nsignatures = [\"event A(uint256 a)\"]\nu256 = [\"f32\"]",
            "unknown `f32`",
        ),
        (
            "decode = true\nsignatures = [\"event A(uint256 a)\"]\ntable = \"events\"",
            "reserved",
        ),
    ] {
        let bad = format!("[[export]]\ndataset = \"events\"\nchains = [\"ethereum\"]\nwindow = \"1..2\"\n{body}\n");
        let s = write_spec(dir.path(), "bad.toml", &spec(&sim.url(), &out, 25, &bad));
        let o = chainetl(&["validate", &s]);
        assert_eq!(o.status.code(), Some(2), "{body}: {}", text(&o));
        assert!(text(&o).contains(want), "{body}: want `{want}` in {}", text(&o));
    }
}

#[test]
fn schema_prints_decoded_tables() {
    let o = chainetl(&["schema", "--event", ERC20, "--format", "duckdb", "--u256", "decimal38"]);
    assert!(o.status.success(), "{}", text(&o));
    let ddl = String::from_utf8_lossy(&o.stdout);
    for col in [
        "CREATE TABLE transfer",
        "\"from\" VARCHAR NOT NULL",
        "value VARCHAR NOT NULL",
        "value_f64 DOUBLE",
        "value_decimal38 DECIMAL(38,0)",
    ] {
        assert!(ddl.contains(col), "{col} in {ddl}");
    }
    // DuckDB accepts the DDL as printed.
    let o = python_output(std::process::Command::new(python()).args([
        "-c",
        "import duckdb, sys; duckdb.sql(sys.argv[1]); print(duckdb.sql('select count(*) from transfer').fetchall())",
        &ddl,
    ]))
    .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let o = chainetl(&["schema", "erc721_transfers", "--format", "json"]);
    assert!(String::from_utf8_lossy(&o.stdout).contains("\"tokenId\""));
    let o = chainetl(&["schema", "--event", "Transfer(address"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn fresh_clears_a_renamed_table_and_artifact_abis_match_pasted_signatures() {
    let sim = Sim::start(frozen());
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let one = |table: &str| {
        format!(
            "[[export]]\ndataset = \"events\"\nchains = [\"ethereum\"]\nwindow = \"20000000..20000049\"\ndecode = true\nsignatures = [\"{ERC20}\"]\ntable = \"{table}\"\n"
        )
    };
    let s = write_spec(dir.path(), "s.toml", &spec(&sim.url(), &out, 25, &one("usdc_transfers")));
    assert!(chainetl(&["run", &s, "-q"]).status.success());
    assert!(!parquet_files(&out.join("usdc_transfers")).is_empty());
    let s = write_spec(dir.path(), "s.toml", &spec(&sim.url(), &out, 25, &one("transfers")));
    assert_eq!(
        chainetl(&["run", &s, "-q"]).status.code(),
        Some(2),
        "a renamed table changes the job"
    );
    let o = chainetl(&["run", &s, "-q", "--fresh"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        parquet_files(&out.join("usdc_transfers")).is_empty(),
        "--fresh removes the job's files in the table it no longer writes"
    );
    assert!(!parquet_files(&out.join("transfers")).is_empty());

    // A build artifact's ABI (with internalType, and an event named `_Transfer`)
    // writes the same table as the pasted signature.
    let artifact = serde_json::json!({"contractName": "T", "abi": [
        {"type": "event", "name": "Transfer", "anonymous": false, "inputs": [
            {"name": "from", "type": "address", "indexed": true, "internalType": "address"},
            {"name": "to", "type": "address", "indexed": true, "internalType": "address"},
            {"name": "value", "type": "uint256", "indexed": false, "internalType": "uint256"}]},
        {"type": "event", "name": "_Paused", "anonymous": false, "inputs": []}
    ]});
    std::fs::write(dir.path().join("t.json"), artifact.to_string()).unwrap();
    let exports = format!(
        "[[export]]\ndataset = \"events\"\nchains = [\"base\"]\nwindow = \"20000000..20000049\"\nabi = \"t.json\"\n\
         [[export]]\ndataset = \"events\"\nchains = [\"ethereum\"]\nwindow = \"20000000..20000049\"\ndecode = true\nsignatures = [\"{ERC20}\"]\n"
    );
    let s = write_spec(dir.path(), "a.toml", &spec(&sim.url(), &dir.path().join("out2"), 25, &exports));
    let o = chainetl(&["schema", "--spec", &s, "--format", "arrow"]);
    assert!(o.status.success(), "{}", text(&o));
    let o = chainetl(&["validate", &s]);
    assert!(o.status.success(), "the same event from an artifact and a signature: {}", text(&o));
}

/// A signature pasted without its `indexed` marks: `validate` warns, and
/// the run says why its logs fit nothing (the topics and data words they
/// carry against what the signature declares) and what would fit, in
/// the summary and the run report.
#[test]
fn a_signature_without_indexed_marks_is_warned_of_and_the_run_says_what_fits() {
    let sim = Sim::start(frozen());
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let path = write_spec(
        dir.path(),
        "pasted.toml",
        &spec(
            &sim.url(),
            &out,
            1,
            "[[export]]\ndataset = \"events\"\nchains = [\"ethereum\"]\nwindow = \"20000000..20000049\"\ndecode = true\nsignatures = [\"Transfer(address,address,uint256)\"]\n",
        ),
    );
    let v = chainetl(&["validate", &path]);
    assert!(v.status.success(), "a warning, not an error: {}", text(&v));
    assert!(
        text(&v).contains("warning") && text(&v).contains("declares no indexed parameter"),
        "{}",
        text(&v)
    );
    // Every log undecodable: no decoded table got a row, which is the
    // spec's to fix (exit 2), said with what would fit.
    let o = chainetl(&["run", &path]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("logs fit a decoded event, so no decoded table got a row"),
        "{}",
        text(&o)
    );
    let fits = "write `Transfer(address indexed,address indexed,uint256)`, or use dataset = \"erc20_transfers\"";
    assert!(
        text(&o).contains("3 topics and 1 word of data") && text(&o).contains(fits),
        "{}",
        text(&o)
    );
    let mismatched = report_tally(&out, "layout_mismatched");
    assert!(mismatched > 0 && mismatched == report_tally(&out, "undecodable"), "{mismatched}");
    let runs = out.join("_chainetl/dec/runs/latest.json");
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(runs).unwrap()).unwrap();
    let hint = doc["tallies"][0]["decode_hint"].as_str().unwrap_or_default().to_string();
    assert!(hint.contains(fits), "{doc}");
}
