//! Wire types of the v2 responses. Liberal in what they accept: unknown
//! fields are ignored, every field may be absent or null (the spec does not
//! say which are always present; the decoder decides what is required),
//! integers may arrive as numbers or strings, and big numbers are kept as
//! their exact decimal text, never passed through f64.

use serde::Deserialize;
use serde::de::{self, Deserializer, Visitor};
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::fmt;

/// A block number, index or count: a JSON integer, an integral float below
/// 2^53, or a decimal string, from 0 to i64's maximum (the columns are
/// Int64). A negative value is malformed, like a mistyped one: taken as it
/// is, `-7` would make a row outside its unit, dropped without a word.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Int(pub i64);

fn non_negative<E: de::Error>(v: i64) -> Result<Int, E> {
    if v < 0 {
        Err(E::custom(format!("{v} is negative; a block number, index or count is 0 or more")))
    } else {
        Ok(Int(v))
    }
}

impl<'de> Deserialize<'de> for Int {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Int;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an integer")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Int, E> {
                non_negative(v)
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Int, E> {
                i64::try_from(v)
                    .map(Int)
                    .map_err(|_| E::custom(format!("{v} does not fit in a signed 64-bit integer")))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Int, E> {
                if v.fract() == 0.0 && v.abs() < 9_007_199_254_740_992.0 {
                    non_negative(v as i64)
                } else {
                    Err(E::custom(format!("{v} is not an exact integer")))
                }
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Int, E> {
                // The parser's reason tells a malformed number from one past i64.
                v.trim()
                    .parse()
                    .map_err(|e| E::custom(format!("`{v}` is not an integer ({e})")))
                    .and_then(non_negative)
            }
        }
        d.deserialize_any(V)
    }
}

/// A number kept as exact text: from a JSON string (`"5875..."`, `"0x..."`)
/// or a JSON number of any size (its literal digits).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exact(pub String);

impl<'de> Deserialize<'de> for Exact {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        ExactRef::deserialize(d).map(|e| Exact(e.0.into_owned()))
    }
}

/// [`Exact`], borrowing its text from the response body when it can (no
/// escapes), for the hot paths.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExactRef<'a>(pub Cow<'a, str>);

impl<'de: 'a, 'a> Deserialize<'de> for ExactRef<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw: &'de RawValue = Deserialize::deserialize(d)?;
        let text = raw.get();
        if let Some(inner) = text.strip_prefix('"').and_then(|t| t.strip_suffix('"')) {
            // memchr searches with SIMD; `str::contains` a word at a time,
            // on every topic of every row (docs/performance.md).
            if memchr::memchr(b'\\', inner.as_bytes()).is_some() {
                serde_json::from_str::<String>(text)
                    .map(|s| ExactRef(Cow::Owned(s)))
                    .map_err(de::Error::custom)
            } else {
                Ok(ExactRef(Cow::Borrowed(inner)))
            }
        } else if text.starts_with(|c: char| c == '-' || c.is_ascii_digit()) {
            Ok(ExactRef(Cow::Borrowed(text)))
        } else {
            Err(de::Error::custom(format!("expected a number or a string, got {text}")))
        }
    }
}

/// A string field borrowed from the response body when it has no escapes
/// (serde borrows a plain `Cow` field, but not one inside an `Option`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Text<'a>(pub Cow<'a, str>);

impl std::ops::Deref for Text<'_> {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Text<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'a> Visitor<'a> for V {
            type Value = Text<'a>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'a str) -> Result<Text<'a>, E> {
                Ok(Text(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Text<'a>, E> {
                Ok(Text(Cow::Owned(v.to_string())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Text<'a>, E> {
                Ok(Text(Cow::Owned(v)))
            }
        }
        d.deserialize_str(V)
    }
}

/// A float field (`balance`): a JSON number or a numeric string.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Float(pub f64);

impl<'de> Deserialize<'de> for Float {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Float;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a number")
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Float, E> {
                Ok(Float(v))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Float, E> {
                Ok(Float(v as f64))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Float, E> {
                Ok(Float(v as f64))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Float, E> {
                v.trim().parse().map(Float).map_err(|_| E::custom(format!("`{v}` is not a number")))
            }
        }
        d.deserialize_any(V)
    }
}

/// A token record.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Token {
    /// Contract address.
    pub address: Option<String>,
    /// Decimal places.
    pub decimals: Option<Int>,
    /// Name.
    pub name: Option<String>,
    /// Standard label (ERC-20, ...).
    pub standard: Option<String>,
    /// Symbol.
    pub symbol: Option<String>,
}

