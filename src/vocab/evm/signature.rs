//! Event signatures: any Solidity spelling of an event parsed to its
//! canonical form and topic0, and the looser reading of the service's
//! `signatures` parameter (the simulator's).
//!
//! Event signatures are parsed by `alloy-sol-type-parser` (the Solidity
//! type and parameter parser under `alloy-json-abi`, whose errors this
//! module words for a spec) and hashed with `alloy-primitives`' keccak-256;
//! decoded exports parse them again as `alloy_json_abi::Event`s
//! ([`crate::spec::decoding`]), which agree on the canonical form.
//! What is accepted is what the Solidity ABI allows: an optional `event`
//! keyword, `indexed`, parameter names, the `uint`/`int`/`fixed`/`ufixed`
//! aliases, tuples (with or without the `tuple` keyword), fixed and dynamic
//! arrays, and a trailing `;` as pasted from source. Every spelling of one
//! event has the same canonical form (`Transfer(address,address,uint256)`)
//! and therefore the same topic0. Refused: anonymous events (they have no
//! topic0 to select on), struct, enum or contract type names (the ABI spells
//! them as tuples, `uint8` and `address`), unknown or mis-sized types, and
//! anything after the parameter list.

use super::{hex0x, keccak};
use alloy_sol_type_parser::{Parameters, TypeSpecifier, TypeStem};

/// An event signature as written, its canonical form and its topic0.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventSignature {
    /// The canonical form, `Name(type,type,...)` with canonical type names.
    pub canonical: String,
    /// keccak256 of the canonical form, lower-case 0x-hex.
    pub topic0: String,
}

/// The longest signature accepted: far above any real event, and a bound
/// on the parser's work for hostile input.
const MAX_SIGNATURE_LEN: usize = 4096;

impl EventSignature {
    /// Parses any Solidity spelling of a non-anonymous event; the error
    /// says what is wrong in words a user can act on.
    pub fn parse(written: &str) -> Result<EventSignature, String> {
        if written.len() > MAX_SIGNATURE_LEN {
            return Err(format!("longer than {MAX_SIGNATURE_LEN} characters"));
        }
        let s = written.trim();
        let s = s.strip_suffix(';').unwrap_or(s).trim_end();
        let body = match s.strip_prefix("event") {
            Some(rest) if rest.starts_with(char::is_whitespace) => rest.trim_start(),
            _ => s,
        };
        if let Some(word) = ["function", "error", "constructor", "modifier", "struct"]
            .into_iter()
            .find(|w| body.strip_prefix(w).is_some_and(|r| r.starts_with(char::is_whitespace)))
        {
            return Err(format!("is a {word}, not an event"));
        }
        // `Name(` … `)`, then nothing but an optional `anonymous`.
        let open = body.find('(').ok_or_else(|| "has no parameter list `(…)`".to_string())?;
        let name = body[..open].trim_end();
        // A type name (`uint`, `bytes32`) is a reserved word, not a name.
        if !is_identifier(name) || elementary(name).is_ok() {
            return Err(format!("`{}` is not an event name", short(name)));
        }
        let close = matching_paren(body, open).ok_or_else(|| "has an unclosed `(`".to_string())?;
        match body[close + 1..].trim() {
            "" => {}
            "anonymous" => {
                return Err("anonymous events have no topic0 to select on: filter them by contract_address instead".into());
            }
            other => {
                return Err(format!(
                    "has `{}` after its parameter list (events take no visibility, mutability or outputs)",
                    short(other)
                ));
            }
        }
        let params =
            Parameters::parse(&body[open..=close]).map_err(|e| format!("is not an event signature ({})", one_line(&e.to_string())))?;
        let mut canonical = String::with_capacity(body.len());
        canonical.push_str(name);
        canonical.push('(');
        for (i, p) in params.params.iter().enumerate() {
            if i > 0 {
                canonical.push(',');
            }
            if p.storage.is_some() {
                return Err(format!("`{}`: event parameters take no data location", short(p.span)));
            }
            canonical_type(&p.ty, &mut canonical)?;
        }
        canonical.push(')');
        let topic0 = hex0x(&keccak(canonical.as_bytes()));
        Ok(EventSignature { canonical, topic0 })
    }
}

/// The parser's message (which draws a caret under the input on lines of
/// its own) on one line, short enough for a spec error.
fn one_line(s: &str) -> String {
    let words: Vec<&str> = s.split_whitespace().collect();
    let mut out = words.join(" ");
    if let Some((i, _)) = out.char_indices().nth(200) {
        out.truncate(i);
        out.push('…');
    }
    out
}

fn is_identifier(s: &str) -> bool {
    s.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == '$')
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
}

