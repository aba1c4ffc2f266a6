//! Hashes, addresses and hex blobs into Arrow columns: 0x-hex text
//! (normalised to lower case) or raw bytes, as `output.hash_encoding` says.

use super::values::clip;
use crate::spec::HashEncoding;
use crate::vocab::evm::U256;
use arrow_array::ArrayRef;
use arrow_array::builder::{BinaryBuilder, ListBuilder, StringBuilder};
use std::borrow::Cow;
use std::sync::Arc;

/// A column of hashes/addresses: 0x-hex text or raw bytes.
pub(crate) enum HexCol {
    Str(StringBuilder),
    Bin(BinaryBuilder),
}

impl HexCol {
    pub(crate) fn new(enc: HashEncoding, cap: usize) -> HexCol {
        HexCol::with_text_bytes(enc, cap, cap * 66)
    }

    /// Sized for `cap` values of `text_bytes` 0x-hex characters in all, so
    /// that the buffers never grow (growing reallocates, and churns memory).
    pub(crate) fn with_text_bytes(enc: HashEncoding, cap: usize, text_bytes: usize) -> HexCol {
        match enc {
            HashEncoding::Hex => HexCol::Str(StringBuilder::with_capacity(cap, text_bytes)),
            HashEncoding::Binary => HexCol::Bin(BinaryBuilder::with_capacity(cap, text_bytes / 2 + cap)),
        }
    }

    /// Appends a 0x-hex value (checked, lower-cased) or null.
    pub(crate) fn append(&mut self, v: Option<&str>) -> Result<(), String> {
        let Some(v) = v else {
            match self {
                HexCol::Str(b) => b.append_null(),
                HexCol::Bin(b) => b.append_null(),
            }
            return Ok(());
        };
        let (digits, upper) = check_hex0x(v)?;
        match self {
            HexCol::Str(b) => {
                if upper {
                    b.append_value(format!("0x{}", digits.to_ascii_lowercase()));
                } else {
                    b.append_value(v);
                }
            }
            HexCol::Bin(b) => {
                let padded;
                let even = if digits.len() % 2 == 1 {
                    padded = format!("0{digits}");
                    padded.as_str()
                } else {
                    digits
                };
                b.append_value(hex::decode(even).map_err(|e| e.to_string())?);
            }
        }
        Ok(())
    }

    /// Appends a value `topic_hex` has already checked and normalised,
    /// without scanning it again.
    pub(crate) fn append_topic(&mut self, v: Option<&str>) -> Result<(), String> {
        match (self, v) {
            (HexCol::Str(b), Some(v)) => b.append_value(v),
            (HexCol::Bin(b), Some(v)) => {
                b.append_value(hex::decode(v.get(2..).unwrap_or_default()).map_err(|e| format!("`{}`: {e}", clip(v)))?)
            }
            (HexCol::Str(b), None) => b.append_null(),
            (HexCol::Bin(b), None) => b.append_null(),
        }
        Ok(())
    }

    pub(crate) fn finish(&mut self) -> ArrayRef {
        match self {
            HexCol::Str(b) => Arc::new(b.finish()),
            HexCol::Bin(b) => Arc::new(b.finish()),
        }
    }
}

/// The digits of 0x-hex text `v` (`0x` or `0X`), and whether any is
/// upper-case; an error says what is wrong. What [`HexCol::append`] accepts.
pub(crate) fn check_hex0x(v: &str) -> Result<(&str, bool), String> {
    let digits = v
        .strip_prefix("0x")
        .or_else(|| v.strip_prefix("0X"))
        .ok_or_else(|| format!("`{}` is not 0x-prefixed hex", clip(v)))?;
    let (valid, upper) = scan_hex(digits.as_bytes());
    if !valid {
        return Err(format!("`{}` is not hex", clip(v)));
    }
    Ok((digits, upper))
}

