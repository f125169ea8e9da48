//! The snapshot progress the offset's `snapshot` field holds, as JSON object text:
//!
//! ```text
//! {"v":1,"complete":false,"scope":"initial",
//!  "tables":{"APP.ORDERS":{"done":true,"rows":120000},
//!            "APP.LINES":{"done":false,"rows":40000,"frontier":{"key":[{"Number":"40000"}]}},
//!            "APP.NOTES":{"done":false,"rows":0}}}
//! ```
//!
//! One frontier per table: the key (or ROWID) of the last row of the last chunk published,
//! so a restart reads the table on from there and never reads a finished chunk again. Tables
//! are kept in the order they are read. A signalled snapshot says so in `scope`
//! (`incremental`) and keeps its predicate in `where` and the signal's id in `signal`. Fields
//! this version does not know are kept and written back, as in the offset itself.

use cdc_core::Value;
use serde::{Deserialize, Serialize};
use serde_json::Map;

use crate::OffsetError;

/// The progress format's version.
pub const SNAPSHOT_PROGRESS_VERSION: u64 = 1;

/// Where a table's next chunk starts: the key columns' values in key order (the last row
/// published), or that row's ROWID for a table read in ROWID order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SnapshotBound {
    Key(Vec<Value>),
    RowId(String),
}

/// Why a snapshot runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SnapshotScope {
    /// `cdc.snapshot.mode=initial` or `snapshot_only`, or a table that joined while streaming:
    /// records say `source.snapshot` `first`/`true`/`last`.
    Initial,
    /// A `snapshot` signal: records say `source.snapshot` `incremental`.
    Incremental,
}

impl SnapshotScope {
    pub fn as_str(self) -> &'static str {
        match self {
            SnapshotScope::Initial => "initial",
            SnapshotScope::Incremental => "incremental",
        }
    }
}

/// One table's progress.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TableProgress {
    /// Every chunk of the table was published (or the table was found gone).
    pub done: bool,
    /// Rows published so far.
    pub rows: u64,
    /// Where the next chunk starts; `None` before the first chunk.
    pub frontier: Option<SnapshotBound>,
}

/// The progress of the snapshot the offset records.
#[derive(Debug, Clone, PartialEq)]
pub struct SnapshotProgress {
    /// Every table is done.
    pub complete: bool,
    pub scope: SnapshotScope,
    /// A signal's `predicate` (a SQL condition on every table of the snapshot).
    pub condition: Option<String>,
    /// The id of the signal that asked for it.
    pub signal: Option<String>,
    /// A `snapshot-pause` signal holds it until `snapshot-resume`.
    pub paused: bool,
    /// A `snapshot-stop` signal ended it before every table was done (`complete` is set too,
    /// so it does not resume).
    pub stopped: bool,
    /// The tables by `PDB.OWNER.TABLE` (`OWNER.TABLE` in a non-CDB), in reading order.
    pub tables: Vec<(String, TableProgress)>,
    /// Fields this version does not know, written back unchanged.
    pub extra: Map<String, serde_json::Value>,
}

impl SnapshotProgress {
    /// A snapshot of `tables`, in this order, with nothing read yet.
    pub fn new(scope: SnapshotScope, tables: impl IntoIterator<Item = String>) -> Self {
        let tables: Vec<(String, TableProgress)> = tables
            .into_iter()
            .map(|t| (t, TableProgress::default()))
            .collect();
        SnapshotProgress {
            complete: tables.is_empty(),
            scope,
            condition: None,
            signal: None,
            paused: false,
            stopped: false,
            tables,
            extra: Map::new(),
        }
    }

    /// The first table not done, with its progress.
    pub fn next_table(&self) -> Option<(&str, &TableProgress)> {
        self.tables
            .iter()
            .find(|(_, p)| !p.done)
            .map(|(t, p)| (t.as_str(), p))
    }

    pub fn table(&self, name: &str) -> Option<&TableProgress> {
        self.tables.iter().find(|(t, _)| t == name).map(|(_, p)| p)
    }

    pub fn table_mut(&mut self, name: &str) -> Option<&mut TableProgress> {
        self.tables
            .iter_mut()
            .find(|(t, _)| t == name)
            .map(|(_, p)| p)
    }

    /// Rows published over every table.
    pub fn rows(&self) -> u64 {
        self.tables.iter().map(|(_, p)| p.rows).sum()
    }

