//! `check` against the simulator, set up with each failing condition (`cdc.sim.preflight`,
//! and the simulator's role, open mode and DBMS_LOGMNR_D keys).

use cdc_admin::check::{self, CheckOutcome, Severity};
use cdc_core::Scn;
use cdc_core::config::{CdcConfig, Config};
use cdc_logminer::sim::SIM_LONG_COLUMN;

/// The standard schema's tables with a key of their own (APP.EVENTS has none).
const KEYED_TABLES: &str = "APP\\.(CUSTOMERS|ORDERS|CODES|DOCS),HR\\..*";

fn config(include: &str, extra: &[(&str, &str)]) -> CdcConfig {
    let mut config = Config::from_pairs([
        ("name", "check"),
        ("cdc.source", "sim"),
        ("cdc.topic.prefix", "cdc"),
        ("cdc.sim.changes", "200"),
        ("cdc.tables.include", include),
    ]);
    for (key, value) in extra {
        config.set(*key, *value);
    }
    config.validate().expect("a valid configuration")
}

fn run(include: &str, extra: &[(&str, &str)], resume: Option<u64>) -> CheckOutcome {
    check::run(&config(include, extra), resume.map(Scn), false).expect("the check runs")
}

#[test]
fn a_clean_simulator_is_ready() {
    let outcome = run(KEYED_TABLES, &[], None);
    assert!(outcome.findings.is_empty(), "{}", outcome.text);
    assert_eq!(outcome.exit, 0);
    assert_eq!(outcome.text, "ready: 0 blocking, 0 warning(s)\n");
}

#[test]
fn the_standard_schemas_keyless_table_is_a_warning() {
    let outcome = run("APP\\..*", &[], None);
    assert_eq!(
        outcome
            .findings
            .iter()
            .map(|f| (f.id, f.severity))
            .collect::<Vec<_>>(),
        vec![("no-key", Severity::Warning)],
        "{}",
        outcome.text
    );
    assert!(outcome.findings[0].message.contains("APP.EVENTS"));
    assert_eq!(outcome.exit, 2);
}

/// One condition: the keys that present it, the resume SCN, the finding expected, a text
/// its fix SQL (or, where no SQL fixes it, its message) must contain, and the exit status.
struct Case {
    keys: &'static [(&'static str, &'static str)],
    resume: Option<u64>,
    id: &'static str,
    severity: Severity,
    names: &'static str,
    exit: u8,
}

const fn case(
    keys: &'static [(&'static str, &'static str)],
    id: &'static str,
    severity: Severity,
    names: &'static str,
) -> Case {
    Case {
        keys,
        resume: None,
        id,
        severity,
        names,
        exit: match severity {
            Severity::Blocking => 1,
            Severity::Warning => 2,
        },
    }
}

const P: &str = "cdc.sim.preflight";

