//! Hostile servers: a tiny raw HTTP/1.1 server per misbehaviour (endless
//! and huge bodies, `Retry-After: 999999`, hanging, refusing, wrong-shape
//! JSON, echoing the API key) and the CLI run against it as a child
//! process, asserting time, exit code, message and, for bodies, peak RSS.
//! Each run's figures go to stderr (`-- --nocapture`); `HOSTILE_SHOW=1`
//! adds its output.

use crate::common::*;
use std::io::Read;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// What the server does with every request.
#[derive(Clone)]
enum Behaviour {
    /// This status, extra header lines and body (with a Content-Length).
    Fixed { status: u16, headers: String, body: Vec<u8> },
    /// This status, with a body that quotes the request's Authorization header.
    Echo(u16),
    /// 200, chunked, never ending.
    Endless,
    /// 200 with a Content-Length of this many bytes, all sent.
    Huge(usize),
    /// Answers the first `n` requests with an empty events page, then hangs.
    OkThenHang(usize),
    /// Request `n` gets a 401 quoting the key, `delay` after it arrived;
    /// before it, odd ones hang and even ones get 429 with `Retry-After:
    /// 30`; after it, every request hangs.
    RefuseAmid { n: usize, delay: Duration },
}

/// A server on a loopback port; records when each request arrived.
struct Server {
    port: u16,
    hits: Arc<Mutex<Vec<Instant>>>,
    _rt: tokio::runtime::Runtime,
}

