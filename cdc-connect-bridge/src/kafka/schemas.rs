//! The schema topic read back at start: each table's versions as the last run published
//! them, so that a restart goes on from them (`docs/records.md`, "The schema topic";
//! `docs/decisions.md`, D23).
//!
//! - The engine numbers on from them: a layout that publishes exactly as a stored version did
//!   keeps that version's number and `valid_from`; any other gets the next number, never one a
//!   consumer has already seen for a different layout ([`StoredSchemas::published`]).
//! - The topic keeps each table's versions from the one valid at the resume SCN on
//!   ([`StoredSchemas::pruned`]): the builder starts its history from them.
//!
//! A record this version cannot read (a key or value that is not the schema topic's JSON, a
//! newer `v`) is skipped with a warning: its table's numbering then starts again from 1, as
//! it would on an empty topic, and nothing else is lost.

use std::collections::BTreeMap;
use std::sync::Arc;

use cdc_core::{Scn, TableId, TableLayout};
use cdc_logminer::engine::{PublishedSchemas, PublishedVersion, first_valid_at};
use serde_json::{Map, Value as Json};

use crate::kafka::offsets::{KafkaOffsetStore, OffsetStoreError};
use crate::record::key::KeyPlan;
use crate::record::settings::RecordSettings;
use crate::record::side::{SCHEMA_TOPIC_VERSION, schema_version};

/// Each table's stored versions (the schema topic's JSON, oldest first).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StoredSchemas {
    tables: BTreeMap<TableId, Vec<Json>>,
}

impl StoredSchemas {
    /// Reads the schema topic to its end: the latest record of each of `server`'s tables. A
    /// topic that does not exist yet reads as empty unless `wait` (it was just created).
    pub fn read(
        store: &KafkaOffsetStore,
        topic: &str,
        server: &str,
        wait: bool,
    ) -> Result<StoredSchemas, OffsetStoreError> {
        let mut stored = StoredSchemas::default();
        let mut skipped = 0usize;
        store.scan(topic, wait, &mut |message| {
            use rdkafka::message::Message;
            if !stored.apply(message.key(), message.payload(), server) {
                skipped += 1;
            }
        })?;
        if skipped > 0 {
            tracing::warn!(
                topic,
                skipped,
                "schema topic records this version cannot read were skipped; their tables' \
                 schema versions start again from 1"
            );
        }
        Ok(stored)
    }

