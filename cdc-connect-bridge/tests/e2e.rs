//! The `oracle-cdc` binary end to end: the simulator's workload through the binary into a real
//! Kafka-protocol broker over the network, read back by an independent consumer and checked
//! against the simulator's committed truth — across SIGTERM, `kill -9` and the REST runbook.
//!
//! Needs `CDC_TEST_BROKER` (`eval "$(scripts/tansu.sh start)"`); without it the tests print
//! why and pass, except under CI, where a missing broker is a failure.
//!
//! Tansu does not hide aborted records from read_committed readers. The exactly-once crash
//! test therefore works out which records were in the Kafka transaction left open by each
//! kill (visible read_uncommitted, not read_committed, right after the kill: the killed
//! producer is fenced and its transaction aborted at the restart) and leaves them out, as a
//! read_committed reader of a broker that hides aborted records would.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::e2e_support;

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::time::Duration;

use e2e_support::*;

/// Deterministic pseudo-random delays for the kills.
struct Lcg(u64);

impl Lcg {
    fn next_ms(&mut self, low: u64, high: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        low + (self.0 >> 33) % (high - low)
    }
}

fn delivered_count(setup: &Setup, read_committed: bool) -> usize {
    read_tables(setup, read_committed, Duration::from_millis(800))
        .iter()
        .filter_map(identity)
        .map(|(xid, index, _)| (xid, index))
        .collect::<HashSet<_>>()
        .len()
}

/// Waits (up to a minute) until the table topics grew past `before` records: the run is
/// delivering.
fn wait_for_flow(setup: &Setup, before: i64) -> bool {
    wait_for(Duration::from_secs(60), || {
        watermarks(setup).values().sum::<i64>() > before
    })
}

/// The `startup` events of the ops topic: where each run started.
fn startup_events(setup: &Setup) -> Vec<String> {
    let ops = setup.config().topics.ops;
    let wanted = |t: &str| t == ops;
    let (records, _) = cdc_connect_bridge::kafka::readback::read_until(
        &setup.broker,
        &wanted,
        false,
        Duration::from_secs(10),
        &mut |_| false,
    )
    .unwrap();
    records
        .iter()
        .filter_map(|r| r.value_json())
        .map(|v| v.get("payload").cloned().unwrap_or(v))
        .filter(|p| p["type"] == "startup")
        .map(|p| p["details"]["last_commit"].to_string())
        .collect()
}

/// The end offset of each table partition.
type Ends = HashMap<(String, i32), i64>;

/// How many kills fell while records were still flowing: the run before it wrote records
/// and the topics did not hold everything yet.
fn kills_in_stream(ends: &[Ends], total_records: usize) -> usize {
    let sums: Vec<i64> = ends.iter().map(|e| e.values().sum()).collect();
    let mut previous = 0;
    let mut count = 0;
    for sum in sums {
        if sum > previous && (sum as usize) < total_records {
            count += 1;
        }
        previous = sum;
    }
    count
}