    /// Tables not done yet.
    pub fn tables_remaining(&self) -> usize {
        self.tables.iter().filter(|(_, p)| !p.done).count()
    }

    /// Marks `table` done; the snapshot is complete once every table is.
    pub fn finish_table(&mut self, table: &str) {
        if let Some(p) = self.table_mut(table) {
            p.done = true;
        }
        self.complete = self.tables.iter().all(|(_, p)| p.done);
    }

    /// Adds a table to read after the others (a no-op when it is listed already); the
    /// snapshot is not complete until it is done.
    pub fn add_table(&mut self, table: String) {
        if self.table(&table).is_none() {
            self.tables.push((table, TableProgress::default()));
            self.complete = false;
        }
    }

    /// The JSON object text the offset's `snapshot` field holds.
    pub fn to_json(&self) -> String {
        let mut out = Map::new();
        out.insert("v".into(), SNAPSHOT_PROGRESS_VERSION.into());
        out.insert("complete".into(), self.complete.into());
        out.insert("scope".into(), self.scope.as_str().into());
        if let Some(condition) = &self.condition {
            out.insert("where".into(), condition.clone().into());
        }
        if let Some(signal) = &self.signal {
            out.insert("signal".into(), signal.clone().into());
        }
        if self.paused {
            out.insert("paused".into(), true.into());
        }
        if self.stopped {
            out.insert("stopped".into(), true.into());
        }
        let mut tables = Map::new();
        for (name, p) in &self.tables {
            let mut t = Map::new();
            t.insert("done".into(), p.done.into());
            t.insert("rows".into(), p.rows.into());
            if let Some(frontier) = &p.frontier {
                // a bound of values always serializes
                if let Ok(v) = serde_json::to_value(frontier) {
                    t.insert("frontier".into(), v);
                }
            }
            tables.insert(name.clone(), t.into());
        }
        out.insert("tables".into(), tables.into());
        for (k, v) in &self.extra {
            out.entry(k.clone()).or_insert_with(|| v.clone());
        }
        serde_json::Value::Object(out).to_string()
    }

