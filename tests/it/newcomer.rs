//! A newcomer's first hour (issue #67): a key pasted where its variable's
//! name belongs is never printed back; `--set` mistakes are blamed on the
//! `--set`; `validate` checks the spec alone and warns, while `plan`
//! refuses what `run` would refuse before a request, with the same
//! message; values get a "did you mean"; counted words agree in number;
//! `plan` says what its request figure is; the help and `init` know
//! every format.

use crate::common::*;
use std::path::Path;
use std::process::Output;

/// The 9-line spec of the reproductions, on the built-in simulator.
fn nine_lines(dir: &Path, name: &str, out: &str, extra_source: &str) -> String {
    write_spec(
        dir,
        name,
        &format!(
            "name = \"{}\"\n[source]\nbase_url = \"sim\"\n{extra_source}[output]\nuri = \"{}\"\n[[export]]\ndataset = \"blocks\"\nchains = [\"ethereum\"]\nwindow = \"20000000..20000099\"\n",
            name.trim_end_matches(".toml"),
            dir.join(out).display()
        ),
    )
}

/// The CLI with `var` removed from its environment.
fn without(var: &str, args: &[&str]) -> Output {
    bin().args(args).env_remove("RUST_LOG").env_remove(var).output().unwrap()
}

/// The lines of `o`'s output that say an error or a warning, without the
/// word itself: what a command refused with.
fn said(o: &Output) -> Vec<String> {
    text(o)
        .lines()
        .filter_map(|l| l.strip_prefix("error: ").or_else(|| l.strip_prefix("warning: ")))
        .map(str::to_string)
        .collect()
}

#[test]
fn a_key_pasted_as_api_key_env_is_never_printed_back() {
    let dir = tempfile::tempdir().unwrap();
    let key = "sk_live_9f8e7d6c5b4a";
    let s = nine_lines(dir.path(), "a.toml", "out", &format!("api_key_env = \"{key}\"\n"));
    for args in [["validate", s.as_str()], ["plan", s.as_str()], ["run", s.as_str()]] {
        let o = without(key, &args);
        assert!(!text(&o).contains(key) && !text(&o).contains("9f8e7d"), "{args:?}: {}", text(&o));
        assert!(text(&o).contains("a.toml:4:15"), "{args:?} says where: {}", text(&o));
    }
    // Not a variable's name at all (a dash): refused by validate, still not repeated.
    let dashed = "sk-live-9f8e7d6c5b4a";
    let s = nine_lines(dir.path(), "b.toml", "out", &format!("api_key_env = \"{dashed}\"\n"));
    let o = chainetl(&["validate", &s]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(!text(&o).contains("9f8e7d"), "{}", text(&o));
}

#[test]
fn validate_warns_of_an_unset_key_and_plan_refuses_it_as_run_does() {
    let dir = tempfile::tempdir().unwrap();
    let var = "CHAINETL_TEST_UNSET_KEY_67";
    let s = nine_lines(dir.path(), "a.toml", "out", &format!("api_key_env = \"{var}\"\n"));
    let v = without(var, &["validate", &s]);
    assert!(v.status.success(), "the spec alone is fine: {}", text(&v));
    assert!(text(&v).contains("warning") && text(&v).contains(var), "{}", text(&v));
    let p = without(var, &["plan", &s]);
    let r = without(var, &["run", &s]);
    assert_eq!(p.status.code(), Some(2), "{}", text(&p));
    assert_eq!(r.status.code(), Some(2), "{}", text(&r));
    let message = said(&r)
        .into_iter()
        .find(|l| l.contains(var))
        .unwrap_or_else(|| panic!("{}", text(&r)));
    assert!(said(&p).contains(&message), "plan: {}\nrun: {message}", text(&p));
    assert!(
        message.contains(&format!("export {var}=")) && message.contains("remove api_key_env"),
        "{message}"
    );
    assert!(message.contains("a.toml:4:15"), "{message}");
    assert!(!dir.path().join("out").exists(), "nothing written");
}

#[test]
fn plan_refuses_a_second_job_that_lays_a_shared_output_out_otherwise() {
    let dir = tempfile::tempdir().unwrap();
    let a = nine_lines(dir.path(), "job-a.toml", "shared", "");
    let o = chainetl(&["run", &a, "-q"]);
    assert!(o.status.success(), "{}", text(&o));
    let b = nine_lines(dir.path(), "job-b.toml", "shared", "");
    let body = std::fs::read_to_string(&b)
        .unwrap()
        .replace("[[export]]", "partition_by = [\"chain\"]\n[[export]]")
        .replace("20000000..20000099", "20000100..20000199");
    std::fs::write(&b, body).unwrap();
    let v = chainetl(&["validate", &b]);
    assert!(v.status.success(), "validate checks the spec alone: {}", text(&v));
    let p = chainetl(&["plan", &b]);
    let r = chainetl(&["run", &b]);
    assert_eq!(r.status.code(), Some(2), "{}", text(&r));
    assert_eq!(p.status.code(), Some(2), "plan refuses what run refuses: {}", text(&p));
    let message = said(&r)
        .into_iter()
        .find(|l| l.contains("job-a"))
        .unwrap_or_else(|| panic!("{}", text(&r)));
    assert!(said(&p).contains(&message), "plan: {}\nrun: {message}", text(&p));
}

#[test]
fn a_set_mistake_is_blamed_on_the_set_not_on_a_line_of_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let s = nine_lines(dir.path(), "a.toml", "out", "");
    assert_eq!(std::fs::read_to_string(&s).unwrap().lines().count(), 9);
    for (set, key) in [
        ("export.0.windw=1d", "export[0].windw"),
        ("source.max_concurrency=lots", "source.max_concurrency"),
        ("export.0.chains=ethereum", "export[0].chains"),
    ] {
        let o = chainetl(&["validate", &s, "--set", set]);
        assert_eq!(o.status.code(), Some(2), "{set}: {}", text(&o));
        let path = set.split_once('=').unwrap().0;
        assert!(text(&o).contains(&format!("--set {path}: {key}: ")), "{set}: {}", text(&o));
        assert!(!text(&o).contains("a.toml:"), "{set} blamed on the file: {}", text(&o));
    }
}

