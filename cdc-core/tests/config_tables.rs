//! Topic names (`${prefix}`, the template, sanitising) and the table and column selection.

use cdc_core::config::{CdcConfig, Config, ConfigErrors, TopicTemplate, sanitize_topic_name};
use proptest::prelude::*;

fn validated(extra: &[(&str, &str)]) -> Result<CdcConfig, ConfigErrors> {
    let mut config = Config::from_pairs([
        ("name", "demo"),
        ("cdc.source", "sim"),
        ("cdc.topic.prefix", "cdc"),
        ("cdc.tables.include", "APP\\..*"),
    ]);
    for (key, value) in extra {
        config.set(*key, *value);
    }
    config.validate()
}

#[test]
fn prefix_is_substituted_in_side_topics() {
    let config = validated(&[
        ("cdc.topic.prefix", "orders"),
        ("cdc.ops.topic", "ops-${prefix}"),
        ("cdc.heartbeat.topic", "${prefix}.${prefix}.hb"),
        ("cdc.dlq.topic", "fixed.dlq"),
    ])
    .unwrap();
    assert_eq!(config.topics.ops, "ops-orders");
    assert_eq!(config.topics.heartbeat, "orders.orders.hb");
    assert_eq!(config.topics.dlq, "fixed.dlq");
    assert_eq!(config.topics.schema, "orders.cdc.schema");
    assert_eq!(config.topics.txjournal, "orders.cdc.txjournal");
}

#[test]
fn template_default_depends_on_pdbs() {
    let single = validated(&[]).unwrap();
    assert_eq!(
        single.topics.template.as_str(),
        "${prefix}.${schema}.${table}"
    );
    assert_eq!(
        single.topic_for_table("ORCL", None, "APP", "ORDERS"),
        "cdc.APP.ORDERS"
    );

    let cdb = validated(&[("cdc.database.pdbs", "FREEPDB1, FREEPDB2")]).unwrap();
    assert_eq!(
        cdb.topics.template.as_str(),
        "${prefix}.${pdb}.${schema}.${table}"
    );
    assert_eq!(
        cdb.topic_for_table("FREE", Some("FREEPDB1"), "APP", "ORDERS"),
        "cdc.FREEPDB1.APP.ORDERS"
    );
}

#[test]
fn template_variables_and_sanitising() {
    let config = validated(&[(
        "cdc.topic.template",
        "${prefix}-${database}.${schema}_${table}",
    )])
    .unwrap();
    assert_eq!(
        config.topic_for_table("ORCL", None, "APP", "ORDERS"),
        "cdc-ORCL.APP_ORDERS"
    );
    // Names from the database are sanitised, never refused.
    assert_eq!(
        config.topic_for_table("ORCL", None, "MY SCHEMA", "ORDER$LINES#1"),
        "cdc-ORCL.MY_SCHEMA_ORDER_LINES_1"
    );
    // `${pdb}` in a non-CDB is the database name.
    let template = TopicTemplate::parse("${prefix}.${pdb}.${table}", "p").unwrap();
    assert_eq!(template.render("ORCL", None, "APP", "T"), "p.ORCL.T");
    assert!(TopicTemplate::parse("${prefix}.${tabel}", "p").is_err());
    assert!(TopicTemplate::parse("${prefix}.${table", "p").is_err());
}

#[test]
fn sanitising_replaces_what_kafka_forbids() {
    let table = [
        ("cdc.APP.ORDERS", "cdc.APP.ORDERS"),
        ("a b/c", "a_b_c"),
        ("ORDER$LINES", "ORDER_LINES"),
        ("Größe", "Gr__e"),
        ("x-y_z.0", "x-y_z.0"),
        ("", ""),
    ];
    for (name, sanitised) in table {
        assert_eq!(sanitize_topic_name(name), sanitised, "{name:?}");
    }
}

#[test]
fn table_patterns_match_whole_names_ignoring_case_by_default() {
    let config = validated(&[
        ("cdc.tables.include", "app\\.orders, APP\\.ORDER_LINES{0,1}"),
        ("cdc.tables.exclude", "APP\\.ORDERS_ARCHIVE"),
    ])
    .unwrap();
    assert!(config.is_table_included(None, "APP", "ORDERS"));
    assert!(config.is_table_included(None, "APP", "ORDER_LINES"));
    assert!(config.is_table_included(None, "app", "Orders"));
    assert!(
        !config.is_table_included(None, "APP", "ORDERS2"),
        "patterns match whole names"
    );
    assert!(!config.is_table_included(None, "XAPP", "ORDERS"));
    assert!(!config.is_table_included(None, "APP", "ORDERS_ARCHIVE"));
    // With PDBs the name is PDB.OWNER.TABLE.
    assert!(!config.is_table_included(Some("FREEPDB1"), "APP", "ORDERS"));

    let sensitive = validated(&[
        ("cdc.tables.include", "FREEPDB1\\.APP\\.ORDERS"),
        ("cdc.tables.case.sensitive", "true"),
    ])
    .unwrap();
    assert!(sensitive.is_table_included(Some("FREEPDB1"), "APP", "ORDERS"));
    assert!(!sensitive.is_table_included(Some("freepdb1"), "APP", "ORDERS"));
}