/// One holding of a portfolio day.
#[derive(Debug, Clone, Deserialize)]
pub struct Holding {
    /// Decimal-adjusted balance.
    pub balance: Option<Float>,
    /// Balance in the smallest unit, exact.
    pub balance_raw: Option<Exact>,
    /// The token held.
    pub token: Option<Token>,
}

/// One portfolio day.
#[derive(Debug, Clone, Deserialize)]
pub struct PortfolioDay {
    /// `YYYY-MM-DD`.
    pub date: Option<String>,
    /// Holdings on that date.
    #[serde(default)]
    pub holdings: Option<Vec<Holding>>,
}

/// A block record.
#[allow(missing_docs)]
#[derive(Debug, Clone, Deserialize)]
pub struct Block {
    pub base_fee_per_gas: Option<Exact>,
    pub difficulty: Option<Exact>,
    pub extra_data: Option<String>,
    pub gas_limit: Option<Exact>,
    pub gas_used: Option<Exact>,
    pub hash: Option<String>,
    pub logs_bloom: Option<String>,
    pub miner: Option<String>,
    pub nonce: Option<String>,
    pub number: Option<Int>,
    pub parent_hash: Option<String>,
    pub receipt_root: Option<String>,
    pub sha3_uncles: Option<String>,
    pub size: Option<Int>,
    pub state_root: Option<String>,
    pub timestamp: Option<String>,
    pub total_difficulty: Option<Exact>,
    pub transaction_count: Option<Int>,
    pub transactions_root: Option<String>,
    pub withdrawals_root: Option<String>,
}

/// An event (log) record. Its text borrows from the response body: events
/// are most of the volume, and this saves an allocation per field.
#[allow(missing_docs)]
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct Event<'a> {
    pub block_number: Option<Int>,
    #[serde(borrow)]
    pub block_timestamp: Option<Text<'a>>,
    #[serde(borrow)]
    pub contract_address: Option<Text<'a>>,
    #[serde(borrow)]
    pub data: Option<Text<'a>>,
    pub log_index: Option<Int>,
    /// Items as 0x-hex strings or JSON numbers of any size.
    #[serde(borrow)]
    pub topics: Option<Vec<Option<ExactRef<'a>>>>,
    #[serde(borrow)]
    pub transaction_hash: Option<Text<'a>>,
    pub transaction_index: Option<Int>,
}

/// `GET /blocks`.
#[derive(Debug, Deserialize)]
pub struct BlocksPage {
    /// The blocks of this page.
    pub blocks: Vec<Block>,
    /// Present when more can be fetched.
    pub next_cursor: Option<String>,
}

/// `GET /events`, borrowing from the response body.
#[derive(Debug, PartialEq, Deserialize)]
pub struct EventsPage<'a> {
    /// The events of this page.
    #[serde(borrow, deserialize_with = "events_of_a_page")]
    pub events: Vec<Event<'a>>,
    /// Present when more can be fetched.
    pub next_cursor: Option<String>,
}

/// The most rows a page holds (the service's largest `limit`).
const FULL_PAGE: usize = 1000;

/// A page's events, in a vector sized for a full page from the start:
/// serde's own starts empty and doubles, copying a page's events about
/// twice over (the parser gives no length to size from).
fn events_of_a_page<'de: 'a, 'a, D: Deserializer<'de>>(d: D) -> Result<Vec<Event<'a>>, D::Error> {
    struct V<'a>(std::marker::PhantomData<Event<'a>>);
    impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
        type Value = Vec<Event<'a>>;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a sequence")
        }
        fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(FULL_PAGE).min(FULL_PAGE));
            while let Some(e) = seq.next_element()? {
                out.push(e);
            }
            Ok(out)
        }
    }
    d.deserialize_seq(V(std::marker::PhantomData))
}

