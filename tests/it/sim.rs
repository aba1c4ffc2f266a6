//! Simulator conformance, probed over HTTP with a plain client: every
//! endpoint and chain, window forms, limits, ordering, paging to completion,
//! cursors, auth, quotas, JSON errors, determinism.

use crate::common::*;
use chainetl::sim::data::{EventKind, SimData};
use chainetl::spec::SimOptions;
use chainetl::vocab::chain::Chain;
use serde_json::Value;

fn get(sim: &Sim, path: &str) -> (u16, Value) {
    get_with(sim, path, None)
}

fn get_with(sim: &Sim, path: &str, key: Option<&str>) -> (u16, Value) {
    let url = format!("{}{path}", sim.url());
    sim.rt.block_on(async {
        let mut req = http_client().get(url);
        if let Some(k) = key {
            req = req.header("authorization", format!("Bearer {k}"));
        }
        let r = req.send().await.unwrap();
        let status = r.status().as_u16();
        let body = r.bytes().await.unwrap();
        (
            status,
            serde_json::from_slice(&body).unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&body).into())),
        )
    })
}

fn assert_error(sim: &Sim, path: &str, status: u16) {
    let (s, v) = get(sim, path);
    assert_eq!(s, status, "{path}: {v}");
    assert!(
        v["error"]["code"].is_string() && v["error"]["message"].is_string(),
        "{path}: not a JSON error body: {v}"
    );
}

#[test]
fn every_endpoint_answers_for_every_chain() {
    let sim = Sim::start(frozen());
    let data = SimData::new(42, 30);
    for chain in Chain::ALL {
        let c = chain.name();
        let (s, v) = get(&sim, &format!("/v2/{c}/blocks?limit=3"));
        assert_eq!(s, 200, "{c}: {v}");
        let blocks = v["blocks"].as_array().unwrap();
        assert_eq!(blocks.len(), 3);
        assert!(v["next_cursor"].is_string());
        let head = blocks[0]["number"].as_u64().unwrap();
        assert!(head > 1_000_000, "{c}: millions of blocks of history");
        let (s, v) = get(&sim, &format!("/v2/{c}/blocks/latest"));
        assert_eq!((s, v["block"]["number"].as_u64()), (200, Some(head)), "latest is the head");
        let (s, v) = get(&sim, &format!("/v2/{c}/blocks/{}", head - 10));
        assert_eq!(s, 200);
        assert_eq!(
            v["block"]["parent_hash"],
            get(&sim, &format!("/v2/{c}/blocks/{}", head - 11)).1["block"]["hash"]
        );
        let td: u128 = v["block"]["total_difficulty"].as_str().unwrap().parse().unwrap();
        assert!(td > u64::MAX as u128);
        let (s, v) = get(&sim, &format!("/v2/{c}/events?limit=5&window={}..{}", head - 20, head));
        assert_eq!(s, 200);
        assert_eq!(v["events"].as_array().unwrap().len(), 5);
        let token = chainetl::vocab::evm::hex0x(&data.token_address(chain, 4));
        let (s, v) = get(&sim, &format!("/v2/{c}/tokens/{token}"));
        assert_eq!(s, 200);
        assert_eq!(v["token"]["address"], token);
        let (s, v) = get(
            &sim,
            &format!("/v2/{c}/wallets/0xd8da6bf26964af9d7eed9e10e9029ca7ad5a3ba3/portfolio/daily?window=3d"),
        );
        assert_eq!(s, 200);
        assert_eq!(v["portfolio"].as_array().unwrap().len(), 3);
        // Block time per chain.
        let t = |n: u64| {
            chainetl::vocab::window::parse_instant(get(&sim, &format!("/v2/{c}/blocks/{n}")).1["block"]["timestamp"].as_str().unwrap())
                .unwrap()
        };
        // 1000 blocks take block_ms seconds.
        let dt = t(head) - t(head - 1000);
        assert!((dt - chain.block_ms()).abs() <= 1, "{c}: 1000 blocks took {dt}s");
    }
}

