use super::*;
use crate::vocab::evm::EventSignature;
use crate::vocab::window::Window;

#[test]
fn reports_every_error_with_its_line() {
    let text = r#"name = "t"
[source]
base_url = "sim"
max_concurrency = 0
[output]
uri = "out"
[[export]]
dataset = "events"
chains = ["ethereum", "solana"]
window = "7x"
contract_address = "0x123"
[[export]]
dataset = "blocks"
chains = ["base"]
"#;
    let errs = Spec::parse("t.toml", text).unwrap_err().0;
    let lines: Vec<usize> = errs.iter().map(|e| e.line).collect();
    assert_eq!(lines, vec![4, 9, 10, 11, 13], "{errs:?}");
    assert!(
        errs[0]
            .to_string()
            .starts_with("t.toml:4:19: source.max_concurrency: must be an integer from 1 to 1024")
    );
}

#[test]
fn unknown_keys_are_errors() {
    let text = "name = \"t\"\n[source]\nbase_url = \"sim\"\nmax_concurency = 3\n[output]\nuri = \"o\"\n";
    let errs = Spec::parse("t.toml", text).unwrap_err().0;
    let e = errs.iter().find(|e| e.line == 4).unwrap_or_else(|| panic!("{errs:?}"));
    assert_eq!(e.key, "source.max_concurency");
    assert_eq!(e.message, "unknown key; did you mean `max_concurrency`?");
    // The missing [[export]] is reported alongside.
    assert!(errs.iter().any(|e| e.message.contains("no [[export]]")), "{errs:?}");
}

/// A spec text holding every key of `keys` with a value of its type.
fn every_key(keys: &[shape::Key], table: &str, out: &mut String) {
    use shape::Kind;
    let mut tables = Vec::new();
    for k in keys {
        let v = match k.kind {
            Kind::Str => "\"x\"",
            Kind::Int | Kind::UInt(_) | Kind::Start | Kind::Confirmations => "1",
            Kind::Float => "0.5",
            Kind::Bool => "true",
            Kind::StrList => "[\"x\"]",
            Kind::IntList => "[1]",
            Kind::Duration => "\"5m\"",
            Kind::StrTable => "{ x = \"y\" }",
            Kind::Table(_) | Kind::Tables(_) => {
                tables.push(k);
                continue;
            }
        };
        out.push_str(&format!("{} = {v}\n", k.name));
    }
    for k in tables {
        let name = if table.is_empty() {
            k.name.to_string()
        } else {
            format!("{table}.{}", k.name)
        };
        match k.kind {
            Kind::Table(inner) => {
                out.push_str(&format!("[{name}]\n"));
                every_key(inner, &name, out);
            }
            Kind::Tables(inner) => {
                out.push_str(&format!("[[{name}]]\n"));
                every_key(inner, &name, out);
            }
            _ => {}
        }
    }
}

#[test]
fn the_schema_and_the_raw_model_name_the_same_keys() {
    // Every schema key deserializes into the raw model...
    let mut text = String::new();
    every_key(shape::SPEC, "", &mut text);
    let (mut root, syntax) = toml::de::DeTable::parse_recoverable(&text);
    assert!(syntax.is_empty(), "{text}");
    assert_eq!(shape::check(&mut root), vec![], "{text}");
    let raw = <RawSpec as serde::Deserialize>::deserialize(toml::de::Deserializer::from(root));
    assert!(raw.is_ok(), "{:?}\n{text}", raw.err());
    // ...and the raw model takes no key the schema does not list (serde
    // names what it expected when it meets an unknown one).
    let tables: [(&str, &[shape::Key]); 5] = [
        ("", shape::SPEC),
        ("[source]\n", shape::source()),
        ("[source.sim]\n", shape::sim()),
        ("[output]\n", shape::output()),
        ("[[export]]\n", shape::export()),
    ];
    for (header, keys) in tables {
        let text = format!("{header}zz_unknown = 1\n");
        let e = toml::from_str::<RawSpec>(&text).unwrap_err().message().to_string();
        let expected: Vec<&str> = e.split('`').skip(3).step_by(2).collect();
        let mut want: Vec<&str> = keys.iter().map(|k| k.name).collect();
        let mut got = expected.clone();
        want.sort();
        got.sort();
        assert_eq!(got, want, "{header}: {e}");
    }
}

