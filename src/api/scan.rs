//! A single-pass reader of the events page, the export's hot path: it
//! reads the page the way the derived serde reader does, without serde's
//! per-value dispatch (its cost: docs/performance.md).
//!
//! **It reads a strict subset, and says when a page is outside it.** It
//! returns `None`, never a different answer, for anything it does not
//! read exactly as [`super::types::EventsPage`]'s serde reader would: a
//! string with an escape, a number that is not a plain non-negative
//! integer of at most 18 digits in an integer field or any number in
//! a string field or among the topics, a field given twice, malformed
//! JSON. The caller then reads the page with serde, which gives the same
//! value or the precise error. So the two readers never disagree on a page
//! this one accepts (tested: `tests::the_scanner_agrees_with_serde`).
//!
//! What it accepts: the body is UTF-8 (checked by the caller, once);
//! whitespace where JSON allows it; fields in any order; any field absent
//! or null except `events`; unknown fields holding any JSON value, read
//! and checked to be well-formed (at most 64 levels deep); strings
//! borrowed from the body.

use super::types::{Event, EventsPage, ExactRef, Int, Text};
use std::borrow::Cow;

/// How deep an unknown field's value may nest before the page is left to
/// serde (which skips a value it ignores to any depth).
const MAX_DEPTH: usize = 64;

/// The most rows a page holds (the service's largest `limit`).
const FULL_PAGE: usize = 1000;

/// Reads an events page, or `None` when serde should read it (see the
/// module doc).
pub(super) fn events_page(body: &str) -> Option<EventsPage<'_>> {
    let mut s = Scan {
        text: body,
        b: body.as_bytes(),
        i: 0,
    };
    let page = s.page()?;
    s.ws();
    (s.i == s.b.len()).then_some(page)
}

struct Scan<'a> {
    text: &'a str,
    b: &'a [u8],
    i: usize,
}

/// The fields of an event, as bits of a mask of those seen.
const FIELDS: [&str; 8] = [
    "block_number",
    "block_timestamp",
    "contract_address",
    "data",
    "log_index",
    "topics",
    "transaction_hash",
    "transaction_index",
];