#[test]
fn each_condition_is_one_finding_with_its_fix() {
    use Severity::{Blocking, Warning};
    let cases = [
        case(
            &[(P, "noarchivelog")],
            "archivelog",
            Blocking,
            "ALTER DATABASE ARCHIVELOG;",
        ),
        case(
            &[(P, "no-supplemental-logging")],
            "supplemental-minimal",
            Blocking,
            "ALTER DATABASE ADD SUPPLEMENTAL LOG DATA;",
        ),
        case(
            &[(P, "no-table-supplemental:APP.ORDERS")],
            "supplemental-table",
            Blocking,
            "ALTER TABLE APP.ORDERS ADD SUPPLEMENTAL LOG DATA (ALL) COLUMNS;",
        ),
        case(
            &[(P, "missing-grant:LOGMINING")],
            "grant-logmining",
            Blocking,
            "GRANT LOGMINING TO CDC;",
        ),
        case(
            &[(P, "missing-grant:SELECT ANY TRANSACTION")],
            "grant-select-any-transaction",
            Blocking,
            "GRANT SELECT ANY TRANSACTION TO CDC;",
        ),
        case(
            &[(P, "missing-grant:SELECT ON V$LOGMNR_CONTENTS")],
            "grant-select-view",
            Blocking,
            "GRANT SELECT ON SYS.V_$LOGMNR_CONTENTS TO CDC;",
        ),
        case(
            &[(P, "missing-grant:SELECT ON GV$TRANSACTION")],
            "grant-select-view",
            Blocking,
            "GRANT SELECT ON SYS.GV_$TRANSACTION TO CDC;",
        ),
        case(
            &[(P, "missing-grant:SELECT ON GV$SESSION")],
            "grant-select-view",
            Blocking,
            "GRANT SELECT ON SYS.GV_$SESSION TO CDC;",
        ),
        case(
            &[(P, "missing-grant:EXECUTE ON DBMS_LOGMNR")],
            "grant-dbms-logmnr",
            Blocking,
            "GRANT EXECUTE ON SYS.DBMS_LOGMNR TO CDC;",
        ),
        case(
            &[(P, "missing-grant:CREATE SESSION")],
            "grant-create-session",
            Blocking,
            "GRANT CREATE SESSION TO CDC;",
        ),
        case(
            &[(P, "missing-grant:SELECT ON DBA_CONSTRAINTS")],
            "unreadable",
            Blocking,
            "GRANT SELECT ON SYS.DBA_CONSTRAINTS TO CDC;",
        ),
        case(
            &[(P, "missing-grant:FLASHBACK ANY TABLE")],
            "grant-flashback",
            Blocking,
            "GRANT FLASHBACK ON APP.ORDERS TO CDC;",
        ),
        case(
            &[("cdc.sim.dictionary.build.grant", "false")],
            "grant-dbms-logmnr-d",
            Warning,
            "GRANT EXECUTE ON SYS.DBMS_LOGMNR_D TO CDC;",
        ),
        case(
            &[(P, "threads:2")],
            "redo-threads",
            Blocking,
            "2 redo threads",
        ),
        case(
            &[
                ("cdc.sim.database.role", "physical_standby"),
                ("cdc.sim.open.mode", "read_only"),
            ],
            "topology",
            Blocking,
            "cdc.capture.mode=archive_only",
        ),
        case(
            &[
                ("cdc.sim.database.role", "primary"),
                ("cdc.sim.open.mode", "mounted"),
            ],
            "topology",
            Blocking,
            "PRIMARY open MOUNTED",
        ),
        case(&[(P, "version:12.2")], "version", Blocking, "12.2.0.0.0"),
        case(&[(P, "long-names")], "long-names", Warning, SIM_LONG_COLUMN),
        case(
            &[(P, "keyless-table:APP.ORDERS")],
            "no-key",
            Warning,
            "APP.ORDERS",
        ),
        case(
            &[(P, "switches-per-hour:12")],
            "log-switches",
            Warning,
            "12 times",
        ),
        Case {
            resume: Some(4_999_999),
            ..case(
                &[(P, "archive-from-scn:5000000")],
                "archive-retention",
                Blocking,
                "5000000",
            )
        },
        case(
            &[(P, "undo-retention:60")],
            "undo-retention",
            Warning,
            "ALTER SYSTEM SET UNDO_RETENTION",
        ),
    ];
    for c in cases {
        let outcome = run("APP\\.ORDERS", c.keys, c.resume);
        let [finding] = outcome.findings.as_slice() else {
            panic!("{:?}: one finding expected, got\n{}", c.keys, outcome.text);
        };
        assert_eq!(
            (finding.id, finding.severity),
            (c.id, c.severity),
            "{:?}",
            c.keys
        );
        let named = finding.fix_sql.as_deref().unwrap_or(&finding.message);
        assert!(named.contains(c.names), "{:?}: {named}", c.keys);
        assert_eq!(outcome.exit, c.exit, "{:?}", c.keys);
        assert!(outcome.text.contains(c.id), "{}", outcome.text);
    }
}