fn valid() -> &'static str {
    "name = \"p\"\n[source]\nbase_url = \"sim\"\nmax_concurrency = 4\n[source.sim]\nfrozen_at = \"2025-06-01T00:00:00Z\"\n[output]\nuri = \"o\"\n[[export]]\ndataset = \"events\"\nchains = [\"base\", \"ethereum\"]\nwindow = \"100..199\"\nsignatures = [\"Transfer(address,address,uint)\"]\n[[export]]\ndataset = \"portfolio\"\nchains = [\"base\"]\nwallets = [\"0x00000000000000000000000000000000000000aa\"]\nwindow = \"2025-01-01..2025-02-01\"\n"
}

#[test]
fn the_valid_spec_of_the_property_tests_is_valid() {
    let s = Spec::parse("p.toml", valid()).unwrap();
    match &s.exports[0].selection {
        Selection::Events { topics, signatures, .. } => {
            assert_eq!(
                topics,
                &vec![crate::vocab::evm::signature_topic("Transfer(address,address,uint256)")]
            );
            assert_eq!(signatures[0].canonical, "Transfer(address,address,uint256)");
        }
        other => panic!("{other:?}"),
    }
}

use proptest::prelude::*;

/// Characters that matter to TOML and to the checks.
const NOISE: &[char] = &[
    '"', '\'', '[', ']', '{', '}', '=', '.', ',', '#', '\n', ' ', '\\', '$', '0', '9', '-', ':', 'x', 'é', '\u{0}',
];

proptest! {
    #![proptest_config(ProptestConfig { cases: crate::util::proptest_cases(256), ..ProptestConfig::default() })]

    #[test]
    fn mutated_spec_text_never_panics(
        edits in prop::collection::vec((0usize..400, 0usize..NOISE.len(), 0u8..4), 1..6),
    ) {
        let mut text: Vec<char> = valid().chars().collect();
        for (at, c, op) in edits {
            let at = at % (text.len() + 1);
            match op {
                0 => text.insert(at, NOISE[c]),
                1 if at < text.len() => {
                    text.remove(at);
                }
                2 => {
                    // Duplicate a line: duplicate keys and tables.
                    let s: String = text.iter().collect();
                    let lines: Vec<&str> = s.lines().collect();
                    if lines.is_empty() {
                        continue;
                    }
                    let l = lines[at % lines.len()];
                    let mut v: Vec<&str> = lines.clone();
                    v.insert(at % lines.len(), l);
                    text = v.join("\n").chars().collect();
                }
                _ => text.truncate(at),
            }
        }
        let text: String = text.into_iter().collect();
        // Err or Ok, never a panic; every error says where.
        if let Err(e) = Spec::parse("m.toml", &text) {
            prop_assert!(!e.0.is_empty());
            prop_assert!(e.0.iter().all(|x| x.file == "m.toml" && !x.message.is_empty()));
        }
        let env = |k: &str| k.len().is_multiple_of(2).then(|| "v\\'\"".to_string());
        let _ = text::interpolate("m.toml", &text, &env);
        let _ = text::apply_overrides("m.toml", &text, &["export.0.window=1..2".into(), "source.x.y=3".into()]);
    }

    #[test]
    fn values_of_any_text_never_panic(s in "\\PC{0,60}") {
        let _ = Window::parse(&s);
        let _ = crate::vocab::window::parse_duration(&s);
        let _ = EventSignature::parse(&s);
        let value = s.replace('\\', "\\\\").replace('"', "\\\"");
        for key in ["window", "signatures", "chunk_duration", "start"] {
            let v = if key == "signatures" { format!("[\"{value}\"]") } else { format!("\"{value}\"") };
            let text = valid().replace("window = \"100..199\"", &format!("{key} = {v}\nwindow = \"1..2\""));
            let _ = Spec::parse("v.toml", &text);
        }
    }
}

/// The default bloom-filter columns, as docs/spec.md lists them: every
/// dataset's lookup columns, in dataset order.
#[test]
fn the_default_bloom_filters_are_the_documented_lookup_columns() {
    let s = Spec::parse("p.toml", valid()).unwrap();
    assert_eq!(
        s.output.bloom_filters,
        ["transaction_hash", "contract_address", "topic0", "wallet_address"]
    );
}