/// `GET /wallets/{w}/portfolio/daily`.
#[derive(Debug, Deserialize)]
pub struct PortfolioPage {
    /// The days of this page.
    pub portfolio: Vec<PortfolioDay>,
    /// Present when more can be fetched.
    pub next_cursor: Option<String>,
}

/// `GET /tokens/{a}`.
#[derive(Debug, Deserialize)]
pub struct TokenResponse {
    /// The token.
    pub token: Token,
}

/// `GET /blocks/{n}`.
#[derive(Debug, Deserialize)]
pub struct BlockResponse {
    /// The block.
    pub block: Block,
}

/// The documented-but-not-shown error body, read when it is there.
#[derive(Debug, Deserialize)]
pub(crate) struct ErrorBody {
    pub(crate) error: Option<ErrorDetail>,
    pub(crate) message: Option<String>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct ErrorDetail {
    pub(crate) code: Option<String>,
    pub(crate) message: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_numbers_indexes_and_counts_below_zero_are_refused() {
        // `-7` used to be taken, then dropped as outside the unit.
        for body in [r#"-7"#, r#""-7""#, r#"-1.0"#] {
            let e = serde_json::from_str::<Int>(body).unwrap_err().to_string();
            assert!(e.contains("negative"), "{body}: {e}");
        }
        assert_eq!(serde_json::from_str::<Int>("0").unwrap(), Int(0));
        assert!(serde_json::from_str::<Int>("18446744073709551615").is_err());
    }

    #[test]
    fn events_borrow_plain_text_and_unescape_the_rest() {
        let body = br#"{"events":[{"block_number":"7","data":"0x\u0061b","transaction_hash":"0xab",
            "topics":["0xAB", 115792089237316195423570985008687907853269984665640564039457584007913129639935, "\u0031", null]}],
            "next_cursor":"c1"}"#;
        let p: EventsPage<'_> = serde_json::from_slice(body).unwrap();
        let e = &p.events[0];
        assert_eq!(e.block_number, Some(Int(7)));
        assert_eq!(e.data.as_deref(), Some("0xab"));
        assert!(matches!(e.transaction_hash.as_ref().unwrap().0, Cow::Borrowed("0xab")));
        let topics: Vec<Option<&str>> = e.topics.as_ref().unwrap().iter().map(|t| t.as_ref().map(|t| &*t.0)).collect();
        assert_eq!(
            topics,
            [
                Some("0xAB"),
                Some("115792089237316195423570985008687907853269984665640564039457584007913129639935"),
                Some("1"),
                None
            ]
        );
        assert!(serde_json::from_slice::<EventsPage<'_>>(br#"{"events":[{"data":7}]}"#).is_err());
        assert!(serde_json::from_slice::<EventsPage<'_>>(br#"{"events":[{"topics":[true]}]}"#).is_err());
    }

    #[test]
    fn topics_as_huge_numbers_stay_exact() {
        let e: Event = serde_json::from_str(
            r#"{"topics":[100400371954314648932432339003130296563713766564934609617245563925316637676527,"0xab",null],"block_number":"17","extra":1}"#,
        )
        .unwrap();
        let t = e.topics.unwrap();
        assert_eq!(
            t[0].as_ref().unwrap().0,
            "100400371954314648932432339003130296563713766564934609617245563925316637676527"
        );
        assert_eq!(t[1].as_ref().unwrap().0, "0xab");
        assert!(t[2].is_none());
        assert_eq!(e.block_number, Some(Int(17)));
    }

    #[test]
    fn a_page_of_events_reads_any_length_and_refuses_what_is_not_a_list() {
        for n in [0usize, 1, FULL_PAGE, FULL_PAGE + 1] {
            let body = format!(r#"{{"events":[{}],"next_cursor":null}}"#, vec![r#"{"log_index":3}"#; n].join(","));
            let p: EventsPage<'_> = serde_json::from_str(&body).unwrap();
            assert_eq!(p.events.len(), n);
            assert!(p.events.iter().all(|e| e.log_index == Some(Int(3))));
        }
        let e = serde_json::from_str::<EventsPage<'_>>(r#"{"events":{"a":1}}"#)
            .unwrap_err()
            .to_string();
        assert!(e.contains("expected a sequence"), "{e}");
        assert!(serde_json::from_str::<EventsPage<'_>>(r#"{"events":null}"#).is_err());
    }
}