impl<'a> Scan<'a> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    fn ws(&mut self) {
        while let Some(b' ' | b'\n' | b'\r' | b'\t') = self.peek() {
            self.i += 1;
        }
    }

    /// Skips whitespace, then takes `c`.
    fn eat(&mut self, c: u8) -> Option<()> {
        self.ws();
        (self.peek()? == c).then(|| self.i += 1)
    }

    /// After whitespace: `,` (true), or `close` (false).
    fn more(&mut self, close: u8) -> Option<bool> {
        self.ws();
        let c = self.peek()?;
        self.i += 1;
        match c {
            b',' => Some(true),
            c if c == close => Some(false),
            _ => None,
        }
    }

    /// After whitespace: a container from `open` to `close`, its items
    /// (each read by `item`) separated by commas.
    fn items(&mut self, open: u8, close: u8, mut item: impl FnMut(&mut Self) -> Option<()>) -> Option<()> {
        self.eat(open)?;
        self.ws();
        if self.peek()? == close {
            self.i += 1;
            return Some(());
        }
        loop {
            item(self)?;
            if !self.more(close)? {
                return Some(());
            }
        }
    }

    /// After whitespace: `null` (true), or nothing taken (false).
    fn null(&mut self) -> Option<bool> {
        self.ws();
        if self.peek()? != b'n' {
            return Some(false);
        }
        self.b[self.i..].starts_with(b"null").then(|| {
            self.i += 4;
            true
        })
    }

    /// After whitespace: a string without escapes or control characters.
    fn string(&mut self) -> Option<&'a str> {
        self.eat(b'"')?;
        let start = self.i;
        let len = string_stop(&self.b[start..])?;
        if self.b[start + len] != b'"' {
            return None;
        }
        self.i = start + len + 1;
        // Both ends are ASCII quotes of a UTF-8 text: char boundaries.
        self.text.get(start..start + len)
    }

    /// A key and its `:`.
    fn key(&mut self) -> Option<&'a str> {
        let k = self.string()?;
        self.eat(b':')?;
        Some(k)
    }

    /// After whitespace: a plain non-negative integer (`0` or digits not
    /// starting with `0`), at most 18 digits so it fits an i64 unchecked.
    fn int(&mut self) -> Option<i64> {
        self.ws();
        let start = self.i;
        if self.integer()? > 18 || matches!(self.peek(), Some(b'.' | b'e' | b'E')) {
            return None;
        }
        Some(self.b[start..self.i].iter().fold(0i64, |n, &c| n * 10 + i64::from(c - b'0')))
    }

    /// The digits from here, taken; how many.
    fn digits(&mut self) -> usize {
        let n = self.b[self.i..].iter().take_while(|c| c.is_ascii_digit()).count();
        self.i += n;
        n
    }

    /// A number's integer part: `0`, or digits not starting with `0`; how
    /// many digits.
    fn integer(&mut self) -> Option<usize> {
        let start = self.i;
        let n = self.digits();
        (n == 1 || (n > 1 && self.b[start] != b'0')).then_some(n)
    }

    fn opt_int(&mut self) -> Option<Option<Int>> {
        if self.null()? {
            Some(None)
        } else {
            self.int().map(|n| Some(Int(n)))
        }
    }

    fn opt_text(&mut self) -> Option<Option<Text<'a>>> {
        if self.null()? {
            Some(None)
        } else {
            self.string().map(|s| Some(Text(Cow::Borrowed(s))))
        }
    }

    fn topics(&mut self) -> Option<Option<Vec<Option<ExactRef<'a>>>>> {
        if self.null()? {
            return Some(None);
        }
        let mut out = Vec::with_capacity(4);
        self.items(b'[', b']', |s| {
            out.push(if s.null()? {
                None
            } else {
                Some(ExactRef(Cow::Borrowed(s.string()?)))
            });
            Some(())
        })?;
        Some(Some(out))
    }

    fn event(&mut self) -> Option<Event<'a>> {
        let mut e = Event::default();
        let mut seen = 0u8;
        // The service sends the fields in one order: the key after the
        // last one found is tried first.
        let mut next = 0;
        self.items(b'{', b'}', |s| {
            let key = s.key()?;
            let found = if FIELDS.get(next) == Some(&key) {
                Some(next)
            } else {
                FIELDS.iter().position(|f| *f == key)
            };
            next = found.map_or(0, |bit| bit + 1);
            let Some(bit) = found else {
                return s.skip(0);
            };
            if seen & (1 << bit) != 0 {
                return None;
            }
            seen |= 1 << bit;
            match bit {
                0 => e.block_number = s.opt_int()?,
                1 => e.block_timestamp = s.opt_text()?,
                2 => e.contract_address = s.opt_text()?,
                3 => e.data = s.opt_text()?,
                4 => e.log_index = s.opt_int()?,
                5 => e.topics = s.topics()?,
                6 => e.transaction_hash = s.opt_text()?,
                _ => e.transaction_index = s.opt_int()?,
            }
            Some(())
        })?;
        Some(e)
    }

    fn page(&mut self) -> Option<EventsPage<'a>> {
        let mut events = None;
        let mut next_cursor = None;
        let mut seen_cursor = false;
        self.items(b'{', b'}', |s| {
            match s.key()? {
                "events" if events.is_none() => {
                    let mut list = Vec::with_capacity(FULL_PAGE);
                    s.items(b'[', b']', |s| {
                        list.push(s.event()?);
                        Some(())
                    })?;
                    events = Some(list);
                }
                "next_cursor" if !seen_cursor => {
                    seen_cursor = true;
                    next_cursor = if s.null()? { None } else { Some(s.string()?.to_string()) };
                }
                "events" | "next_cursor" => return None,
                _ => s.skip(0)?,
            }
            Some(())
        })?;
        Some(EventsPage {
            events: events?,
            next_cursor,
        })
    }

    /// Reads any well-formed JSON value (strings without escapes), for a
    /// field the page does not use.
    fn skip(&mut self, depth: usize) -> Option<()> {
        if depth >= MAX_DEPTH {
            return None;
        }
        self.ws();
        match self.peek()? {
            b'"' => self.string().map(drop),
            b'{' => self.items(b'{', b'}', |s| {
                s.key()?;
                s.skip(depth + 1)
            }),
            b'[' => self.items(b'[', b']', |s| s.skip(depth + 1)),
            b't' | b'f' | b'n' => {
                let word: &[u8] = [b"true" as &[u8], b"false", b"null"]
                    .into_iter()
                    .find(|w| self.b[self.i..].starts_with(w))?;
                self.i += word.len();
                Some(())
            }
            _ => self.number(),
        }
    }

    /// A JSON number: `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`.
    fn number(&mut self) -> Option<()> {
        if self.peek() == Some(b'-') {
            self.i += 1;
        }
        self.integer()?;
        if self.peek() == Some(b'.') {
            self.i += 1;
            if self.digits() == 0 {
                return None;
            }
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.i += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.i += 1;
            }
            if self.digits() == 0 {
                return None;
            }
        }
        Some(())
    }
}

