use super::*;
use proptest::prelude::*;

fn auto_cuts(lo: i64, hi: i64, rows: f64, page: f64, max: i64, nice: &[i64]) -> Vec<(i128, i128)> {
    let c = Cuts::auto(lo.into(), hi.into(), rows, page, max, nice);
    let r = c.ranges();
    assert_eq!(c.count(), r.len() as u64);
    r
}

/// Checks that `cuts` cover `[lo, hi)` exactly, in order, with no empty range.
fn covers(cuts: &[(i128, i128)], lo: i128, hi: i128) -> bool {
    let contiguous = cuts.windows(2).all(|w| w[0].1 == w[1].0);
    let nonempty = cuts.iter().all(|(a, b)| a < b);
    let ends = match (cuts.first(), cuts.last()) {
        (Some(f), Some(l)) => f.0 == lo && l.1 == hi,
        _ => lo >= hi,
    };
    contiguous && nonempty && ends
}

proptest! {
    // As crate::util::proptest_cases, which vocab, the first stage, cannot import.
    #![proptest_config(ProptestConfig { cases: std::env::var("CHAINETL_PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(256), ..ProptestConfig::default() })]

    #[test]
    fn cuts_cover_the_window_exactly_and_count_without_making_them(
        lo in prop_oneof![0i128..1_000, 0i128..=1_000_000_000_000, Just(1_000_000_000_000i128 - 5)],
        len in prop_oneof![0i128..200, 0i128..5_000_000],
        size in 1i128..100_000,
        rows in prop_oneof![Just(1.0f64), Just(4.0), Just(40.0), 0.01f64..200.0],
        page in 1.0f64..1_000.0,
    ) {
        let hi = lo + len;
        let even = Cuts::even(lo, hi, size.max(len / 1_000));
        let r = even.ranges();
        prop_assert!(covers(&r, lo, hi));
        prop_assert_eq!(even.count(), r.len() as u64);
        for (max, nice) in [(MAX_AUTO_BLOCKS, &NICE_BLOCKS[..]), (MAX_AUTO_SECS, &NICE_SECS[..]), (MAX_DAILY_BLOCKS, &NICE_BLOCKS[..]), (MAX_DAILY_SECS, &NICE_SECS[..])] {
            let auto = Cuts::auto(lo, hi, rows, page, max, nice);
            let r = auto.ranges();
            prop_assert!(covers(&r, lo, hi));
            prop_assert_eq!(auto.count(), r.len() as u64);
            // Page size 1 makes the most units but for alignment: validation's
            // bound (page 1 plus the slack) holds for any page.
            prop_assert!(Cuts::auto(lo, hi, rows, 1.0, max, nice).count() + ALIGNMENT_SLACK >= auto.count());
        }
    }

    #[test]
    fn counting_huge_windows_neither_wraps_nor_allocates(
        first in 0u64..=u64::MAX,
        last in 0u64..=u64::MAX,
        size in 1i128..=i128::from(u64::MAX),
    ) {
        let (lo, hi) = (i128::from(first.min(last)), i128::from(first.max(last)) + 1);
        let n = Cuts::even(lo, hi, size).count();
        prop_assert!(n >= 1);
        let a = Cuts::auto(lo, hi, 40.0, 1.0, MAX_AUTO_BLOCKS, &NICE_BLOCKS).count();
        prop_assert!(a >= 1);
    }
}

#[test]
fn a_short_window_at_a_large_page_may_cut_one_more_unit_than_at_page_1_within_the_slack() {
    // The case the property found in CI: 25-block units aligned
    // to multiples of 25 cut [270, 276) at 275, 10-block units do not.
    let (lo, hi, rows) = (270, 276, 187.6);
    let at_page_1 = Cuts::auto(lo, hi, rows, 1.0, MAX_AUTO_BLOCKS, &NICE_BLOCKS).count();
    let at_page_547 = Cuts::auto(lo, hi, rows, 547.0, MAX_AUTO_BLOCKS, &NICE_BLOCKS).count();
    assert_eq!((at_page_1, at_page_547), (1, 2));
    assert!(at_page_1 + ALIGNMENT_SLACK >= at_page_547);
}

