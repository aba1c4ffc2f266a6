//! EVM value helpers shared by the client, the decoder and the simulator:
//! address checks, keccak of event signatures, exact uint256 parsing and hex.

use sha3::{Digest, Keccak256};

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
    let mut h = Keccak256::new();
    h.update(data);
    h.finalize().into()
}

/// topic0 of an ABI event signature such as `Transfer(address,address,uint256)`, as 0x-hex.
pub fn signature_topic(signature: &str) -> String {
    let canonical: String = signature.chars().filter(|c| !c.is_whitespace()).collect();
    hex0x(&keccak(canonical.as_bytes()))
}

/// True when `s` looks like an ABI event signature `Name(type,...)`.
pub fn is_abi_signature(s: &str) -> bool {
    let Some(open) = s.find('(') else {
        return false;
    };
    let name = &s[..open];
    !name.is_empty()
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && s.ends_with(')')
        && s[open..].chars().all(|c| c.is_ascii_alphanumeric() || "(),[]_ ".contains(c))
        && balanced(&s[open..])
}

fn balanced(s: &str) -> bool {
    let mut depth = 0i32;
    for c in s.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            _ => {}
        }
        if depth < 0 {
            return false;
        }
    }
    depth == 0
}

/// Splits a comma-separated list at top-level commas only, so that
/// `Transfer(address,address,uint256),Sync(uint112,uint112)` gives two items.
pub fn split_top_level(list: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0i32, 0usize);
    for (i, c) in list.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                out.push(list[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(list[start..].trim());
    out.retain(|s| !s.is_empty());
    out
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

/// A 256-bit unsigned integer as four little-endian u64 limbs; just enough
/// arithmetic to parse decimal text exactly and render it as 32-byte hex.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct U256(pub [u64; 4]);

impl U256 {
    /// Parses a decimal integer of any length up to 2^256-1; `None` on
    /// non-digits, empty input or overflow.
    pub fn from_dec(s: &str) -> Option<U256> {
        if s.is_empty() {
            return None;
        }
        let mut limbs = [0u64; 4];
        for b in s.bytes() {
            if !b.is_ascii_digit() {
                return None;
            }
            let mut carry = (b - b'0') as u128;
            for limb in limbs.iter_mut() {
                let v = (*limb as u128) * 10 + carry;
                *limb = v as u64;
                carry = v >> 64;
            }
            if carry != 0 {
                return None;
            }
        }
        Some(U256(limbs))
    }

    /// Parses 0x-hex of up to 64 digits.
    pub fn from_hex0x(s: &str) -> Option<U256> {
        let h = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X"))?;
        if h.is_empty() || h.len() > 64 || !h.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        let mut limbs = [0u64; 4];
        for (i, chunk) in h.as_bytes().rchunks(16).enumerate() {
            let text = std::str::from_utf8(chunk).ok()?;
            limbs[i] = u64::from_str_radix(text, 16).ok()?;
        }
        Some(U256(limbs))
    }

    /// Big-endian 32 bytes.
    pub fn to_be_bytes(self) -> [u8; 32] {
        let mut out = [0u8; 32];
        for i in 0..4 {
            out[i * 8..i * 8 + 8].copy_from_slice(&self.0[3 - i].to_be_bytes());
        }
        out
    }

    /// From big-endian 32 bytes.
    pub fn from_be_bytes(b: &[u8; 32]) -> U256 {
        let mut limbs = [0u64; 4];
        for (i, limb) in limbs.iter_mut().enumerate() {
            let start = (3 - i) * 8;
            let mut w = [0u8; 8];
            w.copy_from_slice(&b[start..start + 8]);
            *limb = u64::from_be_bytes(w);
        }
        U256(limbs)
    }

    /// Decimal text.
    pub fn to_dec(self) -> String {
        if self.0 == [0; 4] {
            return "0".into();
        }
        let mut limbs = self.0;
        let mut digits = Vec::new();
        while limbs != [0; 4] {
            let mut rem: u128 = 0;
            for limb in limbs.iter_mut().rev() {
                let cur = (rem << 64) | *limb as u128;
                *limb = (cur / 10) as u64;
                rem = cur % 10;
            }
            digits.push(b'0' + rem as u8);
        }
        digits.reverse();
        String::from_utf8(digits).unwrap_or_default()
    }

    /// 0x + 64 hex digits.
    pub fn to_hex32(self) -> String {
        hex0x(&self.to_be_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transfer_topic_is_the_real_keccak() {
        assert_eq!(
            signature_topic("Transfer(address,address,uint256)"),
            "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef"
        );
    }

    #[test]
    fn u256_round_trips_beyond_2_to_the_128() {
        let max = "115792089237316195423570985008687907853269984665640564039457584007913129639935";
        let v = U256::from_dec(max).unwrap();
        assert_eq!(v.to_hex32(), format!("0x{}", "f".repeat(64)));
        assert_eq!(v.to_dec(), max);
        assert!(U256::from_dec(&format!("{max}0")).is_none());
        let h = U256::from_hex0x("0x00000000000000000000000a0b86991c6218b36c1d19d4a2e9eb0ce3606eb48").unwrap();
        assert_eq!(U256::from_dec(&h.to_dec()).unwrap(), h);
    }

    #[test]
    fn splits_signatures_at_top_level_commas() {
        assert_eq!(
            split_top_level("Transfer(address,address,uint256), Sync(uint112,uint112),0xab"),
            vec!["Transfer(address,address,uint256)", "Sync(uint112,uint112)", "0xab"]
        );
    }
}
