//! Dictionary builds in the simulated redo and LogMiner sessions with the redo dictionary
//! (`DICT_FROM_REDO_LOGS + DDL_DICT_TRACKING`): the build's logs flagged in V$ARCHIVED_LOG, rows
//! older than an ALTER named with the layout they were written under (where the online catalog
//! gives them generic), and the ways Oracle refuses such a session or a build.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::ops::ControlFlow;
use std::sync::Arc;

use cdc_core::change::status;
use cdc_core::{MinedRow, Operation, Value};
use cdc_logminer::decode::{DecodeOptions, DecodeTable, Decoded, decode_row};
use cdc_logminer::sim::source::{query_for, whole_window};
use cdc_logminer::sim::{DbOp, Scenario, SimSource};
use cdc_logminer::source::{
    CaptureMode, DictionaryBuild, DictionarySource, LogFile, LogInventoryQuery, MiningWindow,
    RedoBound, RedoSource, SessionMode, SourceError, whole_builds,
};

/// A database with one table APP.T, the given set-up, and a session that inserts three rows,
/// commits, and (`alter`) adds a column before inserting a fourth.
fn scenario(database: &str, build_first: bool, alter: bool) -> SimSource {
    let build = if build_first {
        r#"{"event": "dictionary_build"},"#
    } else {
        ""
    };
    let alter = if alter {
        r#"{"event": "add_column", "table": "APP.T", "column": {"name": "NOTE", "type": "VARCHAR2(20)"}},
           {"event": "insert", "session": "a", "table": "APP.T", "values": {"ID": 4, "NAME": "four", "PRICE": "4.25", "NOTE": "late"}},
           {"event": "commit", "session": "a"},"#
    } else {
        ""
    };
    let json = format!(
        r#"{{
        "name": "dictionary",
        "database": {{ "seed": 5, "private_strands": false, "tables": [
            {{"owner": "APP", "name": "T", "primary_key": ["ID"], "columns": [
                {{"name": "ID", "type": "NUMBER(10)", "nullable": false}},
                {{"name": "NAME", "type": "VARCHAR2(20)"}},
                {{"name": "PRICE", "type": "NUMBER(12,2)"}},
                {{"name": "SEEN", "type": "DATE"}}]}}]{database} }},
        "events": [
            {build}
            {{"event": "insert", "session": "a", "table": "APP.T", "values": {{"ID": 1, "NAME": "one", "PRICE": "-1.5", "SEEN": "2026-02-28 13:45:59"}}}},
            {{"event": "insert", "session": "a", "table": "APP.T", "values": {{"ID": 2, "NAME": "it's two", "PRICE": "20"}}}},
            {{"event": "update", "session": "a", "table": "APP.T", "where": {{"ID": 1}}, "set": {{"PRICE": "0.01"}}}},
            {{"event": "commit", "session": "a"}},
            {alter}
            {{"event": "log_switch"}}
        ]}}"#
    );
    Scenario::from_json(&json).unwrap().play().unwrap()
}

fn inventory(s: &mut SimSource) -> Vec<LogFile> {
    s.log_inventory(&LogInventoryQuery {
        from: cdc_core::Scn(0),
        mode: CaptureMode::Online,
        destination: None,
    })
    .unwrap()
}

fn with_redo_dictionary(logs: &[LogFile]) -> MiningWindow {
    MiningWindow {
        dictionary: DictionarySource::RedoLogs,
        ..whole_window(logs)
    }
}

/// The DML rows of APP.T a session over `window` returns.
fn dml(s: &mut SimSource, window: &MiningWindow) -> Result<Vec<MinedRow>, SourceError> {
    let objects = s
        .resolve_objects(&|t| t.table == "T")
        .unwrap()
        .into_iter()
        .map(|o| (o.con, o.object))
        .collect();
    s.start_session(window)?;
    let mut rows = Vec::new();
    s.mine(&query_for(RedoBound::Start, objects), &mut |row| {
        if row.operation.is_dml() {
            rows.push(row);
        }
        ControlFlow::Continue(())
    })?;
    Ok(rows)
}

fn code(e: &SourceError) -> u32 {
    e.ora_code().map(|c| c.number()).unwrap_or(0)
}

#[test]
fn a_build_in_one_log_is_flagged_begin_and_end_on_it() {
    let mut s = scenario("", true, false);
    let logs = inventory(&mut s);
    let flagged: Vec<&LogFile> = logs
        .iter()
        .filter(|l| l.dictionary_begin || l.dictionary_end)
        .collect();
    assert_eq!(flagged.len(), 1, "{logs:?}");
    assert!(flagged[0].dictionary_begin && flagged[0].dictionary_end);
    assert!(flagged[0].archived);
    assert_eq!(whole_builds(&logs), vec![0..1]);
    // the current log is online: V$LOG carries no flags
    assert!(logs.last().unwrap().is_current());
    assert!(!logs.last().unwrap().dictionary_begin);
}