/// A spec writing Iceberg tables through `catalog` (a `[output.catalog]`
/// body) with `format`.
fn with_catalog(format: &str, catalog: &str, properties: &str) -> String {
    format!(
        "name = \"t\"\n[source]\nbase_url = \"sim\"\n[output]\nuri = \"out\"\nformat = \"{format}\"\n[output.catalog]\n{catalog}\n\
         [output.table_properties]\n{properties}\n[[export]]\ndataset = \"blocks\"\nchains = [\"base\"]\nwindow = \"1..100\"\n"
    )
}

#[test]
fn a_catalog_is_read_with_its_defaults() {
    let text = with_catalog(
        "iceberg",
        "type = \"rest\"\nuri = \"https://cat.example.com/api/catalog/\"\nnamespace = \"chain\"\ncredential_env = \"CAT_CRED\"",
        "\"history.expire.max-snapshot-age-ms\" = \"60000\"",
    );
    let spec = Spec::parse("t.toml", &text).unwrap();
    let c = spec.output.catalog.unwrap();
    assert_eq!(c.uri, "https://cat.example.com/api/catalog");
    assert_eq!(c.namespace, "chain");
    assert_eq!(c.scope, "catalog");
    assert_eq!(c.auth, CatalogAuth::Credential("CAT_CRED".into()));
    assert_eq!(spec.output.table_properties["history.expire.max-snapshot-age-ms"], "60000");
}

#[test]
fn a_catalogs_mistakes_are_reported_together_and_a_pasted_secret_is_not_repeated() {
    let text = with_catalog(
        "iceberg",
        "type = \"glue\"\nuri = \"https://id:pw@cat.example.com\"\nnamespace = \"my-ns\"\ncredential_env = \"abc:sk_live_9f8e7d6c5b4a\"\ntoken_env = \"T\"",
        "\"chainetl.txn.x\" = \"1\"\n\"write.metadata.previous-versions-max\" = \"lots\"",
    );
    let errs = Spec::parse("t.toml", &text).unwrap_err().0;
    let keys: Vec<&str> = errs.iter().map(|e| e.key.as_str()).collect();
    for k in [
        "output.catalog.type",
        "output.catalog.uri",
        "output.catalog.namespace",
        "output.catalog.credential_env",
        "output.table_properties",
        "output.table_properties.\"write.metadata.previous-versions-max\"",
    ] {
        assert!(keys.contains(&k), "{k} not reported: {errs:?}");
    }
    let all: String = errs.iter().map(|e| e.to_string()).collect();
    assert!(!all.contains("sk_live_9f8e7d6c5b4a"), "{all}");
    assert!(!all.contains(":pw@"), "{all}");
}

#[test]
fn a_catalog_and_table_properties_belong_to_iceberg() {
    let text = with_catalog(
        "delta",
        "type = \"rest\"\nuri = \"http://localhost:8181\"\nnamespace = \"chain\"",
        "a = \"b\"",
    );
    let errs = Spec::parse("t.toml", &text).unwrap_err().0;
    assert!(
        errs.iter().any(|e| e.key == "output.catalog" && e.message.contains("iceberg")),
        "{errs:?}"
    );
    assert!(errs.iter().any(|e| e.key == "output.table_properties"), "{errs:?}");
    let both = with_catalog(
        "iceberg",
        "type = \"rest\"\nuri = \"http://localhost:8181\"\nnamespace = \"chain\"\ncredential_env = \"A\"\ntoken_env = \"B\"",
        "",
    );
    let errs = Spec::parse("t.toml", &both).unwrap_err().0;
    assert!(
        errs.iter()
            .any(|e| e.key == "output.catalog.token_env" && e.message.contains("not both")),
        "{errs:?}"
    );
}

/// The 9-line spec of issue #67's `--set` reproductions.
const NINE_LINES: &str = "name = \"a\"\n[source]\nbase_url = \"sim\"\n[output]\nuri = \"out\"\n[[export]]\ndataset = \"blocks\"\nchains = [\"ethereum\"]\nwindow = \"100..199\"\n";

fn load_with_sets(text: &str, sets: &[&str]) -> Result<Spec, SpecErrors> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.toml");
    std::fs::write(&path, text).unwrap();
    let path = path.to_str().unwrap().to_string();
    let sets: Vec<String> = sets.iter().map(ToString::to_string).collect();
    Spec::load_with(&path, &sets).map_err(|e| {
        // The temporary path, as a user's file name would read.
        SpecErrors(
            e.0.into_iter()
                .map(|mut x| {
                    x.file = x.file.replace(&path, "a.toml");
                    x
                })
                .collect(),
        )
    })
}

