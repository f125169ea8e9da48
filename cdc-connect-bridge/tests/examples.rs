//! `examples/sim-trial.properties` as a user runs it: against the test broker (only the broker
//! address, names and ports changed so that runs do not meet), every committed change of its
//! workload arrives and the task is still RUNNING at the end.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::HashSet;
use std::path::PathBuf;
use std::time::Duration;

use cdc_core::config::Config;

use crate::e2e_support::*;

/// The keys a test run changes: where the broker is, the names and ports two runs of the
/// test (or a user's own trial) must not share, and the start SCN: the simulated database's
/// first SCN, so that the whole workload is compared with the simulator's truth (a first start
/// without it begins at the current SCN and passes over the transactions already open).
const PER_RUN: [&str; 7] = [
    "cdc.start.scn",
    "name",
    "bootstrap.servers",
    "offset.storage.topic",
    "cdc.topic.prefix",
    "cdc.rest.listen",
    "cdc.buffer.spill.dir",
];

#[test]
fn the_sim_trial_runs_to_the_end_of_its_workload() {
    let Some(broker) = broker() else {
        return;
    };
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples/sim-trial.properties");
    let example = Config::from_properties(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let mut setup = Setup::new("example-sim", &broker, 0, true);
    let own: Vec<(String, String)> = setup
        .pairs
        .iter()
        .filter(|(key, _)| PER_RUN.contains(&key.as_str()))
        .cloned()
        .collect();
    setup.pairs = example
        .iter()
        .filter(|(key, _)| !PER_RUN.contains(key))
        .map(|(key, value)| (key.to_owned(), value.to_owned()))
        .chain(own)
        .collect();

    // APP.DOCS holds a CLOB: under cdc.lob.mode=skip its records leave the CLOB out, and the
    // simulator's truth counts the LOB rows that a later part of the product assembles, so the
    // event indexes of a transaction that wrote a CLOB differ from the truth's. Those
    // transactions are compared by their arrival only; every other one exactly.
    let mut expected = expected(&setup.expected());
    let with_lobs: HashSet<String> = expected
        .changes
        .iter()
        .filter(|(_, (_, table, _))| table.owner == "APP" && table.table == "DOCS")
        .map(|((xid, _), _)| xid.clone())
        .collect();
    expected
        .changes
        .retain(|(xid, _), _| !with_lobs.contains(xid));
    assert!(expected.changes.len() > 1000, "{}", expected.changes.len());
    let log = setup.dir.path().join("oracle-cdc.log");
    let running = Running::start(&setup.write(), &log);
    let compared = || {
        let mut records = read_tables(&setup, true, Duration::from_millis(800));
        let lob_records = records.len();
        records.retain(|r| identity(r).is_some_and(|(xid, _, _)| !with_lobs.contains(&xid)));
        let lob_records = lob_records - records.len();
        (records, lob_records)
    };
    let delivered = || {
        compared()
            .0
            .iter()
            .filter_map(identity)
            .map(|(xid, index, _)| (xid, index))
            .collect::<HashSet<_>>()
            .len()
    };
    let done = wait_for(Duration::from_secs(180), || {
        delivered() >= expected.changes.len()
    });
    if !done {
        // names the first change that is missing
        check_complete(&expected, &compared().0);
        panic!("not every change arrived:\n{}", running.log_text());
    }
    let (code, body) = http(
        "GET",
        &format!("{}/connectors/{}/status", setup.rest(), setup.name),
        None,
    );
    assert_eq!(code, 200, "{body}");
    let status: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(status["connector"]["state"], "RUNNING", "{body}");
    assert_eq!(status["tasks"][0]["state"], "RUNNING", "{body}");
    let (records, lob_records) = compared();
    assert!(
        lob_records > 0,
        "nothing of the transactions that wrote APP.DOCS arrived"
    );
    let twice = check_complete(&expected, &records);
    assert!(twice.is_empty(), "delivered more than once: {twice:?}");
    let status = running.terminate(Duration::from_secs(30));
    assert!(status.success(), "exit status {status}");
}