/// What the check cannot read for want of a grant: one blocking finding per refused read,
/// naming the view and its GRANT, the facts of that read unjudged and every other check
/// still made.
#[test]
fn a_view_the_check_may_not_read_is_a_blocking_finding_and_the_rest_is_checked() {
    // one per view each read of the check needs, and what it leaves unjudged
    let cases: [(&str, &[&str], &str); 5] = [
        ("DBA_CONSTRAINTS", &["DBA_CONSTRAINTS"], "keys"),
        (
            "DBA_LOG_GROUPS",
            &["DBA_LOG_GROUPS"],
            "supplemental log groups",
        ),
        ("DBA_OBJECTS", &["DBA_OBJECTS"], "the captured tables"),
        ("V$DATABASE", &["V$DATABASE"], "ARCHIVELOG mode"),
        ("V$INSTANCE", &["V$INSTANCE"], "the release"),
    ];
    for (view, named, unchecked) in cases {
        let grant = format!("missing-grant:SELECT ON {view}");
        let outcome = run("APP\\.ORDERS", &[(P, grant.as_str())], None);
        let [finding] = outcome.findings.as_slice() else {
            panic!("{view}: one finding expected, got\n{}", outcome.text);
        };
        assert_eq!(
            (finding.id, finding.severity),
            ("unreadable", Severity::Blocking)
        );
        for v in named {
            assert!(
                finding.message.contains(&format!("could not read {v}")),
                "{view}: {}",
                finding.message
            );
        }
        assert!(finding.message.contains("ORA-00942"), "{}", finding.message);
        assert!(
            finding.message.contains(unchecked),
            "{view}: {}",
            finding.message
        );
        let base = view.replacen("V$", "V_$", 1);
        assert_eq!(
            finding.fix_sql.as_deref(),
            Some(format!("GRANT SELECT ON SYS.{base} TO CDC;").as_str())
        );
        assert_eq!(outcome.exit, 1, "{view}");
        assert!(
            outcome.text.contains("BLOCKING unreadable"),
            "{}",
            outcome.text
        );
    }

    // the column names and the keys both read DBA_TAB_COLUMNS: two reads refused
    let outcome = run(
        "APP\\.ORDERS",
        &[(P, "missing-grant:SELECT ON DBA_TAB_COLUMNS")],
        None,
    );
    assert_eq!(
        outcome
            .findings
            .iter()
            .map(|f| (f.id, f.fix_sql.as_deref().unwrap_or("")))
            .collect::<Vec<_>>(),
        vec![
            ("unreadable", "GRANT SELECT ON SYS.DBA_TAB_COLUMNS TO CDC;"),
            ("unreadable", "GRANT SELECT ON SYS.DBA_TAB_COLUMNS TO CDC;"),
        ],
        "{}",
        outcome.text
    );

    // a refused read does not stop the others: the warning and the blocking finding of what
    // could be read are there, the release that could not be read is not judged
    let outcome = run(
        "APP\\.ORDERS",
        &[(
            P,
            "missing-grant:SELECT ON V$INSTANCE,version:12.2,switches-per-hour:9,no-table-supplemental:APP.ORDERS",
        )],
        None,
    );
    assert_eq!(
        outcome
            .findings
            .iter()
            .map(|f| (f.id, f.severity))
            .collect::<Vec<_>>(),
        vec![
            ("supplemental-table", Severity::Blocking),
            ("unreadable", Severity::Blocking),
            ("log-switches", Severity::Warning),
        ],
        "{}",
        outcome.text
    );
    assert_eq!(outcome.exit, 1);
}

/// Without CREATE SESSION nothing can be read: the login refused is the one finding.
#[test]
fn a_login_refused_for_create_session_is_the_only_finding() {
    let outcome = run(
        "APP\\.ORDERS",
        &[(P, "missing-grant:CREATE SESSION,noarchivelog")],
        None,
    );
    let [finding] = outcome.findings.as_slice() else {
        panic!("one finding expected, got\n{}", outcome.text);
    };
    assert_eq!(finding.id, "grant-create-session");
    assert!(finding.message.contains("ORA-01045"), "{}", finding.message);
    assert_eq!(outcome.exit, 1);
    // in a CDB the capture user is a common user, granted in every container
    let cdb = run(
        "APP\\.ORDERS",
        &[
            (P, "missing-grant:CREATE SESSION"),
            ("cdc.sim.session.pdb", "ORCLPDB1"),
        ],
        None,
    );
    assert_eq!(
        cdb.findings.first().and_then(|f| f.fix_sql.as_deref()),
        Some("GRANT CREATE SESSION TO C##CDC CONTAINER=ALL;"),
        "{}",
        cdb.text
    );
}