#[test]
fn validation_failures_are_json_4xx() {
    let sim = Sim::start(frozen());
    assert_error(&sim, "/v2/solana/blocks", 404);
    assert_error(&sim, "/v2/ethereum/nope", 404);
    assert_error(&sim, "/v3/ethereum/blocks", 404);
    for q in [
        "limit=0",
        "limit=1001",
        "limit=x",
        "sort_by=oldest",
        "window=7x",
        "window=10..5",
        "numbers=1,2,x",
        &format!("numbers={}", (0..1001).map(|i| i.to_string()).collect::<Vec<_>>().join(",")),
        "cursor=bm90IGEgY3Vyc29y",
    ] {
        assert_error(&sim, &format!("/v2/ethereum/blocks?{q}"), 400);
    }
    assert_error(&sim, "/v2/ethereum/events?contract_address=0x12", 400);
    assert_error(&sim, "/v2/ethereum/events?signatures=Transfer", 400);
    assert_error(&sim, "/v2/ethereum/wallets/0x12/portfolio/daily", 400);
    assert_error(
        &sim,
        "/v2/ethereum/wallets/0xd8da6bf26964af9d7eed9e10e9029ca7ad5a3ba3/portfolio/daily?limit=32",
        400,
    );
    assert_error(
        &sim,
        "/v2/ethereum/wallets/0xd8da6bf26964af9d7eed9e10e9029ca7ad5a3ba3/portfolio/daily?window=1..5",
        400,
    );
    assert_error(&sim, "/v2/ethereum/tokens/0xZZ", 400);
    assert_error(&sim, "/v2/ethereum/blocks/12a", 400);
    assert_error(&sim, "/v2/ethereum/blocks/999999999999", 404);
    let (s, _) = get(
        &sim,
        &format!(
            "/v2/ethereum/blocks?numbers={}",
            (0..1000).map(|i| i.to_string()).collect::<Vec<_>>().join(",")
        ),
    );
    assert_eq!(s, 200, "1000 numbers are allowed");
    let (s, _) = get(
        &sim,
        "/v2/ethereum/wallets/0xd8da6bf26964af9d7eed9e10e9029ca7ad5a3ba3/portfolio/daily?limit=31",
    );
    assert_eq!(s, 200);
}

/// Pages `path` to completion, returning every item of `field`.
fn drain(sim: &Sim, path: &str, field: &str) -> Vec<Value> {
    let mut out = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let p = match &cursor {
            None => path.to_string(),
            Some(c) => format!(
                "{path}&cursor={}",
                form_urlencoded::byte_serialize(c.as_bytes()).collect::<String>()
            ),
        };
        let (s, v) = get(sim, &p);
        assert_eq!(s, 200, "{p}: {v}");
        out.extend(v[field].as_array().unwrap().iter().cloned());
        match v["next_cursor"].as_str() {
            Some(c) => cursor = Some(c.into()),
            None => return out,
        }
    }
}

