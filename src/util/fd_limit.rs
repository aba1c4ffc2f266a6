//! The process's open-file limit (`RLIMIT_NOFILE`), which bounds sockets
//! and open files together.
//!
//! Linux starts processes with a soft limit of 1,024 under a much higher
//! hard one, and a job at a high `max_concurrency` needs more: a socket per
//! request in flight, and per unit in flight its open Parquet files (a
//! local file each, or the sockets of their S3 uploads). So the binary
//! raises the soft limit to the hard one at start ([`raise`], as Go's
//! runtime does), and a job whose concurrency would still not fit runs
//! with the concurrency that does ([`concurrency_within`]) and says so,
//! rather than failing units with "Too many open files". An exhausted
//! limit met all the same is named as such ([`is_exhausted`]), never taken
//! for an unreachable service.

/// Descriptors kept for everything but requests and unit files: standard
/// streams, the runtime's event loop, state documents, the lease, logs.
pub const RESERVED: u64 = 64;

/// Descriptors one request slot may hold at once: its connection, and the
/// open files of the units it keeps busy (1.25 units a slot, each with a
/// file or two open, two upload sockets each on S3), with room to spare.
pub const PER_SLOT: u64 = 6;

/// The soft and hard open-file limits (`None` where they cannot be read).
pub fn limits() -> Option<(u64, u64)> {
    let mut lim = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit writes one `rlimit` through a valid pointer.
    (unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } == 0).then_some((lim.rlim_cur, lim.rlim_max))
}

/// Raises the soft open-file limit to the hard limit; returns the soft
/// limit in force afterwards (`None` where it cannot be read).
pub fn raise() -> Option<u64> {
    let (soft, hard) = limits()?;
    if soft < hard {
        let raised = libc::rlimit {
            rlim_cur: hard,
            rlim_max: hard,
        };
        // SAFETY: setrlimit reads one `rlimit` through a valid pointer;
        // raising the soft limit up to the hard one needs no privilege.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } == 0 {
            return Some(hard);
        }
    }
    Some(soft)
}

/// The soft open-file limit in force (`None` where it cannot be read).
pub fn current() -> Option<u64> {
    limits().map(|(soft, _)| soft)
}

/// The most request slots, up to `wanted`, whose sockets and files fit in
/// `limit` descriptors (at least 1).
pub fn concurrency_within(limit: u64, wanted: usize) -> usize {
    let fits = limit.saturating_sub(RESERVED) / PER_SLOT;
    usize::try_from(fits).unwrap_or(usize::MAX).clamp(1, wanted.max(1))
}

/// Whether `e` or one of its causes is the process (EMFILE) or the system
/// (ENFILE) running out of file descriptors.
pub fn is_exhausted(e: &(dyn std::error::Error + 'static)) -> bool {
    let mut cur = Some(e);
    while let Some(err) = cur {
        if let Some(io) = err.downcast_ref::<std::io::Error>()
            && matches!(io.raw_os_error(), Some(libc::EMFILE | libc::ENFILE))
        {
            return true;
        }
        cur = err.source();
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn concurrency_is_bounded_by_the_descriptors_it_needs() {
        assert_eq!(concurrency_within(1024, 1024), ((1024 - RESERVED) / PER_SLOT) as usize);
        assert_eq!(concurrency_within(20_000, 1024), 1024);
        assert_eq!(concurrency_within(10, 8), 1);
        let e = std::io::Error::from_raw_os_error(libc::EMFILE);
        assert!(is_exhausted(&e));
        assert!(!is_exhausted(&std::io::Error::from(std::io::ErrorKind::ConnectionRefused)));
    }
}
