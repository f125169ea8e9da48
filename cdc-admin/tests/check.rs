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
}
