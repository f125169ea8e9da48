//! Scenarios: a regression written as data — a JSON file of semantic events that the simulator
//! plays through the same database model as the random workload. The format is documented in
//! `docs/simulator.md`; `scenarios/` in this crate holds examples.

use std::path::Path;

use cdc_core::{ColumnDef, ColumnType, Decimal, OracleDateTime, TimeZone, Value};
use serde::{Deserialize, Deserializer, de};

use super::SimError;
use super::db::{ColumnInput, DbOp, SessionName, SimConfig, SimDatabase};
use super::source::{Fault, SimSource};
use super::workload::{Step, Workload};

/// A scenario file.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Scenario {
    /// Named after the invariant it guards.
    pub name: String,
    #[serde(default)]
    pub description: String,
    /// The database set-up; omitted fields take their defaults.
    #[serde(default)]
    pub database: SimConfig,
    pub events: Vec<Event>,
}

/// One event: an operation on the database, or a fault queued on the source when it is
/// played. Tables are `OWNER.TABLE` in the session's container, or `PDB.OWNER.TABLE`; values
/// are JSON, read with the column's type (see `docs/simulator.md`).
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    Op(DbOp<serde_json::Value>),
    Fault(Fault),
}

/// The `fault` event: the one event that is not an operation on the database.
#[derive(Deserialize)]
#[serde(tag = "event", rename_all = "snake_case", deny_unknown_fields)]
enum FaultEvent {
    Fault { fault: Fault },
}

// By hand rather than derived: an enum over both, with the database operations untagged,
// would answer any mistake in an event with "data did not match any variant"; reading the
// tag first keeps serde's message about the event itself.
impl<'de> Deserialize<'de> for Event {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Event, D::Error> {
        let event = serde_json::Value::deserialize(deserializer)?;
        let read = if event.get("event").and_then(serde_json::Value::as_str) == Some("fault") {
            FaultEvent::deserialize(event).map(|FaultEvent::Fault { fault }| Event::Fault(fault))
        } else {
            DbOp::deserialize(event).map(Event::Op)
        };
        read.map_err(de::Error::custom)
    }
}

impl ColumnInput for serde_json::Value {
    fn read(&self, column: &ColumnDef) -> Result<Value, SimError> {
        json_value(column, self)
    }
}

impl Scenario {
    pub fn from_json(text: &str) -> Result<Scenario, SimError> {
        serde_json::from_str(text).map_err(|e| SimError::Scenario(format!("scenario JSON: {e}")))
    }

    pub fn load(path: &Path) -> Result<Scenario, SimError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| SimError::Scenario(format!("{}: {e}", path.display())))?;
        Scenario::from_json(&text)
    }

    /// A source with the scenario's database, its events still to play (one per
    /// `advance` step, or `per_poll` at every `current_scn`).
    pub fn into_source(self, per_poll: usize) -> Result<SimSource, SimError> {
        let db = SimDatabase::new(self.database)?;
        Ok(SimSource::with_workload(
            db,
            Workload::Script(ScriptedEvents::new(self.events)),
            per_poll,
        ))
    }

    /// A source with every event played; scripted faults are queued on it.
    pub fn play(self) -> Result<SimSource, SimError> {
        let mut db = SimDatabase::new(self.database)?;
        let mut script = Workload::Script(ScriptedEvents::new(self.events));
        let faults = script.run(&mut db)?;
        let mut source = SimSource::new(db);
        for f in faults {
            source.inject(f);
        }
        Ok(source)
    }
}

/// A scenario's events, played one per step.
#[derive(Debug, Clone)]
pub struct ScriptedEvents {
    events: Vec<Event>,
    next: usize,
}

impl ScriptedEvents {
    pub fn new(events: Vec<Event>) -> ScriptedEvents {
        ScriptedEvents { events, next: 0 }
    }

