//! Golden tests: fixed engine records → exact Kafka record bytes. A deliberate format change
//! is blessed with `CDC_BLESS=1 cargo test -p cdc-connect-bridge --test main golden`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::support;

use std::collections::BTreeMap;
use std::sync::Arc;

use cdc_connect_bridge::{RecordBuilder, RecordContext};
use cdc_core::change::{ChangeOp, ColumnValue};
use cdc_core::table::{ColumnDef, ColumnType, KeySource, TableId, TableLayout};
use cdc_core::value::Value;
use cdc_core::{ConId, ConXid, Operation, Scn, Xid};
use cdc_core::{DlqKind, OpsEvent, OpsKind};
use cdc_logminer::engine::{DlqRecord, EngineRecord, HeartbeatReason, RecordKind};
use support::*;

const NOW: i64 = 1_774_747_805_250;

fn context() -> RecordContext {
    RecordContext {
        now_ms: NOW,
        split: false,
    }
}

fn cdb_table() -> TableId {
    TableId::new("APP", "ALL_TYPES").in_pdb("FREEPDB1")
}

fn insert_all_types(extra: &[(&str, &str)]) -> String {
    let mut cfg = vec![("cdc.database.pdbs", "FREEPDB1")];
    cfg.extend_from_slice(extra);
    let mut builder = RecordBuilder::new(settings(&cfg));
    let layout = all_types_layout(cdb_table());
    let commit = commit(3, Some("FREEPDB1"), 1);
    let change = change_record(
        &commit,
        &layout,
        0,
        ChangeOp::Insert,
        None,
        Some(all_types_row(42)),
        Some("AAAS5bAAEAAAACXAAA"),
    );
    let records = builder.records(&engine_change(change), context()).unwrap();
    let text = dump(&records, &builder.settings().server);
    assert!(
        !text.contains("do-not-publish"),
        "an excluded value reached a record"
    );
    assert!(!text.contains("SECRET"), "an excluded column got a field");
    text
}

#[test]
fn insert_every_type_with_schemas() {
    golden(
        "insert_all_types.schemas.txt",
        &insert_all_types(&[
            ("key.converter.schemas.enable", "true"),
            ("value.converter.schemas.enable", "true"),
        ]),
    );
}

#[test]
fn insert_every_type_payload_only() {
    golden(
        "insert_all_types.payload.txt",
        &insert_all_types(&[
            ("key.converter.schemas.enable", "false"),
            ("value.converter.schemas.enable", "false"),
        ]),
    );
}

#[test]
fn insert_every_type_string_and_iso_modes() {
    golden(
        "insert_all_types.string_iso.txt",
        &insert_all_types(&[
            ("key.converter.schemas.enable", "false"),
            ("value.converter.schemas.enable", "false"),
            ("cdc.decimal.mode", "string"),
            ("cdc.temporal.mode", "iso_string"),
        ]),
    );
}

fn orders_layout() -> Arc<TableLayout> {
    Arc::new(TableLayout {
        table: TableId::new("APP", "ORDERS"),
        version: 1,
        valid_from: Scn(10),
        columns: vec![
            ColumnDef::new("ORDER_ID", 1, ColumnType::Number)
                .with_precision(Some(10), Some(0))
                .not_null(),
            ColumnDef::new("STATUS", 2, ColumnType::Varchar2).with_length(10),
            ColumnDef::new("TOTAL", 3, ColumnType::Number).with_precision(Some(12), Some(2)),
        ],
        key: vec!["ORDER_ID".into()],
        key_source: KeySource::PrimaryKey,
        supplemental: Default::default(),
        segment: Vec::new(),
    })
}

fn order_row(id: &str, status: &str, total: &str) -> Vec<ColumnValue> {
    vec![
        ColumnValue {
            column: 0,
            value: num(id),
        },
        ColumnValue {
            column: 1,
            value: Value::Text(status.into()),
        },
        ColumnValue {
            column: 2,
            value: num(total),
        },
    ]
}