#[test]
fn column_patterns_cover_pdb_schema_table_column() {
    let config = validated(&[(
        "cdc.columns.exclude",
        "APP\\.CUSTOMERS\\.(SSN|CARD_NUMBER), FREEPDB2\\.APP\\.ORDERS\\.NOTE",
    )])
    .unwrap();
    assert!(config.is_column_excluded(None, "APP", "CUSTOMERS", "ssn"));
    assert!(config.is_column_excluded(None, "APP", "CUSTOMERS", "CARD_NUMBER"));
    assert!(!config.is_column_excluded(None, "APP", "CUSTOMERS", "NAME"));
    assert!(config.is_column_excluded(Some("FREEPDB2"), "APP", "ORDERS", "NOTE"));
    assert!(!config.is_column_excluded(Some("FREEPDB1"), "APP", "ORDERS", "NOTE"));
    assert!(
        !validated(&[])
            .unwrap()
            .is_column_excluded(None, "APP", "CUSTOMERS", "SSN")
    );
}

#[test]
fn key_columns_and_select_overrides_by_table() {
    let config = validated(&[
        (
            "cdc.key.columns",
            "app.orders:id, region; FREEPDB2.APP.LINES:ORDER_ID,LINE_NO;",
        ),
        (
            "cdc.snapshot.select.override.APP.ORDERS",
            "CREATED > DATE '2024-01-01'",
        ),
    ])
    .unwrap();
    let keys = &config.keys.columns;
    assert_eq!(keys.len(), 2);
    let expected = vec!["ID".to_owned(), "REGION".to_owned()];
    assert_eq!(keys.get(None, "APP", "ORDERS"), Some(&expected));
    assert_eq!(
        keys.get(Some("FREEPDB1"), "app", "orders"),
        Some(&expected),
        "no PDB: every PDB"
    );
    assert!(keys.get(Some("FREEPDB1"), "APP", "LINES").is_none());
    assert_eq!(
        keys.get(Some("FREEPDB2"), "APP", "LINES").map(Vec::len),
        Some(2)
    );
    assert_eq!(
        config
            .snapshot
            .select_overrides
            .get(None, "APP", "ORDERS")
            .map(String::as_str),
        Some("CREATED > DATE '2024-01-01'")
    );

    let sensitive = validated(&[
        ("cdc.key.columns", "App.Orders:Id"),
        ("cdc.tables.case.sensitive", "true"),
    ])
    .unwrap();
    assert_eq!(
        sensitive.keys.columns.get(None, "App", "Orders"),
        Some(&vec!["Id".to_owned()])
    );
    assert!(sensitive.keys.columns.get(None, "APP", "ORDERS").is_none());
}

#[test]
fn lists_and_codes() {
    let config = validated(&[
        ("cdc.users.exclude", " GGADMIN , SYS ,,"),
        ("cdc.retry.extra.error.codes", "ORA-12345, ORA-00600,3113"),
        ("cdc.snapshot.tables.order", "APP.ORDERS,APP.LINES"),
        ("cdc.archive.destination", "log_archive_dest_2"),
        ("cdc.start.scn", "4711000"),
    ])
    .unwrap();
    assert_eq!(config.tables.users_exclude, vec!["GGADMIN", "SYS"]);
    assert_eq!(config.retry.extra_error_codes, vec![12345, 600, 3113]);
    assert_eq!(
        config.snapshot.tables_order,
        vec!["APP.ORDERS", "APP.LINES"]
    );
    assert_eq!(
        config.capture.archive_destination.as_deref(),
        Some("LOG_ARCHIVE_DEST_2")
    );
    assert_eq!(
        config.capture.start_scn.map(|scn| scn.get()),
        Some(4_711_000)
    );
}

proptest! {
    #[test]
    fn sanitised_topics_only_hold_kafka_characters(name in any::<String>()) {
        let topic = sanitize_topic_name(&name);
        prop_assert!(topic.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')));
        prop_assert_eq!(topic.chars().count(), name.chars().count());
    }

    #[test]
    fn legal_names_are_unchanged(name in "[a-zA-Z0-9._-]{0,40}") {
        prop_assert_eq!(sanitize_topic_name(&name), name);
    }

    #[test]
    fn rendered_table_topics_are_legal(
        schema in any::<String>(), table in any::<String>(), pdb in proptest::option::of(any::<String>())
    ) {
        let config = validated(&[("cdc.database.pdbs", "P1")]).unwrap();
        let topic = config.topic_for_table("DB", pdb.as_deref(), &schema, &table);
        prop_assert!(topic.starts_with("cdc."));
        prop_assert!(topic.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')));
    }
}
