//! Deterministic synthetic chain data, computed on demand from a seed.
//!
//! Nothing is stored: block `n` of a chain, its events and a wallet's holdings
//! on a date are pure functions of `(seed, chain, n, ...)`, so the simulator
//! serves millions of blocks in constant memory and tests can ask this module
//! for the ground truth of any row.

use crate::vocab::chain::Chain;
use crate::vocab::evm::{U256, keccak};

/// Per-chain timing: block `n` is produced at `genesis_ms + n * block_ms`.
#[derive(Debug, Clone, Copy)]
pub struct ChainParams {
    /// Milliseconds between blocks.
    pub block_ms: i64,
    /// Unix milliseconds of block 0.
    pub genesis_ms: i64,
    /// Gas limit of every block.
    pub gas_limit: u64,
}

/// Timing of `chain`: ethereum 12 s, bsc 3 s, arbitrum 250 ms, others 2 s.
pub fn params(chain: Chain) -> ChainParams {
    let (genesis_secs, gas_limit) = match chain {
        Chain::Ethereum => (1_438_269_973, 30_000_000),
        Chain::Apechain => (1_727_740_800, 60_000_000),
        Chain::Arbitrum => (1_622_240_000, 1_125_899_906),
        Chain::Avalanche => (1_600_858_926, 15_000_000),
        Chain::Base => (1_686_789_347, 150_000_000),
        Chain::Bsc => (1_598_671_449, 140_000_000),
        Chain::Polygon => (1_590_824_836, 30_000_000),
    };
    ChainParams {
        block_ms: chain.block_ms(),
        genesis_ms: genesis_secs * 1000,
        gas_limit,
    }
}

/// The kinds of log the simulator emits, with their real topic0.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventKind {
    /// `Transfer(address,address,uint256)`.
    Transfer,
    /// `Approval(address,address,uint256)`.
    Approval,
    /// Uniswap V2 `Swap(address,uint256,uint256,uint256,uint256,address)`.
    Swap,
    /// Uniswap V2 `Sync(uint112,uint112)`.
    Sync,
}

impl EventKind {
    /// Every kind.
    pub const ALL: [EventKind; 4] = [EventKind::Transfer, EventKind::Approval, EventKind::Swap, EventKind::Sync];

    /// The ABI signature.
    pub fn signature(self) -> &'static str {
        match self {
            EventKind::Transfer => "Transfer(address,address,uint256)",
            EventKind::Approval => "Approval(address,address,uint256)",
            EventKind::Swap => "Swap(address,uint256,uint256,uint256,uint256,address)",
            EventKind::Sync => "Sync(uint112,uint112)",
        }
    }

    /// keccak-256 of the signature.
    pub fn topic0(self) -> [u8; 32] {
        keccak(self.signature().as_bytes())
    }
}

/// A token contract's metadata.
#[derive(Debug, Clone, PartialEq)]
pub struct Token {
    /// Contract address.
    pub address: [u8; 20],
    /// Decimal places, 0 to 24.
    pub decimals: u8,
    /// Name; absent for some tokens.
    pub name: Option<String>,
    /// `ERC-20`, `ERC-721` or `ERC-1155`.
    pub standard: &'static str,
    /// Symbol.
    pub symbol: String,
}

/// One block.
#[derive(Debug, Clone, PartialEq)]
pub struct Block {
    /// Block number.
    pub number: u64,
    /// Unix seconds.
    pub timestamp: i64,
    /// Block hash.
    pub hash: [u8; 32],
    /// Parent's hash.
    pub parent_hash: [u8; 32],
    /// Miner address.
    pub miner: [u8; 20],
    /// Base fee in wei.
    pub base_fee_per_gas: u64,
    /// Difficulty.
    pub difficulty: u128,
    /// Total difficulty, beyond 2^64.
    pub total_difficulty: u128,
    /// Gas limit.
    pub gas_limit: u64,
    /// Gas used.
    pub gas_used: u64,
    /// Extra data bytes.
    pub extra_data: Vec<u8>,
    /// 256-byte bloom filter.
    pub logs_bloom: Vec<u8>,
    /// 8-byte nonce.
    pub nonce: [u8; 8],
    /// Receipts root.
    pub receipt_root: [u8; 32],
    /// Uncles hash.
    pub sha3_uncles: [u8; 32],
    /// Size in bytes.
    pub size: u64,
    /// State root.
    pub state_root: [u8; 32],
    /// Transactions in the block.
    pub transaction_count: u64,
    /// Transactions root.
    pub transactions_root: [u8; 32],
    /// Withdrawals root; only ethereum has one.
    pub withdrawals_root: Option<[u8; 32]>,
}

