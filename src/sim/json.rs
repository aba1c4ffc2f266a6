//! Hand-rolled JSON rendering of the simulator's records: the hot path of
//! every benchmark, so no intermediate `serde_json::Value`.

use super::data::{Block, Event, Holding, Token};
use crate::vocab::evm::{U256, push_hex};
use crate::vocab::window::iso;

fn hex_field(out: &mut Vec<u8>, name: &str, bytes: &[u8]) {
    out.extend_from_slice(b"\"");
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(b"\":\"0x");
    push_hex(out, bytes);
    out.extend_from_slice(b"\",");
}

fn str_field(out: &mut Vec<u8>, name: &str, value: &str) {
    out.extend_from_slice(b"\"");
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(b"\":");
    push_str(out, value);
    out.push(b',');
}

fn int_field(out: &mut Vec<u8>, name: &str, value: u64) {
    out.extend_from_slice(b"\"");
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(b"\":");
    out.extend_from_slice(itoa::Buffer::new().format(value).as_bytes());
    out.push(b',');
}

/// Appends a JSON string literal.
pub(crate) fn push_str(out: &mut Vec<u8>, value: &str) {
    out.push(b'"');
    for c in value.chars() {
        match c {
            '"' => out.extend_from_slice(b"\\\""),
            '\\' => out.extend_from_slice(b"\\\\"),
            c if (c as u32) < 0x20 => out.extend_from_slice(format!("\\u{:04x}", c as u32).as_bytes()),
            c => {
                let mut buf = [0u8; 4];
                out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            }
        }
    }
    out.push(b'"');
}

fn close_object(out: &mut Vec<u8>) {
    if out.last() == Some(&b',') {
        out.pop();
    }
    out.push(b'}');
}

/// One block object.
pub(crate) fn block(out: &mut Vec<u8>, b: &Block) {
    out.push(b'{');
    str_field(out, "base_fee_per_gas", itoa::Buffer::new().format(b.base_fee_per_gas));
    str_field(out, "difficulty", itoa::Buffer::new().format(b.difficulty));
    hex_field(out, "extra_data", &b.extra_data);
    str_field(out, "gas_limit", itoa::Buffer::new().format(b.gas_limit));
    str_field(out, "gas_used", itoa::Buffer::new().format(b.gas_used));
    hex_field(out, "hash", &b.hash);
    hex_field(out, "logs_bloom", &b.logs_bloom);
    hex_field(out, "miner", &b.miner);
    hex_field(out, "nonce", &b.nonce);
    int_field(out, "number", b.number);
    hex_field(out, "parent_hash", &b.parent_hash);
    hex_field(out, "receipt_root", &b.receipt_root);
    hex_field(out, "sha3_uncles", &b.sha3_uncles);
    int_field(out, "size", b.size);
    hex_field(out, "state_root", &b.state_root);
    str_field(out, "timestamp", &iso(b.timestamp));
    str_field(out, "total_difficulty", itoa::Buffer::new().format(b.total_difficulty));
    int_field(out, "transaction_count", b.transaction_count);
    hex_field(out, "transactions_root", &b.transactions_root);
    match &b.withdrawals_root {
        Some(r) => hex_field(out, "withdrawals_root", r),
        None => out.extend_from_slice(b"\"withdrawals_root\":null,"),
    }
    close_object(out);
}

/// One event object; `timestamp` is the pre-rendered block time.
pub(crate) fn event(out: &mut Vec<u8>, e: &Event, timestamp: &str, topics_as_numbers: bool) {
    out.push(b'{');
    int_field(out, "block_number", e.block_number);
    str_field(out, "block_timestamp", timestamp);
    hex_field(out, "contract_address", &e.contract_address);
    hex_field(out, "data", &e.data);
    int_field(out, "log_index", e.log_index);
    out.extend_from_slice(b"\"topics\":[");
    for (k, t) in e.topics.iter().enumerate() {
        if k > 0 {
            out.push(b',');
        }
        if topics_as_numbers {
            out.extend_from_slice(U256::from_be_bytes(t).to_dec().as_bytes());
        } else {
            out.extend_from_slice(b"\"0x");
            push_hex(out, t);
            out.push(b'"');
        }
    }
    out.extend_from_slice(b"],");
    hex_field(out, "transaction_hash", &e.transaction_hash);
    int_field(out, "transaction_index", e.transaction_index);
    close_object(out);
}

/// One token object.
pub(crate) fn token(out: &mut Vec<u8>, t: &Token) {
    out.push(b'{');
    hex_field(out, "address", &t.address);
    int_field(out, "decimals", t.decimals as u64);
    match &t.name {
        Some(n) => str_field(out, "name", n),
        None => out.extend_from_slice(b"\"name\":null,"),
    }
    str_field(out, "standard", t.standard);
    str_field(out, "symbol", &t.symbol);
    close_object(out);
}

/// One holding object.
pub(crate) fn holding(out: &mut Vec<u8>, h: &Holding) {
    out.extend_from_slice(b"{\"balance\":");
    // Rust's shortest round-trip float formatting; JSON has no NaN here.
    let mut text = format!("{}", h.balance);
    if !text.contains(['.', 'e', 'E']) {
        text.push_str(".0");
    }
    out.extend_from_slice(text.as_bytes());
    out.extend_from_slice(b",\"balance_raw\":");
    push_str(out, &h.balance_raw);
    out.extend_from_slice(b",\"token\":");
    token(out, &h.token);
    out.push(b'}');
}