    pub(crate) fn step(&mut self, db: &mut SimDatabase) -> Result<Step, SimError> {
        let Some(event) = self.events.get(self.next) else {
            return Ok(Step::Done);
        };
        self.next += 1;
        let at = self.next;
        let op = match event {
            Event::Op(op) => op,
            Event::Fault(fault) => return Ok(Step::Fault(fault.clone())),
        };
        if let Some(session) = statement_session(op) {
            open_session(db, session).map_err(|e| e.at_event(at))?;
        }
        db.apply_op(op).map_err(|e| e.at_event(at))?;
        Ok(Step::Applied)
    }
}

/// The session of a DML statement or DBMS_LOB call, which opens it if it is new.
fn statement_session<V>(op: &DbOp<V>) -> Option<&SessionName> {
    match op {
        DbOp::Insert { session, .. }
        | DbOp::Update { session, .. }
        | DbOp::Delete { session, .. }
        | DbOp::LobWrite { session, .. }
        | DbOp::LobTrim { session, .. }
        | DbOp::LobErase { session, .. } => Some(session),
        _ => None,
    }
}

/// A session's first statement opens it with defaults, as a `begin` event of its own would.
fn open_session(db: &mut SimDatabase, session: &SessionName) -> Result<(), SimError> {
    if !db.sessions.contains_key(session) {
        db.apply(&DbOp::Begin {
            session: session.clone(),
            pdb: None,
            user: None,
            private_strand: None,
        })?;
    }
    Ok(())
}

fn bad(col: &ColumnDef, v: &serde_json::Value, what: &str) -> SimError {
    SimError::Scenario(format!("column {}: {v} is not {what}", col.name))
}

fn parse_datetime(text: &str) -> Option<OracleDateTime> {
    let (date, time) = text
        .trim()
        .split_once(' ')
        .unwrap_or((text.trim(), "00:00:00"));
    let mut d = date.split('-');
    let year: i16 = d.next()?.parse().ok()?;
    let month: u8 = d.next()?.parse().ok()?;
    let day: u8 = d.next()?.parse().ok()?;
    let (hms, frac) = time.split_once('.').unwrap_or((time, ""));
    let mut t = hms.split(':');
    let hour: u8 = t.next()?.parse().ok()?;
    let minute: u8 = t.next()?.parse().ok()?;
    let second: u8 = t.next()?.parse().ok()?;
    let nanos = if frac.is_empty() {
        0
    } else {
        if frac.len() > 9 || !frac.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        format!("{frac:0<9}").parse().ok()?
    };
    OracleDateTime::new(year, month, day, hour, minute, second, nanos)
}

fn parse_offset(text: &str) -> Option<i16> {
    let sign = match text.as_bytes().first()? {
        b'+' => 1,
        b'-' => -1,
        _ => return None,
    };
    let (h, m) = text.get(1..)?.split_once(':')?;
    Some(sign * (h.parse::<i16>().ok()? * 60 + m.parse::<i16>().ok()?))
}

/// `[+-]D HH:MI:SS[.f]` as nanoseconds.
fn parse_ds(text: &str) -> Option<i128> {
    let text = text.trim();
    let (neg, rest) = match text.as_bytes().first()? {
        b'-' => (true, &text[1..]),
        b'+' => (false, &text[1..]),
        _ => (false, text),
    };
    let (days, time) = rest.split_once(' ')?;
    let days: i128 = days.parse().ok()?;
    let t = parse_datetime(&format!("2000-01-01 {time}"))?;
    let n = ((days * 86_400
        + i128::from(t.hour) * 3600
        + i128::from(t.minute) * 60
        + i128::from(t.second))
        * 1_000_000_000)
        + i128::from(t.nanos);
    Some(if neg { -n } else { n })
}

/// `[+-]Y-M` as months.
fn parse_ym(text: &str) -> Option<i64> {
    let text = text.trim();
    let (neg, rest) = match text.as_bytes().first()? {
        b'-' => (true, &text[1..]),
        b'+' => (false, &text[1..]),
        _ => (false, text),
    };
    let (y, m) = rest.split_once('-')?;
    let n = y.parse::<i64>().ok()? * 12 + m.parse::<i64>().ok()?;
    Some(if neg { -n } else { n })
}

