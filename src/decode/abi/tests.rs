use super::*;
use crate::plan::{Unit, UnitRange};
use crate::spec::decoding::snake_case;
use crate::vocab::Chain;
use crate::vocab::Dataset;
use alloy_dyn_abi::DynSolValue;
use arrow_array::Array;
use arrow_array::cast::AsArray;
use arrow_array::types::{Decimal128Type, Float64Type, Int64Type};

const ERC20_TRANSFER: &str = "event Transfer(address indexed from, address indexed to, uint256 value)";
const ERC721_TRANSFER: &str = "event Transfer(address indexed from, address indexed to, uint256 indexed tokenId)";

fn unit() -> Unit {
    Unit {
        id: "e0-events-ethereum-b0-2000000".into(),
        export: 0,
        dataset: Dataset::Events,
        chain: Chain::Ethereum,
        range: UnitRange::Blocks { start: 0, end: 2_000_000 },
        estimated_requests: 1,
    }
}

fn table(sig: &str, wide: U256Columns) -> EventTable {
    let e = Event::parse(sig).unwrap();
    EventTable::new(&snake_case(&e.name), e, HashEncoding::Hex, wide).unwrap()
}

/// A log as the service sends it.
fn log_json(block: u64, log_index: u64, contract: &str, topics: &[&str], data: &str) -> String {
    serde_json::json!({
        "block_number": block, "block_timestamp": "2016-05-10T00:00:00Z", "contract_address": contract,
        "data": data, "log_index": log_index, "topics": topics,
        "transaction_hash": format!("0x{:064x}", block * 1000 + log_index), "transaction_index": 0
    })
    .to_string()
}

fn decode(tables: Vec<EventTable>, wide: U256Columns, logs: &[String]) -> DecodedLogs {
    let body = format!("[{}]", logs.join(","));
    let logs: Vec<Log<'_>> = serde_json::from_str(&body).unwrap();
    let u = unit();
    let ctx = Ctx {
        unit: &u,
        page: 1,
        enc: HashEncoding::Hex,
    };
    LogDecoder::new(tables, HashEncoding::Hex, wide).decode(ctx, &logs).unwrap()
}

fn strings(d: &Decoded, col: &str) -> Vec<String> {
    let c = d.batch.column_by_name(col).unwrap().as_string::<i32>();
    (0..c.len()).map(|i| c.value(i).to_string()).collect()
}

/// Splits a CSV line with double-quoted fields.
fn csv_fields(line: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut quoted = false;
    for c in line.chars() {
        match c {
            '"' => quoted = !quoted,
            ',' if !quoted => out.push(String::new()),
            c => out.last_mut().unwrap().push(c),
        }
    }
    out
}

#[test]
fn real_mainnet_transfers_decode_to_what_ethereum_etl_decoded() {
    // Logs and expected values: ethereum-etl's test resources (tests/fixtures/ethereum-etl).
    let logs_csv = include_str!("../../../tests/fixtures/ethereum-etl/logs.csv");
    let expected_csv = include_str!("../../../tests/fixtures/ethereum-etl/expected_token_transfers.csv");
    let logs: Vec<String> = logs_csv
        .lines()
        .skip(1)
        .map(|l| {
            let f = csv_fields(l);
            let topics: Vec<&str> = f[7].split(',').collect();
            log_json(f[4].parse().unwrap(), f[0].parse().unwrap(), &f[5], &topics, &f[6])
        })
        .collect();
    let d = decode(vec![table(ERC20_TRANSFER, U256Columns::default())], U256Columns::default(), &logs);
    let t = &d.tables[0];
    let mut got: Vec<Vec<String>> = (0..t.batch.num_rows())
        .map(|i| {
            ["contract_address", "from", "to", "value"]
                .iter()
                .map(|c| strings(t, c)[i].clone())
                .chain([t
                    .batch
                    .column_by_name("log_index")
                    .unwrap()
                    .as_primitive::<Int64Type>()
                    .value(i)
                    .to_string()])
                .collect()
        })
        .collect();
    got.sort();
    let mut want: Vec<Vec<String>> = expected_csv
        .lines()
        .skip(1)
        .map(|l| {
            let f = csv_fields(l);
            vec![f[0].clone(), f[1].clone(), f[2].clone(), f[3].clone(), f[5].clone()]
        })
        .collect();
    want.sort();
    assert_eq!(got, want);
    assert_eq!(d.counts.undecodable, 1, "the log that is not a Transfer");
}

