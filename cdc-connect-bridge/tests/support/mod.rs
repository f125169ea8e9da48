//! Fixed inputs for the record-format tests: a layout with every type, hand-built change
//! records and positions, and the golden-file check (`CDC_BLESS=1` rewrites the files).

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::PathBuf;
use std::sync::Arc;

use cdc_connect_bridge::{KafkaRecord, RecordSettings};
use cdc_core::change::{ChangeEvent, ChangeOp, ColumnValue, CommitInfo, RowChange};
use cdc_core::config::Config;
use cdc_core::table::{ColumnDef, ColumnType, KeySource, TableId, TableLayout};
use cdc_core::value::{Decimal, OracleDateTime, TimeZone, Value};
use cdc_core::{ConId, ConXid, RedoAddr, RedoThread, RsId, Scn, Xid};
use cdc_logminer::engine::{ChangeRecord, EngineRecord, RecordKind};
use cdc_offset::{DbIdentity, LastCommit, Position, ResumePoint};

/// Settings from connector properties on top of a minimal simulator configuration.
pub fn settings(extra: &[(&str, &str)]) -> RecordSettings {
    let mut config = Config::from_pairs([
        ("name", "orders-cdc"),
        ("cdc.source", "sim"),
        ("cdc.topic.prefix", "shop"),
        ("cdc.tables.include", ".*"),
        ("cdc.columns.exclude", ".*\\.SECRET"),
    ]);
    for (k, v) in extra {
        config.set(*k, *v);
    }
    let skip = config.get("cdc.lob.mode") == Some("skip");
    let config = config.validate().unwrap_or_else(|e| panic!("{e}"));
    let mut settings = RecordSettings::from_config(&config, "FREE");
    // the format of LOB fields, pinned for when LOB values are assembled (the configuration
    // refuses cdc.lob.mode=inline until then)
    if !skip {
        settings.lob_mode = cdc_core::config::LobMode::Inline;
    }
    settings.connector_version = "0.1.0-golden".into();
    settings
}

pub fn dt(y: i16, mo: u8, d: u8, h: u8, mi: u8, s: u8, nanos: u32) -> OracleDateTime {
    OracleDateTime::new(y, mo, d, h, mi, s, nanos).unwrap()
}

pub fn num(text: &str) -> Value {
    Value::Number(Decimal::parse(text).unwrap())
}

fn col(name: &str, pos: u16, ty: ColumnType) -> ColumnDef {
    ColumnDef::new(name, pos, ty)
}

/// A table with every column type the connector converts, plus an excluded `SECRET`.
pub fn all_types_layout(table: TableId) -> Arc<TableLayout> {
    let columns = vec![
        col("ID", 1, ColumnType::Number)
            .with_precision(Some(9), Some(0))
            .not_null(),
        col("SMALL", 2, ColumnType::Number).with_precision(Some(2), Some(0)),
        col("MID", 3, ColumnType::Number).with_precision(Some(4), Some(0)),
        col("BIG", 4, ColumnType::Number).with_precision(Some(18), Some(0)),
        col("HUGE", 5, ColumnType::Number).with_precision(Some(30), Some(0)),
        col("PRICE", 6, ColumnType::Number).with_precision(Some(10), Some(2)),
        col("ANYNUM", 7, ColumnType::Number),
        col("FLT", 8, ColumnType::Float).with_precision(Some(126), None),
        col("BF", 9, ColumnType::BinaryFloat),
        col("BD", 10, ColumnType::BinaryDouble),
        col("CODE", 11, ColumnType::Char).with_length(4),
        col("NAME", 12, ColumnType::Varchar2).with_length(40),
        col("NNAME", 13, ColumnType::NVarchar2).with_length(20),
        col("NOTES", 14, ColumnType::Clob),
        col("PAYLOAD", 15, ColumnType::Raw).with_length(16),
        col("DOC", 16, ColumnType::Blob),
        col("CREATED", 17, ColumnType::Date),
        col("TS3", 18, ColumnType::Timestamp).with_precision(None, Some(3)),
        col("TS6", 19, ColumnType::Timestamp).with_precision(None, Some(6)),
        col("TS9", 20, ColumnType::Timestamp).with_precision(None, Some(9)),
        col("TSTZ", 21, ColumnType::TimestampTz).with_precision(None, Some(6)),
        col("TSLTZ", 22, ColumnType::TimestampLtz).with_precision(None, Some(6)),
        col("IYM", 23, ColumnType::IntervalYm).with_precision(Some(2), Some(0)),
        col("IDS", 24, ColumnType::IntervalDs).with_precision(Some(2), Some(6)),
        col("RID", 25, ColumnType::RowId),
        col("XMLDOC", 26, ColumnType::XmlType),
        col("SECRET", 27, ColumnType::Varchar2).with_length(20),
    ];
    Arc::new(TableLayout {
        table,
        version: 3,
        valid_from: Scn(1000),
        columns,
        key: vec!["ID".into()],
        key_source: KeySource::PrimaryKey,
        supplemental: Default::default(),
        segment: Vec::new(),
    })
}