/// The index of the first byte of `b` that ends or interrupts a string
/// without escapes: `"`, `\\`, or a control character (which JSON does not
/// allow raw in a string). `b` is the rest of the body, so the search goes
/// on in whole blocks past a short string's end until it meets its quote.
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
fn string_stop(b: &[u8]) -> Option<usize> {
    // SAFETY: this build targets a CPU with SSE2 (the cfg above; every
    // x86-64 has it), the only requirement of `sse2_stop`.
    unsafe { sse2_stop(b) }
}

/// [`string_stop`] sixteen bytes a step.
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
#[target_feature(enable = "sse2")]
fn sse2_stop(b: &[u8]) -> Option<usize> {
    use std::arch::x86_64::{_mm_cmpeq_epi8, _mm_min_epu8, _mm_movemask_epi8, _mm_or_si128, _mm_set_epi64x, _mm_set1_epi8};
    let quote = _mm_set1_epi8(b'"' as i8);
    let backslash = _mm_set1_epi8(b'\\' as i8);
    let control = _mm_set1_epi8(0x1f);
    let (blocks, rest) = b.as_chunks::<16>();
    for (k, block) in blocks.iter().enumerate() {
        let (lo, hi) = block.split_at(8);
        let word = |w: &[u8]| i64::from_le_bytes(w.try_into().unwrap_or_default());
        let v = _mm_set_epi64x(word(hi), word(lo));
        // A byte at or below 0x1f is its own minimum with 0x1f.
        let stops = _mm_or_si128(
            _mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash)),
            _mm_cmpeq_epi8(_mm_min_epu8(v, control), v),
        );
        let mask = _mm_movemask_epi8(stops);
        if mask != 0 {
            return Some(k * 16 + mask.trailing_zeros() as usize);
        }
    }
    stop_in(rest).map(|k| blocks.len() * 16 + k)
}

/// [`string_stop`] eight bytes at a time in a `u64`, where there is no
/// SSE2: a byte `x` is flagged when `x ^ '"'`, `x ^ '\\'` or `x - 0x20`
/// borrows from its top bit. A borrow can also flag a byte above a flagged
/// one, never one below it, so the lowest flag is exact.
#[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
fn string_stop(b: &[u8]) -> Option<usize> {
    swar_stop(b)
}

#[cfg(any(test, not(all(target_arch = "x86_64", target_feature = "sse2"))))]
fn swar_stop(b: &[u8]) -> Option<usize> {
    const ONES: u64 = u64::from_le_bytes([1; 8]);
    const HIGH: u64 = ONES << 7;
    let zero = |v: u64| v.wrapping_sub(ONES) & !v;
    let (chunks, rest) = b.as_chunks::<8>();
    for (k, c) in chunks.iter().enumerate() {
        let v = u64::from_le_bytes(*c);
        let flags = (zero(v ^ (ONES * u64::from(b'"'))) | zero(v ^ (ONES * u64::from(b'\\'))) | (v.wrapping_sub(ONES * 0x20) & !v)) & HIGH;
        if flags != 0 {
            return Some(k * 8 + (flags.trailing_zeros() / 8) as usize);
        }
    }
    stop_in(rest).map(|k| chunks.len() * 8 + k)
}