    /// Takes one record of the topic, in order: a table's versions, or a tombstone that
    /// forgets them. Records of other servers are passed over. `false`: a record this version
    /// cannot read (also passed over).
    pub fn apply(&mut self, key: Option<&[u8]>, value: Option<&[u8]>, server: &str) -> bool {
        let Some(key) = key.and_then(|k| serde_json::from_slice::<Json>(k).ok()) else {
            return false;
        };
        let key = payload(key);
        let text = |name: &str| key.get(name).and_then(Json::as_str);
        let (Some(owner), Some(table)) = (text("owner"), text("table")) else {
            return false;
        };
        if text("server") != Some(server) {
            return true;
        }
        let mut id = TableId::new(owner, table);
        match key.get("pdb") {
            None | Some(Json::Null) => {}
            Some(Json::String(pdb)) => id = id.in_pdb(pdb.as_str()),
            Some(_) => return false,
        }
        let Some(value) = value else {
            self.tables.remove(&id);
            return true;
        };
        match serde_json::from_slice::<Json>(value)
            .ok()
            .and_then(versions)
        {
            Some(versions) => {
                self.tables.insert(id, versions);
                true
            }
            None => false,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.tables.is_empty()
    }

    /// A table's stored versions, oldest first.
    pub fn versions(&self, table: &TableId) -> Option<&[Json]> {
        self.tables.get(table).map(Vec::as_slice)
    }

    /// The stored versions for the engine: whether a layout from the dictionary is one of them
    /// is whether it would publish the same (names, types, key and its source, supplemental
    /// logging), with the record settings of this run.
    pub fn published(&self, settings: &Arc<RecordSettings>) -> PublishedSchemas {
        let mut published = PublishedSchemas::default();
        for (table, versions) in &self.tables {
            let versions = versions
                .iter()
                .filter_map(|stored| {
                    let (version, valid_from) = numbering(stored)?;
                    let stored = body(stored.clone());
                    let settings = Arc::clone(settings);
                    Some(PublishedVersion {
                        version,
                        valid_from,
                        same: Arc::new(move |layout: &TableLayout| {
                            let (source, key) = KeyPlan::declared_names(&settings, layout);
                            body(schema_version(layout, source, &key)) == stored
                        }),
                    })
                })
                .collect();
            published.insert(table.clone(), versions);
        }
        published
    }

    /// Each table's versions a restart from `resume` keeps on the topic: the one valid at
    /// `resume` and every later one.
    pub fn pruned(&self, resume: Scn) -> BTreeMap<TableId, Vec<Json>> {
        self.tables
            .iter()
            .map(|(table, versions)| {
                let from = versions
                    .iter()
                    .map(|v| numbering(v).map_or(Scn::ZERO, |(_, from)| from));
                let first = first_valid_at(from, resume);
                (table.clone(), versions[first..].to_vec())
            })
            .collect()
    }
}

/// The payload of a Connect JSON envelope (`{"schema": …, "payload": …}`), or the value
/// itself when it has none.
fn payload(value: Json) -> Json {
    match value {
        Json::Object(mut m) if m.len() == 2 && m.contains_key("schema") => {
            m.remove("payload").unwrap_or(Json::Null)
        }
        other => other,
    }
}

/// The versions of a table's value, if it is one this version reads: every version an object
/// with its number and `valid_from_scn`, in ascending order.
fn versions(value: Json) -> Option<Vec<Json>> {
    let Json::Object(mut value) = payload(value) else {
        return None;
    };
    if value.get("v").and_then(Json::as_i64) != Some(i64::from(SCHEMA_TOPIC_VERSION)) {
        return None;
    }
    let Some(Json::Array(versions)) = value.remove("versions") else {
        return None;
    };
    let mut last = 0;
    for v in &versions {
        let (version, _) = numbering(v)?;
        if version <= last {
            return None;
        }
        last = version;
    }
    Some(versions)
}

/// A stored version's number and `valid_from_scn`.
fn numbering(version: &Json) -> Option<(u32, Scn)> {
    let number = u32::try_from(version.get("version")?.as_u64()?).ok()?;
    let valid_from = Scn(version.get("valid_from_scn")?.as_u64()?);
    Some((number, valid_from))
}

/// A version without its number and `valid_from_scn`: what a layout publishes.
fn body(version: Json) -> Map<String, Json> {
    match version {
        Json::Object(mut m) => {
            m.remove("version");
            m.remove("valid_from_scn");
            m
        }
        _ => Map::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::side::{schema_key, schema_table_value};
    use cdc_core::config::Config;
    use cdc_core::table::{ColumnDef, ColumnType, KeySource, SupplementalLogging};

    fn settings(extra: &[(&str, &str)]) -> Arc<RecordSettings> {
        let mut config = Config::from_pairs([
            ("name", "orders-cdc"),
            ("cdc.source", "sim"),
            ("cdc.topic.prefix", "cdc"),
            ("cdc.tables.include", ".*"),
        ]);
        for (k, v) in extra {
            config.set(*k, *v);
        }
        let config = config.validate().unwrap_or_else(|e| panic!("{e}"));
        Arc::new(RecordSettings::from_config(&config, "FREE"))
    }

    fn layout(version: u32, valid_from: u64, columns: &[&str]) -> TableLayout {
        TableLayout {
            table: TableId::new("APP", "T"),
            version,
            valid_from: Scn(valid_from),
            columns: columns
                .iter()
                .enumerate()
                .map(|(i, name)| ColumnDef::new(*name, i as u16 + 1, ColumnType::Number))
                .collect(),
            key: vec!["ID".into()],
            key_source: KeySource::PrimaryKey,
            supplemental: SupplementalLogging {
                all_columns: true,
                primary_key: false,
            },
            segment: Vec::new(),
        }
    }

    /// The topic record the builder writes for `layouts`, as bytes (with or without the
    /// Connect envelope).
    fn record(layouts: &[TableLayout], server: &str, enveloped: bool) -> (Vec<u8>, Vec<u8>) {
        let settings = settings(&[]);
        let versions: Vec<Json> = layouts
            .iter()
            .map(|l| {
                let (source, key) = KeyPlan::declared_names(&settings, l);
                schema_version(l, source, &key)
            })
            .collect();
        let key = schema_key(&layouts[0].table, server);
        let value = schema_table_value(&versions);
        let wrap = |payload: Json| {
            if enveloped {
                serde_json::json!({"schema": {"type": "struct"}, "payload": payload})
            } else {
                payload
            }
        };
        (
            serde_json::to_vec(&wrap(key)).unwrap(),
            serde_json::to_vec(&wrap(value)).unwrap(),
        )
    }

    fn two_versions() -> StoredSchemas {
        let mut stored = StoredSchemas::default();
        let (key, value) = record(
            &[layout(1, 10, &["ID"]), layout(2, 50, &["ID", "A"])],
            "cdc",
            true,
        );
        assert!(stored.apply(Some(&key), Some(&value), "cdc"));
        stored
    }

    #[test]
    fn the_latest_record_of_each_table_of_this_server_counts() {
        let table = TableId::new("APP", "T");
        for enveloped in [false, true] {
            let mut stored = StoredSchemas::default();
            let (k1, v1) = record(&[layout(1, 10, &["ID"])], "cdc", enveloped);
            let (k2, v2) = record(
                &[layout(1, 10, &["ID"]), layout(2, 50, &["ID", "A"])],
                "cdc",
                enveloped,
            );
            let (other_key, other_value) = record(&[layout(7, 10, &["ID"])], "other", enveloped);
            assert!(stored.apply(Some(&k1), Some(&v1), "cdc"));
            assert!(stored.apply(Some(&k2), Some(&v2), "cdc"));
            assert!(stored.apply(Some(&other_key), Some(&other_value), "cdc"));
            let versions = stored.versions(&table).unwrap();
            assert_eq!(versions.len(), 2);
            assert_eq!(numbering(&versions[1]), Some((2, Scn(50))));
            // a tombstone forgets the table
            assert!(stored.apply(Some(&k2), None, "cdc"));
            assert!(stored.is_empty());
        }
    }

    #[test]
    fn unreadable_records_are_passed_over() {
        let mut stored = StoredSchemas::default();
        let (key, value) = record(&[layout(1, 10, &["ID"])], "cdc", false);
        assert!(!stored.apply(None, Some(&value), "cdc"));
        assert!(!stored.apply(Some(b"not json"), Some(&value), "cdc"));
        assert!(!stored.apply(Some(&key), Some(b"{\"v\": 2, \"versions\": []}"), "cdc"));
        assert!(!stored.apply(Some(&key), Some(b"{\"v\": 1}"), "cdc"));
        let backwards = serde_json::json!({"v": 1, "versions": [
            {"version": 2, "valid_from_scn": 5}, {"version": 1, "valid_from_scn": 9}]});
        let backwards = serde_json::to_vec(&backwards).unwrap();
        assert!(!stored.apply(Some(&key), Some(&backwards), "cdc"));
        assert!(stored.is_empty());
    }

    #[test]
    fn a_layout_is_a_stored_version_when_it_publishes_the_same() {
        let table = TableId::new("APP", "T");
        let same = |settings: &Arc<RecordSettings>, l: &TableLayout| -> Vec<u32> {
            let published = two_versions().published(settings);
            published
                .versions(&table)
                .iter()
                .filter(|v| (v.same)(l))
                .map(|v| v.version)
                .collect()
        };
        let plain = settings(&[]);
        // numbers and valid_from aside, the columns decide
        assert_eq!(same(&plain, &layout(9, 99, &["ID", "A"])), vec![2]);
        assert_eq!(same(&plain, &layout(9, 99, &["ID"])), vec![1]);
        assert!(same(&plain, &layout(1, 10, &["ID", "B"])).is_empty());
        // supplemental logging and the key are published too
        let mut unlogged = layout(2, 50, &["ID", "A"]);
        unlogged.supplemental.all_columns = false;
        assert!(same(&plain, &unlogged).is_empty());
        let mut rekeyed = layout(2, 50, &["ID", "A"]);
        rekeyed.key = vec!["A".into()];
        assert!(same(&plain, &rekeyed).is_empty());
        // so is a key from cdc.key.columns, whatever the dictionary's
        let configured = settings(&[("cdc.key.columns", "APP.T:A")]);
        assert!(same(&configured, &layout(2, 50, &["ID", "A"])).is_empty());
        let stored = two_versions();
        let (key, value) = {
            let settings = &configured;
            let l = layout(3, 70, &["ID", "A"]);
            let (source, key) = KeyPlan::declared_names(settings, &l);
            let versions = vec![schema_version(&l, source, &key)];
            (schema_key(&l.table, "cdc"), schema_table_value(&versions))
        };
        let mut configured_store = stored;
        assert!(configured_store.apply(
            Some(&serde_json::to_vec(&key).unwrap()),
            Some(&serde_json::to_vec(&value).unwrap()),
            "cdc"
        ));
        let published = configured_store.published(&configured);
        assert!((published.versions(&table)[0].same)(&rekeyed));
    }

    #[test]
    fn the_topic_keeps_the_version_valid_at_resume_and_later() {
        let table = TableId::new("APP", "T");
        let versions = |resume: u64| -> Vec<u32> {
            two_versions().pruned(Scn(resume))[&table]
                .iter()
                .filter_map(|v| numbering(v).map(|(n, _)| n))
                .collect()
        };
        assert_eq!(versions(5), vec![1, 2]);
        assert_eq!(versions(10), vec![1, 2]);
        assert_eq!(versions(49), vec![1, 2]);
        assert_eq!(versions(50), vec![2]);
        assert_eq!(versions(500), vec![2]);
    }
}