#[test]
fn sigterm_exits_zero_and_a_restart_delivers_nothing_twice() {
    let Some(broker) = broker() else { return };
    let setup = Setup::new("sigterm", &broker, 1500, true);
    // a Kafka Connect JSON body works as the configuration file
    let config_path = setup.write_json();
    let log = setup.dir.path().join("oracle-cdc.log");
    let expected = expected(&setup.expected());
    let total = expected.changes.len();

    let running = Running::start(&config_path, &log);
    let done = wait_for(Duration::from_secs(120), || {
        delivered_count(&setup, true) >= total
    });
    let text = running.log_text();
    assert!(done, "not every change arrived; log:\n{text}");
    // the log goes to a file: text without colours
    assert!(text.contains(" INFO "), "{text}");
    assert!(!text.contains('\u{1b}'), "colours in a log file:\n{text}");
    let status = running.terminate(Duration::from_secs(30));
    assert!(status.success(), "exit status {status}");

    let stored = setup.stored_offset().expect("an offset was committed");
    assert!(stored.position.last_commit.is_some());
    // an exactly-once offset commits with its records: a switch to at-least-once looks for
    // nothing past it (it would find aborted records on a broker that shows them)
    assert_eq!(stored.delivered_window, None);

    // the side topics exist
    let config = setup.config();
    let consumer: rdkafka::consumer::BaseConsumer = rdkafka::ClientConfig::new()
        .set("bootstrap.servers", &broker)
        .create()
        .unwrap();
    use rdkafka::consumer::Consumer;
    let metadata = consumer
        .fetch_metadata(None, Duration::from_secs(10))
        .unwrap();
    let topics: HashSet<&str> = metadata.topics().iter().map(|t| t.name()).collect();
    for side in [
        &config.topics.ops,
        &config.topics.heartbeat,
        &config.topics.signals,
        &config.topics.schema,
        &config.topics.txjournal,
    ] {
        assert!(topics.contains(side.as_str()), "side topic {side} missing");
    }

    // each task start wrote a startup event before its first record
    let ops_topic = config.topics.ops.clone();
    let wanted = |t: &str| t == ops_topic;
    let startups = |records: &[cdc_connect_bridge::kafka::readback::ReadRecord]| {
        records
            .iter()
            .filter_map(|r| r.value_json())
            .map(|v| v.get("payload").cloned().unwrap_or(v))
            .filter(|p| p["type"] == "startup")
            .collect::<Vec<_>>()
    };
    let (ops, _) = cdc_connect_bridge::kafka::readback::read_until(
        &broker,
        &wanted,
        true,
        Duration::from_secs(20),
        &mut |records| !startups(records).is_empty(),
    )
    .unwrap();
    let first = startups(&ops);
    assert_eq!(first.len(), 1, "{first:?}");
    assert_eq!(first[0]["details"]["delivery"], "exactly-once");
    assert_eq!(
        first[0]["details"]["resume_scn"],
        setup.get("cdc.start.scn")
    );

    // the schema topic holds the layout of every table that changed: names and types only
    let schema_topic = config.topics.schema.clone();
    let changed: HashSet<(String, String)> = expected
        .changes
        .values()
        .map(|(_, table, _)| (table.owner.clone(), table.table.clone()))
        .collect();
    let payload = |bytes: &Option<Vec<u8>>| {
        let v: serde_json::Value = serde_json::from_slice(bytes.as_deref()?).ok()?;
        Some(v.get("payload").cloned().unwrap_or(v))
    };
    let layouts_of = |records: &[cdc_connect_bridge::kafka::readback::ReadRecord]| {
        records
            .iter()
            .filter_map(|r| Some((payload(&r.key)?, payload(&r.value)?)))
            .collect::<Vec<_>>()
    };
    let has_all = |records: &[cdc_connect_bridge::kafka::readback::ReadRecord]| {
        let named: HashSet<(String, String)> = layouts_of(records)
            .iter()
            .filter_map(|(k, _)| Some((k["owner"].as_str()?.into(), k["table"].as_str()?.into())))
            .collect();
        changed.is_subset(&named)
    };
    let (schema_records, complete) = cdc_connect_bridge::kafka::readback::read_until(
        &broker,
        &|t: &str| t == schema_topic,
        true,
        Duration::from_secs(20),
        &mut |records| has_all(records),
    )
    .unwrap();
    assert!(complete, "{schema_records:?}");
    for (key, value) in layouts_of(&schema_records) {
        assert_eq!(key["server"], setup.get("cdc.topic.prefix"), "{key}");
        assert_eq!(value["v"], 1, "{value}");
        let first = &value["versions"][0];
        assert_eq!(first["version"], 1, "{value}");
        assert!(
            first["columns"].as_array().is_some_and(|c| !c.is_empty()),
            "{value}"
        );
    }

    // a restart resumes after the committed offset: nothing new, nothing twice
    let running = Running::start(&config_path, &log);
    std::thread::sleep(Duration::from_secs(4));
    let status = running.terminate(Duration::from_secs(30));
    assert!(status.success(), "exit status {status}");
    let records = read_to_end(&setup, true);
    let duplicates = check_complete(&expected, &records);
    assert!(duplicates.is_empty(), "delivered twice: {duplicates:?}");

    // the restart read the schema topic back: each table's versions go on as published
    // (same numbers, same valid_from), kept from the version valid at the resume SCN on
    let latest = |records: &[cdc_connect_bridge::kafka::readback::ReadRecord]| {
        let mut latest = std::collections::BTreeMap::new();
        for (key, value) in layouts_of(records) {
            latest.insert(key.to_string(), value["versions"].clone());
        }
        latest
    };
    let before = latest(&schema_records);
    let (again, _) = cdc_connect_bridge::kafka::readback::read_until(
        &broker,
        &|t: &str| t == schema_topic,
        true,
        Duration::from_secs(20),
        &mut |records| records.len() >= schema_records.len() + before.len(),
    )
    .unwrap();
    assert!(
        again.len() > schema_records.len(),
        "the restart wrote no layouts"
    );
    let after = latest(&again);
    for (table, versions) in &after {
        let (Some(now), Some(then)) = (versions.as_array(), before[table].as_array()) else {
            panic!("{table}: {versions} after {}", before[table]);
        };
        assert_eq!(now.last(), then.last(), "{table}");
        assert!(
            then.ends_with(now),
            "{table}: {versions} after {}",
            before[table]
        );
    }
}

