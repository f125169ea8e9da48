//! Same seed, same bytes: the sim_dump output (rows as JSON lines) and the ground truth are a
//! function of the seed only.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use cdc_logminer::sim::source::mine_all;
use cdc_logminer::sim::{SimConfig, SimDatabase, SimSource, Workload, WorkloadConfig, row_to_json};

fn dump(seed: u64, pdbs: &[&str]) -> (String, String) {
    let db = SimDatabase::new(SimConfig {
        seed,
        pdbs: pdbs.iter().map(|p| p.to_string()).collect(),
        ..SimConfig::default()
    })
    .unwrap();
    let w = Workload::random(WorkloadConfig {
        seed,
        changes: 250,
        ddl_rate: 0.01,
        ..WorkloadConfig::default()
    });
    let mut s = SimSource::with_workload(db, w, 0);
    while s.advance(1024).unwrap() {}
    let rows = mine_all(&mut s, &|_| true, &[]).unwrap();
    let text: String = rows
        .iter()
        .map(|r| format!("{}\n", row_to_json(r)))
        .collect();
    let truth = serde_json::to_string(s.database().truth()).unwrap();
    (text, truth)
}

#[test]
fn same_seed_same_bytes() {
    for (seed, pdbs) in [(1u64, &[][..]), (42, &["FREEPDB1", "FREEPDB2"][..])] {
        let a = dump(seed, pdbs);
        let b = dump(seed, pdbs);
        assert_eq!(a.0, b.0);
        assert_eq!(a.1, b.1);
        assert!(a.0.lines().count() > 300);
    }
    assert_ne!(dump(1, &[]).0, dump(2, &[]).0);
}

#[test]
fn dump_lines_carry_oracles_column_names() {
    let (text, _) = dump(3, &["FREEPDB1"]);
    let first: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    let keys: Vec<&str> = first
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "SCN",
            "RS_ID",
            "SSN",
            "CSF",
            "XIDUSN",
            "XIDSLT",
            "XIDSQN",
            "OPERATION",
            "OPERATION_CODE",
            "ROLLBACK",
            "STATUS",
            "INFO",
            "SEG_OWNER",
            "TABLE_NAME",
            "DATA_OBJ#",
            "ROW_ID",
            "SQL_REDO",
            "USERNAME",
            "SESSION#",
            "SERIAL#",
            "SRC_CON_ID",
            "SRC_CON_NAME",
            "THREAD#",
            "TIMESTAMP"
        ]
    );
    let rs_id = first["RS_ID"].as_str().unwrap();
    assert!(
        rs_id.starts_with(" 0x") && rs_id.ends_with(' ') && rs_id.len() == 24,
        "{rs_id:?}"
    );
    assert_eq!(first["SRC_CON_NAME"], "FREEPDB1");
}