/// One transaction: update (before/after), delete (+ tombstone), key-changing update.
#[test]
fn update_delete_and_key_change() {
    for (schemas, file) in [
        ("false", "orders_transaction.payload.txt"),
        ("true", "orders_transaction.schemas.txt"),
    ] {
        let mut builder = RecordBuilder::new(settings(&[
            ("key.converter.schemas.enable", schemas),
            ("value.converter.schemas.enable", schemas),
        ]));
        let layout = orders_layout();
        let commit = commit(0, None, 3);
        let changes = [
            change_record(
                &commit,
                &layout,
                0,
                ChangeOp::Update,
                Some(order_row("1001", "NEW", "10.5")),
                Some(order_row("1001", "PAID", "10.5")),
                Some("AAAR1aAAEAAAACXAAA"),
            ),
            change_record(
                &commit,
                &layout,
                1,
                ChangeOp::Delete,
                Some(order_row("1002", "NEW", "-0.01")),
                None,
                Some("AAAR1aAAEAAAACXAAB"),
            ),
            change_record(
                &commit,
                &layout,
                2,
                ChangeOp::Update,
                Some(order_row("1003", "NEW", "99")),
                Some(order_row("2003", "NEW", "99")),
                Some("AAAR1aAAEAAAACXAAC"),
            ),
        ];
        let mut records = Vec::new();
        for change in changes {
            builder
                .append(&engine_change(change), context(), &mut records)
                .unwrap();
        }
        // update, delete + tombstone, key change as delete + tombstone + create
        assert_eq!(records.len(), 6);
        assert_eq!(records[2].value, None);
        assert_eq!(records[2].key, records[1].key);
        assert_eq!(records[2].headers, records[1].headers);
        let commits: Vec<bool> = records.iter().map(|r| r.commits_offset).collect();
        assert_eq!(commits, [true, false, true, false, false, true]);
        golden(file, &dump(&records, &builder.settings().server));
    }
}

#[test]
fn keyless_table_in_rowid_mode_and_split() {
    let mut builder = RecordBuilder::new(settings(&[
        ("cdc.key.missing", "rowid"),
        ("value.converter.schemas.enable", "true"),
        ("key.converter.schemas.enable", "true"),
    ]));
    let layout = Arc::new(TableLayout {
        table: TableId::new("APP", "AUDIT_LOG"),
        version: 2,
        valid_from: Scn(10),
        columns: vec![
            ColumnDef::new("MSG", 1, ColumnType::Varchar2).with_length(100),
            ColumnDef::new("AT", 2, ColumnType::Date),
        ],
        key: vec![],
        key_source: KeySource::None,
        supplemental: Default::default(),
        segment: Vec::new(),
    });
    let commit = commit(0, None, 2);
    let mut records = Vec::new();
    let insert = change_record(
        &commit,
        &layout,
        0,
        ChangeOp::Insert,
        None,
        Some(vec![
            ColumnValue {
                column: 0,
                value: Value::Text("login".into()),
            },
            ColumnValue {
                column: 1,
                value: Value::Date(dt(1960, 1, 1, 0, 0, 0, 0)),
            },
        ]),
        Some("AAAR1bAAEAAAACXAAA"),
    );
    let delete = change_record(
        &commit,
        &layout,
        1,
        ChangeOp::Delete,
        Some(vec![ColumnValue {
            column: 0,
            value: Value::Text("login".into()),
        }]),
        None,
        Some("AAAR1bAAEAAAACXAAA"),
    );
    let split = RecordContext {
        now_ms: NOW,
        split: true,
    };
    builder
        .append(&engine_change(insert), split, &mut records)
        .unwrap();
    builder
        .append(&engine_change(delete), split, &mut records)
        .unwrap();
    assert_eq!(records.len(), 3);
    golden(
        "audit_log_rowid_split.txt",
        &dump(&records, &builder.settings().server),
    );
}

fn side_records(schemas: &str) -> String {
    let mut builder = RecordBuilder::new(settings(&[
        ("key.converter.schemas.enable", schemas),
        ("value.converter.schemas.enable", schemas),
    ]));
    let commit = commit(0, None, 1);
    let position = position(0, &commit);
    let mut details = BTreeMap::new();
    details.insert("xid".to_owned(), "0:5.12.900".to_owned());
    details.insert("user".to_owned(), "APP_USER".to_owned());
    details.insert("first_scn".to_owned(), "5000100".to_owned());
    details.insert("last_scn".to_owned(), "5000120".to_owned());
    details.insert("events".to_owned(), "3".to_owned());
    details.insert("age_ms".to_owned(), "3600001".to_owned());
    let kinds = vec![
        RecordKind::Heartbeat {
            reason: HeartbeatReason::Start,
            mined_to: None,
        },
        RecordKind::Heartbeat {
            reason: HeartbeatReason::Idle,
            mined_to: Some(Scn(5_000_200)),
        },
        RecordKind::Ops(OpsEvent {
            kind: OpsKind::TransactionDiscarded,
            details: details.clone(),
        }),
        RecordKind::Dlq(DlqRecord {
            kind: DlqKind::TransactionDiscarded,
            xid: ConXid::new(ConId(0), Xid::new(5, 12, 900)),
            table: None,
            scn: Scn(5_000_100),
            addr: None,
            operation: None,
            status: None,
            info: None,
            sql_redo: None,
            message: "transaction 0:5.12.900 is older than cdc.transaction.max.age.ms".into(),
            details,
        }),
        RecordKind::Dlq(DlqRecord {
            kind: DlqKind::UnsupportedRow,
            xid: ConXid::new(ConId(3), Xid::new(7, 1, 42)),
            table: Some(TableId::new("APP", "DOCS").in_pdb("FREEPDB1")),
            scn: Scn(5_000_300),
            addr: Some(addr(0x5a, 0x10, 0x1c, 4)),
            operation: Some(Operation::Unsupported),
            status: Some(2),
            info: Some("Unsupported Type".into()),
            sql_redo: None,
            message: "UNSUPPORTED row".into(),
            details: BTreeMap::new(),
        }),
    ];
    let mut records = Vec::new();
    for kind in kinds {
        let record = EngineRecord {
            kind,
            position: std::sync::Arc::new(position.clone()),
        };
        builder.append(&record, context(), &mut records).unwrap();
    }
    assert!(
        records
            .iter()
            .all(|r| r.headers.is_empty() && r.commits_offset)
    );
    dump(&records, &builder.settings().server)
}