#[test]
fn erc20_and_erc721_transfers_each_land_in_exactly_one_table() {
    let t20 = "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef";
    let a = "0x0000000000000000000000001b63142628311395ceafeea5667e7c9026c862ca";
    let b = "0x000000000000000000000000ac4df82fe37ea2187bc8c011a23d743b4f39019a";
    let id = "0x0000000000000000000000000000000000000000000000000000000000000007";
    let logs = vec![
        log_json(
            10,
            0,
            "0xf4eced2f682ce333f96f2d8966c613ded8fc95dd",
            &[t20, a, b],
            &format!("0x{:064x}", 100_000),
        ),
        log_json(10, 1, "0x06012c8cf97bead5deae237070f9587f8e7a266d", &[t20, a, b, id], "0x"),
        log_json(10, 2, "0x06012c8cf97bead5deae237070f9587f8e7a266d", &[t20, a], "0x"),
    ];
    let tables = || {
        let mut nft = table(ERC721_TRANSFER, U256Columns::default());
        nft.table = "erc721_transfers".into();
        vec![table(ERC20_TRANSFER, U256Columns::default()), nft]
    };
    let d = decode(tables(), U256Columns::default(), &logs);
    assert_eq!(d.tables[0].batch.num_rows(), 1);
    assert_eq!(strings(&d.tables[0], "value"), vec!["100000"]);
    assert_eq!(d.tables[1].batch.num_rows(), 1);
    assert_eq!(strings(&d.tables[1], "tokenId"), vec!["7"]);
    assert_eq!(d.counts.undecodable, 1, "two topics fit neither");
    let only20 = decode(vec![table(ERC20_TRANSFER, U256Columns::default())], U256Columns::default(), &logs);
    assert_eq!(only20.tables[0].batch.num_rows(), 1);
    assert_eq!(only20.counts.undecodable, 2);
}

#[test]
fn unlimited_approvals_and_negative_numbers_stay_exact() {
    let wide = U256Columns {
        decimal38: true,
        binary: true,
    };
    let approval = table(
        "event Approval(address indexed owner, address indexed spender, uint256 value)",
        wide,
    );
    let delta = table("event Delta(int256 amount, int64 small, uint64 big, uint8 tiny, bool flag)", wide);
    let max = "0x".to_string() + &"f".repeat(64);
    let owner = format!("0x{:064x}", 1);
    let topic0 = format!("{}", approval.topic0());
    let dtopic = format!("{}", delta.topic0());
    let words = [
        "f".repeat(63) + "b",                // -5
        "f".repeat(48) + "8000000000000000", // i64::MIN
        format!("{:064x}", u64::MAX),        // uint64 max: wider than Int64
        format!("{:064x}", 200),             // uint8
        format!("{:064x}", 1),               // true
    ];
    let logs = vec![
        log_json(5, 0, "0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48", &[&topic0, &owner, &owner], &max),
        log_json(
            5,
            1,
            "0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48",
            &[&dtopic],
            &format!("0x{}", words.concat()),
        ),
    ];
    let d = decode(vec![approval, delta], wide, &logs);
    let a = &d.tables[0];
    let max_dec = "115792089237316195423570985008687907853269984665640564039457584007913129639935";
    assert_eq!(strings(a, "value"), vec![max_dec]);
    let f = a.batch.column_by_name("value_f64").unwrap().as_primitive::<Float64Type>().value(0);
    assert!((f / 1.157_920_892_373_162e77 - 1.0).abs() < 1e-12, "{f}");
    assert!(a.batch.column_by_name("value_decimal38").unwrap().is_null(0));
    assert_eq!(
        a.batch.column_by_name("value_binary").unwrap().as_binary::<i32>().value(0),
        &[0xff; 32]
    );
    let t = &d.tables[1];
    assert_eq!(strings(t, "amount"), vec!["-5"]);
    assert_eq!(
        t.batch
            .column_by_name("amount_decimal38")
            .unwrap()
            .as_primitive::<Decimal128Type>()
            .value(0),
        -5
    );
    let bin = t
        .batch
        .column_by_name("amount_binary")
        .unwrap()
        .as_binary::<i32>()
        .value(0)
        .to_vec();
    assert_eq!(bin[..31], [0xff; 31]);
    assert_eq!(bin[31], 0xfb);
    assert_eq!(
        t.batch.column_by_name("small").unwrap().as_primitive::<Int64Type>().value(0),
        i64::MIN
    );
    assert_eq!(strings(t, "big"), vec![u64::MAX.to_string()]);
    assert_eq!(t.batch.column_by_name("tiny").unwrap().as_primitive::<Int64Type>().value(0), 200);
    assert!(t.batch.column_by_name("flag").unwrap().as_boolean().value(0));
    assert_eq!(d.counts.decimal38_nulls, 1);
    assert_eq!(d.counts.undecodable, 0);
}

