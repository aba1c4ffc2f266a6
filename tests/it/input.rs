//! Hostile and careless input:
//! `validate` reports every error at once with `file:line:col: key:`,
//! everything a spec can get wrong exits 2 (never 1, never a panic or an
//! abort), pasted event signatures select their canonical event's rows,
//! windows beyond what the service can mean are refused, and overlapping
//! exports are refused before they write a row twice.

use crate::common::*;
use std::path::Path;

/// Runs `chainetl ARGS` in `dir` with extra environment variables.
fn run_in(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> std::process::Output {
    let mut c = bin();
    c.current_dir(dir).args(args).env_remove("RUST_LOG");
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap()
}

/// A spec on the built-in, frozen simulator with `exports` appended.
fn sim_spec(name: &str, out: &Path, source_extra: &str, exports: &str) -> String {
    format!(
        "name = \"{name}\"\n[source]\nbase_url = \"sim\"\n{source_extra}\n[source.sim]\nfrozen_at = \"2025-06-01T00:00:00Z\"\nevents_per_block = 30\n[output]\nuri = \"{}\"\n{exports}",
        out.display()
    )
}

#[test]
fn validate_reports_unknown_keys_type_errors_and_bad_values_together() {
    let dir = tempfile::tempdir().unwrap();
    write_spec(
        dir.path(),
        "all.toml",
        r#"name = "all"
[source]
base_url = "sim"
max_concurency = 8
page_size = "8"
timeout_secs = 0
[output]
uri = "out"
compresion = "zstd"
[[export]]
dataset = "blocks"
chains = ["ethereum", 7]
window = "7x"
chunk_blocks = 10
"#,
    );
    let o = run_in(dir.path(), &["validate", "all.toml"], &[]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(2), "{t}");
    for want in [
        "all.toml:4:1: source.max_concurency: unknown key; did you mean `max_concurrency`?",
        "all.toml:5:13: source.page_size: expected an integer, got a string",
        "all.toml:6:16: source.timeout_secs: must be an integer from 1 to 3600, got 0",
        "all.toml:9:1: output.compresion: unknown key; did you mean `compression`?",
        "all.toml:12:10: export[0].chains: expected an array of strings, got an array holding an integer",
        "all.toml:13:10: export[0].window: `7x` is not a window",
    ] {
        assert!(t.contains(want), "missing `{want}` in:\n{t}");
    }
    assert!(t.starts_with("6 errors in the spec:"), "{t}");
}

#[test]
fn a_duplicate_key_names_the_key() {
    let dir = tempfile::tempdir().unwrap();
    write_spec(
        dir.path(),
        "dup.toml",
        "name = \"d\"\n[source]\nbase_url = \"sim\"\npage_size = 10\npage_size = 20\n[output]\nuri = \"o\"\n",
    );
    let o = run_in(dir.path(), &["validate", "dup.toml"], &[]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(2), "{t}");
    assert!(t.contains("dup.toml:5:1: duplicate key `page_size`"), "{t}");
}

#[test]
fn invalid_simulator_settings_and_long_job_names_fail_validate_with_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let long = "n".repeat(230);
    write_spec(
        dir.path(),
        "sim.toml",
        &format!(
            "name = \"{long}\"\n[source]\nbase_url = \"sim\"\n[source.sim]\nfrozen_at = \"yesterday\"\nerror_rate = 2.0\nquota_rps = -1\n[output]\nuri = \"o\"\n[[export]]\ndataset = \"blocks\"\nchains = [\"base\"]\nwindow = \"1..2\"\n"
        ),
    );
    let o = run_in(dir.path(), &["validate", "sim.toml"], &[]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(2), "{t}");
    assert!(t.contains("sim.toml:1:8: name: 230 characters is too long"), "{t}");
    assert!(
        t.contains("sim.toml:5:13: source.sim.frozen_at: `yesterday` is not an ISO 8601"),
        "{t}"
    );
    assert!(
        t.contains("sim.toml:6:14: source.sim.error_rate: must be a share from 0 to 1, got 2"),
        "{t}"
    );
    assert!(t.contains("sim.toml:7:13: source.sim.quota_rps:"), "{t}");
    // `run` says the same and writes nothing.
    let o = run_in(dir.path(), &["run", "sim.toml"], &[]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(!dir.path().join("o").exists());
}

#[test]
fn an_empty_or_multi_line_api_key_is_exit_2_naming_the_variable_not_the_value() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    write_spec(
        dir.path(),
        "key.toml",
        &sim_spec(
            "key",
            &out,
            "api_key_env = \"CHAINETL_TEST_KEY\"",
            "[[export]]\ndataset = \"blocks\"\nchains = [\"base\"]\nwindow = \"100..199\"\n",
        ),
    );
    for (value, why) in [("", "is empty"), ("s3cr3t-part\nsecond-line", "control character")] {
        let o = run_in(dir.path(), &["run", "key.toml"], &[("CHAINETL_TEST_KEY", value)]);
        let t = text(&o);
        assert_eq!(o.status.code(), Some(2), "{value:?}: {t}");
        assert!(t.contains("CHAINETL_TEST_KEY"), "{t}");
        assert!(t.contains(why), "{t}");
        assert!(!t.contains("s3cr3t") && !t.contains("second-line"), "the key leaked: {t}");
    }
}