/// One event log.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    /// Block number.
    pub block_number: u64,
    /// Block time, unix seconds.
    pub block_timestamp: i64,
    /// Emitting contract.
    pub contract_address: [u8; 20],
    /// ABI-encoded payload.
    pub data: Vec<u8>,
    /// Position in the block.
    pub log_index: u64,
    /// Topics, topic0 first.
    pub topics: Vec<[u8; 32]>,
    /// Transaction hash.
    pub transaction_hash: [u8; 32],
    /// Transaction position in the block.
    pub transaction_index: u64,
}

/// One holding of a wallet on a date.
#[derive(Debug, Clone, PartialEq)]
pub struct Holding {
    /// Decimal-adjusted balance.
    pub balance: f64,
    /// Exact balance in the smallest unit.
    pub balance_raw: String,
    /// The token.
    pub token: Token,
}

const TOKENS_PER_CHAIN: u64 = 48;
const PAIRS_PER_CHAIN: u64 = 16;

/// A reorg: from block `from` on, `chain` follows fork `variant`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Fork {
    /// The chain.
    pub chain: Chain,
    /// First block that changed.
    pub from: u64,
    /// Fork number (1, 2, ...): part of every derived value of those blocks.
    pub variant: u64,
}

/// The generator: a seed, the event density and the reorgs injected so far.
#[derive(Debug, Default)]
pub struct SimData {
    /// Seed of every derived value.
    pub seed: u64,
    /// Mean number of events per block.
    pub events_per_block: u32,
    topic0: [[u8; 32]; 4],
    forks: std::sync::RwLock<Vec<Fork>>,
    any_fork: std::sync::atomic::AtomicBool,
}

impl Clone for SimData {
    fn clone(&self) -> Self {
        let s = SimData::new(self.seed, self.events_per_block);
        for f in self.forks() {
            s.add_fork(f);
        }
        s
    }
}

fn splitmix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

// Tags keep the derived streams apart.
const T_BLOCK: u64 = 1;
const T_EVCOUNT: u64 = 2;
const T_EVENT: u64 = 3;
const T_TX: u64 = 4;
const T_TOKEN: u64 = 5;
const T_PAIR: u64 = 6;
const T_ACCOUNT: u64 = 7;
const T_WALLET: u64 = 8;
const T_BALANCE: u64 = 9;
const T_ROOT: u64 = 10;

impl SimData {
    /// A generator with `seed` and `events_per_block` events per block on average.
    pub fn new(seed: u64, events_per_block: u32) -> SimData {
        let topic0 = EventKind::ALL.map(|k| k.topic0());
        SimData {
            seed,
            events_per_block,
            topic0,
            ..Default::default()
        }
    }

    /// Injects a reorg: blocks of `chain` from `from` on get new hashes and
    /// new events. Returns the fork.
    pub fn reorg(&self, chain: Chain, from: u64) -> Fork {
        let variant = self
            .forks()
            .iter()
            .filter(|f| f.chain == chain)
            .map(|f| f.variant)
            .max()
            .unwrap_or(0)
            + 1;
        let f = Fork { chain, from, variant };
        self.add_fork(f);
        f
    }

    /// Applies a fork as recorded (e.g. by another simulator instance).
    pub fn add_fork(&self, f: Fork) {
        if let Ok(mut v) = self.forks.write() {
            v.push(f);
        }
        self.any_fork.store(true, std::sync::atomic::Ordering::Release);
    }

    /// The reorgs injected so far, oldest first.
    pub fn forks(&self) -> Vec<Fork> {
        self.forks.read().map(|v| v.clone()).unwrap_or_default()
    }

    /// Block `n` as a hashing key: its number, plus the fork it is on.
    fn bkey(&self, chain: Chain, n: u64) -> u64 {
        if !self.any_fork.load(std::sync::atomic::Ordering::Acquire) {
            return n;
        }
        let variant = self
            .forks
            .read()
            .ok()
            .and_then(|v| v.iter().rev().find(|f| f.chain == chain && f.from <= n).map(|f| f.variant))
            .unwrap_or(0);
        n | (variant << 48)
    }

    fn h(&self, tag: u64, chain: Chain, a: u64, b: u64) -> u64 {
        let mut z = splitmix(self.seed ^ tag.wrapping_mul(0x1000_0000_01b3));
        z = splitmix(z ^ chain.index());
        z = splitmix(z ^ a);
        splitmix(z ^ b.rotate_left(17))
    }

