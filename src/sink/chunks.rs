//! The encoder's output buffer: what a Parquet writer writes into, in
//! chunks the upload takes as they are.

/// The encoder's output: bytes in fixed-size chunks handed to the upload
/// without further copies. (`AsyncArrowWriter` instead collects a row
/// group in one `Vec` that reallocates as it grows and is then copied into
/// the upload buffer, so a row group's bytes are held several times over
/// at its end.)
#[derive(Default)]
pub(super) struct Chunks {
    done: Vec<bytes::Bytes>,
    current: Vec<u8>,
}

/// Size of an output chunk.
const CHUNK_BYTES: usize = 256 * 1024;

impl std::io::Write for Chunks {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if buf.len() >= CHUNK_BYTES / 2 {
            // A whole page: its own exact-size chunk.
            self.seal();
            self.done.push(bytes::Bytes::copy_from_slice(buf));
            return Ok(buf.len());
        }
        if self.current.capacity() - self.current.len() < buf.len() {
            self.seal();
        }
        if self.current.capacity() == 0 {
            self.current.reserve_exact(CHUNK_BYTES);
        }
        self.current.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Chunks {
    fn seal(&mut self) {
        if !self.current.is_empty() {
            self.done.push(std::mem::take(&mut self.current).into());
        }
    }

    /// The bytes written so far, in order.
    pub(super) fn take(&mut self) -> Vec<bytes::Bytes> {
        self.seal();
        std::mem::take(&mut self.done)
    }
}
