//! Excluded columns (`cdc.columns.exclude`): a sentinel value planted in an excluded column
//! appears in no output, no error text, no Debug output and no log line; excluding a key
//! column is a configuration error.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use cdc_logminer::test_support as decode_support;

use std::fmt::Write as _;
use std::sync::{Arc, Mutex, OnceLock};

use cdc_core::error::CdcError;
use cdc_core::table::ColumnType;
use cdc_logminer::decode::{
    ColumnExclusions, ColumnFilter, DecodeOptions, DecodePool, DecodeReason, DecodeTable, Decoded,
    check_excluded_keys, decode_row, decode_step,
};
use decode_support::{layout, row};

const SENTINEL: &str = "S3NT1NEL-4242";

/// Every event and span field recorded by any thread, as text.
static LOG: OnceLock<Arc<Mutex<String>>> = OnceLock::new();

struct Capture(Arc<Mutex<String>>);

struct Fields<'a>(&'a mut String);

impl tracing::field::Visit for Fields<'_> {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        let _ = write!(self.0, " {}={:?}", field.name(), value);
    }
}

impl tracing::Subscriber for Capture {
    fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
        true
    }

    fn max_level_hint(&self) -> Option<tracing::level_filters::LevelFilter> {
        Some(tracing::level_filters::LevelFilter::TRACE)
    }

    fn new_span(&self, span: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        let mut log = self.0.lock().unwrap();
        let _ = write!(log, "\nspan {}", span.metadata().name());
        span.record(&mut Fields(&mut log));
        tracing::span::Id::from_u64(1)
    }

    fn record(&self, _: &tracing::span::Id, values: &tracing::span::Record<'_>) {
        values.record(&mut Fields(&mut self.0.lock().unwrap()));
    }

    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}

    fn event(&self, event: &tracing::Event<'_>) {
        let mut log = self.0.lock().unwrap();
        let _ = write!(log, "\nevent {}", event.metadata().target());
        event.record(&mut Fields(&mut log));
    }

    fn enter(&self, _: &tracing::span::Id) {}

    fn exit(&self, _: &tracing::span::Id) {}
}

fn log() -> Arc<Mutex<String>> {
    LOG.get_or_init(|| {
        let log = Arc::new(Mutex::new(String::new()));
        // global, so the decode pool's threads are captured too
        tracing::subscriber::set_global_default(Capture(Arc::clone(&log))).unwrap();
        log
    })
    .clone()
}

fn customers() -> Arc<cdc_core::table::TableLayout> {
    layout(
        "APP",
        "CUSTOMERS",
        &[
            ("ID", ColumnType::Number),
            ("NAME", ColumnType::Varchar2),
            ("SSN", ColumnType::Varchar2),
            ("CARD_NO", ColumnType::Number),
            ("BORN", ColumnType::Date),
        ],
        &["ID"],
    )
}

fn exclusions() -> ColumnExclusions {
    // the config's regexes over [PDB.]SCHEMA.TABLE.COLUMN, case-insensitive by default
    ColumnExclusions::new(
        [
            "app\\.customers\\.(ssn|card_no)",
            "APP\\.CUSTOMERS\\.SECRET_ADDED_LATER",
        ],
        false,
    )
    .unwrap()
}

