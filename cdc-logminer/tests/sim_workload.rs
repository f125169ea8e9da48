//! The workload generator's features: long and huge transactions, DDL, excluded users, several
//! PDBs, and the rarer reference shapes (UNSUPPORTED rows, rows of a dropped table).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use cdc_core::{Operation, RsId, Xid};
use cdc_logminer::sim::source::mine_all;
use cdc_logminer::sim::{Scenario, SimConfig, SimDatabase, SimSource, Workload, WorkloadConfig};
use cdc_logminer::source::RedoSource as _;

fn run(config: SimConfig, workload: WorkloadConfig) -> SimSource {
    let db = SimDatabase::new(config).unwrap();
    let mut s = SimSource::with_workload(db, Workload::random(workload), 0);
    while s.advance(4096).unwrap() {}
    s
}

#[test]
fn long_and_huge_transactions() {
    let mut s = run(
        SimConfig {
            seed: 31,
            log_size_bytes: 128 * 1024,
            ..SimConfig::default()
        },
        WorkloadConfig {
            seed: 31,
            changes: 400,
            long_transaction: true,
            huge_transaction_rows: 3000,
            think_millis: 2000,
            ..WorkloadConfig::default()
        },
    );
    let truth = s.database().truth();
    let huge = truth
        .transactions
        .iter()
        .map(|t| t.changes.len())
        .max()
        .unwrap();
    assert!(huge >= 2800, "{huge} (failed statements are undone)");
    let long = truth
        .transactions
        .iter()
        .find(|t| {
            t.changes
                .iter()
                .any(|c| c.scn < truth.transactions[0].commit_scn)
        })
        .unwrap();
    assert!(
        long.commit_scn > truth.transactions.last().unwrap().start_scn || long.changes.len() > 1
    );
    let rows = mine_all(&mut s, &|_| true, &[]).unwrap();
    // the huge transaction spans several logs
    let seqs: std::collections::BTreeSet<u32> = rows.iter().map(|r| r.rs_id.seq).collect();
    assert!(seqs.len() > 3);
}

#[test]
fn generated_quirks_and_ddl() {
    let mut s = run(
        SimConfig {
            seed: 32,
            pdbs: vec!["FREEPDB1".into(), "FREEPDB2".into()],
            ..SimConfig::default()
        },
        WorkloadConfig {
            seed: 32,
            changes: 2000,
            ddl_rate: 0.01,
            ..WorkloadConfig::default()
        },
    );
    let rows = mine_all(&mut s, &|_| true, &[]).unwrap();
    assert!(
        rows.iter()
            .any(|r| r.operation == Operation::Start && r.xid == Xid::ZERO),
        "zero-XID START"
    );
    assert!(
        rows.iter()
            .any(|r| r.operation == Operation::Rollback && r.rs_id == RsId::NONE),
        "zero RS_ID ROLLBACK"
    );
    assert!(
        rows.iter().any(|r| r.xid.sqn == Xid::UNKNOWN_SQN),
        "XIDSQN 0xFFFFFFFF"
    );
    assert!(rows.iter().any(|r| {
        r.operation == Operation::Ddl
            && r.sql_redo
                .as_deref()
                .is_some_and(|q| q.starts_with("CREATE TABLE"))
    }));
    assert!(
        rows.iter().any(|r| r.status == 2
            && r.sql_redo
                .as_deref()
                .is_some_and(|q| q.contains("\"COL 1\""))),
        "generic rows after ADD COLUMN"
    );
    assert!(
        rows.iter()
            .any(|r| r.username.as_deref() == Some("ETL_BATCH"))
    );
    // two rows of one statement share an RS_ID
    assert!(rows.windows(2).any(|w| w[0].operation.is_dml()
        && w[1].operation.is_dml()
        && w[0].rs_id == w[1].rs_id
        && w[0].ssn != w[1].ssn));
    // excluded: their DML never comes back
    let filtered = mine_all(&mut s, &|_| true, &["ETL_BATCH".into()]).unwrap();
    assert!(filtered.iter().all(
        |r| r.username.as_deref() != Some("ETL_BATCH") || r.operation.is_transaction_control()
    ));
    // both PDBs
    assert!(
        rows.iter()
            .any(|r| r.src_con_name.as_deref() == Some("FREEPDB2"))
    );
}