#[test]
fn the_runbook_stop_patch_resume_sequence_works_against_the_binary() {
    let Some(broker) = broker() else { return };
    let setup = Setup::new("runbook", &broker, 800, false);
    let config_path = setup.write();
    let log = setup.dir.path().join("oracle-cdc.log");
    let expected = expected(&setup.expected());
    let total = expected.changes.len();
    let rest = setup.rest();
    let connector = format!("{rest}/connectors/{}", setup.name);

    let running = Running::start(&config_path, &log);
    assert!(
        wait_for(Duration::from_secs(60), || http(
            "GET",
            &format!("{connector}/status"),
            None
        )
        .0 == 200),
        "REST never answered; log:\n{}",
        running.log_text()
    );
    assert!(
        wait_for(Duration::from_secs(120), || delivered_count(&setup, false)
            >= total),
        "not every change arrived; log:\n{}",
        running.log_text()
    );
    // offsets cannot be altered while running
    let (status, body) = http("GET", &format!("{connector}/offsets"), None);
    assert_eq!(status, 200, "{body}");
    let read: serde_json::Value = serde_json::from_str(&body).unwrap();
    let (status, _) = http("PATCH", &format!("{connector}/offsets"), Some(&body));
    assert_eq!(status, 400, "PATCH while RUNNING must be refused");

    // stop, wait until STOPPED
    let (status, _) = http("PUT", &format!("{connector}/stop"), None);
    assert_eq!(status, 204);
    assert!(wait_for(Duration::from_secs(30), || {
        let (_, body) = http("GET", &format!("{connector}/status"), None);
        body.contains("\"STOPPED\"")
    }));
    // mine again from the start and deliver everything again: the runbook's edit
    let mut offset = read["offsets"][0]["offset"].clone();
    let map = offset.as_object_mut().unwrap();
    for field in [
        "resume_rs_id",
        "resume_ssn",
        "last_commit_scn",
        "last_commit_xid",
        "last_commit_thread",
        "last_commit_rs_id",
        "last_commit_ssn",
    ] {
        map.remove(field);
    }
    map.insert(
        "resume_scn".into(),
        serde_json::json!(setup.get("cdc.start.scn").parse::<u64>().unwrap()),
    );
    map.insert("event_index".into(), serde_json::json!(0));
    let patch =
        serde_json::json!({"offsets": [{"partition": {"server": setup.name}, "offset": offset}]});
    let (status, body) = http(
        "PATCH",
        &format!("{connector}/offsets"),
        Some(&patch.to_string()),
    );
    assert_eq!(status, 200, "{body}");
    let (_, body) = http("GET", &format!("{connector}/offsets"), None);
    let now: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        now["offsets"][0]["offset"]["resume_scn"],
        offset["resume_scn"]
    );
    assert!(now["offsets"][0]["offset"].get("last_commit_xid").is_none());

    let (status, _) = http("PUT", &format!("{connector}/resume"), None);
    assert_eq!(status, 202);
    assert!(wait_for(Duration::from_secs(30), || {
        let (_, body) = http("GET", &format!("{connector}/status"), None);
        body.contains("\"RUNNING\"")
    }));
    // every change arrives a second time
    let twice = wait_for(Duration::from_secs(120), || {
        let records = read_tables(&setup, false, Duration::from_millis(800));
        let mut counts: HashMap<(String, u64), usize> = HashMap::new();
        for (xid, index, kind) in records.iter().filter_map(identity) {
            if kind != "tombstone" {
                *counts.entry((xid, index)).or_default() += 1;
            }
        }
        counts.len() >= total && counts.values().all(|n| *n >= 2)
    });
    assert!(twice, "the edit did not deliver everything again");
    let (status, body) = http("GET", &format!("{rest}/metrics"), None);
    assert_eq!(status, 200);
    assert!(body.contains(&format!(
        "oracle_cdc_rows_mined_total{{server=\"{}\"}}",
        setup.name
    )));
    let status = running.terminate(Duration::from_secs(30));
    assert!(status.success());
}

#[test]
fn crash_at_least_once_loses_nothing_and_repeats_only_what_was_not_committed() {
    let Some(broker) = broker() else { return };
    // large enough that 20 runs, each killed shortly after it began delivering, do not
    // exhaust it on a fast machine
    let mut setup = Setup::new("alocrash", &broker, 150_000, false);
    journal_everything(&mut setup);
    let config_path = setup.write();
    let log = setup.dir.path().join("oracle-cdc.log");
    let expected = expected(&setup.expected());
    let order: HashMap<String, usize> = expected
        .changes
        .iter()
        .map(|((xid, _), (order, _, _))| (xid.clone(), *order))
        .collect();
    let mut rng = Lcg(20_261_129);
    let kills = 20;
    // for each run: the offset committed when it was killed and where its records end
    let mut marks: Vec<(Option<cdc_offset::Position>, Ends)> = Vec::new();
    let mut kill_times: Vec<i64> = Vec::new();
    for _ in 0..kills {
        let before: i64 = watermarks(&setup).values().sum();
        let running = Running::start(&config_path, &log);
        wait_for_flow(&setup, before);
        std::thread::sleep(Duration::from_millis(rng.next_ms(0, 400)));
        running.kill9();
        kill_times.push(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_millis() as i64,
        );
        settle(&setup);
        marks.push((setup.offsets(), watermarks(&setup)));
    }
    let running = Running::start(&config_path, &log);
    let total = expected.changes.len();
    assert!(
        wait_while_growing(
            total,
            Duration::from_secs(120),
            Duration::from_secs(1200),
            || delivered_count(&setup, false)
        ),
        "not every change arrived after {kills} kills; log:\n{}",
        running.log_text()
    );
    let status = running.terminate(Duration::from_secs(30));
    assert!(status.success());
    // the clean stop, with nothing in flight, marks its offset with an empty window: the next
    // start looks for nothing in the topics
    let stored = setup.stored_offset().expect("an offset was written");
    assert_eq!(stored.delivered_window, Some(0));

    let records = read_to_end(&setup, false);
    let duplicates = check_complete(&expected, &records);
    let in_stream = kills_in_stream(
        &marks
            .iter()
            .map(|(_, ends)| ends.clone())
            .collect::<Vec<_>>(),
        records.len(),
    );
    assert!(
        in_stream >= kills / 2,
        "only {in_stream} of {kills} kills fell while records were flowing"
    );

    // A record delivered again after kill k must come after the offset committed when the
    // process died: only what Kafka had not acknowledged, or whose offset was not yet
    // written, is repeated.
    let mut seen: HashMap<Identity, (usize, i64)> = HashMap::new();
    let mut repeated = 0usize;
    // per run, the Oracle transactions it delivered again
    let mut repeated_xids: BTreeMap<usize, BTreeSet<String>> = BTreeMap::new();
    // The run that produced a record: its timestamp is the producer's time at send(), on
    // this machine's clock, and a killed run sends nothing more (where a record lands in the
    // log is no guide: the broker may append what a killed process had sent after the
    // kill).
    let run_of = |record: &cdc_connect_bridge::kafka::readback::ReadRecord| {
        let created = record.timestamp.expect("records carry their create time");
        kill_times.iter().filter(|kill| **kill <= created).count()
    };
    let mut by_run: BTreeMap<usize, Vec<&cdc_connect_bridge::kafka::readback::ReadRecord>> =
        BTreeMap::new();
    for record in &records {
        by_run.entry(run_of(record)).or_default().push(record);
    }
    for (run, records) in &by_run {
        for record in records {
            let id = identity(record).unwrap();
            if let Some((first_run, first_offset)) = seen.get(&id).copied() {
                repeated += 1;
                repeated_xids.entry(*run).or_default().insert(id.0.clone());
                assert!(*run > 0, "a duplicate within the first run: {id:?}");
                let committed = marks[run - 1]
                    .0
                    .as_ref()
                    .and_then(|p| p.last_commit.as_ref());
                if let Some(commit) = committed {
                    let acked = order[&commit.xid.to_string()];
                    let this = order[&id.0];
                    if !(this > acked || (this == acked && id.1 >= commit.event_index)) {
                        let startups = startup_events(&setup);
                        panic!(
                            "run {run} repeated {id:?} at {}/{}@{} (first in run {first_run} at \
                             @{first_offset}), which the offset committed \
                             before the kill ({} event_index {}) had already acknowledged; \
                             runs started from: {startups:#?}; ends: {:?}; \
                             record time {:?}, kills at {kill_times:?}",
                            record.topic,
                            record.partition,
                            record.offset,
                            commit.xid,
                            commit.event_index,
                            marks
                                .iter()
                                .map(|(_, e)| e
                                    .get(&(record.topic.clone(), record.partition))
                                    .copied())
                                .collect::<Vec<_>>(),
                            record.timestamp
                        );
                    }
                }
            } else {
                seen.insert(id, (*run, record.offset));
            }
        }
    }
    eprintln!(
        "at-least-once: {kills} kills ({in_stream} while records flowed), {} records, \
         {repeated} repeated ({} identities), Oracle transactions repeated per run: {:?}",
        records.len(),
        duplicates.len(),
        repeated_xids
            .iter()
            .map(|(run, xids)| (*run, xids.len()))
            .collect::<Vec<_>>()
    );
    // at least once (docs/running.md, "Delivery"): after a restart, at most the Oracle transaction
    // that was in flight is delivered again (the restart finds what the killed run had sent in the
    // topics)
    for (run, xids) in &repeated_xids {
        assert!(
            xids.len() <= 1,
            "run {run} delivered {} Oracle transactions again: {xids:?}",
            xids.len()
        );
    }
    // the journal was written across the kills, and holds nothing once every transaction ended
    let (chunks, tombstones) = assert_journal_ended(&setup, 0, "at-least-once");
    eprintln!("journal: {chunks} chunks, {tombstones} tombstones, no live key");
}