/// A scenario's JSON value read with its column's type.
pub fn json_value(col: &ColumnDef, v: &serde_json::Value) -> Result<Value, SimError> {
    use serde_json::Value as J;
    if v.is_null() {
        return Ok(Value::Null);
    }
    let text = match v {
        J::String(s) => s.clone(),
        J::Number(n) => n.to_string(),
        J::Bool(b) => b.to_string(),
        other => return Err(bad(col, other, "a scalar")),
    };
    Ok(match col.data_type {
        ColumnType::Number | ColumnType::Float => {
            Value::Number(Decimal::parse(&text).map_err(|_| bad(col, v, "a number"))?)
        }
        ColumnType::BinaryDouble => {
            Value::BinaryDouble(text.parse().map_err(|_| bad(col, v, "a double"))?)
        }
        ColumnType::BinaryFloat => {
            Value::BinaryFloat(text.parse().map_err(|_| bad(col, v, "a float"))?)
        }
        ColumnType::Date => {
            let t = parse_datetime(&text).ok_or_else(|| bad(col, v, "YYYY-MM-DD HH24:MI:SS"))?;
            Value::Date(OracleDateTime { nanos: 0, ..t })
        }
        ColumnType::Timestamp => {
            Value::Timestamp(parse_datetime(&text).ok_or_else(|| bad(col, v, "a timestamp"))?)
        }
        ColumnType::TimestampLtz => {
            Value::TimestampLtz(parse_datetime(&text).ok_or_else(|| bad(col, v, "a timestamp"))?)
        }
        ColumnType::TimestampTz => {
            let (ts, zone) = text
                .rsplit_once(' ')
                .ok_or_else(|| bad(col, v, "a timestamp with +HH:MI"))?;
            let t = parse_datetime(ts).ok_or_else(|| bad(col, v, "a timestamp with +HH:MI"))?;
            let offset =
                parse_offset(zone).ok_or_else(|| bad(col, v, "a timestamp with +HH:MI"))?;
            Value::TimestampTz(t, TimeZone::Offset(offset))
        }
        ColumnType::IntervalYm => Value::IntervalYm(match v {
            J::Number(n) => n.as_i64().ok_or_else(|| bad(col, v, "months"))?,
            _ => parse_ym(&text).ok_or_else(|| bad(col, v, "[+-]Y-MM"))?,
        }),
        ColumnType::IntervalDs => Value::IntervalDs(
            parse_ds(&text)
                .ok_or_else(|| bad(col, v, "[+-]D HH:MI:SS.F"))?
                .into(),
        ),
        ColumnType::Raw | ColumnType::Blob | ColumnType::LongRaw => {
            if text.len() % 2 != 0 {
                return Err(bad(col, v, "hex"));
            }
            let bytes = (0..text.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(text.get(i..i + 2).unwrap_or("zz"), 16))
                .collect::<Result<Vec<u8>, _>>()
                .map_err(|_| bad(col, v, "hex"))?;
            Value::Raw(bytes)
        }
        ColumnType::Boolean | ColumnType::Json | ColumnType::Vector => Value::Unsupported,
        _ => Value::Text(text),
    })
}

#[cfg(test)]
mod tests {
    use serde_json::{Value as J, json};

    use super::*;
    use crate::sim::db::RowSel;
    use crate::sim::model::{ColumnSpec, Organization, TableSpec};