#[test]
fn values_get_a_did_you_mean_and_one_validate_lists_every_error() {
    let dir = tempfile::tempdir().unwrap();
    let s = nine_lines(dir.path(), "a.toml", "out", "");
    let body = std::fs::read_to_string(&s).unwrap();
    for (from, to, want) in [
        ("[\"ethereum\"]", "[\"etherium\"]", "did you mean `ethereum`?"),
        ("\"blocks\"", "\"block\"", "did you mean `blocks`?"),
        (
            "window = \"20000000..20000099\"",
            "window = \"20000000..20000099\"\nexclude_columns = [\"logs_blom\"]",
            "did you mean `logs_bloom`?",
        ),
    ] {
        std::fs::write(&s, body.replace(from, to)).unwrap();
        let o = chainetl(&["validate", &s]);
        assert_eq!(o.status.code(), Some(2), "{}", text(&o));
        assert!(text(&o).contains(want), "{to}: {}", text(&o));
    }
    // A bad window hides none of the export's other errors.
    std::fs::write(
        &s,
        body.replace("\"20000000..20000099\"", "\"7x\"\nexclude_columns = [\"nope\", \"neither\"]"),
    )
    .unwrap();
    let o = chainetl(&["validate", &s]);
    assert!(text(&o).contains("3 errors in the spec"), "{}", text(&o));
    assert!(text(&o).contains("`nope`") && text(&o).contains("`neither`"), "{}", text(&o));
}

#[test]
fn plan_says_what_its_request_figure_is_in_words_that_agree_in_number() {
    let dir = tempfile::tempdir().unwrap();
    let s = nine_lines(dir.path(), "a.toml", "out", "");
    let o = chainetl(&["plan", &s]);
    assert!(o.status.success(), "{}", text(&o));
    let t = text(&o);
    assert!(t.contains("1 unit; at least 1 request, one a unit"), "{t}");
    for wrong in ["1 units", "1 requests", "1 tables", "1 files", "1 rows", "about 1 requests"] {
        assert!(!t.contains(wrong), "{wrong}: {t}");
    }
    // A new incremental job has no units before its run reads the head: said so.
    let inc = write_spec(
        dir.path(),
        "inc.toml",
        &format!(
            "name = \"inc\"\n[source]\nbase_url = \"sim\"\n[output]\nuri = \"{}\"\n[[export]]\ndataset = \"blocks\"\nchains = [\"ethereum\"]\nincremental = true\nstart = 20000000\n",
            dir.path().join("inc").display()
        ),
    );
    let o = chainetl(&["plan", &inc]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("reads each chain's head first"), "{}", text(&o));
    assert!(!text(&o).contains("about 0 requests"), "{}", text(&o));
}

#[test]
fn the_help_and_inits_spec_know_every_format() {
    let help = text(&chainetl(&["--help"]));
    assert!(help.contains("Delta Lake") && help.contains("Iceberg"), "{help}");
    let vacuum = text(&chainetl(&["vacuum", "--help"]));
    assert!(vacuum.contains("Iceberg") && !vacuum.contains("a delta job's"), "{vacuum}");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("pipeline.toml");
    let o = chainetl(&["init", path.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    let spec = std::fs::read_to_string(&path).unwrap();
    assert!(
        spec.contains("format = \"parquet\"") && spec.contains("\"delta\"") && spec.contains("\"iceberg\""),
        "{spec}"
    );
    let o = chainetl(&["validate", path.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
}