#[test]
fn ops_heartbeat_and_dlq_records() {
    golden("side_records.payload.txt", &side_records("false"));
    golden("side_records.schemas.txt", &side_records("true"));
}

/// A layout handed over again as a new copy (after a reconnect) gets the format of its table
/// version; a new version gets its own, and a copy dropped and made again never finds another
/// table's format at its address.
#[test]
fn formats_follow_the_table_version_not_the_copy() {
    let mut builder = RecordBuilder::new(settings(&[]));
    let first = orders_layout();
    let format = builder.format(&first).unwrap();
    let copy = Arc::new((*first).clone());
    assert!(Arc::ptr_eq(&builder.format(&copy).unwrap(), &format));
    let mut altered = (*first).clone();
    altered.version = 2;
    altered.columns.pop();
    let altered = Arc::new(altered);
    let next = builder.format(&altered).unwrap();
    assert!(!Arc::ptr_eq(&next, &format));
    assert_eq!(next.fields.len(), format.fields.len() - 1);
    for round in 0..200 {
        let table = all_types_layout(TableId::new("APP", format!("T{round}")));
        let format = builder.format(&table).unwrap();
        assert_eq!(format.layout.table, table.table);
        drop(table);
        let orders = Arc::new((*first).clone());
        assert_eq!(builder.format(&orders).unwrap().layout.table, first.table);
    }
}

/// The key written as text is the key payload's JSON, for a primary key of every type, a
/// configured key, a ROWID key and no key.
#[test]
fn key_text_is_the_key_payload_as_json() {
    let layout = all_types_layout(TableId::new("APP", "ALL_TYPES"));
    let names: Vec<String> = layout
        .columns
        .iter()
        .filter(|c| !c.data_type.is_lob() && c.name != "SECRET")
        .map(|c| c.name.clone())
        .collect();
    let row = all_types_row(7);
    for extra in [
        vec![],
        vec![(
            "cdc.key.columns",
            format!("APP.ALL_TYPES:{}", names.join(",")),
        )],
        vec![("cdc.key.missing", "rowid".to_owned())],
        vec![("cdc.key.missing", "none".to_owned())],
    ] {
        let extra: Vec<(&str, &str)> = extra.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let mut builder = RecordBuilder::new(settings(&extra));
        let mut keyless = (*layout).clone();
        if extra.iter().any(|(k, _)| *k == "cdc.key.missing") {
            keyless.key.clear();
            keyless.key_source = KeySource::None;
        }
        let format = builder.format(&Arc::new(keyless)).unwrap();
        for placeholder in ["__unavailable", "x"] {
            let json = format
                .key_payload(Some(&row), Some("AAAR3sAAEAAAACXAAA"), 5, placeholder)
                .unwrap();
            let text = format
                .key_text(Some(&row), Some("AAAR3sAAEAAAACXAAA"), 5, placeholder)
                .unwrap();
            assert_eq!(
                text.map(|t| String::from_utf8(t).unwrap()),
                (!json.is_null()).then(|| json.to_string()),
                "{extra:?}"
            );
        }
    }
}