/// The GV$ views of orphan detection, both missing, and mining's package: each its finding.
#[test]
fn the_views_and_the_package_mining_needs_are_each_a_finding() {
    let outcome = check::run(
        &config(
            "APP\\.ORDERS",
            &[(
                P,
                "missing-grant:SELECT ON GV$TRANSACTION,missing-grant:SELECT ON GV$SESSION,\
                 missing-grant:EXECUTE ON DBMS_LOGMNR",
            )],
        ),
        None,
        true,
    )
    .expect("the check runs");
    assert_eq!(outcome.exit, 1);
    let json: serde_json::Value = serde_json::from_str(&outcome.text).expect("JSON");
    assert_eq!(json["status"], "blocking");
    let fixes: Vec<&str> = json["findings"]
        .as_array()
        .expect("a list")
        .iter()
        .map(|f| f["fix_sql"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(
        fixes,
        [
            "GRANT SELECT ON SYS.GV_$TRANSACTION TO CDC;",
            "GRANT SELECT ON SYS.GV_$SESSION TO CDC;",
            "GRANT EXECUTE ON SYS.DBMS_LOGMNR TO CDC;",
        ]
    );
    assert!(
        json["findings"][0]["message"]
            .as_str()
            .is_some_and(|m| m.contains("GV$TRANSACTION") && m.contains("orphan detection"))
    );
}

#[test]
fn a_resume_scn_the_archive_reaches_passes() {
    let keys = [(P, "archive-from-scn:5000000")];
    assert_eq!(run("APP\\.ORDERS", &keys, Some(5_000_000)).exit, 0);
    assert_eq!(run("APP\\.ORDERS", &keys, None).exit, 0);
}

#[test]
fn snapshot_conditions_pass_when_snapshots_are_off() {
    let keys = [
        (P, "missing-grant:FLASHBACK ANY TABLE,undo-retention:60"),
        ("cdc.snapshot.mode", "none"),
    ];
    let outcome = run("APP\\.ORDERS", &keys, None);
    assert!(outcome.findings.is_empty(), "{}", outcome.text);
}

#[test]
fn the_json_report_parses_with_every_finding() {
    let config = config(
        "APP\\.ORDERS",
        &[
            (P, "noarchivelog,switches-per-hour:7"),
            ("cdc.sim.seed", "5"),
        ],
    );
    let outcome = check::run(&config, None, true).expect("the check runs");
    assert_eq!(outcome.exit, 1);
    let json: serde_json::Value = serde_json::from_str(&outcome.text).expect("JSON");
    assert_eq!(json["status"], "blocking");
    let findings = json["findings"].as_array().expect("a list");
    assert_eq!(findings.len(), 2);
    assert_eq!(findings[0]["id"], "archivelog");
    assert_eq!(findings[0]["severity"], "blocking");
    assert!(
        findings[0]["fix_sql"]
            .as_str()
            .is_some_and(|s| s.contains("ARCHIVELOG"))
    );
    assert_eq!(findings[1]["id"], "log-switches");
    assert_eq!(findings[1]["severity"], "warning");
    assert!(
        findings[1]["message"]
            .as_str()
            .is_some_and(|s| s.contains('7'))
    );

    let warnings = check::run(
        &self::config("APP\\.ORDERS", &[(P, "long-names")]),
        None,
        true,
    )
    .expect("the check runs");
    let json: serde_json::Value = serde_json::from_str(&warnings.text).expect("JSON");
    assert_eq!(json["status"], "warnings");
    let ready = check::run(&self::config("APP\\.ORDERS", &[]), None, true).expect("runs");
    let json: serde_json::Value = serde_json::from_str(&ready.text).expect("JSON");
    assert_eq!(json, serde_json::json!({"status": "ready", "findings": []}));
}

#[test]
fn a_database_that_cannot_be_reached_never_shows_its_password() {
    let config = Config::from_pairs([
        ("name", "check"),
        ("cdc.source", "oracle"),
        ("cdc.topic.prefix", "cdc"),
        ("cdc.tables.include", "APP\\..*"),
        ("cdc.database.host", "127.0.0.1"),
        ("cdc.database.port", "1"),
        ("cdc.database.service", "FREE"),
        ("cdc.database.user", "cdc"),
        ("cdc.database.password", "pw-never-shown-7781"),
    ])
    .validate()
    .expect("a valid configuration");
    let error = check::run(&config, None, false).expect_err("no database listens on port 1");
    let shown = format!("{error} {error:?}");
    assert!(!shown.contains("pw-never-shown-7781"), "{shown}");
    assert!(shown.contains("could not be opened"), "{shown}");
    // the stop the connector would give, with its action and runbook
    let text = error.to_string();
    assert!(
        text.contains("[CDC-") && text.contains("Runbook:"),
        "{text}"
    );
}

/// Through the binary: a database it cannot connect to is exit 1 with an error and no report
/// (failed), told apart from blocking findings (exit 1 with the report).
#[test]
fn a_database_it_cannot_connect_to_fails_without_a_report() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let file = dir.path().join("check.properties");
    std::fs::write(
        &file,
        "name=check\ncdc.topic.prefix=check\ncdc.source=oracle\ncdc.tables.include=APP\\\\..*\n\
         cdc.database.host=127.0.0.1\ncdc.database.port=1\ncdc.database.service=FREE\n\
         cdc.database.user=cdc\ncdc.database.password=pw-never-shown-4417\n",
    )
    .expect("written");
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_oracle-cdc-admin"))
        .args(["check", "--json", "--config"])
        .arg(&file)
        .output()
        .expect("the binary runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stdout}{stderr}");
    let json: serde_json::Value = serde_json::from_str(&stdout).expect("JSON");
    assert!(
        json.get("status").is_none() && json.get("findings").is_none(),
        "{json}"
    );
    let error = json["error"].as_str().unwrap_or_default();
    assert!(
        error.contains("could not be opened") && error.contains("[CDC-"),
        "{error}"
    );
    assert!(!format!("{stdout}{stderr}").contains("pw-never-shown-4417"));
}