impl Server {
    fn start(b: Behaviour) -> Server {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let listener = rt.block_on(tokio::net::TcpListener::bind("127.0.0.1:0")).unwrap();
        let port = listener.local_addr().unwrap().port();
        let hits = Arc::new(Mutex::new(Vec::new()));
        let h = hits.clone();
        rt.spawn(async move {
            while let Ok((s, _)) = listener.accept().await {
                tokio::spawn(serve(s, b.clone(), h.clone()));
            }
        });
        Server { port, hits, _rt: rt }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    fn hits(&self) -> Vec<Instant> {
        self.hits.lock().unwrap().clone()
    }
}

const EMPTY_PAGE: &[u8] = br#"{"events":[],"next_cursor":null}"#;

async fn serve(mut s: tokio::net::TcpStream, b: Behaviour, hits: Arc<Mutex<Vec<Instant>>>) {
    let mut buf = Vec::new();
    loop {
        // One request head (GETs have no body).
        let head = loop {
            if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                let head = String::from_utf8_lossy(&buf[..end]).into_owned();
                buf.drain(..end + 4);
                break head;
            }
            let mut chunk = [0u8; 4096];
            match s.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        };
        let n = {
            let mut h = hits.lock().unwrap();
            h.push(Instant::now());
            h.len()
        };
        let reply = |status: u16, headers: &str, body: &[u8]| {
            let mut r = format!("HTTP/1.1 {status} X\r\ncontent-length: {}\r\n{headers}\r\n", body.len()).into_bytes();
            r.extend_from_slice(body);
            r
        };
        let out = match &b {
            Behaviour::Fixed { status, headers, body } => reply(*status, headers, body),
            Behaviour::Echo(status) => {
                let auth: Vec<&str> = head
                    .lines()
                    .filter(|l| l.to_ascii_lowercase().starts_with("authorization:"))
                    .collect();
                let auth = auth.join("; ");
                let body = match status {
                    401 => format!(r#"{{"error":{{"code":"unauthorized","message":"you sent {auth}"}}}}"#),
                    400 => format!("bad request; you sent {auth}"),
                    _ => format!("<html><body>error for {auth}</body></html>"),
                };
                reply(*status, "", body.as_bytes())
            }
            Behaviour::RefuseAmid { n: at, delay } if n == *at => {
                tokio::time::sleep(*delay).await;
                let auth = head
                    .lines()
                    .find(|l| l.to_ascii_lowercase().starts_with("authorization:"))
                    .unwrap_or("");
                reply(
                    401,
                    "",
                    format!(r#"{{"error":{{"code":"unauthorized","message":"bad key; you sent {auth}"}}}}"#).as_bytes(),
                )
            }
            Behaviour::RefuseAmid { n: at, .. } if n < *at && n % 2 == 0 => reply(429, "retry-after: 30\r\n", b"slow down"),
            Behaviour::RefuseAmid { .. } => {
                tokio::time::sleep(Duration::from_secs(3600)).await;
                return;
            }
            Behaviour::OkThenHang(ok) if n <= *ok => reply(200, "content-type: application/json\r\n", EMPTY_PAGE),
            Behaviour::OkThenHang(_) => {
                tokio::time::sleep(Duration::from_secs(3600)).await;
                return;
            }
            Behaviour::Endless => {
                let _ = s
                    .write_all(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n")
                    .await;
                let mut chunk = format!("{:x}\r\n", 1 << 16).into_bytes();
                chunk.extend(std::iter::repeat_n(b' ', 1 << 16));
                chunk.extend_from_slice(b"\r\n");
                let _ = s.write_all(b"6\r\n{\"a\":[\r\n").await;
                while s.write_all(&chunk).await.is_ok() {}
                return;
            }
            Behaviour::Huge(len) => {
                let _ = s
                    .write_all(format!("HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {len}\r\n\r\n").as_bytes())
                    .await;
                let filler = vec![b' '; 1 << 20];
                let mut left = *len;
                while left > 0 {
                    let k = left.min(filler.len());
                    if s.write_all(&filler[..k]).await.is_err() {
                        return;
                    }
                    left -= k;
                }
                continue;
            }
        };
        if s.write_all(&out).await.is_err() {
            return;
        }
    }
}

/// An events spec over `blocks` (cut into 100-block units) on ethereum.
fn spec(dir: &Path, url: &str, source_extra: &str, blocks: &str) -> String {
    write_spec(
        dir,
        "job.toml",
        &format!(
            "name = \"hostile\"\n[source]\nbase_url = \"{url}\"\n{source_extra}\n[output]\nuri = \"{}\"\n\
             [[export]]\ndataset = \"events\"\nchains = [\"ethereum\"]\nwindow = \"{blocks}\"\nchunk_blocks = 100\n",
            dir.join("out").display()
        ),
    )
}

/// How a child run went.
struct Ran {
    code: Option<i32>,
    out: String,
    /// Seconds from start to exit (or to the deadline).
    secs: f64,
    /// When the signal was sent, if one was.
    signalled: Option<Instant>,
    /// When the child was seen to have exited.
    ended: Instant,
    /// Peak resident memory (VmHWM), MiB.
    peak_mb: f64,
}

/// Runs `chainetl ARGS`, sampling its peak RSS; sends `signal` after the
/// given delay; kills it at `deadline` (then `code` is None).
fn run(args: &[&str], env: &[(&str, &str)], signal: Option<(Duration, &str)>, deadline: Duration) -> Ran {
    let dir = tempfile::tempdir().unwrap();
    let (o, e) = (dir.path().join("out"), dir.path().join("err"));
    let mut cmd = bin();
    cmd.args(args)
        .env_remove("RUST_LOG")
        .stdout(std::fs::File::create(&o).unwrap())
        .stderr(std::fs::File::create(&e).unwrap());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let t = Instant::now();
    let mut child = cmd.spawn().unwrap();
    let status = format!("/proc/{}/status", child.id());
    let (mut peak_kb, mut signalled, mut code) = (0u64, None, None);
    loop {
        if let Ok(s) = std::fs::read_to_string(&status)
            && let Some(kb) = s
                .lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        {
            peak_kb = peak_kb.max(kb);
        }
        if let Some(st) = child.try_wait().unwrap() {
            code = st.code();
            break;
        }
        if let Some((after, sig)) = signal
            && signalled.is_none()
            && t.elapsed() >= after
        {
            std::process::Command::new("kill")
                .args([sig, &child.id().to_string()])
                .status()
                .unwrap();
            signalled = Some(Instant::now());
        }
        if t.elapsed() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let ended = Instant::now();
    let mut out = String::new();
    for p in [o, e] {
        let mut b = Vec::new();
        std::fs::File::open(p).unwrap().read_to_end(&mut b).unwrap();
        out.push_str(&String::from_utf8_lossy(&b));
    }
    // Figures for the record (`cargo test hostile -- --nocapture`).
    eprintln!(
        "chainetl {}: exit {code:?} in {:.2} s, peak RSS {:.0} MiB",
        args.join(" "),
        t.elapsed().as_secs_f64(),
        peak_kb as f64 / 1024.0
    );
    if std::env::var_os("HOSTILE_SHOW").is_some() {
        eprintln!("{out}");
    }
    Ran {
        code,
        out,
        secs: t.elapsed().as_secs_f64(),
        signalled,
        ended,
        peak_mb: peak_kb as f64 / 1024.0,
    }
}

#[test]
fn an_endless_chunked_body_fails_clearly_in_bounded_memory() {
    let server = Server::start(Behaviour::Endless);
    let dir = tempfile::tempdir().unwrap();
    // The default cap (64 MiB); a timeout long enough not to be what stops it.
    let spec = spec(dir.path(), &server.url(), "timeout_secs = 60", "1000..1099");
    let r = run(&["run", &spec], &[], None, Duration::from_secs(20));
    assert_eq!(r.code, Some(1), "{}", r.out);
    assert!(r.secs < 10.0, "took {:.1} s", r.secs);
    assert!(r.peak_mb < 160.0, "peak RSS {:.0} MiB", r.peak_mb);
    assert!(
        r.out.contains("larger than 64 MiB") && r.out.contains("source.max_response_mb"),
        "{}",
        r.out
    );
    assert_eq!(server.hits().len(), 1, "a body over the cap is not retried");
}

#[test]
fn four_200_mb_bodies_at_once_fail_clearly_in_bounded_memory() {
    let server = Server::start(Behaviour::Huge(200 << 20));
    let dir = tempfile::tempdir().unwrap();
    let spec = spec(dir.path(), &server.url(), "max_concurrency = 4\nmax_response_mb = 16", "1000..1399");
    let r = run(&["run", &spec], &[], None, Duration::from_secs(30));
    assert_eq!(r.code, Some(1), "{}", r.out);
    assert!(r.secs < 10.0, "took {:.1} s", r.secs);
    assert!(r.peak_mb < 100.0, "peak RSS {:.0} MiB", r.peak_mb);
    assert!(r.out.contains("larger than 16 MiB"), "{}", r.out);
}

#[test]
fn retry_after_is_capped_and_a_request_has_a_time_budget() {
    let forever = Server::start(Behaviour::Fixed {
        status: 429,
        headers: "retry-after: 999999\r\n".into(),
        body: Vec::new(),
    });
    let dir = tempfile::tempdir().unwrap();
    let s = spec(
        dir.path(),
        &forever.url(),
        "max_retries = 2\nmax_retry_after_secs = 1",
        "1000..1099",
    );
    let r = run(&["run", &s], &[], None, Duration::from_secs(20));
    assert_eq!(r.code, Some(1), "{}", r.out);
    assert!(r.secs < 6.0, "Retry-After waits are capped at 1 s; took {:.1} s", r.secs);
    assert!(r.out.contains("HTTP 429") && r.out.contains("3 attempts"), "{}", r.out);

    // Budget: timeout 1 s × (5 retries + 1) = 6 s. Waits of 4 s: the
    // third attempt would start after 8 s, so the request gives up at ~4 s.
    let slow = Server::start(Behaviour::Fixed {
        status: 503,
        headers: "retry-after: 4\r\n".into(),
        body: Vec::new(),
    });
    let dir = tempfile::tempdir().unwrap();
    let s = spec(
        dir.path(),
        &slow.url(),
        "timeout_secs = 1\nmax_retries = 5\nmax_retry_after_secs = 4",
        "1000..1099",
    );
    let r = run(&["run", &s], &[], None, Duration::from_secs(30));
    assert_eq!(r.code, Some(1), "{}", r.out);
    assert!(r.secs < 7.0, "took {:.1} s", r.secs);
    assert!(r.out.contains("time budget of 6 s"), "{}", r.out);
    assert_eq!(slow.hits().len(), 2, "{}", r.out);
}

/// A signal in each waiting state ends the run within 5 s with the
/// signal's code, and no request is sent after it.
#[test]
fn signals_cancel_waits_retries_and_requests_in_flight() {
    let throttled = Server::start(Behaviour::Fixed {
        status: 429,
        headers: "retry-after: 999999\r\n".into(),
        body: Vec::new(),
    });
    let hanging = Server::start(Behaviour::OkThenHang(2));
    let cases: Vec<(&str, String, &str, i32, Option<&Server>)> = vec![
        ("Retry-After wait", throttled.url(), "-TERM", 143, Some(&throttled)),
        ("request in flight", hanging.url(), "-INT", 130, Some(&hanging)),
        ("connect retries", "http://127.0.0.1:9".into(), "-TERM", 143, None),
    ];
    std::thread::scope(|scope| {
        let runs: Vec<_> = cases
            .iter()
            .map(|(what, url, sig, want, server)| {
                scope.spawn(move || {
                    let dir = tempfile::tempdir().unwrap();
                    // One unit at a time: two finish, the third hangs.
                    let s = spec(dir.path(), url, "max_concurrency = 1", "1000..1399");
                    let r = run(&["run", &s], &[], Some((Duration::from_millis(1500), sig)), Duration::from_secs(15));
                    let sent = r.signalled.expect("the signal was sent");
                    let took = r.ended.duration_since(sent).as_secs_f64();
                    assert_eq!(r.code, Some(*want), "{what}: {}", r.out);
                    assert!(took < 5.0, "{what}: exited {took:.1} s after the signal");
                    if let Some(server) = server {
                        assert!(
                            server.hits().iter().all(|h| *h < sent),
                            "{what}: a request was sent after the signal"
                        );
                    }
                    if *what == "request in flight" {
                        // The two units finished before the signal stay done.
                        let st = chainetl(&["status", &s]);
                        assert!(text(&st).contains("2/4"), "{}", text(&st));
                    }
                })
            })
            .collect();
        for r in runs {
            r.join().unwrap();
        }
    });
}

#[test]
fn an_unreachable_service_fails_the_job_once_and_quickly() {
    let dir = tempfile::tempdir().unwrap();
    let exports: String = ["ethereum", "base", "polygon", "bsc", "arbitrum", "avalanche", "apechain"]
        .iter()
        .map(|c| format!("[[export]]\ndataset = \"blocks\"\nchains = [\"{c}\"]\nwindow = \"1000..1999\"\nchunk_blocks = 100\n"))
        .collect();
    let s = write_spec(
        dir.path(),
        "job.toml",
        &format!(
            "name = \"down\"\n[source]\nbase_url = \"http://127.0.0.1:9\"\ntimeout_secs = 2\n[output]\nuri = \"{}\"\n{exports}",
            dir.path().join("out").display()
        ),
    );
    let r = run(&["run", &s], &[], None, Duration::from_secs(30));
    assert_eq!(r.code, Some(1), "{}", r.out);
    // No connection for 3 connect timeouts (6 s) stops the job.
    assert!(r.secs < 12.0, "took {:.1} s", r.secs);
    assert_eq!(
        r.out.matches("cannot connect to the service").count(),
        1,
        "one message for the job: {}",
        r.out
    );
    assert!(
        r.out.contains("http://127.0.0.1:9") && r.out.contains("Connection refused"),
        "{}",
        r.out
    );
    assert!(!r.out.contains("unit failed"), "{}", r.out);
}

#[test]
fn a_short_outage_is_ridden_out() {
    // Nothing listens on the port for 2 s, then a server does: shorter than
    // the 6 s after which the service is declared down.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let dir = tempfile::tempdir().unwrap();
    let s = spec(dir.path(), &format!("http://127.0.0.1:{port}"), "timeout_secs = 2", "1000..1399");
    let later = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_secs(2));
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let listener = rt.block_on(tokio::net::TcpListener::bind(("127.0.0.1", port))).unwrap();
        let hits = Arc::new(Mutex::new(Vec::new()));
        rt.block_on(async move {
            let serving = async {
                while let Ok((s, _)) = listener.accept().await {
                    tokio::spawn(serve(s, Behaviour::OkThenHang(usize::MAX), hits.clone()));
                }
            };
            let _ = tokio::time::timeout(Duration::from_secs(20), serving).await;
        });
    });
    let r = run(&["run", &s], &[], None, Duration::from_secs(20));
    assert_eq!(r.code, Some(0), "{}", r.out);
    assert!(r.secs > 2.0, "the outage was there: {:.1} s", r.secs);
    drop(later);
}

#[test]
fn wrong_shape_json_fails_at_once_naming_where_and_truncated_bodies_are_retried() {
    const EVENT: &str = r#""block_timestamp":"2015-08-07T00:00:00Z","contract_address":"0x00000000000000000000000000000000000000aa","data":"0x","transaction_hash":"0x00000000000000000000000000000000000000000000000000000000000000bb","transaction_index":0"#;
    let page = |fields: &str| format!(r#"{{"events":[{{{EVENT},{fields}}}],"next_cursor":null}}"#).into_bytes();
    let mut bad_utf8 = page(r#""block_number":1000,"log_index":0,"topics":[]"#);
    let at = bad_utf8.windows(3).position(|w| w == b"0x\"").unwrap() + 1;
    bad_utf8[at] = 0xff;
    let cases: Vec<(&str, Vec<u8>, &[&str])> = vec![
        (
            "fractional log_index",
            page(r#""block_number":1000,"log_index":1.5,"topics":[]"#),
            &["row 0", "field `log_index`"],
        ),
        (
            "huge block_number",
            page(r#""block_number":1e80,"log_index":0,"topics":[]"#),
            &["row 0", "field `block_number`"],
        ),
        (
            "object in topics",
            page(r#""block_number":1000,"log_index":0,"topics":[{"a":1}]"#),
            &["row 0", "field `topics`"],
        ),
        (
            "null events",
            br#"{"events":null,"next_cursor":null}"#.to_vec(),
            &["field `events`"],
        ),
        (
            "missing events",
            br#"{"next_cursor":null}"#.to_vec(),
            &["field `events`", "missing"],
        ),
        ("invalid UTF-8", bad_utf8, &["not valid JSON", "UTF-8"]),
        // Values outside their domain are malformed rows, not
        // rows outside the unit to drop (the real row went missing).
        (
            "negative block_number",
            page(r#""block_number":-7,"log_index":0,"topics":[]"#),
            &["row 0", "field `block_number`", "-7"],
        ),
        (
            "negative log_index",
            page(r#""block_number":1000,"log_index":-1,"topics":[]"#),
            &["row 0", "field `log_index`"],
        ),
        (
            "block_number past int64",
            page(r#""block_number":18446744073709551615,"log_index":0,"topics":[]"#),
            &["row 0", "field `block_number`"],
        ),
        (
            "negative transaction_index",
            format!(
                r#"{{"events":[{{{},"block_number":1000,"log_index":0,"topics":[]}}],"next_cursor":null}}"#,
                EVENT.replace(r#""transaction_index":0"#, r#""transaction_index":-3"#)
            )
            .into_bytes(),
            &["row 0", "field `transaction_index`"],
        ),
        (
            "timestamp before 1970",
            format!(
                r#"{{"events":[{{{},"block_number":1000,"log_index":0,"topics":[]}}],"next_cursor":null}}"#,
                EVENT.replace("2015-08-07T00:00:00Z", "1969-12-31T23:59:59Z")
            )
            .into_bytes(),
            &["row 0", "field `block_timestamp`"],
        ),
        // The same log twice in one page was written twice.
        (
            "a row repeated within the page",
            format!(
                r#"{{"events":[{{{EVENT},"block_number":1000,"log_index":0,"topics":[]}},{{{EVENT},"block_number":1000,"log_index":0,"topics":[]}}],"next_cursor":null}}"#
            )
            .into_bytes(),
            &["block_number 1000, log_index 0", "repeat"],
        ),
        (
            "HTML with 200",
            b"<!DOCTYPE html><html><body>Welcome</body></html>".to_vec(),
            &["not valid JSON", "<!DOCTYPE html>"],
        ),
    ];
    std::thread::scope(|scope| {
        for (what, body, want) in &cases {
            scope.spawn(move || {
                let server = Server::start(Behaviour::Fixed {
                    status: 200,
                    headers: "content-type: application/json\r\n".into(),
                    body: body.clone(),
                });
                let dir = tempfile::tempdir().unwrap();
                let s = spec(dir.path(), &server.url(), "max_retries = 3", "1000..1099");
                let r = run(&["run", &s], &[], None, Duration::from_secs(20));
                assert_eq!(r.code, Some(1), "{what}: {}", r.out);
                assert_eq!(server.hits().len(), 1, "{what}: not retried: {}", r.out);
                assert!(
                    r.out.contains("ethereum events unit") && r.out.contains("page 1"),
                    "{what}: {}",
                    r.out
                );
                for w in *want {
                    assert!(r.out.contains(w), "{what}: `{w}` missing from {}", r.out);
                }
            });
        }
    });
    let truncated = Server::start(Behaviour::Fixed {
        status: 200,
        headers: String::new(),
        body: br#"{"events":[{"block_number":10"#.to_vec(),
    });
    let dir = tempfile::tempdir().unwrap();
    let s = spec(dir.path(), &truncated.url(), "max_retries = 3", "1000..1099");
    let r = run(&["run", &s], &[], None, Duration::from_secs(20));
    assert_eq!(r.code, Some(1), "{}", r.out);
    assert_eq!(truncated.hits().len(), 4, "truncated bodies are retried: {}", r.out);
}

#[test]
fn an_echoing_server_never_gets_a_secret_printed_or_stored() {
    const KEY: &str = "sekrit-api-key-4242";
    const PASSWORD: &str = "url-password-1717";
    const AWS: &str = "aws-secret-key-9191";
    let env = [
        ("BDS_KEY", KEY),
        ("AWS_SECRET_ACCESS_KEY", AWS),
        ("AWS_SESSION_TOKEN", "aws-session-token-5353"),
    ];
    let verbosities: [&[&str]; 6] = [
        &[],
        &["-v"],
        &["-vv"],
        &["-q"],
        &["--log-format", "json"],
        &["--log-format", "json", "-vv"],
    ];
    for status in [401, 400, 500] {
        let server = Server::start(Behaviour::Echo(status));
        for v in verbosities {
            let dir = tempfile::tempdir().unwrap();
            let url = format!("http://user:{PASSWORD}@127.0.0.1:{}", server.port);
            let s = spec(dir.path(), &url, "api_key_env = \"BDS_KEY\"\nmax_retries = 1", "1000..1099");
            let mut args = v.to_vec();
            args.extend(["run", &s]);
            let r = run(&args, &env, None, Duration::from_secs(20));
            // A refused key is the environment's to fix: 2.
            let code = if status == 401 { 2 } else { 1 };
            assert_eq!(r.code, Some(code), "{status} {v:?}: {}", r.out);
            let mut seen = r.out.clone();
            for f in walk(&dir.path().join("out/_chainetl")) {
                seen.push_str(&String::from_utf8_lossy(&std::fs::read(f).unwrap()));
            }
            assert!(
                seen.contains("you sent") || seen.contains("error for"),
                "{status} {v:?}: the server's message is shown: {seen}"
            );
            for secret in [KEY, PASSWORD, AWS, "aws-session-token-5353"] {
                assert!(!seen.contains(secret), "{status} {v:?}: `{secret}` leaked: {seen}");
            }
            // Basic auth from the URL's user-info is the password in base64.
            assert!(!seen.contains("dXNlcjp1cmwtcGFzc3dvcmQtMTcxNw"), "{status} {v:?}: {seen}");
        }
    }
}

/// The first 401 ends the run at once: the requests in flight (hanging
/// here) and the waits for `Retry-After` are cancelled, no request is
/// sent after it, and the run exits 2 with one line naming the key's
/// variable, never the key the server quotes back.
#[test]
fn a_refused_key_ends_requests_in_flight_and_waits_at_once() {
    const KEY: &str = "sekrit-refused-key-5151";
    let server = Server::start(Behaviour::RefuseAmid {
        n: 4,
        delay: Duration::from_millis(300),
    });
    let dir = tempfile::tempdir().unwrap();
    let s = spec(
        dir.path(),
        &server.url(),
        "api_key_env = \"BDS_KEY\"\nmax_concurrency = 4\ntimeout_secs = 60",
        "1000..1999",
    );
    let r = run(&["run", &s], &[("BDS_KEY", KEY)], None, Duration::from_secs(30));
    assert_eq!(r.code, Some(2), "{}", r.out);
    let hits = server.hits();
    let refused_at = hits[3] + Duration::from_millis(300);
    let later = hits.iter().filter(|h| **h > refused_at).count();
    assert!(later <= 1, "{later} requests sent after the 401: {}", r.out);
    let after = r.ended.duration_since(refused_at).as_secs_f64();
    eprintln!("refused amid hanging requests and 429 waits: exit 2 {after:.2} s after the 401");
    assert!(after < 1.0, "exited {after:.2} s after the 401: {}", r.out);
    assert_eq!(r.out.lines().filter(|l| l.starts_with("error")).count(), 1, "{}", r.out);
    assert!(r.out.contains("$BDS_KEY") && !r.out.contains(KEY), "{}", r.out);
    let mut kept = String::new();
    for f in walk(&dir.path().join("out/_chainetl")) {
        kept.push_str(&String::from_utf8_lossy(&std::fs::read(f).unwrap()));
    }
    assert!(!kept.contains(KEY), "the key is stored: {kept}");
}

/// Every file under `dir`.
pub(crate) fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out
}

/// A wrong `base_url` path answers 404 to every lookup;
/// that is an error naming the URL, not "no such token".
#[test]
fn a_wrong_base_url_path_is_an_error_not_a_missing_token() {
    let sim = Sim::start(frozen());
    let dir = tempfile::tempdir().unwrap();
    let url = format!("{}/api", sim.url());
    let s = write_spec(
        dir.path(),
        "job.toml",
        &format!(
            "name = \"tok\"\n[source]\nbase_url = \"{url}\"\n[output]\nuri = \"{}\"\n[[export]]\ndataset = \"tokens\"\nchains = [\"ethereum\"]\naddresses = [\"0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48\"]\n",
            dir.path().join("out").display()
        ),
    );
    let r = run(&["run", &s], &[], None, Duration::from_secs(20));
    assert_eq!(r.code, Some(1), "{}", r.out);
    assert!(
        r.out
            .contains(&format!("{url}/v2/ethereum/tokens/0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48"))
            && r.out.contains("HTTP 404"),
        "{}",
        r.out
    );
    let done = walk(&dir.path().join("out/_chainetl/tok/units"))
        .iter()
        .any(|f| std::fs::read_to_string(f).unwrap().contains("\"done\": true"));
    assert!(!done, "no unit is marked done");
    assert!(parquet_files(&dir.path().join("out")).is_empty());
}