const CANONICAL: &str = "Transfer(address,address,uint256)";
const TRANSFER_TOPIC: &str = "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef";

#[test]
fn every_spelling_of_an_event_selects_the_rows_of_its_canonical_form() {
    let dir = tempfile::tempdir().unwrap();
    let export = |sig: &str| {
        format!(
            "[[export]]\ndataset = \"events\"\nchains = [\"base\"]\nwindow = \"20000000..20000099\"\nsignatures = [{}]\n",
            toml_string(sig)
        )
    };
    let rows_of = |i: usize, sig: &str| {
        let out = dir.path().join(format!("out{i}"));
        let spec = write_spec(
            dir.path(),
            &format!("s{i}.toml"),
            &sim_spec(&format!("s{i}"), &out, "", &export(sig)),
        );
        let o = chainetl(&["plan", &spec]);
        let t = text(&o);
        assert!(o.status.success(), "{sig}: {t}");
        assert!(t.contains(&format!("{CANONICAL} topic0 {TRANSFER_TOPIC}")), "{sig}: {t}");
        let o = chainetl(&["run", &spec]);
        assert!(o.status.success(), "{sig}: {}", text(&o));
        read_rows(&out.join("events"), &["block_number", "log_index", "topic0"])
    };
    let want = rows_of(0, CANONICAL);
    assert!(want.len() > 100, "too few rows to mean anything: {}", want.len());
    assert!(want.iter().all(|r| r[2] == TRANSFER_TOPIC));
    for (i, sig) in [
        "Transfer(address indexed from, address indexed to, uint256 value)",
        "event Transfer(address indexed from, address indexed to, uint256 value);",
        "Transfer(address,address,uint)",
        "  Transfer ( address , address indexed , uint256 )",
    ]
    .into_iter()
    .enumerate()
    {
        assert_eq!(rows_of(i + 1, sig), want, "{sig}");
    }
}

