//! Every stop of the `oracle-cdc` binary carries a CDC code, its operator action and runbook,
//! and a `stop` event on the ops topic when Kafka can take one; a Kafka cluster that does not
//! answer is retried within `cdc.retry.max.time.ms`, not a failure after one timeout; and a
//! stop request is honoured whatever the task is waiting on.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::time::{Duration, Instant};

use crate::e2e_support::*;

/// A port on this machine where nothing listens.
fn closed_port() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap().to_string();
    drop(listener);
    address
}

/// No broker listens at `bootstrap.servers`: the task start finds it out within seconds
/// (CDC-9001, retried), starts again after a backoff while the budget lasts, and then stops
/// with CDC-9001 saying how long it retried, its operator action and runbook. No stop event
/// is attempted on a cluster that cannot be reached.
#[test]
fn an_unreachable_broker_is_retried_within_the_budget_then_a_coded_stop() {
    let mut setup = Setup::new("unreachable", &closed_port(), 10, false);
    setup.set("cdc.retry.max.time.ms", "1000");
    let started = Instant::now();
    let (code, log) = run_to_exit(&["--exit-on-failure"], &setup.write());
    let took = started.elapsed();
    assert_eq!(code, Some(1), "{log}");
    // one retry: the budget (1 s) is spent by the second attempt's wait
    let retries = log.matches("it starts again").count();
    assert_eq!(retries, 1, "{log}");
    for part in [
        "[CDC-9001] no Kafka broker of",
        "(retried for 1 s, cdc.retry.max.time.ms)",
        "Operator action: Bring the brokers",
        "Runbook: docs/runbooks.md#cdc-9001",
        "the stop event is not written to the ops topic",
    ] {
        assert!(log.contains(part), "{part:?} missing:\n{log}");
    }
    // two waits of 10 s and a backoff of about 1 s, not librdkafka's minute-long timeouts
    assert!(took < Duration::from_secs(40), "took {took:?}:\n{log}");
}

/// A task that FAILED once its retry budget was spent gets a new budget when the operator
/// restarts it (`POST /restart`): it is retried again, not failed at its first error.
#[test]
fn a_restart_after_the_budget_was_spent_retries_again() {
    let mut setup = Setup::new("unreachable-restart", &closed_port(), 10, false);
    setup.set("cdc.retry.max.time.ms", "1000");
    let log = setup.dir.path().join("run.log");
    let run = Running::start(&setup.write(), &log);
    assert!(
        wait_for(Duration::from_secs(40), || connector_state(&setup)
            == "FAILED"),
        "{}",
        run.log_text()
    );
    assert_eq!(run.log_text().matches("it starts again").count(), 1);
    let (code, body) = http(
        "POST",
        &format!("{}/connectors/{}/restart", setup.rest(), setup.name),
        None,
    );
    assert!(code == 202 || code == 204, "{code} {body}");
    assert!(
        wait_for(Duration::from_secs(20), || run
            .log_text()
            .matches("it starts again")
            .count()
            == 2),
        "not retried after the restart:\n{}",
        run.log_text()
    );
    let status = run.terminate(Duration::from_secs(10));
    assert!(status.success(), "exit status {status}");
}

/// SIGTERM while the task waits for a broker that does not answer: the process exits 0
/// within `cdc.shutdown.timeout.ms`, not once the wait is over.
#[test]
fn sigterm_while_waiting_for_an_unreachable_broker_exits_within_the_shutdown_timeout() {
    let mut setup = Setup::new("unreachable-stop", &closed_port(), 10, false);
    setup.set("cdc.shutdown.timeout.ms", "3000");
    let log = setup.dir.path().join("run.log");
    let run = Running::start(&setup.write(), &log);
    assert!(
        wait_for(Duration::from_secs(20), || run
            .log_text()
            .contains("oracle-cdc starting")),
        "{}",
        run.log_text()
    );
    std::thread::sleep(Duration::from_millis(1500));
    let started = Instant::now();
    let status = run.terminate(Duration::from_secs(10));
    let took = started.elapsed();
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    assert_eq!(status.code(), Some(0), "{text}");
    assert!(took < Duration::from_secs(3), "took {took:?}:\n{text}");
}