/// The index of the `)` closing the `(` at `open`.
fn matching_paren(s: &str, open: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (i, c) in s.char_indices().skip_while(|(i, _)| *i < open) {
        match c {
            '(' => depth += 1,
            ')' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

fn short(s: &str) -> String {
    match s.char_indices().nth(60) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

/// Appends the canonical form of one type: tuples as `(t1,t2)`, aliases
/// resolved, array suffixes kept.
fn canonical_type(ty: &TypeSpecifier<'_>, out: &mut String) -> Result<(), String> {
    match &ty.stem {
        TypeStem::Tuple(t) => {
            out.push('(');
            for (i, c) in t.types.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                canonical_type(c, out)?;
            }
            out.push(')');
        }
        // The parser reads `A.B` (an enum in a library) as `uint8`: that
        // is the ABI's spelling, but the text named a type, so refuse it
        // like any other user-defined type.
        TypeStem::Root(r) if !ty.span.trim_start().starts_with(r.span()) && r.span() != "uint256" && r.span() != "int256" => {
            return Err(format!(
                "`{}` is not an ABI type: write structs as tuples `(uint256,address)`, enums as `uint8`, contracts as `address`",
                short(ty.span.trim())
            ));
        }
        TypeStem::Root(r) => out.push_str(&elementary(r.span())?),
    }
    for size in &ty.sizes {
        out.push('[');
        if let Some(n) = size {
            out.push_str(&n.to_string());
        }
        out.push(']');
    }
    Ok(())
}

/// The canonical name of an elementary ABI type, or why it is not one.
fn elementary(t: &str) -> Result<String, String> {
    let sized = |rest: &str, ok: &dyn Fn(u32) -> bool| rest.parse::<u32>().ok().filter(|n| ok(*n)).is_some();
    let ok = match t {
        "address" | "bool" | "string" | "bytes" | "function" => true,
        "uint" | "int" => return Ok(format!("{t}256")),
        "fixed" | "ufixed" => return Ok(format!("{t}128x18")),
        _ => {
            if let Some(n) = t.strip_prefix("bytes") {
                sized(n, &|n| (1..=32).contains(&n))
            } else if let Some(n) = t.strip_prefix("uint").or_else(|| t.strip_prefix("int")) {
                sized(n, &|n| n % 8 == 0 && (8..=256).contains(&n))
            } else if let Some(mn) = t.strip_prefix("ufixed").or_else(|| t.strip_prefix("fixed")) {
                mn.split_once('x')
                    .is_some_and(|(m, n)| sized(m, &|m| m % 8 == 0 && (8..=256).contains(&m)) && sized(n, &|n| n <= 80))
            } else {
                return Err(format!(
                    "`{t}` is not an ABI type: write structs as tuples `(uint256,address)`, enums as `uint8`, contracts as `address`"
                ));
            }
        }
    };
    if ok {
        Ok(t.to_string())
    } else {
        Err(format!("`{t}` is not an ABI type: its size is out of range"))
    }
}

/// topic0 of an ABI event signature such as `Transfer(address,address,uint256)`,
/// as 0x-hex: of its canonical form when it parses (any spelling of one event
/// gives the same topic0), else of the text without whitespace.
pub fn signature_topic(signature: &str) -> String {
    match EventSignature::parse(signature) {
        Ok(s) => s.topic0,
        Err(_) => {
            let canonical: String = signature.chars().filter(|c| !c.is_whitespace()).collect();
            hex0x(&keccak(canonical.as_bytes()))
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    const TRANSFER: &str = "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef";

    #[test]
    fn every_solidity_spelling_of_transfer_has_its_topic0() {
        for s in [
            "Transfer(address,address,uint256)",
            "Transfer(address indexed from, address indexed to, uint256 value)",
            "event Transfer(address indexed from, address indexed to, uint256 value)",
            "event Transfer(address indexed from, address indexed to, uint256 value);",
            "Transfer(address,address,uint)",
            "  Transfer ( address , address indexed , uint )  ",
        ] {
            let sig = EventSignature::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"));
            assert_eq!(sig.canonical, "Transfer(address,address,uint256)", "{s}");
            assert_eq!(sig.topic0, TRANSFER, "{s}");
            assert_eq!(signature_topic(s), TRANSFER, "{s}");
        }
    }

    #[test]
    fn tuples_arrays_and_aliases_take_their_canonical_form() {
        let c = |s: &str| EventSignature::parse(s).map(|x| x.canonical);
        assert_eq!(
            c("event Order((address,uint)[] orders, int8[3] xs, fixed f, bytes32 indexed id)"),
            Ok("Order((address,uint256)[],int8[3],fixed128x18,bytes32)".into())
        );
        assert_eq!(c("E(tuple(uint,bool)[2][])"), Ok("E((uint256,bool)[2][])".into()));
        assert_eq!(c("E()"), Ok("E()".into()));
        for bad in [
            "Transfer(address,address,uint257)",
            "Transfer(address,address",
            "Transfer(MyStruct s)",
            "Transfer(address) anonymous",
            "Transfer(address) view",
            "Transfer(address) public",
            "function transfer(address,uint256)",
            "uint(address)",
            "A.B(address)",
            "Transfer(bytes0)",
            "Transfer(uint8 indexed indexed a)",
            "(address)",
            "",
            "Transfer(address) Transfer(address)",
        ] {
            assert!(c(bad).is_err(), "{bad} was accepted: {:?}", c(bad));
        }
        assert!(
            EventSignature::parse("E(MyStruct)")
                .unwrap_err()
                .contains("`MyStruct` is not an ABI type")
        );
        assert!(EventSignature::parse("Transfer(address,address").unwrap_err().contains("unclosed"));
        // The parser's own message, on one line.
        let e = EventSignature::parse("Transfer(address,,address)").unwrap_err();
        assert!(e.starts_with("is not an event signature (") && !e.contains('\n'), "{e}");
        assert!(
            EventSignature::parse("E(uint) anonymous")
                .unwrap_err()
                .contains("anonymous events have no topic0")
        );
    }

    #[test]
    fn transfer_topic_is_the_real_keccak() {
        assert_eq!(
            signature_topic("Transfer(address,address,uint256)"),
            "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef"
        );
    }

    #[test]
    fn splits_signatures_at_top_level_commas() {
        assert_eq!(
            split_top_level("Transfer(address,address,uint256), Sync(uint112,uint112),0xab"),
            vec!["Transfer(address,address,uint256)", "Sync(uint112,uint112)", "0xab"]
        );
    }
}
