//! Exact unsigned 256-bit integers: uint256 values parsed from decimal
//! or hex text and rendered back, never through a float.

use super::hex0x;

/// A 256-bit unsigned integer as four little-endian u64 limbs (the
/// simulator builds values from limbs); the arithmetic is
/// `alloy-primitives`' [`alloy_primitives::U256`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct U256(pub [u64; 4]);

impl U256 {
    fn alloy(self) -> alloy_primitives::U256 {
        alloy_primitives::U256::from_limbs(self.0)
    }

    /// Parses a decimal integer of any length up to 2^256-1; `None` on
    /// anything but digits (no sign, no separators), empty input or overflow.
    pub fn from_dec(s: &str) -> Option<U256> {
        if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        alloy_primitives::U256::from_str_radix(s, 10).ok().map(|v| U256(v.into_limbs()))
    }

    /// Parses 0x-hex of up to 64 digits.
    pub fn from_hex0x(s: &str) -> Option<U256> {
        let h = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X"))?;
        if h.is_empty() || h.len() > 64 || !h.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        alloy_primitives::U256::from_str_radix(h, 16).ok().map(|v| U256(v.into_limbs()))
    }

    /// Big-endian 32 bytes.
    pub fn to_be_bytes(self) -> [u8; 32] {
        self.alloy().to_be_bytes::<32>()
    }

    /// From big-endian 32 bytes.
    pub fn from_be_bytes(b: &[u8; 32]) -> U256 {
        U256(alloy_primitives::U256::from_be_bytes(*b).into_limbs())
    }

    /// Decimal text.
    pub fn to_dec(self) -> String {
        self.alloy().to_string()
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