#[test]
fn dynamic_bytes_strings_arrays_and_tuples_round_trip() {
    let sig = "event Note(string text, bytes blob, uint256[] amounts, (address, string, int8) entry, string bad, string indexed key)";
    let t = table(sig, U256Columns::default());
    let values = vec![
        DynSolValue::String("héllo".into()),
        DynSolValue::Bytes(vec![0xde, 0xad]),
        DynSolValue::Array(vec![
            DynSolValue::Uint(alloy_primitives::U256::MAX, 256),
            DynSolValue::Uint(alloy_primitives::U256::from(3u8), 256),
        ]),
        DynSolValue::Tuple(vec![
            DynSolValue::Address(alloy_primitives::Address::repeat_byte(0x11)),
            DynSolValue::String("x\"y".into()),
            DynSolValue::Int(alloy_primitives::I256::try_from(-2).unwrap(), 8),
        ]),
        DynSolValue::Bytes(vec![0xff, 0xfe]),
    ];
    let data = DynSolValue::Tuple(values).abi_encode_params();
    let key = alloy_primitives::keccak256(b"k");
    let logs = vec![log_json(
        9,
        0,
        "0x0000000000000000000000000000000000000001",
        &[&t.topic0().to_string(), &key.to_string()],
        &format!("0x{}", hex::encode(data)),
    )];
    let d = decode(vec![t], U256Columns::default(), &logs);
    let r = &d.tables[0];
    assert_eq!(strings(r, "text"), vec!["héllo"]);
    assert_eq!(strings(r, "blob"), vec!["0xdead"]);
    let max_dec = "115792089237316195423570985008687907853269984665640564039457584007913129639935";
    assert_eq!(strings(r, "amounts"), vec![format!("[{max_dec},3]")]);
    assert_eq!(strings(r, "entry"), vec![format!("[\"0x{}\",\"x\\\"y\",-2]", "11".repeat(20))]);
    assert_eq!(strings(r, "bad"), vec!["0xfffe"], "not UTF-8: hex");
    assert_eq!(strings(r, "key"), vec![key.to_string()], "an indexed string is its hash");
    assert_eq!(d.counts.invalid_utf8, 1);
    // Exact: the JSON parses back to the same digits.
    let v: serde_json::Value = serde_json::from_str(&strings(r, "amounts")[0]).unwrap();
    assert_eq!(v.as_array().unwrap().len(), 2);
}

#[test]
fn truncated_data_and_foreign_logs_are_counted_not_fatal() {
    let t = table(ERC20_TRANSFER, U256Columns::default());
    let t0 = t.topic0().to_string();
    let a = format!("0x{:064x}", 1);
    let logs = vec![
        log_json(1, 0, "0x0000000000000000000000000000000000000001", &[&t0, &a, &a], "0x00ff"),
        log_json(1, 1, "0x0000000000000000000000000000000000000001", &[&a], "0x"),
        log_json(1, 2, "0x0000000000000000000000000000000000000001", &[], "0x"),
    ];
    let d = decode(vec![t], U256Columns::default(), &logs);
    assert_eq!(d.tables[0].batch.num_rows(), 0);
    assert_eq!(d.counts.undecodable, 3);
}