#[test]
fn a_sentinel_in_an_excluded_column_reaches_nothing() {
    let log = log();
    let l = customers();
    let filter = exclusions().for_table(&l.table);
    let table = DecodeTable::new(Arc::clone(&l), filter).unwrap();
    let sensitive = DecodeOptions {
        log_sensitive_data: true,
    };
    let s = SENTINEL;
    let good = [
        (
            1,
            format!(
                r#"insert into "APP"."CUSTOMERS"("ID","NAME","SSN","CARD_NO","BORN") values ('1','Ann','{s}','{s}',NULL)"#
            ),
        ),
        (
            3,
            format!(
                r#"update "APP"."CUSTOMERS" set "SSN" = '{s}', "NAME" = 'Bo' where "ID" = '1' and "SSN" = UNISTR('{s}') and "CARD_NO" = '{s}'"#
            ),
        ),
        (
            2,
            format!(
                r#"delete from "APP"."CUSTOMERS" where "ID" = '1' and "SSN" = '{s}' || '{s}' and "CARD_NO" IS NULL"#
            ),
        ),
        // a column the layout does not know yet, but the filter excludes
        (
            1,
            format!(
                r#"insert into "APP"."CUSTOMERS"("ID","SECRET_ADDED_LATER") values ('2','{s}')"#
            ),
        ),
    ];
    let mut outputs = String::new();
    for (code, sql) in &good {
        let r = row(*code, "APP", "CUSTOMERS", sql);
        let decoded = decode_row(&r, Some(&table), &sensitive).unwrap();
        let Decoded::Change(change) = &decoded else {
            panic!()
        };
        for image in [&change.before, &change.after].into_iter().flatten() {
            let names: Vec<&str> = image
                .iter()
                .map(|v| l.columns[v.column as usize].name.as_str())
                .collect();
            assert!(
                !names.contains(&"SSN") && !names.contains(&"CARD_NO"),
                "{names:?}"
            );
        }
        let _ = write!(
            outputs,
            "{decoded:?}{}",
            serde_json::to_string(change).unwrap()
        );
    }
    // the excluded CARD_NO is a NUMBER holding text: it would not convert, and must not fail
    // the row. Rows that do fail (another column, a syntax error) quote nothing of the table,
    // even with cdc.log.sensitive.data=true, because the table has excluded columns.
    let bad = [
        (
            1,
            format!(
                r#"insert into "APP"."CUSTOMERS"("ID","SSN","BORN") values ('3','{s}',TO_DATE('{s}', 'YYYY-MM-DD HH24:MI:SS'))"#
            ),
        ),
        (
            1,
            format!(r#"insert into "APP"."CUSTOMERS"("ID","SSN") values ('3','{s}' '{s}')"#),
        ),
        (
            3,
            format!(r#"update "APP"."CUSTOMERS" set "SSN" = '{s}', "NOPE" = '{s}'"#),
        ),
    ];
    for (code, sql) in &bad {
        let r = row(*code, "APP", "CUSTOMERS", sql);
        let e = decode_row(&r, Some(&table), &sensitive).unwrap_err();
        assert_eq!(e.sensitive_detail(), None);
        let cdc: CdcError = e.clone().into();
        let _ = write!(outputs, "{e}{e:?}{cdc}{cdc:?}");
    }
    // the parallel path, with its pool threads
    let rows: Vec<_> = (0..600)
        .map(|i| {
            let (code, sql) = &good[i % good.len()];
            row(*code, "APP", "CUSTOMERS", sql)
        })
        .collect();
    let pool = DecodePool::new(2).unwrap();
    let results = decode_step(&rows, |_| Some(&table), &sensitive, &pool);
    assert!(results.iter().all(Result::is_ok));
    let _ = write!(outputs, "{results:?}{table:?}{:?}", exclusions());
    assert!(
        !outputs.contains(SENTINEL),
        "the sentinel leaked into an output"
    );
    let log = log.lock().unwrap();
    assert!(
        log.contains("decoding a step"),
        "the capture saw the decoder's own events"
    );
    assert!(
        !log.contains(SENTINEL),
        "the sentinel leaked into a log line"
    );
}

#[test]
fn without_exclusions_the_sensitive_flag_quotes_the_bad_literal() {
    let l = customers();
    let table = DecodeTable::without_exclusions(Arc::clone(&l));
    let r = row(
        1,
        "APP",
        "CUSTOMERS",
        r#"insert into "APP"."CUSTOMERS"("ID","CARD_NO") values ('3','not-a-number')"#,
    );
    let quiet = decode_row(&r, Some(&table), &DecodeOptions::default()).unwrap_err();
    assert!(!quiet.to_string().contains("not-a-number"));
    assert_eq!(quiet.sensitive_detail(), None);
    let loud = decode_row(
        &r,
        Some(&table),
        &DecodeOptions {
            log_sensitive_data: true,
        },
    )
    .unwrap_err();
    assert_eq!(loud.sensitive_detail(), Some("'not-a-number'"));
    assert!(loud.to_string().contains("not-a-number"));
}

#[test]
fn excluding_a_key_column_is_a_configuration_error() {
    let l = customers();
    let filter = ColumnExclusions::new(["APP\\.CUSTOMERS\\.ID"], true)
        .unwrap()
        .for_table(&l.table);
    let e = check_excluded_keys(&l, &filter).unwrap_err();
    assert_eq!(
        (e.table.as_str(), e.column.as_str()),
        ("APP.CUSTOMERS", "ID")
    );
    assert!(DecodeTable::new(Arc::clone(&l), filter).is_err());
    let cdc: CdcError = e.into();
    assert_eq!(cdc.code().id(), "CDC-3001");
    assert!(cdc.to_string().contains("key column \"ID\""));
    // the config's own predicate works as well
    let by_fn = ColumnFilter::from_fn(|c| c == "ID");
    assert!(check_excluded_keys(&l, &by_fn).is_err());
    assert!(check_excluded_keys(&l, &ColumnFilter::from_fn(|c| c == "SSN")).is_ok());
    // case sensitivity: with it, "app.customers.id" does not name the key
    let cs = ColumnExclusions::new(["app\\.customers\\.id"], true)
        .unwrap()
        .for_table(&l.table);
    assert!(check_excluded_keys(&l, &cs).is_ok());
}

#[test]
fn unknown_columns_that_are_not_excluded_still_fail() {
    let l = customers();
    let table = DecodeTable::new(Arc::clone(&l), exclusions().for_table(&l.table)).unwrap();
    let r = row(
        1,
        "APP",
        "CUSTOMERS",
        r#"insert into "APP"."CUSTOMERS"("ID","OTHER") values ('1','x')"#,
    );
    let e = decode_row(&r, Some(&table), &DecodeOptions::default()).unwrap_err();
    assert_eq!(
        e.reason(),
        &DecodeReason::UnknownColumn {
            column: "OTHER".into()
        }
    );
}
