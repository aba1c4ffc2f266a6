//! EVM value helpers shared by the client, the decoder and the simulator:
//! address checks, event signatures and their topic0, exact uint256 parsing
//! and hex.
//!
//! The parts: `signature` (event signatures, topic0 and the service's
//! `signatures` lists), `u256` (exact 256-bit integers), and here the
//! checks of addresses and hashes, keccak-256 and hex.

mod signature;
mod u256;

pub use signature::{EventSignature, is_abi_signature, signature_topic, split_top_level};
pub use u256::U256;

/// True when `s` matches the service's Address pattern `^0x[a-fA-F0-9]{40}$`.
pub fn is_address(s: &str) -> bool {
    s.len() == 42 && s.starts_with("0x") && s[2..].bytes().all(|b| b.is_ascii_hexdigit())
}

/// True when `s` is a 0x-prefixed 32-byte hex string.
pub fn is_hash32(s: &str) -> bool {
    s.len() == 66 && s.starts_with("0x") && s[2..].bytes().all(|b| b.is_ascii_hexdigit())
}

/// Keccak-256 of bytes.
pub fn keccak(data: &[u8]) -> [u8; 32] {
    alloy_primitives::keccak256(data).0
}

const HEX: &[u8; 16] = b"0123456789abcdef";

/// Appends lower-case hex of `bytes` (no prefix) to `out`.
pub fn push_hex(out: &mut Vec<u8>, bytes: &[u8]) {
    out.reserve(bytes.len() * 2);
    for b in bytes {
        out.push(HEX[(b >> 4) as usize]);
        out.push(HEX[(b & 15) as usize]);
    }
}

/// `0x` + lower-case hex of `bytes`.
pub fn hex0x(bytes: &[u8]) -> String {
    let mut v = Vec::with_capacity(2 + bytes.len() * 2);
    v.extend_from_slice(b"0x");
    push_hex(&mut v, bytes);
    // Only ASCII hex digits were pushed.
    String::from_utf8(v).unwrap_or_default()
}
