//! Content checksums of data files: xxHash64 (seed 0) of a file's bytes,
//! written `xxh64:<16 lowercase hex digits>`.
//!
//! A file's checksum is computed as its bytes are handed to the store
//! ([`Checksum::update`] in the writer), so committing it costs no second
//! read; `chainetl verify` reads the file back ([`of_file`]) and compares.
//! Reading streams the object in chunks ([`Storage::read_chunks`]): memory
//! stays bounded whatever the file's size.
//! The same value serves any table format that records files (Delta's
//! `add` actions carry it in their tags).

use super::{Storage, StorageError};
use std::hash::Hasher;
use std::sync::atomic::{AtomicU64, Ordering};
use twox_hash::XxHash64;

/// The prefix naming the algorithm.
pub const ALGORITHM: &str = "xxh64";

/// A checksum being computed.
pub struct Checksum(XxHash64);

impl Default for Checksum {
    fn default() -> Self {
        Checksum(XxHash64::with_seed(0))
    }
}

impl std::fmt::Debug for Checksum {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Checksum")
    }
}

impl Checksum {
    /// Adds the next bytes of the file.
    pub fn update(&mut self, bytes: &[u8]) {
        self.0.write(bytes);
    }

    /// The checksum of every byte added, as recorded: `xxh64:<hex>`.
    pub fn value(&self) -> String {
        format!("{ALGORITHM}:{:016x}", self.0.finish())
    }
}

/// The checksum of the object at `rel`, read whole; `read` counts the
/// bytes as they arrive (for progress).
pub async fn of_file(storage: &Storage, rel: &str, read: &AtomicU64) -> Result<String, StorageError> {
    let mut sum = Checksum::default();
    storage
        .read_chunks(rel, |chunk| {
            sum.update(chunk);
            read.fetch_add(chunk.len() as u64, Ordering::Relaxed);
        })
        .await?;
    Ok(sum.value())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_checksum_does_not_depend_on_how_the_bytes_are_split() {
        let bytes: Vec<u8> = (0..100_000u32).map(|i| (i * 7 % 251) as u8).collect();
        let mut whole = Checksum::default();
        whole.update(&bytes);
        let mut parts = Checksum::default();
        for c in bytes.chunks(977) {
            parts.update(c);
        }
        assert_eq!(whole.value(), parts.value());
        assert!(whole.value().starts_with("xxh64:") && whole.value().len() == 6 + 16);
        let mut flipped = bytes.clone();
        flipped[50_000] ^= 0x10;
        let mut other = Checksum::default();
        other.update(&flipped);
        assert_ne!(whole.value(), other.value());
    }
}