#[test]
fn windows_ordering_and_paging_to_completion() {
    let sim = Sim::start(frozen());
    let data = SimData::new(42, 30);
    // Block range: both ends included; default order newest first.
    let all = drain(&sim, "/v2/base/blocks?window=100..250&limit=7", "blocks");
    let nums: Vec<u64> = all.iter().map(|b| b["number"].as_u64().unwrap()).collect();
    assert_eq!(nums, (100..=250).rev().collect::<Vec<_>>());
    let asc = drain(&sim, "/v2/base/blocks?window=100..250&limit=1000&sort_by=earliest", "blocks");
    assert_eq!(
        asc.iter().map(|b| b["number"].as_u64().unwrap()).collect::<Vec<_>>(),
        (100..=250).collect::<Vec<_>>()
    );
    // Time interval: half-open.
    let iv = drain(
        &sim,
        "/v2/ethereum/blocks?window=2025-05-31T00:00:00Z..2025-05-31T01:00:00Z&limit=1000&sort_by=earliest",
        "blocks",
    );
    assert_eq!(iv.len(), 300);
    assert!(
        iv.iter()
            .all(|b| { b["timestamp"].as_str().unwrap().starts_with("2025-05-31T00:") })
    );
    // Relative windows end at the (frozen) clock.
    let rel = drain(&sim, "/v2/ethereum/blocks?window=1h&limit=1000", "blocks");
    assert_eq!(rel.len(), 300);
    assert_eq!(drain(&sim, "/v2/polygon/blocks?window=1d&limit=1000", "blocks").len(), 43_200);
    // numbers with a window: the intersection, in sort order.
    let v = drain(
        &sim,
        "/v2/ethereum/blocks?numbers=5,300,200,100,7&window=100..250&sort_by=earliest&limit=1",
        "blocks",
    );
    assert_eq!(v.iter().map(|b| b["number"].as_u64().unwrap()).collect::<Vec<_>>(), vec![100, 200]);
    // Events: small pages drain to exactly the ground truth, no repeats.
    let ev = drain(
        &sim,
        "/v2/ethereum/events?window=20000000..20000040&limit=37&sort_by=earliest",
        "events",
    );
    let keys: Vec<(u64, u64)> = ev
        .iter()
        .map(|e| (e["block_number"].as_u64().unwrap(), e["log_index"].as_u64().unwrap()))
        .collect();
    let mut want = Vec::new();
    for n in 20_000_000..=20_000_040u64 {
        for i in 0..data.event_count(Chain::Ethereum, n) {
            want.push((n, i as u64));
        }
    }
    assert_eq!(keys, want);
    let desc = drain(&sim, "/v2/ethereum/events?window=20000000..20000040&limit=41", "events");
    let mut dkeys: Vec<(u64, u64)> = desc
        .iter()
        .map(|e| (e["block_number"].as_u64().unwrap(), e["log_index"].as_u64().unwrap()))
        .collect();
    dkeys.reverse();
    assert_eq!(dkeys, want, "latest-first is the exact reverse");
    // Filters: ABI signatures with commas inside, mixed with a hash.
    let sig = "Transfer(address,address,uint256),0x1c411e9a96e071241c2f21f7726b17ae89e3cab4c78be50e062b03a9fffbbad1";
    let q = format!(
        "/v2/ethereum/events?window=20000000..20000040&limit=1000&signatures={}",
        form_urlencoded::byte_serialize(sig.as_bytes()).collect::<String>()
    );
    let f = drain(&sim, &q, "events");
    let allowed = [
        chainetl::vocab::evm::hex0x(&EventKind::Transfer.topic0()),
        chainetl::vocab::evm::hex0x(&EventKind::Sync.topic0()),
    ];
    assert!(!f.is_empty() && f.iter().all(|e| allowed.contains(&e["topics"][0].as_str().unwrap().to_string())));
    let usdc = "0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48";
    let u = drain(
        &sim,
        &format!("/v2/ethereum/events?window=20000000..20000040&limit=1000&contract_address={usdc}"),
        "events",
    );
    assert!(!u.is_empty() && u.iter().all(|e| e["contract_address"] == usdc));
    // Portfolio: days newest first, pages of at most 31, holdings consistent.
    let days = drain(
        &sim,
        "/v2/ethereum/wallets/0xd8da6bf26964af9d7eed9e10e9029ca7ad5a3ba3/portfolio/daily?window=2025-01-01T00:00:00Z..2025-03-01T00:00:00Z&limit=31",
        "portfolio",
    );
    assert_eq!(days.len(), 59);
    assert_eq!(days[0]["date"], "2025-02-28");
    assert_eq!(days[58]["date"], "2025-01-01");
}

#[test]
fn cursors_are_opaque_sealed_and_bound_to_their_query() {
    let sim = Sim::start(frozen());
    let (_, v) = get(&sim, "/v2/ethereum/blocks?window=100..250&limit=7");
    let c = v["next_cursor"].as_str().unwrap().to_string();
    let enc = |s: &str| form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
    let (s, _) = get(&sim, &format!("/v2/ethereum/blocks?window=100..250&limit=50&cursor={}", enc(&c)));
    assert_eq!(s, 200, "the limit may change between pages");
    assert_error(
        &sim,
        &format!("/v2/ethereum/blocks?window=100..251&limit=7&cursor={}", enc(&c)),
        400,
    );
    assert_error(&sim, &format!("/v2/base/blocks?window=100..250&limit=7&cursor={}", enc(&c)), 400);
    let mut forged = c.clone().into_bytes();
    forged[10] = if forged[10] == b'A' { b'B' } else { b'A' };
    assert_error(
        &sim,
        &format!(
            "/v2/ethereum/blocks?window=100..250&limit=7&cursor={}",
            enc(&String::from_utf8(forged).unwrap())
        ),
        400,
    );
    // Determinism: same query, same bytes.
    assert_eq!(
        get(&sim, "/v2/arbitrum/events?window=200000000..200000010&limit=100").1,
        get(&sim, "/v2/arbitrum/events?window=200000000..200000010&limit=100").1
    );
}