#[test]
fn crash_exactly_once_loses_nothing_duplicates_nothing_and_never_shows_an_open_transaction() {
    let Some(tansu) = broker() else { return };
    // A broker that hides aborted records is needed to restart after a kill that left a
    // Kafka transaction open: the restarted task reads its offset read_committed, and an
    // aborted offset record that shows would make it resume after records that were never
    // committed.
    let (broker, hides_aborted) = match std::env::var("CDC_TEST_BOOTSTRAP") {
        Ok(bootstrap) if !bootstrap.is_empty() => (bootstrap, true),
        _ => {
            let hides = hides_aborted_records(&tansu);
            (tansu, hides)
        }
    };
    if !hides_aborted {
        eprintln!(
            "note: {broker} does not hide aborted records from read_committed readers, so the \
             kills with restarts land between Kafka transactions (after PUT /pause) and the one \
             kill with a Kafka transaction open is the last; set CDC_TEST_BOOTSTRAP to an \
             Apache Kafka >= 3.6 broker to restart after random kills too"
        );
    }
    // large enough that the runs before the random kill leave most of it (a run that has
    // caught up delivers thousands of records before its pause takes hold)
    let mut setup = Setup::new("eoscrash", &broker, 100_000, true);
    journal_everything(&mut setup);
    let config_path = setup.write();
    let log = setup.dir.path().join("oracle-cdc.log");
    let expected = expected(&setup.expected());
    let order: HashMap<String, usize> = expected
        .changes
        .iter()
        .map(|((xid, _), (order, _, _))| (xid.clone(), *order))
        .collect();
    let rest = setup.rest();
    let connector = format!("{rest}/connectors/{}", setup.name);
    let mut rng = Lcg(7_000_001);
    let kills = 10;
    // partition offsets of records that were in a Kafka transaction left open by a kill
    let mut aborted: HashSet<(String, i32, i64)> = HashSet::new();
    let mut open_at_kill = 0;
    let mut restarted = true;
    // Where each kill lands: between Kafka transactions (pause — the open one is committed at
    // the next boundary — then kill) or at a random moment while records flow. Without
    // aborted-record hiding, the random kill comes last and is retried (with a restart, safe
    // while nothing was open) until it finds a Kafka transaction open.
    let plan: Vec<bool> = if hides_aborted {
        (0..kills).map(|k| k % 3 == 2).collect()
    } else {
        (0..kills - 1)
            .map(|_| true)
            .chain((0..5).map(|_| false))
            .collect()
    };
    let mut kill = 0;
    // records a read_committed reader saw after the last kill
    let mut committed_so_far = 0;
    for between in plan.iter().copied() {
        let last = !hides_aborted && !between;
        if !hides_aborted && !between && open_at_kill > 0 {
            break;
        }
        // the paused runs stop once half the workload is out, so that it does not run out
        // before the random kills (a fast machine delivers thousands of records per run)
        if between && committed_so_far * 2 >= expected.changes.len() {
            continue;
        }
        kill += 1;
        let before: i64 = watermarks(&setup).values().sum();
        let running = Running::start(&config_path, &log);
        if between {
            assert!(wait_for(Duration::from_secs(30), || {
                http("GET", &format!("{connector}/status"), None)
                    .1
                    .contains("RUNNING")
            }));
            // pause soon after records begin to flow, so the runs before the random kill
            // leave most of the workload to it
            wait_for_flow(&setup, before);
            std::thread::sleep(Duration::from_millis(rng.next_ms(0, 150)));
            assert_eq!(http("PUT", &format!("{connector}/pause"), None).0, 202);
            wait_until_paused(&rest, &setup.name);
        } else {
            assert!(
                wait_for_flow(&setup, before),
                "kill {kill}: no record flowed before the random kill (workload exhausted?)"
            );
            std::thread::sleep(Duration::from_millis(rng.next_ms(50, 400)));
        }
        running.kill9();
        settle(&setup);

        let uncommitted = read_to_end(&setup, false);
        let committed = read_to_end(&setup, true);
        committed_so_far = committed.len();
        let visible: HashSet<(String, i32, i64)> = committed
            .iter()
            .map(|r| (r.topic.clone(), r.partition, r.offset))
            .collect();
        let open: Vec<_> = uncommitted
            .iter()
            .map(|r| (r.topic.clone(), r.partition, r.offset))
            .filter(|key| !visible.contains(key) && !aborted.contains(key))
            .collect();
        eprintln!(
            "kill {kill} ({}): {} committed, {} uncommitted, {} in the open Kafka transaction",
            if between { "paused" } else { "random" },
            committed.len(),
            uncommitted.len(),
            open.len()
        );
        if between {
            assert!(
                open.is_empty(),
                "kill {kill}: a paused connector left {} records in an open Kafka transaction",
                open.len()
            );
        }
        if !open.is_empty() {
            open_at_kill += 1;
        }
        aborted.extend(open);

        // what a read_committed reader sees holds whole Oracle transactions only, and they
        // are the first ones in commit order
        let mut indexes: HashMap<String, HashSet<u64>> = HashMap::new();
        for record in committed
            .iter()
            .filter(|r| !aborted.contains(&(r.topic.clone(), r.partition, r.offset)))
        {
            let (xid, index, _) = identity(record).unwrap();
            indexes.entry(xid).or_default().insert(index);
        }
        for (xid, got) in &indexes {
            let count = expected.counts[xid];
            assert_eq!(
                got.len() as u64,
                count,
                "kill {kill}: a read_committed reader sees {} of the {count} changes of {xid}",
                got.len()
            );
        }
        let highest = indexes.keys().map(|xid| order[xid]).max();
        if let Some(highest) = highest {
            let delivered = indexes.len();
            let before = order.values().filter(|o| **o <= highest).count();
            assert_eq!(
                delivered, before,
                "kill {kill}: the committed transactions are not a prefix of the commit order"
            );
        }
        restarted = !(last && open_at_kill > 0);
    }
    let records: Vec<_> = if restarted || hides_aborted {
        let running = Running::start(&config_path, &log);
        let total = expected.changes.len();
        assert!(
            wait_while_growing(
                total,
                Duration::from_secs(120),
                Duration::from_secs(1200),
                || delivered_count(&setup, true)
            ),
            "not every change arrived after {kill} kills; log:\n{}",
            running.log_text()
        );
        let status = running.terminate(Duration::from_secs(30));
        assert!(status.success());
        let records: Vec<_> = read_to_end(&setup, false)
            .into_iter()
            .filter(|r| !aborted.contains(&(r.topic.clone(), r.partition, r.offset)))
            .collect();
        let duplicates = check_complete(&expected, &records);
        assert!(
            duplicates.is_empty(),
            "exactly-once delivered {} identities twice, e.g. {:?}",
            duplicates.len(),
            duplicates.iter().next()
        );
        records
    } else {
        // no restart after the last kill (see above): the committed output so far is whole,
        // a prefix (checked above), and has no duplicate
        let records: Vec<_> = read_to_end(&setup, false)
            .into_iter()
            .filter(|r| !aborted.contains(&(r.topic.clone(), r.partition, r.offset)))
            .collect();
        let mut seen = HashSet::new();
        for record in &records {
            let id = identity(record).unwrap();
            assert!(seen.insert(id.clone()), "delivered twice: {id:?}");
        }
        records
    };
    eprintln!(
        "exactly-once: {kill} kills ({open_at_kill} with a Kafka transaction open), {} records, \
         {} records of open Kafka transactions left out, no duplicate",
        records.len(),
        aborted.len()
    );
    assert!(open_at_kill >= 1, "no kill found a Kafka transaction open");
    // the journal was written across the kills (counted with the records of open Kafka
    // transactions: on a broker that does not end them, a read_committed reader stops at the
    // first one the last kill left open)
    let (chunks, tombstones) = journal_written(&setup);
    eprintln!("journal: {chunks} chunks, {tombstones} tombstones written");
    assert!(
        chunks > 0 && tombstones > 0,
        "{chunks} chunks, {tombstones} tombstones"
    );
    // after a last run, a compacted journal holds nothing: every transaction ended
    if hides_aborted && restarted {
        let (_, _, live) = journal(&setup);
        assert!(
            live.is_empty(),
            "live journal keys after the last run: {live:?}"
        );
    }
}

