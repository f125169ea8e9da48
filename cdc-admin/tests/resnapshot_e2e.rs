//! `resnapshot` in front of a gap (the "skip + snapshot" of CDC-2001/2002) through the
//! `oracle-cdc-admin` binary, against a connector on the simulator and the test broker: the
//! connector's stored resume point is in a log the database purged, so it failed; the tool
//! refuses while a captured table is not listed, moves past the gap with the flag or with
//! every table listed, and the snapshot leaves the listed tables' topics holding exactly the
//! database's rows.

use std::collections::BTreeMap;
use std::time::Duration;

use cdc_connect_bridge::kafka::readback::{ReadRecord, read_until};
use cdc_core::config::Config;
use cdc_core::{Scn, TableId};
use cdc_logminer::RedoSource;
use cdc_logminer::source::LogInventoryQuery;
use cdc_logminer::source::configured::{sim_final_database, sim_source};
use serde_json::Value;

use crate::support::{Running, broker, wait_until};

/// How long a topic may take to hold what it must.
const LONG: Duration = Duration::from_secs(60);

/// A table's rows as a consumer applying its topic holds them: key → the text columns.
type Rows = BTreeMap<String, BTreeMap<String, String>>;

/// Four archived logs of changes to APP.CODES and APP.CUSTOMERS (the first two purged), then
/// one more change in the CURRENT log.
fn scenario(dir: &std::path::Path) -> String {
    let tx = |session: &str, body: &[String]| {
        let mut events = vec![format!(
            r#"{{ "event": "begin", "session": "{session}", "private_strand": false }}"#
        )];
        events.extend_from_slice(body);
        events.push(format!(
            r#"{{ "event": "commit", "session": "{session}" }}"#
        ));
        events.join(",")
    };
    let insert = |s: &str, table: &str, values: &str| {
        format!(
            r#"{{ "event": "insert", "session": "{s}", "table": "{table}", "values": {values} }}"#
        )
    };
    let update = |s: &str, table: &str, at: &str, set: &str| {
        format!(
            r#"{{ "event": "update", "session": "{s}", "table": "{table}", "where": {at}, "set": {set} }}"#
        )
    };
    let delete = |s: &str, table: &str, at: &str| {
        format!(r#"{{ "event": "delete", "session": "{s}", "table": "{table}", "where": {at} }}"#)
    };
    let code = |c: &str, label: &str| format!(r#"{{ "CODE": "{c}", "LABEL": "{label}" }}"#);
    let customer = |id: u32, name: &str| format!(r#"{{ "ID": {id}, "NAME": "{name}" }}"#);
    let switch = r#"{ "event": "log_switch" }, { "event": "archive" }"#;
    let events = [
        // sequence 1
        tx(
            "a",
            &[
                insert("a", "APP.CODES", &code("C1", "one")),
                insert("a", "APP.CODES", &code("C2", "two")),
                insert("a", "APP.CODES", &code("C3", "three")),
                insert("a", "APP.CUSTOMERS", &customer(1, "Ada")),
                insert("a", "APP.CUSTOMERS", &customer(2, "Brendan")),
            ],
        ),
        switch.to_owned(),
        // sequence 2
        tx(
            "b",
            &[
                insert("b", "APP.CODES", &code("C4", "four")),
                update(
                    "b",
                    "APP.CODES",
                    r#"{ "CODE": "C1" }"#,
                    r#"{ "LABEL": "uno" }"#,
                ),
                delete("b", "APP.CODES", r#"{ "CODE": "C2" }"#),
                insert("b", "APP.CUSTOMERS", &customer(3, "Cleo")),
            ],
        ),
        switch.to_owned(),
        // sequence 3: where the connector first starts
        tx(
            "c",
            &[
                insert("c", "APP.CODES", &code("C5", "five")),
                insert("c", "APP.CUSTOMERS", &customer(4, "Dana")),
            ],
        ),
        switch.to_owned(),
        // sequence 4
        tx(
            "d",
            &[
                insert("d", "APP.CODES", &code("C6", "six")),
                update(
                    "d",
                    "APP.CUSTOMERS",
                    r#"{ "ID": 1 }"#,
                    r#"{ "NAME": "Ada L." }"#,
                ),
            ],
        ),
        switch.to_owned(),
        r#"{ "event": "purge", "up_to_sequence": 2 }"#.to_owned(),
        // sequence 5, the CURRENT log
        tx("e", &[insert("e", "APP.CODES", &code("C7", "seven"))]),
    ];
    let text = format!(
        r#"{{ "name": "admin_gap", "database": {{ "seed": 7 }}, "events": [{}] }}"#,
        events.join(",")
    );
    let path = dir.join("gap.json");
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_owned()
}

/// The first SCN of each log sequence of the scenario's database, as the connector's source
/// lists them.
fn first_scns(scenario: &str) -> BTreeMap<u32, u64> {
    let probe = Config::from_pairs([
        ("name", "probe"),
        ("cdc.source", "sim"),
        ("cdc.sim.scenario", scenario),
        ("cdc.sim.backlog", "true"),
        ("cdc.sim.changes", "0"),
        ("cdc.topic.prefix", "probe"),
        ("cdc.tables.include", r"APP\..*"),
    ])
    .validate()
    .unwrap();
    let mut source = sim_source(&probe, None).unwrap();
    source
        .log_inventory(&LogInventoryQuery {
            from: Scn::ZERO,
            mode: probe.capture.mode,
            destination: None,
        })
        .unwrap()
        .iter()
        .map(|l| (l.sequence, l.first_scn.0))
        .collect()
}

/// The captured tables, as the simulated database holds them (not as the tool lists them).
fn captured(c: &Running) -> Vec<String> {
    let db = sim_final_database(&c.config).unwrap();
    let mut names: Vec<String> = db
        .containers()
        .iter()
        .flat_map(|container| container.tables.iter())
        .filter(|t| !t.dropped)
        .filter(|t| {
            c.config
                .is_table_included(t.id.pdb.as_deref(), &t.id.owner, &t.id.table)
        })
        .map(|t| t.id.to_string())
        .collect();
    names.sort();
    names
}

fn text_of(value: &cdc_core::Value) -> Option<String> {
    match value {
        cdc_core::Value::Number(n) => Some(n.to_string()),
        cdc_core::Value::Text(t) => Some(t.clone()),
        _ => None,
    }
}

/// The table's committed rows in the simulated database: key columns' values `|`-joined →
/// its text and number columns.
fn database_rows(c: &Running, owner: &str, table: &str) -> Rows {
    let db = sim_final_database(&c.config).unwrap();
    let id = TableId::new(owner, table);
    let key: Vec<String> = db
        .containers()
        .iter()
        .flat_map(|container| container.tables.iter())
        .find(|t| t.id == id && !t.dropped)
        .and_then(|t| t.layout().map(|l| l.key.clone()))
        .unwrap_or_default();
    assert!(!key.is_empty(), "{id} has a key");
    db.committed_rows(&id)
        .unwrap()
        .iter()
        .map(|(_, columns)| {
            let columns: BTreeMap<String, String> = columns
                .iter()
                .filter_map(|(name, value)| text_of(value).map(|t| (name.clone(), t)))
                .collect();
            let key = key
                .iter()
                .map(|k| columns.get(k).cloned().unwrap_or_default())
                .collect::<Vec<_>>()
                .join("|");
            (key, columns)
        })
        .collect()
}

fn payload(value: Value) -> Value {
    match value.get("payload") {
        Some(payload) if value.get("schema").is_some() => payload.clone(),
        _ => value,
    }
}

/// Applies a topic's records by key in offset order, as a consumer does: `r`, `c` and `u`
/// put the row (its text and number fields), `d` and a tombstone remove it.
fn apply(records: &[ReadRecord], topic: &str) -> Rows {
    let mut own: Vec<&ReadRecord> = records.iter().filter(|r| r.topic == topic).collect();
    own.sort_by_key(|r| (r.partition, r.offset));
    let mut rows = Rows::new();
    for record in own {
        let key = record
            .key
            .as_ref()
            .and_then(|k| serde_json::from_slice::<Value>(k).ok())
            .map(payload)
            .and_then(|k| k.as_object().cloned())
            .map(|fields| {
                fields
                    .values()
                    .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_owned))
                    .collect::<Vec<_>>()
                    .join("|")
            })
            .unwrap_or_default();
        let Some(value) = record.value_json().map(payload) else {
            rows.remove(&key);
            continue;
        };
        match value["op"].as_str() {
            Some("r" | "c" | "u") => {
                let after: BTreeMap<String, String> = value["after"]
                    .as_object()
                    .map(|fields| {
                        fields
                            .iter()
                            .filter_map(|(name, v)| match v {
                                Value::String(s) => Some((name.clone(), s.clone())),
                                Value::Number(n) => Some((name.clone(), n.to_string())),
                                _ => None,
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                rows.insert(key, after);
            }
            Some("d") => {
                rows.remove(&key);
            }
            other => panic!("unexpected op {other:?} in {topic}"),
        }
    }
    rows
}

/// The rows a consumer of `owner.table`'s topic ends with, once they equal `want` or `wait`
/// has passed.
fn topic_rows(c: &Running, owner: &str, table: &str, want: &Rows, wait: Duration) -> Rows {
    let topic =
        cdc_connect_bridge::table_topic(&c.config.topics.template, "", &TableId::new(owner, table));
    let mut last = Rows::new();
    let _ = read_until(
        &c.broker,
        &|name| name == topic,
        false,
        wait,
        &mut |records| {
            last = apply(records, &topic);
            last == *want
        },
    )
    .unwrap();
    last
}

/// Moves the stored resume point into the purged sequence 1 (as a connector left stopped
/// while the archive was purged would find it) and resumes: the connector fails with
/// CDC-2002.
fn open_the_gap(c: &Running, purged_scn: u64) {
    c.patch_offset(|offset| {
        offset.insert("resume_scn".into(), Value::from(purged_scn));
        offset.remove("resume_rs_id");
        offset.remove("resume_ssn");
    });
    c.resume();
    assert!(
        wait_until(Duration::from_secs(60), || c.state() == "FAILED"),
        "{}",
        c.state()
    );
    assert!(c.trace().contains("CDC-2002"), "{}", c.trace());
}

/// The issue's proof: refused while a captured table is not listed (offset unchanged); with
/// --skip-gap-for-unlisted-tables the offset moves past the gap, the listed table is
/// reloaded and the unlisted one keeps the gap's loss; with every table listed all of them
/// end with the database's rows.
#[test]
fn resnapshot_moves_past_a_purge_gap_only_for_listed_tables() {
    let Some(broker) = broker() else { return };
    let dir = tempfile::tempdir().unwrap();
    let scenario = scenario(dir.path());
    let firsts = first_scns(&scenario);
    let (purged_scn, start) = (firsts[&1] + 1, firsts[&3]);
    let c = Running::start_with(
        "admingap",
        &broker,
        &[
            ("cdc.sim.scenario", scenario.as_str()),
            ("cdc.sim.backlog", "true"),
            ("cdc.sim.changes", "0"),
            ("cdc.start.scn", &start.to_string()),
            ("cdc.snapshot.mode", "on_signal"),
        ],
    );
    c.settled(Duration::from_secs(120));
    open_the_gap(&c, purged_scn);
    let gapped = c.stored_offset();
    let captured = captured(&c);
    assert!(captured.len() > 2, "{captured:?}");
    let unlisted: Vec<&String> = captured.iter().filter(|t| *t != "APP.CODES").collect();

    // a captured table not listed: refused, naming each, and nothing changed
    let (code, out, err) = c.admin(&["resnapshot", "--tables", "APP.CODES"], &[]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(err.contains("--skip-gap-for-unlisted-tables"), "{err}");
    assert!(err.contains("sequence 1"), "the gap is named: {err}");
    for table in &unlisted {
        assert!(err.contains(table.as_str()), "{table} named: {err}");
    }
    assert_eq!(c.stored_offset(), gapped, "the offset is unchanged");
    assert_eq!(c.state(), "FAILED");
    assert!(c.offsets_set_events().is_empty());

    // with the flag: moved past the gap, APP.CODES reloaded, the others lose the gap's changes
    let (code, out, err) = c.admin(
        &[
            "resnapshot",
            "--tables",
            "APP.CODES",
            "--skip-gap-for-unlisted-tables",
            "--json",
        ],
        &[],
    );
    assert_eq!(code, 0, "{out}{err}");
    let outcome: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(outcome["outcome"], "accepted", "{outcome}");
    assert_eq!(outcome["completed"], true, "{outcome}");
    let moved = &outcome["moved_past_gap"];
    assert_eq!(moved["previous_resume_scn"], purged_scn.to_string());
    let to: u64 = moved["new_resume_scn"].as_str().unwrap().parse().unwrap();
    assert!(to > firsts[&4], "past the gap: {moved}");
    let named: Vec<&str> = moved["unlisted_tables"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    assert_eq!(named, unlisted, "{moved}");
    assert!(wait_until(Duration::from_secs(30), || c.state() == "RUNNING"));
    let events = c.offsets_set_events();
    let outcomes: Vec<&str> = events.iter().map(|e| e["outcome"].as_str()).collect();
    assert_eq!(outcomes, ["applying", "applied"], "{events:?}");
    assert_eq!(events[1]["command"], "resnapshot");
    assert_eq!(events[1]["direction"], "forward");
    assert!(events[1]["reason"].contains("resnapshot"), "{events:?}");
    assert_eq!(events[1]["new_resume_scn"], to.to_string());
    let codes = database_rows(&c, "APP", "CODES");
    assert_eq!(topic_rows(&c, "APP", "CODES", &codes, LONG), codes);
    let customers = database_rows(&c, "APP", "CUSTOMERS");
    let streamed = topic_rows(&c, "APP", "CUSTOMERS", &customers, Duration::from_secs(10));
    assert!(
        customers.contains_key("2") && !streamed.contains_key("2"),
        "APP.CUSTOMERS was not reloaded: the row inserted in the purged log is missing \
         ({streamed:?})"
    );

    // the gap again, every captured table listed: moved without the flag, and every topic
    // ends with the database's rows
    open_the_gap(&c, purged_scn);
    let (code, out, err) = c.admin(&["resnapshot", "--tables", r"APP\..*"], &[]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("moving the offset to the current SCN"),
        "{out}"
    );
    assert!(out.contains("every captured table is listed"), "{out}");
    assert!(out.contains("signal-ack: accepted"), "{out}");
    assert!(out.contains("snapshot complete"), "{out}");
    assert!(wait_until(Duration::from_secs(30), || c.state() == "RUNNING"));
    for (owner, table) in [("APP", "CODES"), ("APP", "CUSTOMERS")] {
        let want = database_rows(&c, owner, table);
        assert_eq!(
            topic_rows(&c, owner, table, &want, LONG),
            want,
            "{owner}.{table}"
        );
    }
    let events = c.offsets_set_events();
    assert_eq!(events.len(), 4, "{events:?}");
    assert_eq!(events[3]["outcome"], "applied");
    assert_eq!(events[3]["command"], "resnapshot");

    // no gap: the signal as before, the offset not touched
    let before = c.stored_offset()["resume_scn"].clone();
    let (code, out, err) = c.admin(&["resnapshot", "--tables", "APP.CODES"], &[]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(!out.contains("moving the offset"), "{out}");
    assert!(out.contains("snapshot complete"), "{out}");
    assert_eq!(c.offsets_set_events().len(), 4, "no move without a gap");
    let after = c.stored_offset()["resume_scn"].clone();
    assert!(after.as_u64() >= before.as_u64(), "{before} → {after}");
}