#[test]
fn a_build_that_does_not_fit_spans_two_logs() {
    // a build of 40 KiB in logs of 32 KiB: it starts in the first log and ends in the second
    let mut s = scenario(
        r#", "log_size_bytes": 32768, "dictionary_build_bytes": 40960"#,
        true,
        false,
    );
    let logs = inventory(&mut s);
    let begin: Vec<u32> = logs
        .iter()
        .filter(|l| l.dictionary_begin)
        .map(|l| l.sequence)
        .collect();
    let end: Vec<u32> = logs
        .iter()
        .filter(|l| l.dictionary_end)
        .map(|l| l.sequence)
        .collect();
    assert_eq!(begin, vec![1]);
    assert_eq!(end, vec![2]);
    assert_eq!(whole_builds(&logs), vec![0..2]);
    // the build's SCNs name its logs
    let mut fresh = scenario(
        r#", "log_size_bytes": 32768, "dictionary_build_bytes": 40960"#,
        false,
        false,
    );
    let build = fresh.build_dictionary().unwrap();
    assert!(build.start_scn < build.end_scn);
    fresh.apply(&DbOp::LogSwitch).unwrap();
    let logs = inventory(&mut fresh);
    let run = build.logs_in(&logs).unwrap();
    assert_eq!(run.len(), 2);
    assert!(logs[run.start].dictionary_begin && logs[run.end - 1].dictionary_end);
    assert!(build.written_in(&logs[run.start]) && build.written_in(&logs[run.end - 1]));
    // a build written later is not that one
    let other = DictionaryBuild {
        start_scn: logs.last().unwrap().first_scn,
        end_scn: logs.last().unwrap().first_scn,
    };
    assert_eq!(other.logs_in(&logs), None);
}