/// Whether `digits` are all hex digits, and whether any is upper-case, in
/// one branch-free pass the compiler vectorises (hashes and `data` are most
/// of a page's bytes).
fn scan_hex(digits: &[u8]) -> (bool, bool) {
    let (mut bad, mut upper) = (0u8, 0u8);
    for &c in digits {
        let digit = c.wrapping_sub(b'0') < 10;
        let lower = c.wrapping_sub(b'a') < 6;
        let up = c.wrapping_sub(b'A') < 6;
        bad |= u8::from(!(digit | lower | up));
        upper |= u8::from(up);
    }
    (bad == 0, upper != 0)
}

/// A list-of-hex column (event topics).
pub(crate) enum HexListCol {
    Str(ListBuilder<StringBuilder>),
    Bin(ListBuilder<BinaryBuilder>),
}

impl HexListCol {
    /// Sized for `lists` lists of `items` 32-byte items in all.
    pub(crate) fn with_capacity(enc: HashEncoding, lists: usize, items: usize) -> HexListCol {
        match enc {
            HashEncoding::Hex => HexListCol::Str(ListBuilder::with_capacity(StringBuilder::with_capacity(items, items * 66), lists)),
            HashEncoding::Binary => HexListCol::Bin(ListBuilder::with_capacity(BinaryBuilder::with_capacity(items, items * 32), lists)),
        }
    }

    pub(crate) fn append(&mut self, items: &[Cow<'_, str>]) -> Result<(), String> {
        match self {
            HexListCol::Str(b) => {
                for i in items {
                    b.values().append_value(i);
                }
                b.append(true);
            }
            HexListCol::Bin(b) => {
                // Decode every item before appending any, so that an error
                // leaves no half-written list behind.
                let bytes = items
                    .iter()
                    .map(|i| hex::decode(i.get(2..).unwrap_or_default()).map_err(|e| format!("`{}`: {e}", clip(i))))
                    .collect::<Result<Vec<_>, _>>()?;
                for v in bytes {
                    b.values().append_value(v);
                }
                b.append(true);
            }
        }
        Ok(())
    }

    pub(crate) fn finish(&mut self) -> ArrayRef {
        match self {
            HexListCol::Str(b) => Arc::new(b.finish()),
            HexListCol::Bin(b) => Arc::new(b.finish()),
        }
    }
}

/// A 32-byte topic as lower-case 0x-hex, from 0x-hex text or a decimal
/// number of any size, exactly.
pub fn topic_hex(text: &str) -> Result<Cow<'_, str>, String> {
    if text.len() == 66 && text.starts_with("0x") && scan_hex(&text.as_bytes()[2..]) == (true, false) {
        return Ok(Cow::Borrowed(text));
    }
    let v = if text.starts_with("0x") || text.starts_with("0X") {
        U256::from_hex0x(text)
    } else {
        U256::from_dec(text)
    };
    v.map(|v| Cow::Owned(v.to_hex32()))
        .ok_or_else(|| format!("`{}` is not a 32-byte topic (0x-hex or an integer below 2^256)", clip(text)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_scan_finds_bad_and_upper_case_digits() {
        assert_eq!(scan_hex(b"0123456789abcdef"), (true, false));
        assert_eq!(scan_hex(b"ABCDEF"), (true, true));
        assert_eq!(scan_hex(b""), (true, false));
        for bad in [&b"g"[..], b"0x", b"/", b":", b"@", b"G", b"`", b" ", b"\xff"] {
            assert!(!scan_hex(bad).0, "{bad:?}");
        }
    }

    #[test]
    fn topics_from_numbers_and_hex_agree() {
        let hex = "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef";
        let dec = crate::vocab::evm::U256::from_hex0x(hex).unwrap().to_dec();
        assert_eq!(topic_hex(&dec).unwrap(), hex);
        assert_eq!(
            topic_hex("0xDDF252AD1BE2C89B69C2B068FC378DAA952BA7F163C4A11628F55A4DF523B3EF").unwrap(),
            hex
        );
        assert_eq!(topic_hex("1").unwrap(), format!("0x{}1", "0".repeat(63)));
        assert!(topic_hex("1.5e76").is_err());
    }
}