    fn event(text: &str) -> Event {
        let scenario = format!(r#"{{"name": "t", "events": [{text}]}}"#);
        let mut events = Scenario::from_json(&scenario).unwrap().events;
        assert_eq!(events.len(), 1);
        events.remove(0)
    }

    fn op(text: &str) -> DbOp<J> {
        match event(text) {
            Event::Op(op) => op,
            Event::Fault(f) => panic!("{text}: read as the fault {f:?}"),
        }
    }

    fn pairs(pairs: &[(&str, J)]) -> Vec<(String, J)> {
        pairs
            .iter()
            .map(|(c, v)| ((*c).to_owned(), v.clone()))
            .collect()
    }

    /// The scenario format of `docs/simulator.md`, event by event, as the operations it reads
    /// into: a change to `DbOp` that changed the format fails here.
    #[test]
    fn events_read_as_documented() {
        let s = || SessionName::from("s");
        assert_eq!(
            op(r#"{"event": "begin", "session": "s"}"#),
            DbOp::Begin {
                session: s(),
                pdb: None,
                user: None,
                private_strand: None
            }
        );
        assert_eq!(
            op(
                r#"{"event": "begin", "session": "s", "pdb": "P", "user": "U", "private_strand": true}"#
            ),
            DbOp::Begin {
                session: s(),
                pdb: Some("P".into()),
                user: Some("U".into()),
                private_strand: Some(true)
            }
        );
        // a column named twice keeps its first place and its last value
        assert_eq!(
            op(
                r#"{"event": "insert", "session": "s", "table": "APP.T", "values": {"B": 1, "A": "x", "B": null}}"#
            ),
            DbOp::Insert {
                session: s(),
                table: "APP.T".into(),
                row: pairs(&[("B", J::Null), ("A", json!("x"))]),
                fails: false
            }
        );
        assert_eq!(
            op(
                r#"{"event": "insert", "session": "s", "table": "APP.T", "values": {}, "fails": true}"#
            ),
            DbOp::Insert {
                session: s(),
                table: "APP.T".into(),
                row: Vec::new(),
                fails: true
            }
        );
        assert_eq!(
            op(
                r#"{"event": "update", "session": "s", "table": "APP.T", "where": {"ID": 1}, "set": {"N": "y", "M": 2}}"#
            ),
            DbOp::Update {
                session: s(),
                table: "APP.T".into(),
                rows: vec![RowSel::Match(pairs(&[("ID", json!(1))]))],
                set: pairs(&[("N", json!("y")), ("M", json!(2))])
            }
        );
        assert_eq!(
            op(r#"{"event": "delete", "session": "s", "table": "APP.T", "where": {"ID": 1}}"#),
            DbOp::Delete {
                session: s(),
                table: "APP.T".into(),
                rows: vec![RowSel::Match(pairs(&[("ID", json!(1))]))]
            }
        );
        assert_eq!(
            op(r#"{"event": "savepoint", "session": "s", "name": "A"}"#),
            DbOp::Savepoint {
                session: s(),
                name: "A".into()
            }
        );
        assert_eq!(
            op(r#"{"event": "rollback_to", "session": "s", "name": "A"}"#),
            DbOp::RollbackTo {
                session: s(),
                name: "A".into()
            }
        );
        assert_eq!(
            op(r#"{"event": "commit", "session": "s"}"#),
            DbOp::Commit { session: s() }
        );
        assert_eq!(
            op(r#"{"event": "rollback", "session": "s"}"#),
            DbOp::Rollback { session: s() }
        );
        assert_eq!(
            op(
                r#"{"event": "create_table", "user": "U", "table": {"owner": "APP", "name": "T", "columns": [{"name": "ID", "type": "NUMBER"}]}}"#
            ),
            DbOp::CreateTable {
                spec: TableSpec {
                    pdb: None,
                    owner: "APP".into(),
                    name: "T".into(),
                    columns: vec![ColumnSpec {
                        name: "ID".into(),
                        data_type: "NUMBER".into(),
                        nullable: true
                    }],
                    primary_key: Vec::new(),
                    unique_indexes: Vec::new(),
                    organization: Organization::Heap
                },
                user: Some("U".into())
            }
        );
        assert_eq!(
            op(
                r#"{"event": "add_column", "table": "APP.T", "column": {"name": "C", "type": "DATE"}}"#
            ),
            DbOp::AddColumn {
                table: "APP.T".into(),
                column: ColumnSpec {
                    name: "C".into(),
                    data_type: "DATE".into(),
                    nullable: true
                }
            }
        );
        assert_eq!(
            op(r#"{"event": "drop_table", "table": "APP.T"}"#),
            DbOp::DropTable {
                table: "APP.T".into()
            }
        );
        assert_eq!(
            op(r#"{"event": "truncate", "table": "APP.T"}"#),
            DbOp::Truncate {
                table: "APP.T".into()
            }
        );
        assert_eq!(
            op(r#"{"event": "add_partition", "table": "APP.T", "name": "P9"}"#),
            DbOp::AddPartition {
                table: "APP.T".into(),
                name: "P9".into(),
                less_than: None
            }
        );
        assert_eq!(op(r#"{"event": "log_switch"}"#), DbOp::LogSwitch);
        assert_eq!(op(r#"{"event": "archive"}"#), DbOp::Archive);
        assert_eq!(
            op(r#"{"event": "dictionary_build"}"#),
            DbOp::DictionaryBuild
        );
        assert_eq!(
            op(r#"{"event": "purge", "up_to_sequence": 3}"#),
            DbOp::Purge {
                up_to_sequence: 3,
                remove_file: false
            }
        );
        assert_eq!(
            op(r#"{"event": "gap", "sequence": 2}"#),
            DbOp::Gap { sequence: 2 }
        );
        assert_eq!(
            op(r#"{"event": "flush_strand", "session": "s"}"#),
            DbOp::FlushStrand { session: s() }
        );
        assert_eq!(
            op(r#"{"event": "tick", "millis": 500}"#),
            DbOp::Tick { millis: 500 }
        );
        assert_eq!(
            op(r#"{"event": "kill_session", "session": "s"}"#),
            DbOp::KillSession { session: s() }
        );
        assert_eq!(op(r#"{"event": "instance_crash"}"#), DbOp::InstanceCrash);
        assert_eq!(
            op(r#"{"event": "restore"}"#),
            DbOp::Restore { new_dbid: false }
        );
        assert_eq!(
            op(r#"{"event": "enable_thread", "thread": 2}"#),
            DbOp::EnableThread { thread: 2 }
        );
        let row = || RowSel::Match(pairs(&[("ID", json!(2))]));
        assert_eq!(
            op(
                r#"{"event": "lob_write", "session": "s", "table": "APP.D", "where": {"ID": 2}, "column": "B", "offset": 8, "value": "XYZ"}"#
            ),
            DbOp::LobWrite {
                session: s(),
                table: "APP.D".into(),
                row: row(),
                column: "B".into(),
                offset: 8,
                data: json!("XYZ")
            }
        );
        assert_eq!(
            op(
                r#"{"event": "lob_trim", "session": "s", "table": "APP.D", "where": {"ID": 2}, "column": "B", "length": 10}"#
            ),
            DbOp::LobTrim {
                session: s(),
                table: "APP.D".into(),
                row: row(),
                column: "B".into(),
                length: 10
            }
        );
        assert_eq!(
            op(
                r#"{"event": "lob_erase", "session": "s", "table": "APP.D", "where": {"ID": 2}, "column": "B", "amount": 3, "offset": 2}"#
            ),
            DbOp::LobErase {
                session: s(),
                table: "APP.D".into(),
                row: row(),
                column: "B".into(),
                amount: 3,
                offset: 2
            }
        );
        assert_eq!(
            event(r#"{"event": "fault", "fault": {"kind": "drop_connection", "after_rows": 2}}"#),
            Event::Fault(Fault::DropConnection { after_rows: 2 })
        );
    }

    #[test]
    fn malformed_events_are_refused() {
        for text in [
            r#"{"event": "nope"}"#,
            r#"{"session": "s"}"#,
            r#"{"event": "commit"}"#,
            r#"{"event": "commit", "session": "s", "extra": 1}"#,
            r#"{"event": "insert", "session": "s", "table": "APP.T", "values": [1]}"#,
            r#"{"event": "fault"}"#,
            r#"{"event": "fault", "fault": {"kind": "drop_connection", "after_rows": 1}, "x": 2}"#,
        ] {
            let scenario = format!(r#"{{"name": "t", "events": [{text}]}}"#);
            assert!(Scenario::from_json(&scenario).is_err(), "{text}");
        }
    }
}