/// A full row of the all-types table.
pub fn all_types_row(id: i64) -> Vec<ColumnValue> {
    let values = vec![
        num(&id.to_string()),
        num("-7"),
        num("1234"),
        num("-9000000000000000"),
        num("123456789012345678901234567890"),
        num("-42.5"),
        num("3.14159"),
        num("1.5E+10"),
        Value::BinaryFloat(0.1),
        Value::BinaryDouble(-2.5e-8),
        Value::Text("AB  ".into()),
        Value::Text("Widget \"deluxe\"".into()),
        Value::Text("Größe ü".into()),
        Value::Text("long text".into()),
        Value::Raw(vec![0xde, 0xad, 0xbe, 0xef, 0x00, 0xff]),
        Value::Unavailable,
        Value::Date(dt(2026, 2, 28, 13, 45, 59, 0)),
        Value::Timestamp(dt(2026, 3, 29, 1, 30, 0, 123_000_000)),
        Value::Timestamp(dt(1969, 12, 31, 23, 59, 59, 999_999_000)),
        Value::Timestamp(dt(2026, 3, 29, 1, 30, 0, 123_456_789)),
        Value::TimestampTz(
            dt(2026, 3, 29, 1, 30, 0, 500_000_000),
            TimeZone::Offset(330),
        ),
        Value::TimestampLtz(dt(2026, 3, 28, 20, 0, 0, 0)),
        Value::IntervalYm(12 * 12 + 3),
        Value::IntervalDs(
            ((((5 * 24 + 4) * 60 + 3) * 60 + 2) * 1_000_000_000 + 123_456_000).into(),
        ),
        Value::RowId("AAAS5bAAEAAAACXAAA".into()),
        Value::Unavailable,
        Value::Text("do-not-publish".into()),
    ];
    values
        .into_iter()
        .enumerate()
        .map(|(i, value)| ColumnValue {
            column: i as u16,
            value,
        })
        .collect()
}

pub fn addr(seq: u32, block: u32, offset: u16, ssn: u64) -> RedoAddr {
    RedoAddr::new(RsId::new(seq, block, offset), ssn).unwrap()
}

/// A commit of `event_count` changes in container `con` (0 = non-CDB).
pub fn commit(con: u32, pdb: Option<&str>, event_count: u64) -> Arc<CommitInfo> {
    Arc::new(CommitInfo {
        con_xid: ConXid::new(ConId(con), Xid::new(5, 12, 900)),
        pdb: pdb.map(str::to_owned),
        commit_scn: Scn(5_000_123),
        commit_addr: addr(0x59, 0xd6a1, 0x10, 77),
        commit_time: Some(dt(2026, 3, 29, 1, 30, 5, 0)),
        thread: RedoThread(1),
        username: Some("APP_USER".into()),
        first_scn: Scn(5_000_100),
        event_count,
        data_bytes: 0,
    })
}

