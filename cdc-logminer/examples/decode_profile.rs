//! The decoder under callgrind: decodes a bench corpus a few times in one function, so that
//! instructions per row can be read exactly and compared before and after a change (wall-clock
//! time on a shared machine is too noisy for that). The corpora are those of
//! `benches/decode.rs`.
//!
//! ```text
//! cargo build --release -p cdc-logminer --example decode_profile
//! valgrind --tool=callgrind --collect-atstart=no --toggle-collect='decode_profile::decode_all*' \
//!     target/release/examples/decode_profile small 2
//! callgrind_annotate callgrind.out.<pid>     # PROGRAM TOTALS / (10 000 rows × (1 + 2))
//! ```
//!
//! `small` is the corpus of 249-byte rows (tables of 4–8 columns), `mixed` the one of 981-byte
//! rows (5–40 columns); `sizes` prints the sizes of the value types instead.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use cdc_logminer::test_support as decode_support;

use std::collections::HashMap;
use std::hint::black_box;
use std::mem::size_of;
use std::sync::Arc;

use cdc_core::change::{ColumnValue, MinedRow};
use cdc_core::{Decimal, RowChange, TimeZone, Value};
use cdc_logminer::decode::{DecodeError, DecodeOptions, DecodeTable, Decoded, decode_row};

/// Every row `passes` times, each result dropped at once (as the bench's `decode_all`).
#[inline(never)]
fn decode_all(rows: &[MinedRow], tables: &HashMap<String, DecodeTable>, passes: usize) -> usize {
    let options = DecodeOptions::default();
    let mut ok = 0;
    for _ in 0..passes {
        for row in rows {
            let table = row.table_name.as_ref().and_then(|t| tables.get(t));
            if black_box(decode_row(row, table, &options)).is_ok() {
                ok += 1;
            }
        }
    }
    ok
}

fn main() {
    let corpus = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "small".to_owned());
    let passes: usize = std::env::args().nth(2).map_or(2, |p| p.parse().unwrap());
    let (layouts, rows) = match corpus.as_str() {
        "sizes" => {
            println!(
                "Value {}, ColumnValue {}, Decimal {}, TimeZone {}, RowChange {}, \
                 Result<Decoded, DecodeError> {} bytes",
                size_of::<Value>(),
                size_of::<ColumnValue>(),
                size_of::<Decimal>(),
                size_of::<TimeZone>(),
                size_of::<RowChange>(),
                size_of::<Result<Decoded, DecodeError>>(),
            );
            return;
        }
        "small" => decode_support::small_corpus(2027, 24, 10_000),
        "mixed" => decode_support::corpus(2026, 24, 10_000),
        _ => {
            println!("usage: decode_profile small|mixed|sizes [passes]");
            return;
        }
    };
    let tables: HashMap<String, DecodeTable> = layouts
        .iter()
        .map(|l| {
            (
                l.table.table.clone(),
                DecodeTable::without_exclusions(Arc::clone(l)),
            )
        })
        .collect();
    // a first pass so that the per-thread scratch vectors exist, then the measured ones
    let ok = decode_all(&rows, &tables, 1) + decode_all(&rows, &tables, passes);
    println!(
        "{corpus}: {ok} of {} rows decoded",
        rows.len() * (1 + passes)
    );
}
