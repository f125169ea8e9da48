//! A step decoded on the pool gives exactly what decoding it row by row gives, in redo order.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use cdc_logminer::test_support as decode_support;

use std::collections::HashMap;
use std::sync::Arc;

use cdc_core::change::{MinedRow, status};
use cdc_logminer::decode::{
    DecodeOptions, DecodePool, DecodeTable, PARALLEL_MIN_ROWS, decode_row, decode_step,
    resolve_threads,
};
use decode_support::{Rng, corpus};
use proptest::prelude::*;

/// A corpus step with some rows broken (cut SQL, a bad status, a wrong operation), so errors
/// are ordered too.
fn step(
    seed: u64,
    rows: usize,
    broken_percent: u64,
) -> (HashMap<String, DecodeTable>, Vec<MinedRow>) {
    let (layouts, mut rows) = corpus(seed, 6, rows);
    let mut rng = Rng::new(seed ^ 0xdead_beef);
    for r in &mut rows {
        if rng.chance(broken_percent) {
            match rng.below(3) {
                0 => {
                    let sql = r.sql_redo.take().unwrap_or_default();
                    let mut cut = rng.below(sql.len() as u64) as usize;
                    while !sql.is_char_boundary(cut) {
                        cut -= 1;
                    }
                    r.sql_redo = Some(sql[..cut].to_owned());
                }
                1 => r.status = status::INVALID_SQL,
                _ => r.operation = cdc_core::change::Operation::from_code(1 + rng.below(3) as u16),
            }
        }
    }
    let tables = layouts
        .iter()
        .map(|l| {
            (
                l.table.table.clone(),
                DecodeTable::without_exclusions(Arc::clone(l)),
            )
        })
        .collect();
    (tables, rows)
}

fn sequential(rows: &[MinedRow], tables: &HashMap<String, DecodeTable>) -> Vec<String> {
    rows.iter()
        .map(|r| {
            format!(
                "{:?}",
                decode_row(
                    r,
                    r.table_name.as_ref().and_then(|t| tables.get(t)),
                    &DecodeOptions::default()
                )
            )
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn parallel_equals_sequential(seed: u64, n in 0usize..1200, broken in 0u64..30, threads in 2usize..5) {
        let (tables, rows) = step(seed, n, broken);
        let pool = DecodePool::new(threads).unwrap();
        let parallel: Vec<String> = decode_step(&rows, |r| r.table_name.as_ref().and_then(|t| tables.get(t)), &DecodeOptions::default(), &pool)
            .iter()
            .map(|d| format!("{d:?}"))
            .collect();
        prop_assert_eq!(parallel, sequential(&rows, &tables));
    }
}

#[test]
fn a_ten_thousand_row_step_on_two_threads_keeps_redo_order() {
    let (tables, rows) = step(7, 10_000, 3);
    let pool = DecodePool::new(2).unwrap();
    assert_eq!(pool.threads(), 2);
    let lookup = |r: &MinedRow| r.table_name.as_ref().and_then(|t| tables.get(t));
    let parallel = decode_step(&rows, lookup, &DecodeOptions::default(), &pool);
    let in_place = decode_step(
        &rows,
        lookup,
        &DecodeOptions::default(),
        &DecodePool::sequential(),
    );
    assert_eq!(parallel, in_place);
    assert!(parallel.iter().filter(|r| r.is_ok()).count() > 9_000);
    assert!(rows.len() >= PARALLEL_MIN_ROWS);
}

#[test]
fn thread_count_resolution() {
    assert_eq!(resolve_threads(3), 3);
    let auto = resolve_threads(0);
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    assert_eq!(auto, cores.saturating_sub(1).clamp(1, 8));
    assert_eq!(DecodePool::new(1).unwrap().threads(), 1);
}
