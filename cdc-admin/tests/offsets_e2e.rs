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

/// An offset the connector cannot read (a newer version's, with a snapshot block that does not
/// read and a field no offset may hold, then an empty one): the connector fails with CDC-3002;
/// `offsets show` prints the fields as stored with the error and exits 1; `offsets set` refuses
/// without `--replace-unreadable`, changing nothing, and with it writes a fresh offset that
/// keeps the identity, the generation, the released XIDs and the unknown field, from which
/// the connector runs again.
#[test]
fn an_unreadable_offset_is_shown_and_replaced() {
    let Some(broker) = broker() else {
        return;
    };
    let c = Running::start("adminunread", &broker);
    let start = c.config.capture.start_scn.expect("a start SCN").0;
    let delivered = c.settled(Duration::from_secs(120));
    c.stop();
    let good = c.stored_offset();
    // the offset a newer connector might have left: v2, a snapshot block v1 cannot read, a
    // field it does not know and one no offset may hold, and a released transaction
    let mut broken = good.clone();
    broken["v"] = Value::from(2);
    broken["snapshot"] = Value::from("{\"v\":2,");
    broken["released_xids"] = Value::from("0:7.8.9");
    broken["future_field"] = Value::from("kept");
    broken["future_list"] = serde_json::json!([1, 2]);
    c.write_raw_offset(&broken);
    c.resume();
    assert!(
        wait_until(Duration::from_secs(60), || c.state() == "FAILED"),
        "the connector cannot start from it: {}",
        c.state()
    );
    assert!(c.trace().contains("CDC-3002"), "{}", c.trace());
    assert_eq!(c.stored_offset(), broken, "shown as stored by the REST API");

    // show: the fields as stored, the decoder's error with its code, exit 1
    let (code, out, err) = c.admin(&["offsets", "show"], &[]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("[CDC-3002]"), "{out}");
    assert!(out.contains("v = 2"), "the decoder's error: {out}");
    assert!(out.contains("--replace-unreadable"), "{out}");
    for (field, value) in broken.as_object().unwrap() {
        let line = format!("  {field:<22} {value}");
        assert!(out.contains(&line), "{line} in {out}");
    }
    let (code, out, _) = c.admin(&["offsets", "show", "--json"], &[]);
    assert_eq!(code, 1);
    let shown: Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(shown["readable"], false);
    assert_eq!(shown["code"], "CDC-3002");
    assert_eq!(shown["offset"], broken);

    // set without the flag: refused, naming the problem and the flag; nothing changes
    let scn = start.to_string();
    let (code, _, err) = c.admin(
        &["offsets", "set", "--scn", &scn, "--reason", "repair"],
        &[],
    );
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("--replace-unreadable") && err.contains("CDC-3002"),
        "{err}"
    );
    assert_eq!(c.stored_offset(), broken);
    assert_eq!(c.state(), "FAILED");
    assert!(c.offsets_set_events().is_empty(), "no event for a refusal");

    // with it: a fresh offset at the start SCN, keeping what reads and is needed
    let (code, out, err) = c.admin(
        &[
            "offsets",
            "set",
            "--scn",
            &scn,
            "--reason",
            "repair",
            "--replace-unreadable",
        ],
        &[],
    );
    assert_eq!(code, 0, "{out}{err}");
    for kept in [
        "dbid, resetlogs_scn",
        "journal_generation",
        "released_xids",
        "future_field",
    ] {
        assert!(
            out.lines()
                .any(|l| l.trim_start().starts_with("kept") && l.contains(kept)),
            "{kept} kept: {out}"
        );
    }
    for dropped in ["snapshot", "future_list", "last_commit_xid"] {
        assert!(
            out.lines()
                .any(|l| l.trim_start().starts_with("dropped") && l.contains(dropped)),
            "{dropped} dropped: {out}"
        );
    }
    assert!(wait_until(Duration::from_secs(60), || c.state() == "RUNNING"));
    // no last commit: every commit from the start SCN is delivered once more
    let again = c.settled(Duration::from_secs(120));
    assert_eq!(again, 2 * delivered, "every record delivered once more");
    let stored = c.stored_offset();
    for field in ["dbid", "resetlogs_scn", "released_xids", "future_field"] {
        assert_eq!(stored[field], broken[field], "{field}: {stored}");
    }
    assert_eq!(stored["v"], 1);
    assert!(stored.get("future_list").is_none(), "{stored}");
    let generation = |o: &Value| o["journal_generation"].as_u64().expect("a generation");
    assert!(
        generation(&stored) > generation(&broken),
        "the next start took a newer generation: {stored}"
    );
    let events = c.offsets_set_events();
    let outcomes: Vec<&str> = events.iter().map(|e| e["outcome"].as_str()).collect();
    assert_eq!(outcomes, ["applying", "applied"], "{events:?}");
    assert!(events[1]["replaced"].contains("CDC-3002"), "{events:?}");
    assert_eq!(events[1]["direction"], "backward");
    assert_eq!(
        events[1]["previous_resume_scn"],
        broken["resume_scn"].to_string()
    );

    // an empty offset: nothing of it reads; the identity comes from the database and the
    // generation from the journal topic
    c.stop();
    c.write_raw_offset(&serde_json::json!({}));
    c.resume();
    assert!(wait_until(Duration::from_secs(60), || c.state() == "FAILED"));
    let (code, out, _) = c.admin(&["offsets", "show"], &[]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("empty object"), "{out}");
    let (code, out, err) = c.admin(
        &[
            "offsets",
            "set",
            "--scn",
            &scn,
            "--reason",
            "repair",
            "--replace-unreadable",
            "--json",
        ],
        &[],
    );
    assert_eq!(code, 0, "{out}{err}");
    let set: Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(set["direction"], "initial", "{set}");
    assert_eq!(set["replaced"]["kept"], serde_json::json!([]), "{set}");
    assert!(wait_until(Duration::from_secs(60), || c.state() == "RUNNING"));
    assert!(wait_until(Duration::from_secs(60), || {
        c.stored_offset()["dbid"] == good["dbid"] && c.stored_offset()["v"] == 1
    }));
}
