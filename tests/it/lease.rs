//! A holder paused past its lease writes nothing: frozen with
//! SIGSTOP after a file is durable and before its checkpoint, its
//! object-store lease runs out, another run takes the job over and finishes
//! it (compacting its partitions), and the first, thawed, finds its lease
//! expired by its own clock before it writes anything: no checkpoint, no
//! file, no row twice.

use crate::common::*;
use crate::s3::{S3, assert_bucket_exact, spec};
use std::process::Stdio;
use std::time::{Duration, Instant};

/// Whether process `pid` is stopped (state `T` in /proc/PID/stat).
pub(crate) fn stopped(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| s.rsplit_once(')').map(|(_, rest)| rest.trim_start().starts_with('T')))
        .unwrap_or(false)
}

#[test]
fn a_holder_paused_past_its_lease_writes_nothing_after_another_run_took_over() {
    let s3 = S3::start("bkt-paused");
    let dir = tempfile::tempdir().unwrap();
    let spec = spec(dir.path(), &s3.bucket, &s3.sim.url());
    // A: a 4 s lease; it freezes after its third file is durable.
    let mut a = s3
        .cmd_on(crash_bin("after-file-write:3:stop"), &["run", &spec, "-q"])
        .env("CHAINETL_TEST_LEASE_TTL", "4")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t = Instant::now();
    while !stopped(a.id()) {
        assert!(t.elapsed() < Duration::from_secs(60), "the holder never reached its pause");
        if a.try_wait().unwrap().is_some() {
            let out = a.wait_with_output().unwrap();
            panic!("the holder ended before its pause: {}", text(&out));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    // Past A's lease, B takes the job over and finishes it.
    std::thread::sleep(Duration::from_secs(6));
    let b = s3.cmd(&["run", &spec, "-q"]).output().unwrap();
    assert!(b.status.success(), "{}", text(&b));
    assert_bucket_exact(&s3);
    // A wakes: everything it would write now is refused.
    // SAFETY: kill only sends a signal to the child we started.
    assert_eq!(unsafe { libc::kill(a.id() as i32, libc::SIGCONT) }, 0);
    let t = Instant::now();
    let status = loop {
        if let Some(s) = a.try_wait().unwrap() {
            break s;
        }
        assert!(t.elapsed() < Duration::from_secs(60), "the thawed holder did not stop");
        std::thread::sleep(Duration::from_millis(50));
    };
    let out = a.wait_with_output().unwrap();
    let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(!status.success(), "{said}");
    assert!(said.contains("lease"), "{said}");
    assert_bucket_exact(&s3);
    let v = s3.cmd(&["verify", &spec]).output().unwrap();
    assert!(v.status.success(), "{}", text(&v));
}
