//! `transactions`, `journal inspect`, `resnapshot`, `check` and the redo checks of `offsets`
//! through the `oracle-cdc-admin` binary, against a connector on the simulator and the test
//! broker.

use std::collections::BTreeSet;
use std::process::Command;
use std::time::Duration;

use cdc_core::Scn;
use cdc_core::config::Config;
use cdc_logminer::RedoSource;
use cdc_logminer::source::LogInventoryQuery;
use serde_json::Value;

use crate::support::{Running, broker, wait_until};

/// Four transactions left open (3, 2, 2 and 1 changes, begun in that order) beside one
/// committed.
const HELD_OPEN: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../cdc-logminer/scenarios/transactions_held_open.json"
);

fn json_of(out: &str) -> Value {
    serde_json::from_str(out).unwrap_or_else(|e| panic!("not JSON ({e}): {out}"))
}

/// The open transactions of a running connector, largest first (or oldest first), then the
/// journal topic once they are journaled: the same transactions, their chunks, nothing damaged.
#[test]
fn transactions_and_journal_inspect_show_the_long_open_transactions() {
    let Some(broker) = broker() else { return };
    let c = Running::start_with(
        "admintxns",
        &broker,
        &[
            ("cdc.sim.scenario", HELD_OPEN),
            ("cdc.sim.changes", "0"),
            ("cdc.txjournal.threshold.events", "1"),
            ("cdc.txjournal.threshold.ms", "1000"),
        ],
    );

    let mut body = Value::Null;
    assert!(
        wait_until(Duration::from_secs(60), || {
            let (code, out, _) = c.admin(&["transactions", "--json"], &[]);
            body = if code == 0 {
                json_of(&out)
            } else {
                Value::Null
            };
            body["open_transactions"] == 4
                && body["transactions"]
                    .as_array()
                    .is_some_and(|l| l.iter().all(|t| t["journaled"] == true))
        }),
        "{body}"
    );
    let list = body["transactions"].as_array().unwrap();
    let users: Vec<&str> = list.iter().map(|t| t["user"].as_str().unwrap()).collect();
    assert_eq!(
        users,
        ["ALICE", "BOB", "CAROL", "DAVE"],
        "largest first: {body}"
    );
    let xids: BTreeSet<String> = list
        .iter()
        .map(|t| t["xid"].as_str().unwrap().to_owned())
        .collect();

    let (code, out, _) = c.admin(&["transactions", "--json", "--oldest"], &[]);
    assert_eq!(code, 0);
    let oldest = json_of(&out);
    let scns: Vec<u64> = oldest["transactions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["first_scn"].as_str().unwrap().parse().unwrap())
        .collect();
    assert!(scns.windows(2).all(|w| w[0] <= w[1]), "{scns:?}");

    let (code, text, _) = c.admin(&["transactions"], &[]);
    assert_eq!(code, 0);
    assert!(text.starts_with("4 open transaction(s)"), "{text}");
    for xid in &xids {
        assert!(text.contains(xid.as_str()), "{xid} in {text}");
    }
    assert!(text.contains("journaled"), "{text}");

    // the journal topic holds the same four, whole
    let mut report = Value::Null;
    assert!(
        wait_until(Duration::from_secs(30), || {
            let (code, out, _) = c.admin(&["journal", "inspect", "--json"], &[]);
            report = if code == 0 {
                json_of(&out)
            } else {
                Value::Null
            };
            report["totals"]["live_transactions"] == 4
        }),
        "{report}"
    );
    assert_eq!(report["totals"]["damaged"], 0, "{report}");
    assert_eq!(report["totals"]["orphaned"], 0, "{report}");
    // the connector answered with its stored offset: a restart rebuilds the four
    assert_eq!(report["offset_stored"], true, "{report}");
    assert_eq!(report["restart"]["status"], "rebuilds", "{report}");
    let journaled: BTreeSet<String> = report["transactions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["xid"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(journaled, xids, "{report}");
    let (code, text, _) = c.admin(&["journal", "inspect"], &[]);
    assert_eq!(code, 0);
    assert!(xids.iter().all(|x| text.contains(x.as_str())), "{text}");
}

/// A `snapshot` signal through the tool: acknowledged as accepted, followed to the end.
#[test]
fn resnapshot_is_acknowledged_and_followed_to_its_end() {
    let Some(broker) = broker() else { return };
    let c = Running::start_with(
        "adminsnap",
        &broker,
        &[
            ("cdc.snapshot.mode", "on_signal"),
            ("cdc.sim.table.rows", "3000"),
            ("cdc.snapshot.chunk.rows", "1000"),
        ],
    );
    assert!(wait_until(Duration::from_secs(60), || c.state() == "RUNNING"));
    let (code, out, err) = c.admin(
        &[
            "resnapshot",
            "--tables",
            "APP.CODES",
            "--json",
            "--timeout",
            "60",
        ],
        &[],
    );
    assert_eq!(code, 0, "{out}{err}");
    let outcome = json_of(&out);
    assert_eq!(outcome["outcome"], "accepted", "{outcome}");
    assert_eq!(outcome["completed"], true, "{outcome}");
    let rows = &outcome["rows"];
    assert_eq!(rows[0]["table"], "APP.CODES", "{outcome}");
    assert!(rows[0]["rows"].as_u64().unwrap() >= 600, "{outcome}");

    // text mode prints the acknowledgement and the progress
    let (code, out, err) = c.admin(&["resnapshot", "--tables", "APP.CODES"], &[]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("signal-ack: accepted"), "{out}");
    assert!(out.contains("snapshot complete"), "{out}");
}

/// The redo the whole workload wrote, purged up to sequence 1: `offsets set` refuses an SCN
/// of the purged log, naming it; `offsets show --check-redo` warns that the resume point needs
/// the oldest log left.
#[test]
fn an_scn_whose_log_was_purged_is_refused() {
    let Some(broker) = broker() else { return };
    let dir = tempfile::tempdir().unwrap();
    let scenario = dir.path().join("purged.json");
    let mut events = Vec::new();
    for (i, step) in ["first", "second", "third"].iter().enumerate() {
        events.push(format!(
            r#"{{ "event": "begin", "session": "{step}", "private_strand": false }},
               {{ "event": "insert", "session": "{step}", "table": "APP.CODES", "values": {{ "CODE": "P{i}" }} }},
               {{ "event": "commit", "session": "{step}" }},
               {{ "event": "log_switch" }}, {{ "event": "archive" }}"#
        ));
    }
    events.push(r#"{ "event": "purge", "up_to_sequence": 1 }"#.to_owned());
    let text = format!(
        r#"{{ "name": "admin_purged", "database": {{ "seed": 7 }}, "events": [{}] }}"#,
        events.join(",")
    );
    std::fs::write(&scenario, text).unwrap();
    let path = scenario.to_str().unwrap().to_owned();
    // the database as the tool will see it: where sequence 2 starts (the start SCN)
    let probe = Config::from_pairs([
        ("name", "probe"),
        ("cdc.source", "sim"),
        ("cdc.sim.scenario", path.as_str()),
        ("cdc.sim.backlog", "true"),
        ("cdc.sim.changes", "0"),
        ("cdc.topic.prefix", "probe"),
        ("cdc.tables.include", r"APP\..*"),
    ])
    .validate()
    .unwrap();
    let mut source = cdc_logminer::source::configured::sim_source(&probe, None).unwrap();
    let logs = source
        .log_inventory(&LogInventoryQuery {
            from: Scn::ZERO,
            mode: probe.capture.mode,
            destination: None,
        })
        .unwrap();
    let first_of = |sequence: u32| {
        logs.iter()
            .find(|l| l.sequence == sequence)
            .map(|l| l.first_scn.0)
            .unwrap_or_else(|| panic!("sequence {sequence} in {logs:?}"))
    };
    let (purged_scn, start) = (first_of(1) + 1, first_of(2));
    let c = Running::start_with(
        "adminpurge",
        &broker,
        &[
            ("cdc.sim.scenario", path.as_str()),
            ("cdc.sim.backlog", "true"),
            ("cdc.sim.changes", "0"),
            ("cdc.start.scn", &start.to_string()),
        ],
    );
    assert!(wait_until(Duration::from_secs(60), || {
        c.stored_resume_scn().is_some()
    }));
    let (code, _, err) = c.admin(
        &[
            "offsets",
            "set",
            "--scn",
            &purged_scn.to_string(),
            "--reason",
            "test",
        ],
        &[],
    );
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("not available") && err.contains("sequence 1"),
        "the purged log is named: {err}"
    );
    assert_eq!(c.state(), "RUNNING", "nothing was stopped");

    let (code, out, err) = c.admin(&["offsets", "show", "--check-redo", "--json"], &[]);
    assert_eq!(code, 0, "{err}");
    let shown = json_of(&out);
    assert_eq!(shown["redo"]["available"], true, "{shown}");
    assert_eq!(
        shown["redo"]["oldest_available_log"]["sequence"], 2,
        "{shown}"
    );
}

/// `check` through the binary: the exit status says blocking, warnings or ready.
#[test]
fn check_exits_by_the_worst_finding() {
    let dir = tempfile::tempdir().unwrap();
    let run = |extra: &str| {
        let file = dir.path().join("check.properties");
        std::fs::write(
            &file,
            format!(
                "name=check\ncdc.topic.prefix=check\ncdc.source=sim\ncdc.tables.include=APP\\\\.(CODES|ORDERS)\n{extra}\n"
            ),
        )
        .unwrap();
        let output = Command::new(env!("CARGO_BIN_EXE_oracle-cdc-admin"))
            .args(["check", "--config"])
            .arg(&file)
            .output()
            .unwrap();
        (
            output.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&output.stdout).into_owned(),
        )
    };
    let (code, out) = run("");
    assert_eq!(code, 0, "{out}");
    let (code, out) = run("cdc.sim.preflight=noarchivelog");
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("ARCHIVELOG"), "{out}");
    let (code, out) = run("cdc.sim.preflight=switches-per-hour:12");
    assert_eq!(code, 2, "{out}");
    // a grant the check itself needs, and the login's: blocking, each with its GRANT
    let (code, out) = run(r"cdc.sim.preflight=missing-grant:SELECT ON DBA_CONSTRAINTS");
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("BLOCKING unreadable"), "{out}");
    assert!(
        out.contains("fix: GRANT SELECT ON SYS.DBA_CONSTRAINTS TO CDC;"),
        "{out}"
    );
    let (code, out) = run("cdc.sim.preflight=missing-grant:CREATE SESSION");
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("fix: GRANT CREATE SESSION TO CDC;"), "{out}");
    let (code, _) = run("cdc.sim.preflight=no-such-condition");
    assert_eq!(
        code, 64,
        "a configuration that does not validate is a usage error"
    );
}
