use super::*;
use crate::vocab::Dataset;
use crate::vocab::chain::Chain;
use crate::vocab::cuts::MAX_UNITS;
use crate::vocab::window::MAX_BLOCK;
use proptest::prelude::*;

#[test]
fn unit_ids_are_read_strictly() {
    for id in [
        "e0-events-ethereum-b22000000-22000100",
        "e12-blocks-base-t1748476800-1748502000",
        "e0-blocks-base-t-100-200",
        "e1-blocks-bsc-n00003",
        "e2-tokens-polygon-a00000",
        "e3-portfolio-ethereum-wa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48-d20000-20030",
    ] {
        assert!(is_unit_id(id), "{id}");
    }
    for id in [
        "y-e0-events-ethereum-b1-2",
        "e0-events-ethereum-b1-2-e0-blocks-base-b5-6",
        "e0-events-ethereum-b1",
        "e0-events-ethereum-n0003",
        "e0-logs-ethereum-b1-2",
        "e0-events-solana-b1-2",
        "ex-events-ethereum-b1-2",
        "e0-events-ethereum-b-1-2",
        "",
    ] {
        assert!(!is_unit_id(id), "{id}");
    }
    // Every id the planner writes reads back.
    let spec = crate::spec::Spec::parse(
        "t.toml",
        "name = \"t\"\n[source]\nbase_url = \"sim\"\n[output]\nuri = \"out\"\n[[export]]\ndataset = \"events\"\nchains = [\"ethereum\", \"base\"]\nwindow = \"22000000..22009999\"\n",
    )
    .unwrap();
    let windows = freeze_windows(&spec, 0);
    for u in plan(&spec, &windows, Cutting::latest(1000), &[]) {
        assert!(is_unit_id(&u.id), "{}", u.id);
    }
}

#[test]
fn a_range_units_end_reads_from_its_id() {
    assert_eq!(
        unit_end("e0-events-ethereum-b22000000-22000100"),
        Some((0, Chain::Ethereum, 22000100))
    );
    assert_eq!(
        unit_end("e12-blocks-base-t1748476800-1748502000"),
        Some((12, Chain::Base, 1748502000))
    );
    assert_eq!(unit_end("e0-blocks-base-t-100-200"), Some((0, Chain::Base, 200)));
    for other in [
        "e1-blocks-bsc-n00003",
        "e2-tokens-polygon-a00000",
        "e0-events-ethereum-b1",
        "x0-events-ethereum-b1-2",
    ] {
        assert_eq!(unit_end(other), None, "{other}");
    }
}

/// A year of contract-filtered events on every chain: tens of thousands of
/// hour-long units under the hourly rule, a few thousand under the daily
/// one, each chain still cut into at least 64 units.
#[test]
fn a_year_on_seven_chains_plans_a_few_thousand_units() {
    let spec = crate::spec::Spec::parse(
        "y.toml",
        "name = \"y\"\n[source]\nbase_url = \"sim\"\n[output]\nuri = \"out\"\n[[export]]\ndataset = \"events\"\nchains = [\"ethereum\", \"apechain\", \"arbitrum\", \"avalanche\", \"base\", \"bsc\", \"polygon\"]\nwindow = \"2024-01-01..2025-01-01\"\ncontract_address = \"0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48\"\n",
    )
    .unwrap();
    let windows = freeze_windows(&spec, 0);
    let count = |rule| plan(&spec, &windows, Cutting { page_size: 1000, rule }, &[]).len();
    let (hourly, daily) = (count(CutRule::Hourly), count(CutRule::Daily));
    assert!(hourly > 60_000, "{hourly}");
    assert!(daily <= 4_000, "{daily}");
    let units = plan(&spec, &windows, Cutting::latest(1000), &[]);
    for chain in &spec.exports[0].chains {
        assert!(units.iter().filter(|u| u.chain == *chain).count() >= 64);
    }
    // A window that the hourly cap never touched is cut as before.
    let spec = crate::spec::Spec::parse(
        "d.toml",
        "name = \"d\"\n[source]\nbase_url = \"sim\"\n[output]\nuri = \"out\"\n[[export]]\ndataset = \"events\"\nchains = [\"base\"]\nwindow = \"2024-01-01..2024-01-02\"\n",
    )
    .unwrap();
    let windows = freeze_windows(&spec, 0);
    let ids = |rule| -> Vec<String> {
        plan(&spec, &windows, Cutting { page_size: 1000, rule }, &[])
            .into_iter()
            .map(|u| u.id)
            .collect()
    };
    assert_eq!(ids(CutRule::Hourly), ids(CutRule::Daily));
}

#[test]
fn shards_partition_the_units() {
    let mk = |i: u64| Unit {
        id: format!("u{i}"),
        export: 0,
        dataset: Dataset::Blocks,
        chain: Chain::Base,
        range: UnitRange::Blocks { start: i, end: i + 1 },
        estimated_requests: 1 + i % 7,
    };
    let units: Vec<Unit> = (0..50).map(mk).collect();
    let mut all: Vec<String> = (1..=3).flat_map(|k| shard(units.clone(), k, 3)).map(|u| u.id).collect();
    all.sort();
    let mut want: Vec<String> = units.iter().map(|u| u.id.clone()).collect();
    want.sort();
    assert_eq!(all, want);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: crate::util::proptest_cases(256), ..ProptestConfig::default() })]

    #[test]
    fn block_windows_that_validate_plan_exactly_without_wrapping(
        first in prop_oneof![0u64..1_000_000, 0u64..=MAX_BLOCK + 10, (u64::MAX - 10)..=u64::MAX],
        len in prop_oneof![0u64..5_000, 0u64..100_000_000, Just(MAX_BLOCK)],
        chunk in prop::option::of(1u64..1_000_000),
        page in 1u32..=1000,
    ) {
        let last = first.saturating_add(len);
        let chunk = chunk.map(|c| format!("chunk_blocks = {c}\n")).unwrap_or_default();
        let text = format!(
            "name = \"w\"\n[source]\nbase_url = \"sim\"\npage_size = {page}\n[output]\nuri = \"o\"\n[[export]]\ndataset = \"blocks\"\nchains = [\"base\"]\nwindow = \"{first}..{last}\"\n{chunk}"
        );
        let Ok(spec) = Spec::parse("w.toml", &text) else {
            // Refused: beyond the bound, or too many units.
            prop_assert!(last > MAX_BLOCK || len / 10 > MAX_UNITS || !chunk.is_empty());
            return Ok(());
        };
        prop_assert!(last <= MAX_BLOCK);
        let windows = freeze_windows(&spec, 0);
        for rule in [CutRule::Hourly, CutRule::Daily] {
            let units = plan(&spec, &windows, Cutting { page_size: page, rule }, &[]);
            prop_assert!(units.len() as u64 <= MAX_UNITS);
            prop_assert_eq!(units.len() as u64, spec.exports[0].selection.unit_count(Chain::Base, windows[0].unwrap(), u64::from(page), rule));
        }
        let units = plan(&spec, &windows, Cutting::latest(page), &[]);
        let mut next = first;
        for u in &units {
            match u.range {
                UnitRange::Blocks { start, end } => {
                    prop_assert_eq!(start, next);
                    prop_assert!(end > start);
                    prop_assert_eq!(block_range_of(&u.id), Some((start, end)));
                    next = end;
                }
                _ => prop_assert!(false, "not a block unit"),
            }
        }
        prop_assert_eq!(next, last + 1);
    }
}