#[test]
fn unsupported_and_dropped_tables() {
    let scenario = Scenario::from_json(
        r#"{
        "name": "unsupported_and_dropped",
        "events": [
            { "event": "create_table", "table": { "owner": "APP", "name": "FLAGS",
              "columns": [ { "name": "ID", "type": "NUMBER(5)" }, { "name": "ON_OFF", "type": "BOOLEAN" } ],
              "primary_key": ["ID"] } },
            { "event": "insert", "session": "s", "table": "APP.FLAGS", "values": { "ID": 1, "ON_OFF": true } },
            { "event": "insert", "session": "s", "table": "APP.CODES", "values": { "CODE": "GONE" } },
            { "event": "commit", "session": "s" },
            { "event": "drop_table", "table": "APP.CODES" }
        ]
    }"#,
    )
    .unwrap();
    let mut s = scenario.play().unwrap();
    let rows = mine_all(&mut s, &|_| true, &[]).unwrap();
    let unsupported = rows
        .iter()
        .find(|r| r.operation == Operation::Unsupported)
        .unwrap();
    assert_eq!(unsupported.status, 2);
    assert_eq!(unsupported.sql_redo.as_deref(), Some("Unsupported"));
    // the dropped table's objects are no longer resolved; a query still naming its id sees
    // the row without owner or name
    assert!(
        s.resolve_objects(&|t| t.table == "CODES")
            .unwrap()
            .is_empty()
    );
    let all = {
        use cdc_logminer::source::{CaptureMode, LogInventoryQuery, RedoBound};
        let logs = s
            .log_inventory(&LogInventoryQuery {
                from: cdc_core::Scn(0),
                mode: CaptureMode::Online,
                destination: None,
            })
            .unwrap();
        s.start_session(&cdc_logminer::sim::source::whole_window(&logs))
            .unwrap();
        let objects = s.database().containers()[0]
            .tables
            .iter()
            .map(|t| (cdc_core::ConId(0), t.iot_top.unwrap_or(t.object)))
            .collect();
        let mut rows = Vec::new();
        s.mine(
            &cdc_logminer::sim::source::query_for(RedoBound::Start, objects),
            &mut |r| {
                rows.push(r);
                std::ops::ControlFlow::Continue(())
            },
        )
        .unwrap();
        rows
    };
    let gone = all
        .iter()
        .find(|r| r.operation == Operation::Insert && r.seg_owner.as_deref() == Some("UNKNOWN"))
        .unwrap();
    assert!(gone.table_name.as_deref().unwrap().starts_with("OBJ# "));
    assert_eq!(gone.status, 2);
    assert!(all.iter().any(|r| r.operation == Operation::Ddl
        && r.sql_redo.as_deref() == Some(r#"DROP TABLE "APP"."CODES" PURGE"#)));
}

/// More transactions open at once than the first undo segments have slots: each still gets
/// an XID of its own (the allocator once looped for ever past 320), and those before the
/// 321st are allocated as before.
#[test]
fn a_thousand_open_transactions_hold_distinct_xids() {
    use cdc_core::{Decimal, Value};
    use cdc_logminer::sim::DbOp;
    let mut s = SimSource::new(SimDatabase::new(SimConfig::default()).unwrap());
    for n in 0..1000u32 {
        s.apply(&DbOp::Insert {
            session: format!("s{n}").into(),
            table: "APP.CUSTOMERS".into(),
            row: vec![(
                "ID".into(),
                Value::Number(Decimal::try_new(i128::from(n) + 50_000, 0).unwrap()),
            )],
            fails: false,
        })
        .unwrap();
    }
    let open = s.active_transactions().unwrap();
    assert_eq!(open.len(), 1000);
    let slots: std::collections::BTreeSet<(u16, u16)> =
        open.iter().map(|t| (t.xid.usn, t.xid.slot)).collect();
    assert_eq!(
        slots.len(),
        1000,
        "two open transactions share an undo slot"
    );
    // the first 320 keep the ten segments' numbering
    assert!(open.iter().filter(|t| t.xid.usn <= 10).count() == 320);
    assert!(open.iter().any(|t| t.xid == Xid::new(1, 0, 600)));
}