#[test]
fn api_key_is_optional_but_a_wrong_one_is_refused() {
    let sim = Sim::start(SimOptions {
        api_key: Some("s3cret".into()),
        ..frozen()
    });
    assert_eq!(get_with(&sim, "/v2/base/blocks/latest", None).0, 200);
    assert_eq!(get_with(&sim, "/v2/base/blocks/latest", Some("s3cret")).0, 200);
    let (s, v) = get_with(&sim, "/v2/base/blocks/latest", Some("wrong"));
    assert_eq!(s, 401);
    assert_eq!(v["error"]["code"], "unauthorized");
    // It quotes the key it was sent, as careless servers do.
    assert!(v["error"]["message"].as_str().unwrap().contains("wrong"), "{v}");
}

#[test]
fn forbidden_resources_get_403_whatever_the_key_and_every_answer_is_counted() {
    let sim = Sim::start(SimOptions {
        api_key: Some("s3cret".into()),
        forbid: vec!["arbitrum/events".into(), "*/portfolio".into()],
        ..frozen()
    });
    let wallet = "/wallets/0x00000000000000000000000000000000000000aa/portfolio/daily";
    let (s, v) = get_with(&sim, "/v2/arbitrum/events?window=200000000..200000010", Some("s3cret"));
    assert_eq!((s, v["error"]["code"].as_str()), (403, Some("forbidden")), "{v}");
    assert!(v["error"]["message"].as_str().unwrap().contains("events on arbitrum"), "{v}");
    assert_eq!(get_with(&sim, &format!("/v2/base{wallet}"), None).0, 403);
    assert_eq!(get_with(&sim, "/v2/arbitrum/blocks/latest", Some("s3cret")).0, 200);
    assert_eq!(get_with(&sim, "/v2/base/events?window=100..110", Some("s3cret")).0, 200);
    // A wrong key is refused before the plan is looked at.
    assert_eq!(get_with(&sim, "/v2/arbitrum/events?window=1..2", Some("wrong")).0, 401);
    let (s, stats) = get(&sim, "/_sim/stats");
    assert_eq!(s, 200);
    assert_eq!(
        (
            stats["requests"].as_u64(),
            stats["forbidden"].as_u64(),
            stats["unauthorized"].as_u64()
        ),
        (Some(5), Some(2), Some(1)),
        "{stats}"
    );
    assert!(stats["first_refusal_ms"].as_i64().unwrap() > 1_700_000_000_000, "{stats}");
    // A bad entry is refused when the simulator starts.
    let bad = chainetl(&["sim", "--port", "0", "--forbid", "ethereum/logs"]);
    assert!(!bad.status.success() && text(&bad).contains("ethereum/logs"), "{}", text(&bad));
}

#[test]
fn quota_answers_429_with_retry_after() {
    let sim = Sim::start(SimOptions {
        quota_rps: 5.0,
        ..frozen()
    });
    let url = format!("{}/v2/base/blocks/latest", sim.url());
    let (n429, retry_after) = sim.rt.block_on(async {
        let c = http_client();
        let mut n = 0;
        let mut ra = None;
        for _ in 0..20 {
            let r = c.get(&url).send().await.unwrap();
            if r.status() == 429 {
                n += 1;
                ra = r.headers().get("retry-after").map(|v| v.to_str().unwrap().to_string());
            }
        }
        (n, ra)
    });
    assert!(n429 >= 10, "{n429}");
    assert!(retry_after.unwrap().parse::<u64>().unwrap() >= 1);
}