#[test]
fn names_and_schemas() {
    assert_eq!(snake_case("Transfer"), "transfer");
    assert_eq!(snake_case("OwnershipTransferred"), "ownership_transferred");
    assert_eq!(snake_case("ERC20Sent"), "erc20_sent");
    assert_eq!(snake_case("NFTMinted"), "nft_minted");
    let t = table("event Odd(address indexed, uint256 chain, uint256)", U256Columns::default());
    let names: Vec<String> = t.schema().fields().iter().map(|f| f.name().clone()).collect();
    assert_eq!(names[7..], ["arg0", "chain_1", "chain_1_f64", "arg2", "arg2_f64"].map(String::from));
    assert!(
        EventTable::new(
            "x",
            Event::parse("event A(uint256 a) anonymous").unwrap(),
            HashEncoding::Hex,
            U256Columns::default()
        )
        .is_err()
    );
}

#[test]
fn every_mix_of_extra_columns_fills_every_column() {
    let sig = "event Two(uint256 a, uint64 b, int8 c, uint256 d)";
    let words: String = [1u64, 2, 3, 4].iter().map(|v| format!("{v:064x}")).collect();
    for (decimal38, binary) in [(false, false), (true, false), (false, true), (true, true)] {
        let wide = U256Columns { decimal38, binary };
        let t = table(sig, wide);
        let topic = t.topic0().to_string();
        let logs = vec![log_json(
            3,
            0,
            "0x0000000000000000000000000000000000000001",
            &[&topic],
            &format!("0x{words}"),
        )];
        let d = decode(vec![t], wide, &logs);
        let r = &d.tables[0];
        assert_eq!(r.batch.num_rows(), 1, "{wide:?}");
        assert_eq!(strings(r, "a"), vec!["1"]);
        assert_eq!(strings(r, "b"), vec!["2"]);
        assert_eq!(r.batch.column_by_name("c").unwrap().as_primitive::<Int64Type>().value(0), 3);
        assert_eq!(strings(r, "d"), vec!["4"]);
        assert_eq!(r.batch.column_by_name("d_decimal38").is_some(), decimal38);
        assert_eq!(r.batch.column_by_name("d_binary").is_some(), binary);
    }
}

#[test]
fn values_out_of_their_types_range_are_undecodable_not_clamped() {
    let t = table("event Small(uint8 indexed a, int8 b, bool c, address d)", U256Columns::default());
    let topic = t.topic0().to_string();
    let word = |v: &str| format!("{v:0>64}");
    let ok_a = word("05");
    let cases = [
        (word("12c"), word("7f"), word("1"), word("1"), false),            // uint8 300
        (ok_a.clone(), word("ff"), word("1"), word("1"), false),           // int8 255 (not sign-extended)
        (ok_a.clone(), "f".repeat(62) + "80", word("1"), word("1"), true), // int8 -128
        (ok_a.clone(), word("7f"), word("2"), word("1"), false),           // bool 2
        (ok_a.clone(), word("7f"), word("0"), "ff".repeat(12) + &"11".repeat(20), false), // address with high bytes
        (ok_a.clone(), word("7f"), word("0"), "00".repeat(12) + &"11".repeat(20), true),
    ];
    let logs: Vec<String> = cases
        .iter()
        .enumerate()
        .map(|(i, (a, b, c, d, _))| {
            let a = format!("0x{a}");
            log_json(
                7,
                i as u64,
                "0x0000000000000000000000000000000000000001",
                &[&topic, &a],
                &format!("0x{b}{c}{d}"),
            )
        })
        .collect();
    let d = decode(vec![t], U256Columns::default(), &logs);
    let r = &d.tables[0];
    assert_eq!(r.batch.num_rows(), 2, "only the two logs whose values fit");
    assert_eq!(d.counts.undecodable, 4);
    let b = r.batch.column_by_name("b").unwrap().as_primitive::<Int64Type>();
    assert_eq!((b.value(0), b.value(1)), (-128, 127));
    assert_eq!(strings(r, "d"), vec![format!("0x{:040x}", 1), format!("0x{}", "11".repeat(20))]);
    assert!(r.batch.column_by_name("c").unwrap().as_boolean().value(0));
}