/// [`string_stop`] a byte at a time, for the last few bytes of a body.
fn stop_in(b: &[u8]) -> Option<usize> {
    b.iter().position(|&c| c == b'"' || c == b'\\' || c < 0x20)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn serde(body: &str) -> Option<EventsPage<'_>> {
        serde_json::from_str(body).ok()
    }

    const PAGE: &str = r#"{"events":[{"block_number":20000000,"block_timestamp":"2023-03-08T10:06:13Z","contract_address":"0xdac17f958d2ee523a2206206994597c13d831ec7","data":"0x00000000000000000000000000000000000000000000000000000059e6a7adf34","log_index":0,"topics":["0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef","0x000000000000000000000000ccee91c19ea534224e7add3e9920de45f6168fec"],"transaction_hash":"0x01fb05dbf1c765f125f38ff1adae8c3ed5146b33bf587d964c6decd02cd7592f","transaction_index":0}],"next_cursor":"abc"}"#;

    #[test]
    fn a_string_stops_at_its_first_quote_backslash_or_control_character() {
        let naive = |b: &[u8]| b.iter().position(|&c| c == b'"' || c == b'\\' || c < 0x20);
        let mut bytes: Vec<u8> = (0..=255u8).collect();
        bytes.extend(b"0xabcdef0123456789\xff\x80\x7f !#[]");
        for len in 0..40 {
            for at in 0..len {
                for &c in &bytes {
                    let mut b = vec![b'a'; len];
                    b[at] = c;
                    // A stop above the first, to catch a borrow's false flag.
                    if at + 1 < len {
                        b[len - 1] = b'"';
                    }
                    assert_eq!(string_stop(&b), naive(&b), "{b:?}");
                    assert_eq!(swar_stop(&b), naive(&b), "{b:?}");
                }
            }
        }
    }

    #[test]
    fn a_page_as_the_service_sends_it_is_read_like_serde_reads_it() {
        let ours = events_page(PAGE).expect("the scanner reads a plain page");
        assert_eq!(ours, serde(PAGE).unwrap());
        assert_eq!(ours.events[0].block_number, Some(Int(20_000_000)));
        assert_eq!(ours.next_cursor.as_deref(), Some("abc"));
    }

    /// Pages outside the subset are left to serde; those inside read the same.
    #[test]
    fn what_the_scanner_leaves_to_serde() {
        let left = [
            r#"{"events":[{"data":"0x\u0041"}]}"#,
            r#"{"events":[{"block_number":"7"}]}"#,
            r#"{"events":[{"block_number":7.0}]}"#,
            r#"{"events":[{"block_number":-7}]}"#,
            r#"{"events":[{"block_number":1234567890123456789}]}"#,
            r#"{"events":[{"block_number":07}]}"#,
            r#"{"events":[{"log_index":1,"log_index":2}]}"#,
            r#"{"events":[{"topics":[1]}]}"#,
            r#"{"events":[],"events":[]}"#,
            r#"{"next_cursor":null}"#,
            r#"{"events":null}"#,
            r#"{"events":[]} x"#,
            r#"{"events":[],}"#,
            r#"{"events":[{"x":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}]}"#,
            "{\"events\":[{\"data\":\"a\tb\"}]}",
        ];
        for body in left {
            assert_eq!(events_page(body), None, "{body}");
        }
        let read = [
            " { \"events\" : [ ] , \"next_cursor\" : null } \n",
            r#"{"next_cursor":"c","events":[{}]}"#,
            r#"{"events":[{"topics":[null,"0x1"],"x":{"y":[true,false,null,-1.5e3,"z"]},"data":null}],"extra":0}"#,
            r#"{"events":[{"block_number":0,"log_index":999999999999999999}]}"#,
        ];
        for body in read {
            assert_eq!(events_page(body), Some(serde(body).unwrap()), "{body}");
        }
    }

    /// Edge cases, one JSON-quoted body a line (tests/fixtures): every
    /// whitespace, control character, number form, literal, duplicate,
    /// escaped key, depth and block boundary of `string_stop` tried.
    #[test]
    fn edge_cases_are_read_as_serde_reads_them_or_left_to_it() {
        let cases = include_str!("../../tests/fixtures/scan-cases.txt");
        let mut read = 0;
        for line in cases.lines().filter(|l| !l.trim().is_empty()) {
            let body: String = serde_json::from_str(line).unwrap();
            if let Some(ours) = events_page(&body) {
                assert_eq!(Some(ours), serde(&body), "{line}");
                read += 1;
            }
        }
        assert!(read >= 10, "{read}");
    }

    fn ws() -> impl Strategy<Value = String> {
        prop::sample::select(vec!["", "", "", " ", "\n  ", "\t", "\r\n"]).prop_map(str::to_string)
    }

    /// A value the scanner leaves to serde, which reads or rejects it.
    fn odd() -> impl Strategy<Value = String> {
        prop::sample::select(vec![
            "-1",
            "1.0",
            "1e3",
            "\"7\"",
            "\"a\\\"b\"",
            "\"\\u00e9\"",
            "true",
            "01",
            "[]",
            "{}",
            "18446744073709551615",
            "[5]",
        ])
        .prop_map(str::to_string)
    }

    fn hex(max: usize) -> impl Strategy<Value = String> {
        prop::string::string_regex(&format!("[0-9a-f]{{0,{max}}}"))
            .unwrap()
            .prop_map(|h| format!("\"0x{h}\""))
    }

    /// A value for field `key`: mostly the forms the service sends, now
    /// and then null or an odd one.
    fn value(key: &str) -> BoxedStrategy<String> {
        let usual = match key {
            "block_number" | "log_index" | "transaction_index" => (0u64..1 << 40).prop_map(|n| n.to_string()).boxed(),
            "block_timestamp" => Just("\"2023-03-08T10:06:13Z\"".to_string()).boxed(),
            "topics" => prop::collection::vec(prop_oneof![8 => hex(64), 1 => Just("null".to_string())], 0..5)
                .prop_map(|v| format!("[{}]", v.join(",")))
                .boxed(),
            "removed" => prop_oneof![Just("false".to_string()), Just("{\"a\":[1,2.5e-3,null]}".to_string())].boxed(),
            _ => prop_oneof![hex(12), Just("\"\u{e9}\"".to_string())].boxed(),
        };
        prop_oneof![40 => usual, 2 => Just("null".to_string()), 1 => odd()].boxed()
    }

    fn event() -> impl Strategy<Value = String> {
        let key = prop_oneof![
            12 => prop::sample::select(FIELDS.to_vec()).prop_map(str::to_string),
            1 => Just("removed".to_string()),
        ];
        let field = (key, ws(), ws()).prop_flat_map(|(k, a, b)| value(&k).prop_map(move |v| format!("{a}\"{k}\"{b}:{a}{v}{b}")));
        prop::collection::vec(field, 0..6).prop_map(|fields| format!("{{{}}}", fields.join(",")))
    }

    fn page() -> impl Strategy<Value = String> {
        (prop::collection::vec(event(), 0..6), ws(), prop::option::of("[a-z0-9]{0,8}")).prop_map(|(events, w, cursor)| {
            let cursor = cursor.map_or_else(|| "null".to_string(), |c| format!("\"{c}\""));
            format!(
                "{w}{{\"events\":{w}[{}],\"next_cursor\":{cursor}}}{w}",
                events.join(&format!("{w},"))
            )
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(crate::util::proptest_cases(2000)))]

        /// Whatever the scanner accepts, serde reads to the same page.
        #[test]
        fn the_scanner_agrees_with_serde(body in page()) {
            if let Some(ours) = events_page(&body) {
                prop_assert_eq!(Some(ours), serde(&body), "{}", body);
            }
        }

        /// A page with a byte changed, cut or doubled: the scanner accepts
        /// it only where serde reads it to the same page.
        #[test]
        fn a_damaged_page_is_never_read_otherwise_than_serde_reads_it(body in page(), at in any::<prop::sample::Index>(), byte in prop::sample::select(b"{}[],:\"\\ 0a-.en".to_vec()), how in 0..3u8) {
            let mut b = body.into_bytes();
            let at = at.index(b.len().max(1)).min(b.len());
            match how {
                0 if at < b.len() => b[at] = byte,
                1 => b.truncate(at),
                _ => b.insert(at, byte),
            }
            if let Ok(body) = String::from_utf8(b)
                && let Some(ours) = events_page(&body)
            {
                prop_assert_eq!(Some(ours), serde(&body), "{}", body);
            }
        }
    }

    /// The pages generated above are mostly read by the scanner, so the
    /// agreement tests test it, not only serde.
    #[test]
    fn most_generated_pages_are_read_by_the_scanner() {
        use proptest::strategy::ValueTree;
        let mut runner = proptest::test_runner::TestRunner::deterministic();
        let read = (0..500)
            .filter(|_| events_page(&page().new_tree(&mut runner).unwrap().current()).is_some())
            .count();
        assert!((150..480).contains(&read), "{read} of 500");
    }

    /// The pages the simulator sends are read by the scanner, not left to
    /// serde (else the fast path would be lost without a word).
    #[test]
    fn the_simulators_pages_are_read_by_the_scanner() {
        use crate::sim::{data::SimData, json};
        use crate::vocab::chain::Chain;
        let data = SimData::new(42, 100);
        let mut out = b"{\"events\":[".to_vec();
        let mut rows = 0;
        for block in 20_000_000..20_000_010 {
            for i in 0..data.event_count(Chain::Ethereum, block) {
                if rows > 0 {
                    out.push(b',');
                }
                json::event(&mut out, &data.event(Chain::Ethereum, block, i), "2023-03-08T10:06:13Z", false);
                rows += 1;
            }
        }
        out.extend_from_slice(b"],\"next_cursor\":\"x\"}");
        let body = String::from_utf8(out).unwrap();
        let page = events_page(&body).expect("read by the scanner");
        assert_eq!(page.events.len(), rows);
        assert!(rows > 500);
        assert_eq!(Some(page), serde(&body));
    }
}