pub fn change_record(
    commit: &Arc<CommitInfo>,
    layout: &Arc<TableLayout>,
    index: u64,
    op: ChangeOp,
    before: Option<Vec<ColumnValue>>,
    after: Option<Vec<ColumnValue>>,
    row_id: Option<&str>,
) -> ChangeRecord {
    ChangeRecord {
        commit: Arc::clone(commit),
        event: ChangeEvent {
            scn: Scn(5_000_110 + index),
            addr: addr(0x59, 0xd600 + index as u32, 0x10, 10 + index),
            change: RowChange {
                op,
                table: layout.table.clone().into(),
                schema_version: layout.version,
                before,
                after,
                row_id: row_id.map(str::to_owned),
            },
        },
        event_index: index,
        // the fixtures' transactions change one table
        table_order: index + 1,
        layout: Arc::clone(layout),
    }
}

pub fn position(index: u64, commit: &CommitInfo) -> Position {
    let base = Position::new(
        ResumePoint::from_scn(Scn(5_000_100)),
        DbIdentity::new(1_234_567_890, Scn(1)),
        2,
    );
    base.at_record(
        ResumePoint::at(cdc_offset::RedoMark::new(
            addr(0x59, 0xd5ff, 0x10, 9),
            Scn(5_000_100),
        )),
        LastCommit {
            scn: commit.commit_scn,
            xid: commit.con_xid,
            thread: commit.thread,
            addr: commit.commit_addr,
            event_index: index + 1,
        },
    )
}

pub fn engine_change(change: ChangeRecord) -> EngineRecord {
    let position = position(change.event_index, &change.commit);
    EngineRecord {
        kind: RecordKind::Change(change),
        position: std::sync::Arc::new(position),
    }
}

/// Kafka records as text: one block per record, key and value bytes verbatim on their lines.
pub fn dump(records: &[KafkaRecord], server: &str) -> String {
    let text = |b: &Option<Vec<u8>>| match b {
        Some(b) => String::from_utf8(b.clone()).unwrap(),
        None => "<null>".to_owned(),
    };
    let mut out = String::new();
    for r in records {
        out.push_str(&format!("topic: {}\n", r.topic));
        out.push_str(&format!("commits_offset: {}\n", r.commits_offset));
        for h in &r.headers {
            out.push_str(&format!(
                "header {}: {}\n",
                h.name,
                String::from_utf8(h.value.clone()).unwrap()
            ));
        }
        out.push_str(&format!("key: {}\n", text(&r.key)));
        out.push_str(&format!("value: {}\n", text(&r.value)));
        let offset = r.source_offset(server);
        out.push_str(&format!(
            "offset: {} {}\n",
            serde_json::Value::Object(offset.partition),
            serde_json::Value::Object(offset.offset)
        ));
        out.push_str("---\n");
    }
    out
}

/// Compares `actual` with `tests/golden/<name>`; `CDC_BLESS=1` writes it instead.
pub fn golden(name: &str, actual: &str) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(name);
    if std::env::var("CDC_BLESS").is_ok_and(|v| v == "1") {
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e}; run with CDC_BLESS=1 to write it", path.display()));
    if expected != actual {
        for (i, (e, a)) in expected.lines().zip(actual.lines()).enumerate() {
            if e != a {
                panic!(
                    "{name} drifted at line {}:\nexpected: {e}\n  actual: {a}\n(CDC_BLESS=1 rewrites the golden files after a deliberate change)",
                    i + 1
                );
            }
        }
        panic!(
            "{name} drifted: {} lines expected, {} produced (CDC_BLESS=1 rewrites)",
            expected.lines().count(),
            actual.lines().count()
        );
    }
}