    fn h32(&self, tag: u64, chain: Chain, a: u64, b: u64) -> [u8; 32] {
        let mut out = [0u8; 32];
        let mut z = self.h(tag, chain, a, b);
        for i in 0..4 {
            out[i * 8..i * 8 + 8].copy_from_slice(&z.to_be_bytes());
            z = splitmix(z);
        }
        out
    }

    fn addr(&self, tag: u64, chain: Chain, a: u64) -> [u8; 20] {
        let h = self.h32(tag, chain, a, 0);
        let mut out = [0u8; 20];
        out.copy_from_slice(&h[12..]);
        out
    }

    /// The newest block at unix milliseconds `now_ms`.
    pub fn head(&self, chain: Chain, now_ms: i64) -> u64 {
        let p = params(chain);
        ((now_ms - p.genesis_ms).max(0) / p.block_ms) as u64
    }

    /// Unix seconds of block `n`.
    pub fn block_timestamp(&self, chain: Chain, n: u64) -> i64 {
        let p = params(chain);
        (p.genesis_ms + n as i64 * p.block_ms).div_euclid(1000)
    }

    /// The half-open block range `[first, end)` whose timestamps `t` satisfy
    /// `start <= t < end` (or `<= end` when `inclusive_end`).
    pub fn blocks_in_time(&self, chain: Chain, start: i64, end: i64, inclusive_end: bool) -> (u64, u64) {
        let p = params(chain);
        // First n with genesis + n*bt >= t*1000.
        let first_at = |t_secs: i64| -> u64 {
            let d = t_secs * 1000 - p.genesis_ms;
            if d <= 0 { 0 } else { ((d + p.block_ms - 1) / p.block_ms) as u64 }
        };
        let end_secs = if inclusive_end { end + 1 } else { end };
        let (a, b) = (first_at(start), first_at(end_secs));
        (a, b.max(a))
    }

    /// The hash of block `n`.
    pub fn block_hash(&self, chain: Chain, n: u64) -> [u8; 32] {
        self.h32(T_BLOCK, chain, self.bkey(chain, n), 0)
    }

    /// Block `n` of `chain`.
    pub fn block(&self, chain: Chain, n: u64) -> Block {
        let p = params(chain);
        let k = self.bkey(chain, n);
        let r = self.h(T_BLOCK, chain, k, 1);
        let difficulty: u128 = 10_000_000_000_000 + (r % 1_000_000_000_000) as u128;
        let gas_used = r % p.gas_limit;
        let mut extra_data = Vec::with_capacity(12);
        extra_data.extend_from_slice(b"sim");
        extra_data.extend_from_slice(&(r >> 8).to_be_bytes()[..(r % 9) as usize]);
        let mut logs_bloom = vec![0u8; 256];
        let mut z = r;
        for chunk in logs_bloom.chunks_mut(8) {
            z = splitmix(z);
            chunk.copy_from_slice(&(z & splitmix(z ^ 1)).to_be_bytes());
        }
        Block {
            number: n,
            timestamp: self.block_timestamp(chain, n),
            hash: self.block_hash(chain, n),
            parent_hash: if n == 0 { [0; 32] } else { self.block_hash(chain, n - 1) },
            miner: self.addr(T_ACCOUNT, chain, 1_000_000 + r % 16),
            base_fee_per_gas: 100_000_000 + (r >> 20) % 90_000_000_000,
            difficulty,
            total_difficulty: 58_750_003_716_598_352_816_469u128 + n as u128 * 10_000_500_000_000,
            gas_limit: p.gas_limit,
            gas_used,
            extra_data,
            logs_bloom,
            nonce: ((r >> 3) ^ n).to_be_bytes(),
            receipt_root: self.h32(T_ROOT, chain, k, 1),
            sha3_uncles: self.h32(T_ROOT, chain, 0, 2),
            size: 1_000 + (r >> 12) % 150_000,
            state_root: self.h32(T_ROOT, chain, k, 3),
            transaction_count: self.event_count(chain, n) as u64 / 2 + (r >> 40) % 20,
            transactions_root: self.h32(T_ROOT, chain, k, 4),
            withdrawals_root: (chain == Chain::Ethereum).then(|| self.h32(T_ROOT, chain, k, 5)),
        }
    }

    /// Number of events in block `n`: uniform in `0..=2*events_per_block`.
    pub fn event_count(&self, chain: Chain, n: u64) -> u32 {
        if self.events_per_block == 0 {
            return 0;
        }
        (self.h(T_EVCOUNT, chain, self.bkey(chain, n), 0) % (2 * self.events_per_block as u64 + 1)) as u32
    }

