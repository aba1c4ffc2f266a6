//! The simulator's ground truth, rendered like `common::read_rows` renders
//! Parquet values, for row-by-row comparison.

use chainetl::sim::data::SimData;
use chainetl::vocab::chain::Chain;
use chainetl::vocab::evm::hex0x;
use chainetl::vocab::window::{date_string, iso};

pub const EVENT_COLS: &[&str] = &[
    "chain",
    "block_number",
    "block_timestamp",
    "log_index",
    "contract_address",
    "data",
    "topic0",
    "topic1",
    "topic2",
    "topic3",
    "transaction_hash",
    "transaction_index",
];

fn ts(secs: i64) -> String {
    iso(secs).trim_end_matches('Z').to_string()
}

/// Events of blocks `first..=last`, optionally only some topic0s / one contract.
pub fn events(data: &SimData, chain: Chain, first: u64, last: u64, topics: &[[u8; 32]], contract: Option<[u8; 20]>) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    for n in first..=last {
        for i in 0..data.event_count(chain, n) {
            // An event's head is its contract and kind, whose topic0 is
            // its first topic (`SimData::event` makes both from it), for a
            // fraction of the cost of the whole event: filter on it.
            let (head_contract, kind, _, _) = data.event_head(chain, n, i);
            if contract.is_some_and(|c| c != head_contract) || !(topics.is_empty() || topics.contains(&data.topic0(kind))) {
                continue;
            }
            let e = data.event(chain, n, i);
            let topic = |k: usize| e.topics.get(k).map(|t| hex0x(t)).unwrap_or_else(|| "NULL".into());
            rows.push(vec![
                chain.name().to_string(),
                e.block_number.to_string(),
                ts(e.block_timestamp),
                e.log_index.to_string(),
                hex0x(&e.contract_address),
                hex0x(&e.data),
                topic(0),
                topic(1),
                topic(2),
                topic(3),
                hex0x(&e.transaction_hash),
                e.transaction_index.to_string(),
            ]);
        }
    }
    rows.sort();
    rows
}

pub const BLOCK_COLS: &[&str] = &[
    "chain",
    "number",
    "hash",
    "parent_hash",
    "timestamp",
    "base_fee_per_gas",
    "difficulty",
    "total_difficulty",
    "gas_limit",
    "gas_used",
    "miner",
    "nonce",
    "extra_data",
    "logs_bloom",
    "size",
    "transaction_count",
    "withdrawals_root",
    "state_root",
];

/// Blocks with the given numbers.
pub fn blocks(data: &SimData, chain: Chain, numbers: impl Iterator<Item = u64>) -> Vec<Vec<String>> {
    let mut rows: Vec<Vec<String>> = numbers
        .map(|n| {
            let b = data.block(chain, n);
            vec![
                chain.name().to_string(),
                n.to_string(),
                hex0x(&b.hash),
                hex0x(&b.parent_hash),
                ts(b.timestamp),
                b.base_fee_per_gas.to_string(),
                b.difficulty.to_string(),
                b.total_difficulty.to_string(),
                b.gas_limit.to_string(),
                b.gas_used.to_string(),
                hex0x(&b.miner),
                hex0x(&b.nonce),
                hex0x(&b.extra_data),
                hex0x(&b.logs_bloom),
                b.size.to_string(),
                b.transaction_count.to_string(),
                b.withdrawals_root.map(|r| hex0x(&r)).unwrap_or_else(|| "NULL".into()),
                hex0x(&b.state_root),
            ]
        })
        .collect();
    rows.sort();
    rows
}

pub const PORTFOLIO_COLS: &[&str] = &[
    "chain",
    "wallet_address",
    "date",
    "balance",
    "balance_raw",
    "token_address",
    "token_decimals",
    "token_name",
    "token_standard",
    "token_symbol",
];

/// Holdings of `wallet` for days `first_day..end_day`.
pub fn portfolio(data: &SimData, chain: Chain, wallet: &str, first_day: i32, end_day: i32) -> Vec<Vec<String>> {
    let mut w = [0u8; 20];
    hex::decode_to_slice(&wallet[2..], &mut w).unwrap();
    let mut rows = Vec::new();
    for day in first_day..end_day {
        for h in data.holdings(chain, &w, day, None) {
            rows.push(vec![
                chain.name().to_string(),
                wallet.to_string(),
                date_string(day),
                format!("{:?}", h.balance),
                h.balance_raw.clone(),
                hex0x(&h.token.address),
                h.token.decimals.to_string(),
                h.token.name.clone().unwrap_or_else(|| "NULL".into()),
                h.token.standard.to_string(),
                h.token.symbol.clone(),
            ]);
        }
    }
    rows.sort();
    rows
}