#[test]
fn a_build_in_a_nearly_full_log_goes_on_in_the_next() {
    // logs of 24 KiB, builds of 16 KiB: the first fills two thirds of an empty log, the second
    // starts in the rest of it and ends in the next log
    let mut s = scenario(r#", "log_size_bytes": 24576"#, false, false);
    let first = inventory(&mut s).last().unwrap().sequence;
    s.build_dictionary().unwrap();
    s.build_dictionary().unwrap();
    s.apply(&DbOp::LogSwitch).unwrap();
    let logs = inventory(&mut s);
    let flags = |seq: u32| {
        let l = logs.iter().find(|l| l.sequence == seq).unwrap();
        (l.dictionary_begin, l.dictionary_end)
    };
    assert_eq!(flags(first), (true, true));
    assert_eq!(flags(first + 1), (false, true));
    // the flags alone read as one build in the first log: a window from it holds both
    assert_eq!(whole_builds(&logs).len(), 1);
    let from = logs.iter().position(|l| l.sequence == first).unwrap();
    assert!(dml(&mut s, &with_redo_dictionary(&logs[from..])).is_ok());
}

#[test]
fn the_redo_dictionary_names_rows_older_than_an_alter() {
    let mut s = scenario("", true, true);
    let logs = inventory(&mut s);

    // the online catalog knows only the newest layout: the rows before the ALTER are generic
    let online = dml(&mut s, &whole_window(&logs)).unwrap();
    assert_eq!(online.len(), 4);
    for r in &online[..3] {
        assert_eq!(r.status, status::INVALID_SQL, "{r:?}");
        assert!(
            r.sql_redo.as_deref().unwrap().contains("\"COL 1\""),
            "{r:?}"
        );
    }
    assert_eq!(online[3].status, status::VALID_SQL);

    // the build's dictionary, tracked through the ALTER: every row with names and literals
    let replayed = dml(&mut s, &with_redo_dictionary(&logs)).unwrap();
    assert_eq!(replayed.len(), 4);
    for r in &replayed {
        assert_eq!(r.status, status::VALID_SQL, "{r:?}");
        assert_eq!(r.info, None, "{r:?}");
        let sql = r.sql_redo.as_deref().unwrap();
        assert!(!sql.contains("COL ") && !sql.contains("HEXTORAW"), "{sql}");
    }
    assert!(
        replayed[0].sql_redo.as_deref().unwrap().starts_with(
            r#"insert into "APP"."T"("ID","NAME","PRICE","SEEN") values ('1','one','-1.5',TO_DATE("#
        ),
        "{:?}",
        replayed[0].sql_redo
    );
    // the same redo records
    for (a, b) in online.iter().zip(&replayed) {
        assert_eq!((a.rs_id, a.ssn, a.scn), (b.rs_id, b.ssn, b.scn));
    }

    // each decodes with the layout of its version to what the database committed
    let db = s.database();
    let table = db.containers()[0]
        .tables
        .iter()
        .find(|t| t.id.table == "T")
        .unwrap();
    assert_eq!(table.versions.len(), 2);
    let truth: Vec<_> = db
        .truth()
        .captured(&|t| t.table == "T", &[])
        .into_iter()
        .flat_map(|t| t.changes)
        .collect();
    assert_eq!(truth.len(), 4);
    for (i, (row, change)) in replayed.iter().zip(&truth).enumerate() {
        let version = usize::from(i == 3);
        let layout = Arc::clone(&table.versions[version]);
        let decode_table = DecodeTable::without_exclusions(Arc::clone(&layout));
        let Decoded::Change(decoded) =
            decode_row(row, Some(&decode_table), &DecodeOptions::default()).unwrap()
        else {
            panic!("{row:?}")
        };
        assert_eq!(decoded.op, change.op);
        let named = |image: &Option<Vec<cdc_core::change::ColumnValue>>| {
            image.as_ref().map(|values| {
                values
                    .iter()
                    .map(|v| {
                        let name = layout.columns[usize::from(v.column)].name.clone();
                        (name, v.value.clone())
                    })
                    .filter(|(_, v)| *v != Value::Null)
                    .collect::<Vec<_>>()
            })
        };
        let without_nulls = |image: &Option<Vec<(String, Value)>>| {
            image.as_ref().map(|values| {
                values
                    .iter()
                    .filter(|(_, v)| *v != Value::Null)
                    .cloned()
                    .collect::<Vec<_>>()
            })
        };
        assert_eq!(
            named(&decoded.after),
            without_nulls(&change.after),
            "{row:?}"
        );
    }
}

#[test]
fn rows_older_than_the_build_stay_generic_and_start_scn_bounds_the_rows() {
    // the build comes after the ALTER: the rows written under the first layout are older than
    // the dictionary it knows, and stay generic; the row after the ALTER is named
    let mut s = scenario("", false, true);
    s.build_dictionary().unwrap();
    s.apply(&DbOp::LogSwitch).unwrap();
    let logs = inventory(&mut s);
    let rows = dml(&mut s, &with_redo_dictionary(&logs)).unwrap();
    assert_eq!(rows.len(), 4);
    let statuses: Vec<u32> = rows.iter().map(|r| r.status).collect();
    assert_eq!(
        statuses,
        vec![
            status::INVALID_SQL,
            status::INVALID_SQL,
            status::INVALID_SQL,
            0
        ]
    );
    // rows below STARTSCN are not returned (read only to load the dictionary)
    let window = MiningWindow {
        start_scn: rows[3].scn,
        ..with_redo_dictionary(&logs)
    };
    let from = dml(&mut s, &window).unwrap();
    assert_eq!(from.len(), 1);
    assert_eq!(from[0].rs_id, rows[3].rs_id);
}

#[test]
fn a_window_without_the_whole_build_is_ora_01371() {
    let mut s = scenario(
        r#", "log_size_bytes": 32768, "dictionary_build_bytes": 40960"#,
        true,
        true,
    );
    let logs = inventory(&mut s);
    assert_eq!(whole_builds(&logs), vec![0..2]);
    // the build's second log only
    let e = dml(&mut s, &with_redo_dictionary(&logs[1..])).unwrap_err();
    assert_eq!(code(&e), 1371, "{e}");
    assert!(
        e.to_string()
            .contains("Complete LogMiner dictionary not found")
    );
    // the same logs with the online catalog are mined as ever
    assert!(dml(&mut s, &whole_window(&logs[1..])).is_ok());
    // the build's first log without its second
    let mut first_only = vec![logs[0].clone()];
    first_only.extend_from_slice(&logs[2..]);
    let e = dml(&mut s, &with_redo_dictionary(&first_only)).unwrap_err();
    assert_eq!(code(&e), 1371, "{e}");
    // the whole build is enough
    assert!(dml(&mut s, &with_redo_dictionary(&logs)).is_ok());
}

#[test]
fn a_window_with_no_build_is_ora_01371() {
    let mut s = scenario("", false, true);
    let logs = inventory(&mut s);
    assert!(whole_builds(&logs).is_empty());
    let e = dml(&mut s, &with_redo_dictionary(&logs)).unwrap_err();
    assert_eq!(code(&e), 1371, "{e}");
}

#[test]
fn a_missing_log_after_the_build_is_ora_01291() {
    let mut s = scenario("", true, true);
    for _ in 0..2 {
        s.apply(&DbOp::LogSwitch).unwrap();
    }
    let logs = inventory(&mut s);
    assert!(logs.len() >= 3);
    let mut gapped = vec![logs[0].clone()];
    gapped.extend_from_slice(&logs[2..]);
    let e = dml(&mut s, &with_redo_dictionary(&gapped)).unwrap_err();
    assert_eq!(code(&e), 1291, "{e}");
}

#[test]
fn a_purged_build_log_fails_as_any_purged_log() {
    let mut s = scenario("", true, true);
    let logs = inventory(&mut s);
    let build_log = logs[whole_builds(&logs)[0].start].clone();
    // RMAN marks it deleted: the inventory says so, and adding it fails
    s.apply(&DbOp::Purge {
        up_to_sequence: build_log.sequence,
        remove_file: false,
    })
    .unwrap();
    let after = inventory(&mut s);
    assert!(after[0].is_purged() && after[0].dictionary_begin);
    let e = dml(&mut s, &with_redo_dictionary(&after)).unwrap_err();
    assert_eq!(code(&e), 1284, "{e}");
    // without it the window has no build
    let e = dml(&mut s, &with_redo_dictionary(&after[1..])).unwrap_err();
    assert_eq!(code(&e), 1371, "{e}");

    // an `rm` behind the catalog's back: listed as there, ADD_LOGFILE cannot open it
    let mut s = scenario("", true, true);
    s.apply(&DbOp::Purge {
        up_to_sequence: build_log.sequence,
        remove_file: true,
    })
    .unwrap();
    let listed = inventory(&mut s);
    assert!(!listed[0].is_purged());
    let e = dml(&mut s, &with_redo_dictionary(&listed)).unwrap_err();
    assert_eq!(code(&e), 1284, "{e}");
}

#[test]
fn a_build_without_the_grant_fails_as_pl_sql_does() {
    let mut s = scenario(r#", "dictionary_build_grant": false"#, false, false);
    let before = s.database().current_scn();
    let e = s.build_dictionary().unwrap_err();
    assert_eq!(code(&e), 6550, "{e}");
    assert!(e.is_missing_build_grant(), "{e}");
    assert!(e.to_string().contains("PLS-00201"), "{e}");
    // nothing was written
    assert_eq!(s.database().current_scn(), before);
    s.apply(&DbOp::LogSwitch).unwrap();
    assert!(whole_builds(&inventory(&mut s)).is_empty());
    // with the grant it works, and its error would not be one
    let mut granted = scenario("", false, false);
    granted.build_dictionary().unwrap();
    let other = SourceError::from_driver_message(
        "ORA-01325: archive log mode must be enabled to build into the logstream",
    );
    assert!(!other.is_missing_build_grant());
    let privilege = SourceError::from_driver_message("ORA-01031: insufficient privileges");
    assert!(privilege.is_missing_build_grant());
}

#[test]
fn in_a_pdb_the_build_works_and_a_redo_dictionary_session_is_ora_01371() {
    let mut s = scenario(
        r#", "pdbs": ["FREEPDB1"], "session_pdb": "FREEPDB1""#,
        false,
        true,
    );
    s.build_dictionary().unwrap();
    s.apply(&DbOp::LogSwitch).unwrap();
    let logs = inventory(&mut s);
    assert_eq!(whole_builds(&logs).len(), 1);
    let range = MiningWindow {
        mode: SessionMode::Range,
        ..with_redo_dictionary(&logs)
    };
    let e = s.start_session(&range).unwrap_err();
    assert_eq!(code(&e), 1371, "{e}");
    // by range with the online catalog it mines; adding logs is ORA-65040 there
    let online_range = MiningWindow {
        dictionary: DictionarySource::OnlineCatalog,
        ..range.clone()
    };
    s.start_session(&online_range).unwrap();
    let e = s.start_session(&with_redo_dictionary(&logs)).unwrap_err();
    assert_eq!(code(&e), 65040, "{e}");
}

#[test]
fn a_build_writes_no_row_the_query_returns() {
    let mut plain = scenario("", false, false);
    let mut built = scenario("", true, false);
    let all = |s: &mut SimSource| {
        let logs = inventory(s);
        s.start_session(&whole_window(&logs)).unwrap();
        let objects = s
            .resolve_objects(&|_| true)
            .unwrap()
            .into_iter()
            .map(|o| (o.con, o.object))
            .collect();
        let mut rows = Vec::new();
        s.mine(&query_for(RedoBound::Start, objects), &mut |row| {
            rows.push((row.operation, row.sql_redo));
            ControlFlow::Continue(())
        })
        .unwrap();
        rows
    };
    let (a, b) = (all(&mut plain), all(&mut built));
    assert!(!b.iter().any(|(op, _)| *op == Operation::Internal));
    let texts = |rows: &[(Operation, Option<String>)]| -> Vec<Option<String>> {
        rows.iter().map(|(_, sql)| sql.clone()).collect()
    };
    assert_eq!(texts(&a), texts(&b));
}