    /// The cheap part of event `i` of block `n`: its contract and kind, so
    /// filters can skip events without building them.
    pub fn event_head(&self, chain: Chain, n: u64, i: u32) -> ([u8; 20], EventKind, u64, Option<u64>) {
        let r = self.h(T_EVENT, chain, self.bkey(chain, n), i as u64);
        let pick = r % 100;
        let sel = (r >> 8) % 1_000_003;
        if pick < 75 {
            let j = if pick < 35 { sel % 4 } else { 4 + sel % (TOKENS_PER_CHAIN - 4) };
            let kind = if (r >> 40).is_multiple_of(5) {
                EventKind::Approval
            } else {
                EventKind::Transfer
            };
            (self.token_address(chain, j), kind, r, Some(j))
        } else {
            let pair = sel % PAIRS_PER_CHAIN;
            let kind = if (r >> 40) % 5 < 3 { EventKind::Swap } else { EventKind::Sync };
            (self.addr(T_PAIR, chain, pair), kind, r, None)
        }
    }

    /// topic0 of `kind`.
    pub fn topic0(&self, kind: EventKind) -> [u8; 32] {
        self.topic0[kind as usize]
    }

    /// Event `i` of block `n`.
    pub fn event(&self, chain: Chain, n: u64, i: u32) -> Event {
        let (contract, kind, r, token_index) = self.event_head(chain, n, i);
        let tx_index = i as u64 * 2 / 3;
        let account = |k: u64| -> [u8; 32] {
            let mut t = [0u8; 32];
            t[12..].copy_from_slice(&self.addr(T_ACCOUNT, chain, k % 1_048_576));
            t
        };
        let word = |v: U256| v.to_be_bytes();
        let z1 = splitmix(r);
        let z2 = splitmix(z1);
        let z3 = splitmix(z2);
        let mut topics = vec![self.topic0(kind)];
        let mut data = Vec::new();
        match kind {
            EventKind::Transfer | EventKind::Approval => {
                topics.push(account(z1));
                topics.push(account(z2));
                let nft = token_index.is_some() && self.token_standard_index(token_index) != 0;
                let amount = if kind == EventKind::Approval && z3.is_multiple_of(4) {
                    U256([u64::MAX; 4])
                } else if z3.is_multiple_of(7) {
                    U256([z3, z2 % 1_000_000, 0, 0])
                } else {
                    U256([z3 % 10_000_000_000_000, 0, 0, 0])
                };
                if nft && kind == EventKind::Transfer {
                    topics.push(word(U256([z3 % 100_000, 0, 0, 0])));
                } else {
                    data.extend_from_slice(&word(amount));
                }
            }
            EventKind::Swap => {
                topics.push(account(z1));
                topics.push(account(z2));
                for k in 0..4u64 {
                    let v = if (z3 >> k) & 1 == 0 { 0 } else { splitmix(z3 ^ k) >> 4 };
                    data.extend_from_slice(&word(U256([v, 0, 0, 0])));
                }
            }
            EventKind::Sync => {
                data.extend_from_slice(&word(U256([z1, z2 % 65_536, 0, 0])));
                data.extend_from_slice(&word(U256([z2, z3 % 65_536, 0, 0])));
            }
        }
        Event {
            block_number: n,
            block_timestamp: self.block_timestamp(chain, n),
            contract_address: contract,
            data,
            log_index: i as u64,
            topics,
            transaction_hash: self.h32(T_TX, chain, self.bkey(chain, n), tx_index),
            transaction_index: tx_index,
        }
    }

    /// Address of token `j` of `chain`'s pool; ethereum's first three are the
    /// real USDC, WETH and USDT.
    pub fn token_address(&self, chain: Chain, j: u64) -> [u8; 20] {
        if chain == Chain::Ethereum && j < 3 {
            let known = [
                "a0b86991c6218b36c1d19d4a2e9eb0ce3606eb48",
                "c02aaa39b223fe8d0a0e5c4f27ead9083c756cc2",
                "dac17f958d2ee523a2206206994597c13d831ec7",
            ][j as usize];
            let mut out = [0u8; 20];
            if hex::decode_to_slice(known, &mut out).is_ok() {
                return out;
            }
        }
        self.addr(T_TOKEN, chain, j)
    }

    fn token_standard_index(&self, j: Option<u64>) -> u8 {
        match j {
            Some(j) if j % 16 == 7 => 1,
            Some(j) if j % 16 == 11 => 2,
            _ => 0,
        }
    }