/// A TOML basic string holding `s`.
fn toml_string(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

#[test]
fn signatures_that_are_not_events_fail_validate_each_with_its_reason() {
    let dir = tempfile::tempdir().unwrap();
    let sigs = [
        "Transfer(address,address,uint257)",
        "Transfer(address,address",
        "Transfer(MyStruct)",
        "function transfer(address,uint256)",
        "Transfer(address) anonymous",
        "Transfer(address) view",
        "0x1234",
    ];
    let list: Vec<String> = sigs.iter().map(|s| toml_string(s)).collect();
    write_spec(
        dir.path(),
        "sig.toml",
        &format!(
            "name = \"sig\"\n[source]\nbase_url = \"sim\"\n[output]\nuri = \"o\"\n[[export]]\ndataset = \"events\"\nchains = [\"base\"]\nwindow = \"1..2\"\nsignatures = [\n{}\n]\n",
            list.join(",\n")
        ),
    );
    let o = run_in(dir.path(), &["validate", "sig.toml"], &[]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(2), "{t}");
    assert!(t.starts_with(&format!("{} errors in the spec:", sigs.len())), "{t}");
    assert!(
        t.contains("sig.toml:11:1: export[0].signatures: `Transfer(address,address,uint257)`"),
        "{t}"
    );
    assert!(t.contains("`MyStruct` is not an ABI type"), "{t}");
    assert!(t.contains("anonymous events have no topic0"), "{t}");
}

#[test]
fn variables_in_comments_are_left_alone_and_literal_strings_keep_backslashes() {
    let dir = tempfile::tempdir().unwrap();
    write_spec(
        dir.path(),
        "env.toml",
        "name = \"env\" # was ${CHAINETL_UNSET_VARIABLE}\n[source]\nbase_url = \"sim\"\n[output]\nuri = '${CHAINETL_TEST_DIR}'\n[[export]]\ndataset = \"blocks\"\nchains = [\"base\"]\nwindow = \"1..2\"\n",
    );
    let o = run_in(dir.path(), &["plan", "env.toml"], &[("CHAINETL_TEST_DIR", r"data\out")]);
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(t.contains(r"job env → data\out"), "{t}");
}

#[test]
fn windows_beyond_what_the_service_can_mean_are_refused_before_planning() {
    let dir = tempfile::tempdir().unwrap();
    for (i, window) in [
        "0..100000000000000",
        "0..18446744073709551615",
        "9223372036854775807..9223372036854775900",
        "18446744073709551000..18446744073709551615",
    ]
    .into_iter()
    .enumerate()
    {
        let spec = write_spec(
            dir.path(),
            &format!("w{i}.toml"),
            &format!(
                "name = \"w\"\n[source]\nbase_url = \"sim\"\n[output]\nuri = \"o\"\n[[export]]\ndataset = \"blocks\"\nchains = [\"base\"]\nwindow = \"{window}\"\n"
            ),
        );
        for cmd in ["validate", "plan", "run"] {
            let o = run_in(dir.path(), &[cmd, &spec], &[]);
            let t = text(&o);
            assert_eq!(o.status.code(), Some(2), "{cmd} {window}: {t}");
            assert!(
                t.contains("export[0].window:") && t.contains("1000000000000"),
                "{cmd} {window}: {t}"
            );
        }
        assert!(!dir.path().join("o").exists(), "run wrote state for {window}");
    }
}

#[test]
fn a_window_cut_into_too_many_units_is_refused_and_a_big_one_plans_quickly() {
    let dir = tempfile::tempdir().unwrap();
    let spec = |window: &str, extra: &str| {
        format!(
            "name = \"u\"\n[source]\nbase_url = \"sim\"\n[output]\nuri = \"o\"\n[[export]]\ndataset = \"blocks\"\nchains = [\"base\"]\nwindow = \"{window}\"\n{extra}"
        )
    };
    let p = write_spec(dir.path(), "many.toml", &spec("0..999999999", "chunk_blocks = 1\n"));
    let o = run_in(dir.path(), &["plan", &p], &[]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(2), "{t}");
    assert!(
        t.contains("export[0].chunk_blocks:") && t.contains("up to 1000000002 units on base"),
        "{t}"
    );
    // The largest window allowed, cut automatically, plans within bounds.
    let p = write_spec(dir.path(), "big.toml", &spec("0..999999999999", ""));
    let o = run_in(dir.path(), &["validate", &p], &[]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let p = write_spec(dir.path(), "ok.toml", &spec("0..999999999", ""));
    let started = std::time::Instant::now();
    let o = run_in(dir.path(), &["plan", &p], &[]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(started.elapsed().as_secs() < 20);
}

#[test]
fn chunk_keys_that_do_not_apply_to_the_window_are_errors_with_their_line() {
    // Both were accepted and silently ignored (the plan showed
    // the automatic units).
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let exports = "[[export]]\ndataset = \"blocks\"\nchains = [\"ethereum\"]\nwindow = \"100..199\"\nchunk_duration = \"1h\"\n\
                   [[export]]\ndataset = \"events\"\nchains = [\"base\"]\nwindow = \"2025-05-01T00:00:00Z..2025-05-02T00:00:00Z\"\nchunk_blocks = 100\n\
                   [[export]]\ndataset = \"blocks\"\nchains = [\"base\"]\nnumbers = [1, 2]\nchunk_blocks = 10\n";
    let p = write_spec(dir.path(), "c.toml", &sim_spec("c", &out, "", exports));
    let o = run_in(dir.path(), &["validate", &p], &[]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(2), "{t}");
    for want in [
        "c.toml:14:18: export[0].chunk_duration: does not apply to a block window",
        "c.toml:19:16: export[1].chunk_blocks: does not apply to a time window",
        "c.toml:24:16: export[2].chunk_blocks: does not apply to `numbers`",
    ] {
        assert!(t.contains(want), "missing `{want}` in:\n{t}");
    }
    // Each where it applies is fine.
    let exports = "[[export]]\ndataset = \"blocks\"\nchains = [\"ethereum\"]\nwindow = \"100..199\"\nchunk_blocks = 10\n\
                   [[export]]\ndataset = \"events\"\nchains = [\"base\"]\nwindow = \"2025-05-01T00:00:00Z..2025-05-02T00:00:00Z\"\nchunk_duration = \"1h\"\n";
    let p = write_spec(dir.path(), "ok.toml", &sim_spec("ok", &out, "", exports));
    let o = run_in(dir.path(), &["validate", &p], &[]);
    assert!(o.status.success(), "{}", text(&o));
}

#[test]
fn a_decoded_table_named_like_another_dataset_is_reserved_not_an_overlap() {
    // Besides "reserved", validate said the events export
    // overlapped a blocks export ("both select events rows").
    let dir = tempfile::tempdir().unwrap();
    let exports = "[[export]]\ndataset = \"blocks\"\nchains = [\"ethereum\"]\nwindow = \"100..199\"\n\
                   [[export]]\ndataset = \"events\"\nchains = [\"ethereum\"]\nwindow = \"100..199\"\n\
                   decode = true\nsignatures = [\"event A(uint256 a)\"]\ntable = \"blocks\"\n";
    let p = write_spec(dir.path(), "t.toml", &sim_spec("t", &dir.path().join("out"), "", exports));
    let o = run_in(dir.path(), &["validate", &p], &[]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(2), "{t}");
    assert!(t.contains("`blocks` is reserved"), "{t}");
    assert!(!t.contains("overlaps"), "{t}");
}

#[test]
fn overlapping_exports_are_refused_naming_both_and_the_chain() {
    let dir = tempfile::tempdir().unwrap();
    let cases: [(&str, &str, bool); 9] = [
        // Two identical blocks exports: every row twice.
        (
            "dataset = \"blocks\"\nchains = [\"ethereum\"]\nwindow = \"100..199\"",
            "dataset = \"blocks\"\nchains = [\"ethereum\"]\nwindow = \"100..199\"",
            true,
        ),
        (
            "dataset = \"blocks\"\nchains = [\"base\", \"ethereum\"]\nwindow = \"100..199\"",
            "dataset = \"blocks\"\nchains = [\"ethereum\"]\nnumbers = [150]",
            true,
        ),
        (
            "dataset = \"events\"\nchains = [\"ethereum\"]\nwindow = \"100..199\"\nsignatures = [\"Transfer(address,address,uint256)\"]",
            "dataset = \"events\"\nchains = [\"ethereum\"]\nwindow = \"199..300\"\nsignatures = [\"0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef\"]",
            true,
        ),
        (
            "dataset = \"events\"\nchains = [\"ethereum\"]\nwindow = \"2025-01-01..2025-01-03\"",
            "dataset = \"events\"\nchains = [\"ethereum\"]\nwindow = \"2025-01-02..2025-01-04\"",
            true,
        ),
        (
            "dataset = \"portfolio\"\nchains = [\"ethereum\"]\nwallets = [\"0x00000000000000000000000000000000000000aa\"]",
            "dataset = \"portfolio\"\nchains = [\"ethereum\"]\nwallets = [\"0x00000000000000000000000000000000000000AA\", \"0x00000000000000000000000000000000000000bb\"]",
            true,
        ),
        (
            "dataset = \"tokens\"\nchains = [\"ethereum\"]\naddresses = [\"0x00000000000000000000000000000000000000aa\"]",
            "dataset = \"tokens\"\nchains = [\"ethereum\"]\naddresses = [\"0x00000000000000000000000000000000000000aa\"]",
            true,
        ),
        // Not overlapping: adjacent ranges, other chains, other events,
        // other wallets.
        (
            "dataset = \"blocks\"\nchains = [\"ethereum\"]\nwindow = \"100..199\"",
            "dataset = \"blocks\"\nchains = [\"ethereum\"]\nwindow = \"200..299\"",
            false,
        ),
        (
            "dataset = \"events\"\nchains = [\"ethereum\"]\nwindow = \"100..199\"\nsignatures = [\"Transfer(address,address,uint256)\"]",
            "dataset = \"events\"\nchains = [\"ethereum\"]\nwindow = \"100..199\"\nsignatures = [\"Sync(uint112,uint112)\"]",
            false,
        ),
        (
            "dataset = \"portfolio\"\nchains = [\"ethereum\"]\nwallets = [\"0x00000000000000000000000000000000000000aa\"]",
            "dataset = \"portfolio\"\nchains = [\"base\"]\nwallets = [\"0x00000000000000000000000000000000000000aa\"]",
            false,
        ),
    ];
    for (i, (a, b, overlap)) in cases.into_iter().enumerate() {
        let p = write_spec(
            dir.path(),
            &format!("o{i}.toml"),
            &format!("name = \"o\"\n[source]\nbase_url = \"sim\"\n[output]\nuri = \"o\"\n[[export]]\n{a}\n[[export]]\n{b}\n"),
        );
        let o = run_in(dir.path(), &["validate", &p], &[]);
        let t = text(&o);
        if overlap {
            assert_eq!(o.status.code(), Some(2), "case {i}: {t}");
            assert!(
                t.contains("export[1]") && t.contains("overlaps export[0] on ethereum"),
                "case {i}: {t}"
            );
        } else {
            assert!(o.status.success(), "case {i}: {t}");
        }
    }
}

#[test]
fn two_identical_exports_write_nothing_twice() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let one = "[[export]]\ndataset = \"blocks\"\nchains = [\"base\"]\nwindow = \"100..199\"\n";
    let p = write_spec(dir.path(), "twice.toml", &sim_spec("twice", &out, "", &format!("{one}{one}")));
    let o = chainetl(&["run", &p]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(read_rows(&out, &["number"]).is_empty());
}

#[test]
fn mutated_specs_exit_0_or_2_never_anything_else() {
    // A valid spec, then the same text with one line dropped, duplicated,
    // or cut short, each line in turn: the CLI never panics (101), aborts
    // (134) or reports a run-time failure (1) for what is a spec problem.
    let dir = tempfile::tempdir().unwrap();
    let base = "name = \"m\"\n[source]\nbase_url = \"sim\"\nmax_concurrency = 4\n[source.sim]\nfrozen_at = \"2025-06-01T00:00:00Z\"\n[output]\nuri = \"o\"\n[[export]]\ndataset = \"events\"\nchains = [\"base\"]\nwindow = \"100..199\"\nsignatures = [\"Transfer(address,address,uint)\"]\n";
    let lines: Vec<&str> = base.lines().collect();
    let mut variants = vec![base.to_string()];
    for i in 0..lines.len() {
        let mut dropped = lines.clone();
        dropped.remove(i);
        variants.push(dropped.join("\n"));
        let mut doubled = lines.clone();
        doubled.insert(i, lines[i]);
        variants.push(doubled.join("\n"));
        let mut cut = lines.clone();
        cut[i] = &lines[i][..lines[i].len() / 2];
        variants.push(cut.join("\n"));
    }
    // Hostile values in place of each value line.
    for (from, to) in [
        ("window = \"100..199\"", "window = \"0..100000000000000\""),
        ("window = \"100..199\"", "window = \"18446744073709551000..18446744073709551615\""),
        ("window = \"100..199\"", "window = \"100000d\""),
        ("window = \"100..199\"", "window = \"0001-01-01..9999-12-31\""),
        ("max_concurrency = 4", "max_concurrency = 9223372036854775807"),
        ("max_concurrency = 4", "max_concurrency = nan"),
        ("Transfer(address,address,uint)", "Transfer(((((((((((((((((((((((((((((((("),
        ("frozen_at = \"2025-06-01T00:00:00Z\"", "frozen_at = \"+262143-12-31T23:59:59Z\""),
        ("name = \"m\"", "name = \"../../etc\""),
    ] {
        variants.push(base.replace(from, to));
    }
    for (i, v) in variants.iter().enumerate() {
        let p = write_spec(dir.path(), "m.toml", v);
        for cmd in ["validate", "plan"] {
            let o = run_in(dir.path(), &[cmd, &p], &[]);
            let code = o.status.code();
            assert!(
                code == Some(0) || code == Some(2),
                "{cmd}: variant {i} exited {code:?}:\n{v}\n{}",
                text(&o)
            );
            if code == Some(2) {
                let t = text(&o);
                assert!(t.contains("error") && t.contains("m.toml"), "variant {i}: {t}");
            }
        }
    }
}