#[test]
fn chunks_align_to_multiples() {
    assert_eq!(
        chunks(18_000_005, 18_020_001, 10_000),
        vec![(18_000_005, 18_010_000), (18_010_000, 18_020_000), (18_020_000, 18_020_001)]
    );
    assert_eq!(chunks(5, 5, 10), vec![]);
}

#[test]
fn unset_chunks_give_enough_units_for_the_requests_in_flight() {
    let sizes = |cuts: &[(i128, i128)]| cuts.iter().map(|(a, b)| b - a).collect::<Vec<_>>();
    // Events (40 rows a block) at 100-row pages: at least 8 pages (20
    // blocks, so 25), 2 at the end (5, so 10): 2,000 blocks → 70 units
    // of 25, then 25 of 10.
    let c = auto_cuts(20_000_000, 20_002_000, 40.0, 100.0, MAX_AUTO_BLOCKS, &NICE_BLOCKS);
    assert_eq!(c.first(), Some(&(20_000_000, 20_000_025)));
    assert_eq!(c.last(), Some(&(20_001_990, 20_002_000)));
    assert_eq!(sizes(&c).iter().filter(|&&s| s == 25).count(), 70);
    assert_eq!(sizes(&c).iter().filter(|&&s| s == 10).count(), 25);
    // The cuts cover the window exactly, in order.
    assert!(c.windows(2).all(|w| w[0].1 == w[1].0));
    // At 1000-row pages the same window gets 200-block units: fewer
    // requests wasted on part-full last pages.
    let c = auto_cuts(20_000_000, 20_002_000, 40.0, 1_000.0, MAX_AUTO_BLOCKS, &NICE_BLOCKS);
    assert_eq!(sizes(&c)[..8], [200; 8]);
    assert_eq!(sizes(&c)[8..], [50; 8]);
    // Big windows keep 10,000-block units (the tail 2,500).
    let c = auto_cuts(0, 5_000_000, 40.0, 1_000.0, MAX_AUTO_BLOCKS, &NICE_BLOCKS);
    assert_eq!(sizes(&c)[0], 10_000);
    assert_eq!(*sizes(&c).last().unwrap(), 2_500);
    // Small windows stop at the floor, with no finer tail.
    assert_eq!(sizes(&auto_cuts(0, 100, 40.0, 1_000.0, MAX_AUTO_BLOCKS, &NICE_BLOCKS)), vec![100]);
    // Blocks (a row a block): 10,000 at 1000-row pages; 1,000 and a
    // tail of 250 at 100-row pages.
    assert_eq!(
        sizes(&auto_cuts(0, 20_000, 1.0, 1_000.0, MAX_AUTO_BLOCKS, &NICE_BLOCKS)),
        vec![10_000; 2]
    );
    let c = auto_cuts(0, 20_000, 1.0, 100.0, MAX_AUTO_BLOCKS, &NICE_BLOCKS);
    assert_eq!(sizes(&c)[..17], [1_000; 17]);
    assert_eq!(sizes(&c)[17..], [250; 12]);
    // Time: a day of Ethereum events (3.3 rows a second) → hours, the
    // last three in 15 minutes (1000-row pages), or 20-minute units
    // ending in 5 minutes (100-row pages); blocks stay at an hour.
    let c = auto_cuts(0, 86_400, 40.0 / 12.0, 1_000.0, MAX_AUTO_SECS, &NICE_SECS);
    assert_eq!(sizes(&c)[..21], [3_600; 21]);
    assert_eq!(sizes(&c)[21..], [900; 12]);
    let c = auto_cuts(0, 86_400, 40.0 / 12.0, 100.0, MAX_AUTO_SECS, &NICE_SECS);
    assert_eq!(sizes(&c)[0], 1_200);
    assert_eq!(*sizes(&c).last().unwrap(), 300);
    assert_eq!(
        sizes(&auto_cuts(0, 7_200, 1.0 / 12.0, 1_000.0, MAX_AUTO_SECS, &NICE_SECS)),
        vec![3_600; 2]
    );
}