#[test]
fn an_error_in_a_set_value_names_the_set_not_a_line_of_the_file() {
    for (set, key) in [
        ("export.0.windw=1d", "export[0].windw"),
        ("source.max_concurrency=lots", "source.max_concurrency"),
        ("export.0.chains=ethereum", "export[0].chains"),
    ] {
        let errs = load_with_sets(NINE_LINES, &[set]).unwrap_err().0;
        let path = set.split_once('=').unwrap().0;
        let e = errs.iter().find(|e| e.key == key).unwrap_or_else(|| panic!("{set}: {errs:?}"));
        assert!(e.to_string().starts_with(&format!("--set {path}: {key}: ")), "{set}: {e}");
        assert_eq!(e.line, 0, "{set}: {e}");
    }
    // An error of the file's own keeps its line though a set added a line above it.
    let text = NINE_LINES.replace("[output]\nuri = \"out\"\n", "[output]\nuri = \"out\"\ncompresion = \"zstd\"\n");
    let errs = load_with_sets(&text, &["source.max_concurrency=4", "source.page_size=10"])
        .unwrap_err()
        .0;
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert_eq!((errs[0].file.as_str(), errs[0].line, errs[0].col), ("a.toml", 6, 1), "{errs:?}");
}

#[test]
fn a_value_close_to_a_known_one_gets_a_did_you_mean() {
    for (from, to, want) in [
        (
            "chains = [\"ethereum\"]",
            "chains = [\"etherium\"]",
            "unknown chain `etherium`: did you mean `ethereum`?",
        ),
        (
            "dataset = \"blocks\"",
            "dataset = \"block\"",
            "unknown dataset `block`: did you mean `blocks`?",
        ),
        (
            "window = \"100..199\"",
            "window = \"100..199\"\nexclude_columns = [\"logs_blom\"]",
            "`logs_blom` is not a column of blocks; its columns: chain, ",
        ),
        ("uri = \"out\"", "uri = \"out\"\nformat = \"delt\"", "`delt`: did you mean `delta`?"),
    ] {
        let errs = Spec::parse("a.toml", &NINE_LINES.replace(from, to)).unwrap_err().0;
        assert!(
            errs.iter()
                .any(|e| e.message.starts_with(want) && e.message.contains("did you mean")),
            "{to}: {errs:?}"
        );
    }
}

#[test]
fn a_bad_window_hides_none_of_the_exports_other_errors() {
    let text = NINE_LINES.replace(
        "window = \"100..199\"",
        "window = \"7x\"\nexclude_columns = [\"nope\", \"neither\"]",
    );
    let errs = Spec::parse("a.toml", &text).unwrap_err().0;
    assert!(errs.iter().any(|e| e.key == "export[0].window"), "{errs:?}");
    assert_eq!(errs.iter().filter(|e| e.key == "export[0].exclude_columns").count(), 2, "{errs:?}");
}

#[test]
fn a_key_pasted_as_api_key_env_is_never_repeated() {
    for key in ["sk_live_9f8e7d6c5b4a", "sk-live-9f8e7d6c5b4a", "I2MBIPC3CU5D7WM882FXNFMJHR3V7DEFKC"] {
        let text = NINE_LINES.replace("base_url = \"sim\"", &format!("base_url = \"sim\"\napi_key_env = \"{key}\""));
        let message = match Spec::parse("a.toml", &text) {
            Ok(spec) => spec.source.unset_key_message().expect("no such variable"),
            Err(e) => e.to_string(),
        };
        assert!(
            !message.contains(key) && !message.contains("9f8e7d") && !message.contains("I2MB"),
            "{message}"
        );
        assert!(message.contains("a.toml:4:15"), "{message}");
    }
    let text = NINE_LINES.replace(
        "base_url = \"sim\"",
        "base_url = \"sim\"\napi_key_env = \"CHAINETL_TEST_NO_SUCH_KEY\"",
    );
    let message = Spec::parse("a.toml", &text).unwrap().source.unset_key_message().unwrap();
    assert!(
        message.contains("export CHAINETL_TEST_NO_SUCH_KEY=") && message.contains("remove api_key_env"),
        "{message}"
    );
}