#[test]
fn generated_column_names_never_repeat_in_any_case_nor_hide_partition_keys() {
    for sig in [
        "event Foo(uint256 value, uint256 value_f64)",
        "event Foo(address a_2, uint8 a, uint8 a)",
        "event Foo(uint256 Value, uint256 value)",
        "event Sync(uint112 date, uint112 year, uint8 chain)",
    ] {
        let t = table(
            sig,
            U256Columns {
                decimal38: true,
                binary: true,
            },
        );
        let names: Vec<String> = t.schema().fields().iter().map(|f| f.name().to_ascii_lowercase()).collect();
        let mut unique = names.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), names.len(), "{sig}: {names:?}");
        assert!(!names.contains(&"date".to_string()), "{sig}: {names:?}");
    }
}

#[test]
fn logs_with_the_topic0_but_not_the_layout_say_why_and_what_would_fit() {
    let t20 = "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef";
    let a = "0x0000000000000000000000001b63142628311395ceafeea5667e7c9026c862ca";
    let b = "0x000000000000000000000000ac4df82fe37ea2187bc8c011a23d743b4f39019a";
    let logs = vec![
        log_json(
            10,
            0,
            "0xf4eced2f682ce333f96f2d8966c613ded8fc95dd",
            &[t20, a, b],
            &format!("0x{:064x}", 5),
        ),
        log_json(
            10,
            1,
            "0xf4eced2f682ce333f96f2d8966c613ded8fc95dd",
            &[t20, a, b],
            &format!("0x{:064x}", 6),
        ),
    ];
    // As pasted from a block explorer: no `indexed` marks.
    let pasted = || {
        vec![table(
            "event Transfer(address from, address to, uint256 value)",
            U256Columns::default(),
        )]
    };
    let d = decode(pasted(), U256Columns::default(), &logs);
    assert_eq!(d.tables[0].batch.num_rows(), 0);
    assert_eq!((d.counts.undecodable, d.counts.mismatched), (2, 2));
    let shape = d.counts.shape.unwrap();
    assert_eq!((shape.table, shape.topics, shape.words), (0, 3, 1));
    let hint = LogDecoder::new(pasted(), HashEncoding::Hex, U256Columns::default())
        .hint(shape)
        .unwrap();
    assert!(hint.contains("3 topics and 1 word of data"), "{hint}");
    assert!(hint.contains("declares 1 topic and 3 words"), "{hint}");
    assert!(hint.contains("write `Transfer(address indexed,address indexed,uint256)`"), "{hint}");
    assert!(hint.contains("dataset = \"erc20_transfers\""), "{hint}");
    // A log of another event is undecodable, not a mismatch.
    let other = log_json(10, 2, "0xf4eced2f682ce333f96f2d8966c613ded8fc95dd", &[a], "0x");
    let d = decode(pasted(), U256Columns::default(), &[other]);
    assert_eq!((d.counts.undecodable, d.counts.mismatched, d.counts.shape), (1, 0, None));
}

#[test]
fn the_spec_names_a_decoded_tables_columns_as_its_schema_has_them() {
    for sig in [
        "event Foo(uint256 value, uint256 value_f64)",
        "event Foo(address a_2, uint8 a, uint8 a)",
        "event Swap(address indexed sender, int256 amount0, int24 tick, uint160 sqrtPriceX96, uint64 n, bytes32 b, string s, uint256[] xs)",
        "event Foo(uint64 a, int72 b, int64 c, uint56 d, uint8 a_f64)",
        "event Sync(uint112 date, uint112 year, uint8 chain)",
    ] {
        for (decimal38, binary) in [(false, false), (true, false), (false, true), (true, true)] {
            let wide = U256Columns { decimal38, binary };
            let t = table(sig, wide);
            let schema: Vec<String> = t.schema().fields().iter().map(|f| f.name().clone()).collect();
            let spec = crate::spec::DecodedTable {
                table: "t".into(),
                event: t.event.clone(),
            };
            assert_eq!(spec.columns(wide), schema, "{sig} {wide:?}");
        }
    }
}