/// The two windows of the journal that random kills rarely hit, hit on purpose (the binary's
/// crash points, `CDC_TEST_CRASH_AT`): the process dies after the broker acknowledged a chunk
/// and before that counted, and after a commit's last record (and, at least once, its offset)
/// and before the tombstones of its chunks. Each is hit twice, at different chunks and
/// commits; a last run then delivers every committed change, and the journal holds no live
/// key at the end.
fn targeted_journal_crashes(exactly_once: bool, broker: &str) {
    let label = if exactly_once { "eos" } else { "alo" };
    let mut setup = Setup::new(&format!("jcrash{label}"), broker, 6_000, exactly_once);
    journal_everything(&mut setup);
    let config_path = setup.write();
    let log = setup.dir.path().join("oracle-cdc.log");
    let expected = expected(&setup.expected());
    for crash_at in [
        "journal-chunk-acked:3",
        "journal-commit-tombstones:2",
        "journal-chunk-acked:40",
        "journal-commit-tombstones:25",
    ] {
        let running =
            Running::start_with(&config_path, &log, &[], &[("CDC_TEST_CRASH_AT", crash_at)]);
        let status = running.wait_exit(Duration::from_secs(120));
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        let point = crash_at.split(':').next().unwrap();
        assert!(
            !status.success() && text.contains(&format!("crashing at {point}")),
            "{label}: {crash_at} was not reached ({status}); log:\n{text}"
        );
        settle(&setup);
    }
    let running = Running::start(&config_path, &log);
    assert!(
        wait_for(Duration::from_secs(300), || all_arrived(
            &setup,
            &expected,
            exactly_once
        )),
        "{label}: not every change arrived after the crashes; log:\n{}",
        running.log_text()
    );
    let status = running.terminate(Duration::from_secs(30));
    assert!(status.success());
    let records = read_to_end(&setup, exactly_once);
    let duplicates = check_complete(&expected, &records);
    if exactly_once {
        assert!(duplicates.is_empty(), "duplicated: {duplicates:?}");
    }
    let (chunks, tombstones) = assert_journal_ended(&setup, 40, label);
    eprintln!(
        "{label}: 4 targeted crashes, {} records ({} identities repeated), journal: {chunks} \
         chunks, {tombstones} tombstones",
        records.len(),
        duplicates.len()
    );
}

