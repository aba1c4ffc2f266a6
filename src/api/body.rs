//! Reading a response body within a byte cap: incrementally, never
//! holding more than the cap, whatever the server sends or claims.

/// Error bodies (4xx, 5xx) are read this far: enough for any message,
/// and what a hostile server sends past it is not kept.
pub const ERROR_BODY_BYTES: usize = 64 << 10;

/// Reads a body incrementally, keeping at most `limit` bytes; `true` when
/// the body went on past it (the rest is not read). Past the limit, only
/// an error body's start is wanted: `keep_start` says whether to keep it.
pub(super) async fn read_body(resp: &mut reqwest::Response, limit: u64, keep_start: bool) -> Result<(bytes::Bytes, bool), reqwest::Error> {
    let mut parts: Vec<bytes::Bytes> = Vec::new();
    let mut total = 0u64;
    while let Some(chunk) = resp.chunk().await? {
        total += chunk.len() as u64;
        if total > limit {
            if !keep_start {
                return Ok((bytes::Bytes::new(), true));
            }
            let keep = chunk.len() - usize::try_from(total - limit).unwrap_or(chunk.len()).min(chunk.len());
            parts.push(chunk.slice(..keep));
            return Ok((concat(parts), true));
        }
        parts.push(chunk);
    }
    Ok((concat(parts), false))
}

fn concat(mut parts: Vec<bytes::Bytes>) -> bytes::Bytes {
    if parts.len() == 1 {
        return parts.pop().unwrap_or_default();
    }
    let mut out = bytes::BytesMut::with_capacity(parts.iter().map(|p| p.len()).sum());
    for p in parts {
        out.extend_from_slice(&p);
    }
    out.freeze()
}
