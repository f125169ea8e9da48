//! `oracle-cdc-admin offsets` against a running connector on the simulator and the test
//! broker.

use std::process::Command;
use std::time::Duration;

use serde_json::Value;

use crate::support::{Running, broker, wait_until};

/// show; set backward with --redeliver (every record again); an SCN above the current one
/// refused; forward refused without --allow-skip; a failure between stop and PATCH leaves
/// the old offset and a STOPPED connector; forward applied with --allow-skip.
#[test]
fn offsets_show_and_set_move_a_running_connector() {
    let Some(broker) = broker() else {
        return;
    };
    let c = Running::start("adminoffsets", &broker);
    let start = c.config.capture.start_scn.expect("a start SCN").0;
    let delivered = c.settled(Duration::from_secs(120));
    // show: the stored position in words and as JSON
    let (code, out, err) = c.admin(&["offsets", "show", "--json"], &[]);
    assert_eq!(code, 0, "{err}");
    let shown: Value = serde_json::from_str(&out).expect("JSON");
    let stored = c.resume_scn();
    let end = shown["resume_scn"]
        .as_str()
        .and_then(|s| s.parse::<u64>().ok())
        .expect("resume_scn");
    assert!(end >= start && end <= stored, "{end} vs stored {stored}");
    assert!(shown["last_commit"]["xid"].is_string(), "{shown}");
    let (code, text, _) = c.admin(&["offsets", "show", "--check-redo"], &[]);
    assert_eq!(code, 0);
    assert!(
        text.contains("resume point") && text.contains("available"),
        "{text}"
    );

    // an SCN the database has not reached
    let (code, _, err) = c.admin(
        &[
            "offsets",
            "set",
            "--scn",
            "999999999999",
            "--reason",
            "test",
        ],
        &[],
    );
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("above the database's current SCN"), "{err}");
    assert_eq!(
        c.state(),
        "RUNNING",
        "a refused set never stops the connector"
    );

    // backward, delivering the acknowledged transactions again
    let scn = start.to_string();
    let (code, out, err) = c.admin(
        &[
            "offsets",
            "set",
            "--scn",
            &scn,
            "--reason",
            "replay",
            "--redeliver",
        ],
        &[],
    );
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("backward"), "{out}");
    assert!(wait_until(Duration::from_secs(30), || c.state() == "RUNNING"));
    let again = c.settled(Duration::from_secs(120));
    assert_eq!(again, 2 * delivered, "every record delivered once more");
    let events = c.offsets_set_events();
    let outcomes: Vec<&str> = events.iter().map(|e| e["outcome"].as_str()).collect();
    assert_eq!(outcomes, ["applying", "applied"], "{events:?}");
    assert_eq!(events[1]["direction"], "backward");
    assert_eq!(events[1]["new_resume_scn"], scn);
    assert_eq!(events[1]["reason"], "replay");

    // put the connector back at the start, stopped, as the runbook's PATCH does
    let (status, _) = c.http("PUT", &format!("/connectors/{}/stop", c.name), None);
    assert!(status < 300);
    assert!(wait_until(Duration::from_secs(60), || c.state() == "STOPPED"));
    let (_, body) = c.http("GET", &format!("/connectors/{}/offsets", c.name), None);
    let mut body = body;
    body["offsets"][0]["offset"]["resume_scn"] = Value::from(start);
    if let Some(offset) = body["offsets"][0]["offset"].as_object_mut() {
        offset.remove("resume_rs_id");
        offset.remove("resume_ssn");
    }
    let (status, _) = c.http(
        "PATCH",
        &format!("/connectors/{}/offsets", c.name),
        Some(&body.to_string()),
    );
    assert!(status < 300, "PATCH {status}");
    assert_eq!(c.resume_scn(), start);

    // forward needs --allow-skip
    let mid = (start + end) / 2;
    let target = mid.to_string();
    let (code, _, err) = c.admin(
        &["offsets", "set", "--scn", &target, "--reason", "skip"],
        &[],
    );
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("--allow-skip"), "{err}");
    assert_eq!(c.resume_scn(), start, "nothing changed");

    // a failure between the stop and the PATCH: the old offset, the connector stopped
    let (code, _, err) = c.admin(
        &[
            "offsets",
            "set",
            "--scn",
            &target,
            "--reason",
            "skip",
            "--allow-skip",
        ],
        &[("ORACLE_CDC_ADMIN_FAIL_AT", "before-patch")],
    );
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("STOPPED with its previous offset"), "{err}");
    assert_eq!(c.state(), "STOPPED");
    assert_eq!(c.resume_scn(), start);
    let events = c.offsets_set_events();
    assert_eq!(events.last().map(|e| e["outcome"].as_str()), Some("failed"));

    // forward, deliberately
    let (code, out, err) = c.admin(
        &[
            "offsets",
            "set",
            "--scn",
            &target,
            "--reason",
            "skip",
            "--allow-skip",
        ],
        &[],
    );
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("will not be delivered"), "{out}");
    assert!(out.contains("APP."), "the skipped tables are named: {out}");
    assert!(wait_until(Duration::from_secs(30), || c.state() == "RUNNING"));
    assert!(c.resume_scn() >= mid);
    let events = c.offsets_set_events();
    let last = events.last().expect("events");
    assert_eq!(last["outcome"], "applied");
    assert_eq!(last["direction"], "forward");
    assert_eq!(last["previous_resume_scn"], start.to_string());
}

/// Usage errors exit 64; `--help` names every command.
#[test]
fn usage_errors_exit_64() {
    let run = |args: &[&str]| {
        let output = Command::new(env!("CARGO_BIN_EXE_oracle-cdc-admin"))
            .args(args)
            .output()
            .expect("runs");
        (
            output.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&output.stdout).into_owned(),
        )
    };
    assert_eq!(
        run(&["offsets", "set", "--reason", "x"]).0,
        64,
        "--scn missing"
    );
    assert_eq!(run(&["no-such-command"]).0, 64);
    let (code, help) = run(&["--help"]);
    assert_eq!(code, 0);
    for command in ["offsets", "resnapshot", "transactions", "journal", "check"] {
        assert!(help.contains(command), "{command} in {help}");
    }
}

/// Passwords in the configuration never appear in what the tool prints, whatever fails.
#[test]
fn secrets_are_never_printed() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("secret.properties");
    let run = |extra: &str, args: &[&str]| {
        std::fs::write(
            &file,
            format!(
                "name=s\ncdc.topic.prefix=s\ncdc.source=sim\ncdc.tables.include=APP\\\\..*\n\
                 cdc.database.password=hunter2-db-secret\n\
                 cdc.kafka.sasl.password=hunter2-kafka-secret\n{extra}\n"
            ),
        )
        .unwrap();
        let output = Command::new(env!("CARGO_BIN_EXE_oracle-cdc-admin"))
            .args(args)
            .arg("--config")
            .arg(&file)
            .args(["--connect", "http://127.0.0.1:9", "--json"])
            .output()
            .unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        (output.status.code().unwrap_or(-1), text)
    };
    for (extra, args, code) in [
        ("cdc.snapshot.threads=0", &["offsets", "show"][..], 64),
        ("", &["offsets", "show"][..], 1),
        (
            "",
            &["offsets", "set", "--scn", "5", "--reason", "r"][..],
            1,
        ),
        ("", &["transactions"][..], 1),
    ] {
        let (got, text) = run(extra, args);
        assert_eq!(got, code, "{args:?}: {text}");
        assert!(
            !text.contains("hunter2"),
            "{args:?} printed a password: {text}"
        );
    }
}