#[test]
fn targeted_crashes_in_the_journal_windows_lose_nothing_at_least_once() {
    let Some(broker) = broker() else { return };
    targeted_journal_crashes(false, &broker);
}

#[test]
fn targeted_crashes_in_the_journal_windows_lose_and_duplicate_nothing_exactly_once() {
    let Some(tansu) = broker() else { return };
    // each crash leaves a Kafka transaction open, which the restart's read_committed reads
    // must not show
    let broker = match std::env::var("CDC_TEST_BOOTSTRAP") {
        Ok(bootstrap) if !bootstrap.is_empty() => bootstrap,
        _ if hides_aborted_records(&tansu) => tansu,
        _ => {
            eprintln!(
                "skipped: {tansu} does not hide aborted records from read_committed readers, \
                 and every crash here leaves a Kafka transaction open; set CDC_TEST_BOOTSTRAP \
                 to an Apache Kafka >= 3.6 broker to run it"
            );
            return;
        }
    };
    targeted_journal_crashes(true, &broker);
}

#[test]
fn exactly_once_splits_large_transactions_and_restarts_inside_them_without_duplicates() {
    let Some(broker) = broker() else { return };
    let mut setup = Setup::new("split", &broker, 3000, true);
    // every Oracle transaction of more than 2 changes is split, 2 changes per Kafka transaction
    setup.set("cdc.eos.split.max.records", "2");
    let config_path = setup.write();
    let log = setup.dir.path().join("oracle-cdc.log");
    let expected = expected(&setup.expected());
    let total = expected.changes.len();
    let mut rng = Lcg(424_242);
    // SIGTERM at random moments: the task stops at an Oracle commit or between two parts
    // of a split transaction, and the next run resumes inside it
    let mut inside = 0;
    for _ in 0..6 {
        let running = Running::start(&config_path, &log);
        std::thread::sleep(Duration::from_millis(rng.next_ms(1500, 3000)));
        let status = running.terminate(Duration::from_secs(30));
        assert!(status.success(), "exit status {status}");
        if let Some(commit) = setup.offsets().and_then(|p| p.last_commit) {
            let count = expected.counts[&commit.xid.to_string()];
            if commit.event_index < count {
                inside += 1;
            }
        }
    }
    eprintln!("split: {inside} of 6 stops committed an offset inside a split transaction");
    let running = Running::start(&config_path, &log);
    assert!(
        wait_for(Duration::from_secs(120), || delivered_count(&setup, true)
            >= total),
        "not every change arrived; log:\n{}",
        running.log_text()
    );
    let status = running.terminate(Duration::from_secs(30));
    assert!(status.success());

    let records = read_to_end(&setup, true);
    let duplicates = check_complete(&expected, &records);
    assert!(duplicates.is_empty(), "delivered twice: {duplicates:?}");
    let mut split_xids = HashSet::new();
    for record in &records {
        let (xid, _, _) = identity(record).unwrap();
        let split = record.header("cdc.split") == Some("true");
        assert_eq!(
            split,
            expected.counts[&xid] > 2,
            "{xid} ({} changes): cdc.split={:?}",
            expected.counts[&xid],
            record.header("cdc.split")
        );
        if split {
            split_xids.insert(xid);
        }
    }
    assert!(
        !split_xids.is_empty(),
        "the workload has no transaction to split"
    );
    // a transaction-split event names each split transaction
    let config = setup.config();
    let ops_topic = config.topics.ops.clone();
    let wanted = |t: &str| t == ops_topic;
    let (ops, _) = cdc_connect_bridge::kafka::readback::read_until(
        &broker,
        &wanted,
        true,
        Duration::from_secs(30),
        &mut |records| {
            let named: HashSet<String> = records
                .iter()
                .filter_map(|r| r.value_json())
                .filter_map(|v| {
                    let payload = v.get("payload").cloned().unwrap_or(v);
                    (payload["type"] == "transaction-split")
                        .then(|| payload["details"]["xid"].as_str().map(str::to_owned))
                        .flatten()
                })
                .collect();
            split_xids.iter().all(|x| named.contains(x))
        },
    )
    .unwrap();
    let events: Vec<serde_json::Value> = ops
        .iter()
        .filter_map(|r| r.value_json())
        .map(|v| v.get("payload").cloned().unwrap_or(v))
        .filter(|p| p["type"] == "transaction-split")
        .collect();
    for xid in &split_xids {
        let event = events
            .iter()
            .find(|e| e["details"]["xid"] == xid.as_str())
            .unwrap_or_else(|| panic!("no transaction-split event for {xid}"));
        let count = expected.counts[xid];
        assert_eq!(event["details"]["events"], count.to_string());
        let parts: u64 = event["details"]["kafka_transactions"]
            .as_str()
            .unwrap()
            .parse()
            .unwrap();
        // parts of 2 changes; fewer when a restart inside the transaction resumed it
        assert!(
            parts >= 1 && parts <= count.div_ceil(2),
            "{xid}: {parts} parts"
        );
    }
}

