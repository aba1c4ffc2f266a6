//! The usual CLI comforts: shell completions and man
//! pages generated from the clap definitions, `--version` naming the
//! commit, and crash hooks that only the tests' own tool honours.

use crate::common::*;
use std::process::Command;

#[test]
fn completions_for_each_shell_name_the_commands_and_flags() {
    for shell in ["bash", "zsh", "fish", "powershell"] {
        let o = chainetl(&["completions", shell]);
        assert!(o.status.success(), "{shell}: {}", text(&o));
        let script = String::from_utf8_lossy(&o.stdout);
        for word in ["chainetl", "validate", "plan", "as-of", "summary", "completions"] {
            assert!(script.contains(word), "{shell} completion lacks {word}");
        }
    }
    // The bash script is valid bash.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("chainetl.bash");
    std::fs::write(&path, chainetl(&["completions", "bash"]).stdout).unwrap();
    let o = std::process::Command::new("bash").arg("-n").arg(&path).output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let o = chainetl(&["completions", "tcsh"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
}

#[test]
fn man_pages_come_from_the_same_definitions() {
    let o = chainetl(&["man"]);
    assert!(o.status.success(), "{}", text(&o));
    let page = String::from_utf8_lossy(&o.stdout);
    assert!(page.contains(".TH chainetl 1") && page.contains("validate"), "{page}");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("man1");
    let o = chainetl(&["man", "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    for name in ["chainetl.1", "chainetl-run.1", "chainetl-plan.1", "chainetl-completions.1"] {
        assert!(out.join(name).is_file(), "no {name}");
    }
    let plan = std::fs::read_to_string(out.join("chainetl-plan.1")).unwrap();
    assert!(plan.contains("summary") && plan.contains("as\\-of"), "{plan}");
}

#[test]
fn version_names_the_version_and_the_commit_it_was_built_from() {
    let o = chainetl(&["--version"]);
    assert!(o.status.success(), "{}", text(&o));
    let line = String::from_utf8_lossy(&o.stdout).trim().to_string();
    let commit = line
        .strip_prefix(&format!("chainetl {} (commit ", env!("CARGO_PKG_VERSION")))
        .and_then(|r| r.strip_suffix(')'))
        .unwrap_or_else(|| panic!("{line}"));
    let head = Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .ok()
        .filter(|o| o.status.success());
    match head {
        Some(h) => assert_eq!(commit, String::from_utf8_lossy(&h.stdout).trim(), "{line}"),
        None => assert!(commit == "unknown" || commit.chars().all(|c| c.is_ascii_hexdigit()), "{line}"),
    }
}

#[test]
fn only_the_crash_tool_honours_failpoints_the_chainetl_binary_never_does() {
    let dir = tempfile::tempdir().unwrap();
    let spec = write_spec(
        dir.path(),
        "fp.toml",
        &format!(
            "name = \"fp\"\n[source]\nbase_url = \"sim\"\n[output]\nuri = \"{}\"\n[[export]]\ndataset = \"blocks\"\nchains = [\"base\"]\nwindow = \"1..100\"\n",
            dir.path().join("out").display()
        ),
    );
    // The crash tests' tool aborts at the point...
    let o = crash_bin("after-file-write:1").args(["run", &spec, "-q"]).output().unwrap();
    assert_eq!(o.status.code(), None, "aborted by a signal: {}", text(&o));
    // ...and the binary users run, given the same variable, runs to the end.
    let o = bin()
        .args(["run", &spec, "-q"])
        .env("CHAINETL_FAILPOINT", "after-file-write:1")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
}

#[test]
fn the_kubernetes_example_runs_the_image_the_dockerfile_builds() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let docker = std::fs::read_to_string(root.join("Dockerfile")).unwrap();
    let readme = std::fs::read_to_string(root.join("docs/s3-and-scale-out.md")).unwrap();
    let froms: Vec<&str> = docker.lines().filter(|l| l.starts_with("FROM ")).collect();
    assert!(froms.len() >= 2 && froms[0].contains(" AS build"), "multi-stage: {froms:?}");
    assert!(docker.contains("COPY --from=build "), "the runtime stage takes the built binary");
    assert!(docker.contains("cargo build --release --locked --bin chainetl") && !docker.contains("--features"));
    let user = docker.lines().rfind(|l| l.starts_with("USER ")).expect("a USER line");
    assert!(!user.contains("root") && !user.contains(" 0"), "{user}");
    // The docs build the image by the Dockerfile's own command, and the
    // Kubernetes example names that image.
    let tag = format!("chainetl:{}", env!("CARGO_PKG_VERSION"));
    assert!(docker.contains(&format!("docker build -t {tag} .")), "{docker}");
    assert!(
        readme.contains(&format!("docker build -t {tag} .")),
        "docs/s3-and-scale-out.md builds the image"
    );
    let image = readme
        .lines()
        .find(|l| l.trim_start().starts_with("image: "))
        .expect("an image in docs/s3-and-scale-out.md");
    assert!(image.contains(&format!("/{tag}")), "{image}");
}