/// The stop the issue found without a code: a table without a key while
/// `cdc.key.missing=fail` is CDC-3001 with its operator action and runbook, in the exit
/// message and in a `stop` event on the ops topic.
#[test]
fn a_table_without_a_key_is_cdc_3001_with_a_stop_event() {
    let Some(broker) = broker() else {
        return;
    };
    let mut setup = Setup::new("no-key", &broker, 200, false);
    setup.set("cdc.key.missing", "fail");
    let (code, log) = run_to_exit(&["--exit-on-failure"], &setup.write());
    assert_eq!(code, Some(1), "{log}");
    for part in [
        "[CDC-3001] table ",
        "has no primary key",
        "Runbook: docs/runbooks.md#cdc-3001",
    ] {
        assert!(log.contains(part), "{part:?} missing:\n{log}");
    }
    let stops = ops_events(&setup, "stop", false, Duration::from_secs(10));
    assert_eq!(stops.len(), 1, "{stops:?}");
    let details = &stops[0]["details"];
    assert_eq!(details["code"], "CDC-3001", "{details}");
    assert_eq!(details["runbook"], "docs/runbooks.md#cdc-3001", "{details}");
    assert_eq!(
        details["operator_action"],
        cdc_core::CdcCode::Decode.operator_action(),
        "{details}"
    );
    assert!(
        details["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("[CDC-3001] table ")),
        "{details}"
    );
}

/// `PUT /stop` while a mining step is in progress (a LogMiner query that takes 8 s): the
/// connector is STOPPED within `cdc.shutdown.timeout.ms`, not once the query returns; a resume
/// waits for that step to end, then delivers everything, nothing lost.
#[test]
fn a_stop_during_a_slow_mining_step_is_honoured_within_the_shutdown_timeout() {
    let Some(broker) = broker() else {
        return;
    };
    let mut setup = Setup::new("slow-step", &broker, 10, false);
    let scenario = setup.dir.path().join("slow-step.json");
    std::fs::write(
        &scenario,
        r#"{"name": "slow-step", "events": [
          {"event": "fault", "fault": {"kind": "slow_query", "millis": 8000}},
          {"event": "insert", "session": "s1", "table": "APP.CUSTOMERS", "values": {"ID": 1, "NAME": "a"}},
          {"event": "commit", "session": "s1"},
          {"event": "insert", "session": "s1", "table": "APP.CUSTOMERS", "values": {"ID": 2, "NAME": "b"}},
          {"event": "commit", "session": "s1"}
        ]}"#,
    )
    .unwrap();
    setup.set("cdc.sim.scenario", scenario.to_str().unwrap());
    setup.set("cdc.shutdown.timeout.ms", "2000");
    let initial = cdc_logminer::source::configured::sim_initial_scn(&setup.config()).unwrap();
    setup.set("cdc.start.scn", &initial.0.to_string());
    let log = setup.dir.path().join("run.log");
    let run = Running::start(&setup.write(), &log);
    assert!(
        wait_for(Duration::from_secs(20), || run
            .log_text()
            .contains("task starting")),
        "{}",
        run.log_text()
    );
    // the step is in its query now
    std::thread::sleep(Duration::from_secs(3));
    let asked = Instant::now();
    lifecycle(&setup, "stop");
    assert!(
        wait_for(Duration::from_secs(15), || connector_state(&setup)
            == "STOPPED"),
        "{}",
        run.log_text()
    );
    let took = asked.elapsed();
    assert!(
        took < Duration::from_millis(3000),
        "STOPPED after {took:?}:\n{}",
        run.log_text()
    );
    assert!(
        run.log_text().contains("a mining step was still running"),
        "the step was not in progress, so this test showed nothing:\n{}",
        run.log_text()
    );
    lifecycle(&setup, "resume");
    let both = wait_for(Duration::from_secs(60), || {
        read_tables(&setup, false, Duration::from_millis(500))
            .iter()
            .filter(|r| r.topic.ends_with(".APP.CUSTOMERS") && r.value.is_some())
            .count()
            >= 2
    });
    let text = run.log_text();
    assert!(both, "not both changes arrived:\n{text}");
    assert!(
        text.contains("waiting for the mining step of the previous task"),
        "{text}"
    );
    let status = run.terminate(Duration::from_secs(10));
    assert!(status.success(), "exit status {status}");
}