    /// Metadata of the token at `address`, or `None` when no contract lives there.
    pub fn token(&self, chain: Chain, address: &[u8; 20]) -> Option<Token> {
        let j = contract_index(self, chain, address);
        let key = u64::from_be_bytes([
            address[0], address[1], address[2], address[3], address[4], address[5], address[6], address[7],
        ]);
        let r = self.h(T_TOKEN, chain, key, 99);
        if j.is_none() && r.is_multiple_of(5) {
            return None;
        }
        if chain == Chain::Ethereum && j.is_some_and(|j| j < 3) {
            let (name, symbol, decimals) =
                [("USD Coin", "USDC", 6), ("Wrapped Ether", "WETH", 18), ("Tether USD", "USDT", 6)][j.unwrap_or(0) as usize];
            return Some(Token {
                address: *address,
                decimals,
                name: Some(name.into()),
                standard: "ERC-20",
                symbol: symbol.into(),
            });
        }
        let std_idx = self.token_standard_index(j.or(Some(r >> 32)));
        let decimals = if std_idx != 0 {
            0
        } else {
            [18, 18, 18, 6, 8, 0, 24, 9, 12, 2][(r >> 8) as usize % 10]
        };
        let label = match j {
            Some(j) => format!("{}{j}", chain.name().chars().next().unwrap_or('x').to_ascii_uppercase()),
            None => format!("X{}", (r >> 16) % 100_000),
        };
        Some(Token {
            address: *address,
            decimals,
            name: (!(r >> 24).is_multiple_of(7)).then(|| format!("Sim Token {label}")),
            standard: ["ERC-20", "ERC-721", "ERC-1155"][std_idx as usize],
            symbol: format!("S{label}"),
        })
    }

    /// The first day (days since epoch) on which `wallet` holds anything.
    fn wallet_since(&self, chain: Chain, wallet: &[u8; 20]) -> i32 {
        let key = u64::from_be_bytes([
            wallet[12], wallet[13], wallet[14], wallet[15], wallet[16], wallet[17], wallet[18], wallet[19],
        ]);
        // Active from some day in 2023..2024 onwards.
        19_358 + (self.h(T_WALLET, chain, key, 0) % 700) as i32
    }

    /// Holdings of `wallet` on day `day` (days since epoch), optionally only `token`.
    pub fn holdings(&self, chain: Chain, wallet: &[u8; 20], day: i32, token: Option<&[u8; 20]>) -> Vec<Holding> {
        if day < self.wallet_since(chain, wallet) {
            return Vec::new();
        }
        let key = u64::from_be_bytes([
            wallet[12], wallet[13], wallet[14], wallet[15], wallet[16], wallet[17], wallet[18], wallet[19],
        ]);
        let w = self.h(T_WALLET, chain, key, 1);
        let count = 1 + w % 5;
        let mut out = Vec::new();
        for k in 0..count {
            let j = splitmix(w ^ k) % TOKENS_PER_CHAIN;
            if out.iter().any(|h: &Holding| h.token.address == self.token_address(chain, j)) {
                continue;
            }
            let address = self.token_address(chain, j);
            if token.is_some_and(|t| *t != address) {
                continue;
            }
            let Some(meta) = self.token(chain, &address) else {
                continue;
            };
            let r = self.h(T_BALANCE, chain, key ^ j, day as u64);
            let raw = if meta.decimals == 24 || (w ^ k).is_multiple_of(11) {
                // Beyond 2^128: 40+ digits.
                format!(
                    "{}{:019}{:019}",
                    1 + r % 999_999,
                    splitmix(r) % 10_000_000_000_000_000_000,
                    splitmix(r ^ 7) % 10_000_000_000_000_000_000
                )
            } else if r.is_multiple_of(13) {
                "0".to_string()
            } else {
                (r % 10u64.pow(12 + (meta.decimals as u32).min(7))).to_string()
            };
            out.push(Holding {
                balance: scaled(&raw, meta.decimals),
                balance_raw: raw,
                token: meta,
            });
        }
        out
    }
}

/// `raw / 10^decimals` as the nearest f64, computed from the decimal text.
pub fn scaled(raw: &str, decimals: u8) -> f64 {
    let d = decimals as usize;
    let text = if raw.len() > d {
        format!("{}.{}", &raw[..raw.len() - d], &raw[raw.len() - d..])
    } else {
        format!("0.{}{}", "0".repeat(d - raw.len()), raw)
    };
    text.parse().unwrap_or(0.0)
}

fn contract_index(data: &SimData, chain: Chain, address: &[u8; 20]) -> Option<u64> {
    (0..TOKENS_PER_CHAIN).find(|j| data.token_address(chain, *j) == *address)
}