#[test]
fn help_explains_the_commands_and_a_bad_configuration_names_its_keys() {
    let help = std::process::Command::new(env!("CARGO_BIN_EXE_oracle-cdc"))
        .arg("--help")
        .output()
        .unwrap();
    assert!(help.status.success());
    let text = String::from_utf8_lossy(&help.stdout);
    for word in ["run", "demo", "exactly once"] {
        assert!(text.contains(word), "--help lacks {word:?}:\n{text}");
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.properties");
    std::fs::write(
        &path,
        "name=bad\ncdc.source=sim\ncdc.eos.batch.max.records=-4\ncdc.heartbeat.intervall.ms=5\n",
    )
    .unwrap();
    let (code, text) = run_to_exit(&[], &path);
    assert_eq!(code, Some(64));
    assert!(text.contains("cdc.eos.batch.max.records"), "{text}");
    assert!(text.contains("cdc.heartbeat.interval.ms"), "{text}");

    // no brokers is a configuration problem too, found before anything starts
    std::fs::write(
        &path,
        "name=nobroker\ncdc.source=sim\ncdc.topic.prefix=nb\ncdc.tables.include=APP\\..*\n",
    )
    .unwrap();
    let (code, text) = run_to_exit(&[], &path);
    assert_eq!(code, Some(64), "{text}");
    assert!(
        text.contains(
            "bootstrap.servers: required (the Kafka brokers to deliver to) unless \
             cdc.kafka.bootstrap.servers is set"
        ),
        "{text}"
    );
    // reported with the other problems, not after them
    std::fs::write(
        &path,
        "name=nobroker\ncdc.source=sim\ncdc.tables.include=APP\\..*\n",
    )
    .unwrap();
    let (code, text) = run_to_exit(&[], &path);
    assert_eq!(code, Some(64), "{text}");
    assert!(text.contains("2 configuration problems"), "{text}");
    assert!(text.contains("cdc.topic.prefix: required"), "{text}");
    assert!(text.contains("bootstrap.servers: required"), "{text}");
}

#[test]
fn the_demo_delivers_every_committed_change_into_the_mock_cluster() {
    for mode in [None, Some("--at-least-once")] {
        let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_oracle-cdc"));
        command.args(["demo", "--changes", "600", "--seed", "7"]);
        if let Some(flag) = mode {
            command.arg(flag);
        }
        let out = command.output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{mode:?}: {text}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let line = text
            .lines()
            .find(|l| l.starts_with("delivered "))
            .unwrap_or_else(|| panic!("no summary line:\n{text}"));
        let words: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(words[1], words[3], "{line}");
        assert!(words[1].parse::<u64>().unwrap() > 0, "{line}");
        assert!(text.contains("records by op"), "{text}");
    }
}

/// The default build mines Oracle: `cdc.source=oracle` gets as far as connecting, and a
/// machine without Oracle Instant Client (like CI's) stops the task with CDC-1001 naming
/// DPI-1047 and how to install the client, its operator action and runbook, not with a
/// string and no code. A machine with the client reaches the listener port, where nothing
/// listens: still a coded stop.
#[test]
fn the_oracle_source_is_built_and_a_missing_client_is_cdc_1001_with_the_install_hint() {
    let Some(broker) = broker() else {
        return;
    };
    let mut setup = Setup::new("oracle-source", &broker, 10, false);
    for (key, value) in [
        ("cdc.source", "oracle"),
        ("cdc.database.host", "127.0.0.1"),
        ("cdc.database.port", "1"),
        ("cdc.database.service", "FREEPDB1"),
        ("cdc.database.user", "c##cdc"),
        ("cdc.database.password", "not-a-real-password"),
        // reserved: accepted, and warned about at start
        ("cdc.database.fan.enabled", "true"),
    ] {
        setup.set(key, value);
    }
    let (code, log) = run_to_exit(
        &["--exit-on-failure", "--log-format", "json"],
        &setup.write(),
    );
    assert_eq!(code, Some(1), "{log}");
    // `--log-format json`: every line one JSON object, the exit reason among them, no colours
    for line in log.lines() {
        let record: serde_json::Value = serde_json::from_str(line)
            .unwrap_or_else(|e| panic!("not a JSON log line ({e}): {line}"));
        assert!(record.get("level").is_some(), "{line}");
    }
    assert!(
        !log.contains('\u{1b}'),
        "colours in a log that is not a terminal:\n{log}"
    );
    assert!(!log.contains("built without"), "{log}");
    // warned at start: the reserved key
    assert!(
        log.lines().any(|line| line.contains("\"WARN\"")
            && line.contains("cdc.database.fan.enabled")
            && line.contains("reserved")),
        "no start warning for cdc.database.fan.enabled:\n{log}"
    );
    assert!(
        !log.contains("not-a-real-password"),
        "the password was logged:\n{log}"
    );
    if log.contains("DPI-1047") {
        for part in [
            "[CDC-1001] connecting to Oracle failed: DPI-1047",
            "Instant Client",
            "Operator action:",
            "Runbook: docs/runbooks.md#cdc-1001",
        ] {
            assert!(log.contains(part), "{part:?} missing:\n{log}");
        }
    } else {
        eprintln!("Oracle Instant Client is installed here: the connection itself failed");
        assert!(log.contains("[CDC-"), "no CDC code:\n{log}");
    }
}

/// The simulator's normal live workload, the one a new user runs (6 000 changes with its
/// ALTERs of APP.CUSTOMERS), over 20 seeds through the binary into the broker: the task stays
/// RUNNING and the table topics hold every committed change, rows older than ALTERs included,
/// and nothing the database did not commit. Then the same for the backlog workload: the whole
/// workload, its ALTERs and the build it starts with, ran before the connector starts at its
/// first SCN; rows older than an ALTER are replayed from that build. One test, so that its
/// forty runs of the binary do not run beside each other.
#[test]
fn the_live_and_backlog_workloads_run_through_their_alters_over_20_seeds_into_the_broker() {
    workload_runs_through_its_alters_over_20_seeds(false, 6000);
    workload_runs_through_its_alters_over_20_seeds(true, 6000);
}

fn workload_runs_through_its_alters_over_20_seeds(backlog: bool, changes: u64) {
    let Some(broker) = broker() else { return };
    let (mut altered_seeds, mut replayed_seeds) = (0, 0);
    for seed in 1..=20 {
        let name = format!("alters-{}-{seed}", if backlog { "backlog" } else { "live" });
        let mut setup = Setup::new(&name, &broker, changes, false);
        setup.set("cdc.sim.seed", &seed.to_string());
        setup.set("cdc.sim.backlog", &backlog.to_string());
        let initial = cdc_logminer::source::configured::sim_initial_scn(&setup.config()).unwrap();
        setup.set("cdc.start.scn", &initial.0.to_string());
        let truth = setup.expected();
        let expected = expected(&truth);
        let config_path = setup.write();
        let log = setup.dir.path().join("oracle-cdc.log");
        let running = Running::start(&config_path, &log);
        let arrived = wait_for(Duration::from_secs(180), || {
            all_arrived(&setup, &expected, false)
        });
        let state = connector_state(&setup);
        let text = running.log_text();
        let _ = running.terminate(Duration::from_secs(30));
        assert!(
            arrived,
            "seed {seed}: not every change arrived; log:\n{text}"
        );
        assert_eq!(state, "RUNNING", "seed {seed}; log:\n{text}");
        // read as the wait did: a listing of all topics may leave one out on Tansu
        check_complete(
            &expected,
            &read_tables(&setup, false, Duration::from_secs(1)),
        );
        // the whole ops topic (the helper stops at the first event of a kind)
        let ops_topic = setup.config().topics.ops;
        let (ops, _) = cdc_connect_bridge::kafka::readback::read_until(
            &broker,
            &|t: &str| t == ops_topic,
            false,
            Duration::from_secs(3),
            &mut |_| false,
        )
        .unwrap();
        let events: Vec<serde_json::Value> = ops
            .iter()
            .filter_map(|r| r.value_json())
            .map(|v| v.get("payload").cloned().unwrap_or(v))
            .collect();
        altered_seeds += usize::from(
            events
                .iter()
                .any(|e| e["type"] == "ddl-applied" && e["details"]["object"] == "CUSTOMERS"),
        );
        replayed_seeds += usize::from(events.iter().any(|e| e["type"] == "dictionary-replay"));
    }
    eprintln!(
        "{altered_seeds} seeds made a new version of APP.CUSTOMERS, {replayed_seeds} replayed"
    );
    if backlog {
        // read from its first SCN, a backlog knows only the newest layout: the rows before
        // its ALTERs are replayed (and an ALTER whose column the newest layout already has
        // makes no new version)
        assert!(
            replayed_seeds >= 10,
            "only {replayed_seeds} backlogs were replayed"
        );
    } else {
        assert!(
            altered_seeds >= 10,
            "only {altered_seeds} seeds altered APP.CUSTOMERS"
        );
    }
}