/// The broker stops answering while the task delivers (frozen for 15 s): the producer's
/// records time out (CDC-9001), the task is started again with backoff while the connector
/// stays RUNNING, and once the broker answers again every committed change arrives: a broker
/// lost mid-run is retried, not a failure after one timeout.
#[test]
fn a_broker_lost_mid_run_is_retried_and_nothing_is_lost() {
    if broker().is_none() {
        return;
    }
    let Some(own) = OwnBroker::start() else {
        return;
    };
    let mut setup = Setup::new("broker-lost", &own.address, 1500, false);
    // librdkafka gives up on a record after 5 minutes unless told otherwise
    setup.set("cdc.kafka.message.timeout.ms", "3000");
    let expected = expected(&setup.expected());
    let log = setup.dir.path().join("run.log");
    let run = Running::start(&setup.write(), &log);
    assert!(
        wait_for_first_records(&setup, false),
        "nothing delivered:\n{}",
        run.log_text()
    );
    own.signal("-STOP");
    std::thread::sleep(Duration::from_secs(15));
    own.signal("-CONT");
    assert!(
        wait_for(Duration::from_secs(120), || all_arrived(
            &setup, &expected, false
        )),
        "not every change arrived:\n{}",
        run.log_text()
    );
    let text = run.log_text();
    assert!(text.contains("[CDC-9001]"), "{text}");
    assert!(text.contains("it starts again"), "{text}");
    assert!(!text.contains("the task failed"), "{text}");
    check_complete(
        &expected,
        &read_tables(&setup, false, Duration::from_millis(500)),
    );
    assert_eq!(connector_state(&setup), "RUNNING");
    let status = run.terminate(Duration::from_secs(30));
    assert!(status.success(), "exit status {status}");
}

/// `PUT /stop` while the task waits on the broker (frozen under exactly-once delivery: the
/// Kafka transaction's commit waits up to its own 30 s timeout): STOPPED within
/// `cdc.shutdown.timeout.ms`; once the broker answers again, a resume delivers every change.
#[test]
fn a_stop_while_the_broker_does_not_answer_is_honoured_within_the_shutdown_timeout() {
    if broker().is_none() {
        return;
    }
    let Some(own) = OwnBroker::start() else {
        return;
    };
    let mut setup = Setup::new("stop-frozen", &own.address, 1500, true);
    setup.set("cdc.shutdown.timeout.ms", "2000");
    let expected = expected(&setup.expected());
    let log = setup.dir.path().join("run.log");
    let run = Running::start(&setup.write(), &log);
    assert!(
        wait_for_first_records(&setup, true),
        "nothing delivered:\n{}",
        run.log_text()
    );
    own.signal("-STOP");
    // a heartbeat a second keeps a Kafka transaction to commit at hand
    std::thread::sleep(Duration::from_millis(2500));
    let asked = Instant::now();
    lifecycle(&setup, "stop");
    assert!(
        wait_for(Duration::from_secs(40), || connector_state(&setup)
            == "STOPPED"),
        "{}",
        run.log_text()
    );
    let took = asked.elapsed();
    own.signal("-CONT");
    assert!(
        took < Duration::from_millis(3500),
        "STOPPED after {took:?}:\n{}",
        run.log_text()
    );
    lifecycle(&setup, "resume");
    assert!(
        wait_for(Duration::from_secs(120), || all_arrived(
            &setup, &expected, true
        )),
        "not every change arrived:\n{}",
        run.log_text()
    );
    let status = run.terminate(Duration::from_secs(30));
    assert!(status.success(), "exit status {status}");
}
