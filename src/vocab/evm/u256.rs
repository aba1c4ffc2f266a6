//! Exact unsigned 256-bit integers: uint256 values parsed from decimal
//! or hex text and rendered back, never through a float.

use super::hex0x;

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
    fn u256_round_trips_beyond_2_to_the_128() {
        let max = "115792089237316195423570985008687907853269984665640564039457584007913129639935";
        let v = U256::from_dec(max).unwrap();
        assert_eq!(v.to_hex32(), format!("0x{}", "f".repeat(64)));
        assert_eq!(v.to_dec(), max);
        assert!(U256::from_dec(&format!("{max}0")).is_none());
        let h = U256::from_hex0x("0x00000000000000000000000a0b86991c6218b36c1d19d4a2e9eb0ce3606eb48").unwrap();
        assert_eq!(U256::from_dec(&h.to_dec()).unwrap(), h);
    }
}