/// The schema topic: a table's versions, oldest first, its full layout (an excluded column
/// included: names and types, no values), the records' key, and a tombstone when the table
/// goes away.
fn schema_records(schemas: &str) -> String {
    use cdc_core::table::SupplementalLogging;
    use cdc_logminer::engine::SchemaChange;
    let mut builder = RecordBuilder::new(settings(&[
        ("cdc.database.pdbs", "FREEPDB1"),
        ("cdc.key.columns", "FREEPDB1.APP.AUDIT_LOG:AT"),
        ("key.converter.schemas.enable", schemas),
        ("value.converter.schemas.enable", schemas),
    ]));
    let commit = commit(0, None, 1);
    let position = position(0, &commit);
    let v1 = all_types_layout(cdb_table());
    let mut v2 = (*v1).clone();
    v2.version = v1.version + 1;
    v2.valid_from = Scn(5_000_150);
    v2.supplemental = SupplementalLogging {
        all_columns: false,
        primary_key: true,
    };
    v2.columns
        .push(ColumnDef::new("ADDED", 28, ColumnType::Varchar2).with_length(30));
    let audit = Arc::new(TableLayout {
        table: TableId::new("APP", "AUDIT_LOG").in_pdb("FREEPDB1"),
        version: 1,
        valid_from: Scn(5_000_100),
        columns: vec![
            ColumnDef::new("AT", 1, ColumnType::Timestamp)
                .with_precision(None, Some(6))
                .not_null(),
            ColumnDef::new("MSG", 2, ColumnType::Varchar2).with_length(200),
        ],
        key: vec![],
        key_source: KeySource::None,
        supplemental: SupplementalLogging::default(),
        segment: Vec::new(),
    });
    let kinds = vec![
        RecordKind::Schema(SchemaChange::Version(v1)),
        RecordKind::Schema(SchemaChange::Version(audit)),
        RecordKind::Schema(SchemaChange::Version(Arc::new(v2))),
        RecordKind::Schema(SchemaChange::Removed(cdb_table())),
    ];
    let mut records = Vec::new();
    for kind in kinds {
        let record = EngineRecord {
            kind,
            position: Arc::new(position.clone()),
        };
        builder.append(&record, context(), &mut records).unwrap();
    }
    assert!(records.iter().all(|r| r.commits_offset));
    assert_eq!(records.last().map(|r| r.value.is_none()), Some(true));
    let text = dump(&records, &builder.settings().server);
    assert!(text.contains("\"SECRET\""), "the layout is whole");
    text
}

#[test]
fn schema_topic_records() {
    golden("schema_records.payload.txt", &schema_records("false"));
    golden("schema_records.schemas.txt", &schema_records("true"));
}

/// Snapshot rows: `op=r`, `before` and `transaction` null, the source's streaming-only fields
/// null, `ts_ms` the chunk's read time, the marker in `source.snapshot`; headers `cdc.scn`,
/// `cdc.snapshot`, `cdc.schema_version` only. A keyed row (first of its snapshot) and a keyless
/// one under `cdc.key.missing=rowid` (incremental).
#[test]
fn snapshot_rows_keyed_and_by_rowid() {
    use cdc_logminer::engine::{SnapshotMarker, SnapshotRecord};
    let mut builder = RecordBuilder::new(settings(&[
        ("cdc.key.missing", "rowid"),
        ("value.converter.schemas.enable", "false"),
        ("key.converter.schemas.enable", "false"),
    ]));
    let keyless = Arc::new(TableLayout {
        table: TableId::new("APP", "AUDIT_LOG"),
        version: 3,
        valid_from: Scn(10),
        columns: vec![ColumnDef::new("MSG", 1, ColumnType::Varchar2).with_length(100)],
        key: vec![],
        key_source: KeySource::RowId,
        supplemental: Default::default(),
        segment: Vec::new(),
    });
    let at = Arc::new(position(0, &commit(0, None, 1)));
    let row = |layout: &Arc<TableLayout>, values, row_id: &str, marker| EngineRecord {
        kind: RecordKind::Snapshot(SnapshotRecord {
            layout: Arc::clone(layout),
            row_id: row_id.into(),
            values,
            scn: Scn(4_711_000),
            read_ms: 1_774_747_800_123,
            marker,
        }),
        position: Arc::clone(&at),
    };
    let mut records = Vec::new();
    builder
        .append(
            &row(
                &orders_layout(),
                order_row("7", "OPEN", "12.50"),
                "AAAS5bAAEAAAACXAAB",
                SnapshotMarker::First,
            ),
            context(),
            &mut records,
        )
        .unwrap();
    builder
        .append(
            &row(
                &keyless,
                vec![ColumnValue {
                    column: 0,
                    value: Value::Text("login".into()),
                }],
                "AAAR1bAAEAAAACXAAC",
                SnapshotMarker::Incremental,
            ),
            context(),
            &mut records,
        )
        .unwrap();
    assert_eq!(records.len(), 2);
    assert!(records.iter().all(|r| r.commits_offset));
    golden(
        "snapshot_rows.payload.txt",
        &dump(&records, &builder.settings().server),
    );
}