    /// Reads the offset's `snapshot` text. A newer `v`, or a field of the wrong shape, is
    /// CDC-3002 (the offset's own rule for what it cannot read).
    pub fn from_json(text: &str) -> Result<SnapshotProgress, OffsetError> {
        let bad = |reason: String| OffsetError::BadSnapshot { reason };
        let value: serde_json::Value =
            serde_json::from_str(text).map_err(|e| bad(e.to_string()))?;
        let serde_json::Value::Object(mut map) = value else {
            return Err(bad("the text is not a JSON object".into()));
        };
        match map.remove("v").as_ref().and_then(|v| v.as_u64()) {
            Some(SNAPSHOT_PROGRESS_VERSION) => {}
            Some(v) => {
                return Err(bad(format!(
                    "its version {v} is newer than this connector reads ({SNAPSHOT_PROGRESS_VERSION})"
                )));
            }
            None => return Err(bad("it has no version v".into())),
        }
        let complete = match map.remove("complete") {
            Some(serde_json::Value::Bool(b)) => b,
            _ => return Err(bad("complete is not true or false".into())),
        };
        let scope = match map.remove("scope").as_ref().and_then(|v| v.as_str()) {
            None | Some("initial") => SnapshotScope::Initial,
            Some("incremental") => SnapshotScope::Incremental,
            Some(other) => return Err(bad(format!("unknown scope {other:?}"))),
        };
        let text_field =
            |map: &mut Map<String, serde_json::Value>, name: &str| match map.remove(name) {
                None | Some(serde_json::Value::Null) => Ok(None),
                Some(serde_json::Value::String(s)) => Ok(Some(s)),
                Some(_) => Err(bad(format!("{name} is not text"))),
            };
        let condition = text_field(&mut map, "where")?;
        let signal = text_field(&mut map, "signal")?;
        let mut flag = |name: &str| match map.remove(name) {
            None | Some(serde_json::Value::Null) => Ok(false),
            Some(serde_json::Value::Bool(b)) => Ok(b),
            Some(_) => Err(bad(format!("{name} is not true or false"))),
        };
        let paused = flag("paused")?;
        let stopped = flag("stopped")?;
        let tables = match map.remove("tables") {
            Some(serde_json::Value::Object(tables)) => tables,
            None => Map::new(),
            Some(_) => return Err(bad("tables is not an object".into())),
        };
        let mut out = Vec::with_capacity(tables.len());
        for (name, t) in tables {
            let serde_json::Value::Object(t) = t else {
                return Err(bad(format!("table {name} is not an object")));
            };
            let done = t
                .get("done")
                .and_then(|v| v.as_bool())
                .ok_or_else(|| bad(format!("table {name}: done is not true or false")))?;
            let rows = match t.get("rows") {
                None => 0,
                Some(v) => v
                    .as_u64()
                    .ok_or_else(|| bad(format!("table {name}: rows is not a count")))?,
            };
            let frontier = match t.get("frontier") {
                None | Some(serde_json::Value::Null) => None,
                Some(v) => Some(
                    serde_json::from_value::<SnapshotBound>(v.clone())
                        .map_err(|e| bad(format!("table {name}: frontier: {e}")))?,
                ),
            };
            out.push((
                name,
                TableProgress {
                    done,
                    rows,
                    frontier,
                },
            ));
        }
        Ok(SnapshotProgress {
            complete,
            scope,
            condition,
            signal,
            paused,
            stopped,
            tables: out,
            extra: map,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cdc_core::Decimal;

    fn sample() -> SnapshotProgress {
        let mut p = SnapshotProgress::new(
            SnapshotScope::Initial,
            ["APP.A".to_owned(), "APP.B".to_owned(), "APP.C".to_owned()],
        );
        p.finish_table("APP.A");
        let b = p.table_mut("APP.B").expect("listed");
        b.rows = 5;
        b.frontier = Some(SnapshotBound::Key(vec![
            Value::Number(Decimal::new(42, 0)),
            Value::Text("x\"y".into()),
        ]));
        p
    }

    #[test]
    fn round_trips_in_order() {
        let p = sample();
        let text = p.to_json();
        let back = SnapshotProgress::from_json(&text).expect("reads");
        assert_eq!(back, p);
        assert_eq!(back.next_table().map(|(t, _)| t), Some("APP.B"));
        assert_eq!(back.tables_remaining(), 2);
        assert_eq!(back.rows(), 5);
        assert!(!back.complete);
    }

    #[test]
    fn completes_when_every_table_is_done() {
        let mut p = sample();
        p.finish_table("APP.B");
        assert!(!p.complete);
        p.finish_table("APP.C");
        assert!(p.complete);
        p.add_table("APP.D".into());
        assert!(!p.complete);
        p.add_table("APP.D".into());
        assert_eq!(p.tables.len(), 4);
        assert!(SnapshotProgress::new(SnapshotScope::Initial, Vec::new()).complete);
    }

    #[test]
    fn unknown_fields_survive() {
        let text = r#"{"v":1,"complete":false,"scope":"incremental","where":"ID > 3","signal":"s-1","paused":true,"tables":{"APP.T":{"done":false,"rows":0,"frontier":{"row_id":"AAAR3sAAEAAAACXAAA"}}},"later":{"x":1}}"#;
        let p = SnapshotProgress::from_json(text).expect("reads");
        assert_eq!(p.scope, SnapshotScope::Incremental);
        assert_eq!(p.condition.as_deref(), Some("ID > 3"));
        assert_eq!(p.signal.as_deref(), Some("s-1"));
        assert!(p.paused && !p.stopped);
        assert_eq!(
            p.table("APP.T").and_then(|t| t.frontier.clone()),
            Some(SnapshotBound::RowId("AAAR3sAAEAAAACXAAA".into()))
        );
        let again = SnapshotProgress::from_json(&p.to_json()).expect("reads");
        assert_eq!(again.extra.get("later"), Some(&serde_json::json!({"x": 1})));
    }

    #[test]
    fn what_it_cannot_read_is_refused() {
        for (text, says) in [
            (r#"{"v":2,"complete":true}"#, "newer"),
            (r#"{"complete":true}"#, "no version"),
            (r#"{"v":1,"complete":"yes"}"#, "complete"),
            (r#"{"v":1,"complete":true,"scope":"partial"}"#, "scope"),
            (
                r#"{"v":1,"complete":false,"tables":{"T":{"done":1}}}"#,
                "done",
            ),
            (
                r#"{"v":1,"complete":false,"tables":{"T":{"done":false,"frontier":{"key":"x"}}}}"#,
                "frontier",
            ),
            ("[]", "not a JSON object"),
        ] {
            let error = SnapshotProgress::from_json(text)
                .expect_err(text)
                .to_string();
            assert!(error.contains(says), "{text}: {error}");
        }
    }
}
