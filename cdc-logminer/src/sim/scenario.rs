//! Scenarios: a regression written as data — a JSON file of semantic events that the simulator
//! plays through the same database model as the random workload. The format is documented in
//! `docs/simulator.md`; `scenarios/` in this crate holds examples.

use std::path::Path;

use cdc_core::{ColumnDef, ColumnType, Decimal, OracleDateTime, TimeZone, Value};
use serde::{Deserialize, Serialize};
use serde_json::Map;

use super::SimError;
use super::db::{DbOp, LobCall, RowSel, SimConfig, SimDatabase};
use super::model::{ColumnSpec, TableSpec};
use super::source::{Fault, SimSource};
use super::workload::{Step, Workload};

/// A scenario file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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

/// One semantic event. Tables are `OWNER.TABLE` in the session's container, or
/// `PDB.OWNER.TABLE`; values are JSON, read with the column's type (see `docs/simulator.md`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case", deny_unknown_fields)]
pub enum Event {
    Begin {
        session: String,
        #[serde(default)]
        pdb: Option<String>,
        #[serde(default)]
        user: Option<String>,
        #[serde(default)]
        private_strand: Option<bool>,
    },
    Insert {
        session: String,
        table: String,
        values: Map<String, serde_json::Value>,
        #[serde(default)]
        fails: bool,
    },
    Update {
        session: String,
        table: String,
        #[serde(rename = "where")]
        filter: Map<String, serde_json::Value>,
        set: Map<String, serde_json::Value>,
    },
    Delete {
        session: String,
        table: String,
        #[serde(rename = "where")]
        filter: Map<String, serde_json::Value>,
    },
    Savepoint {
        session: String,
        name: String,
    },
    RollbackTo {
        session: String,
        name: String,
    },
    Commit {
        session: String,
    },
    Rollback {
        session: String,
    },
    CreateTable {
        table: TableSpec,
        #[serde(default)]
        user: Option<String>,
    },
    AddColumn {
        table: String,
        column: ColumnSpec,
    },
    DropTable {
        table: String,
    },
    Truncate {
        table: String,
    },
    AddPartition {
        table: String,
        name: String,
        #[serde(default)]
        less_than: Option<i64>,
    },
    LogSwitch,
    Archive,
    Purge {
        up_to_sequence: u32,
        #[serde(default)]
        remove_file: bool,
    },
    Gap {
        sequence: u32,
    },
    FlushStrand {
        session: String,
    },
    Tick {
        millis: u64,
    },
    KillSession {
        session: String,
    },
    InstanceCrash,
    Restore {
        #[serde(default)]
        new_dbid: bool,
    },
    EnableThread {
        thread: u16,
    },
    Fault {
        fault: Fault,
    },
    /// `DBMS_LOB.WRITE` into the first row matching `where`: `value` (text, or hex for a
    /// BLOB) at the 1-based `offset`.
    LobWrite {
        session: String,
        table: String,
        #[serde(rename = "where")]
        filter: Map<String, serde_json::Value>,
        column: String,
        offset: u64,
        value: serde_json::Value,
    },
    /// `DBMS_LOB.TRIM` to `length` characters or bytes.
    LobTrim {
        session: String,
        table: String,
        #[serde(rename = "where")]
        filter: Map<String, serde_json::Value>,
        column: String,
        length: u64,
    },
    /// `DBMS_LOB.ERASE` of `amount` characters or bytes from the 1-based `offset`.
    LobErase {
        session: String,
        table: String,
        #[serde(rename = "where")]
        filter: Map<String, serde_json::Value>,
        column: String,
        amount: u64,
        offset: u64,
    },
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
        let Some(event) = self.events.get(self.next).cloned() else {
            return Ok(Step::Done);
        };
        self.next += 1;
        let at = self.next;
        let op = match to_op(db, event) {
            Ok(Some(op)) => op,
            Ok(None) => return Ok(Step::Applied),
            Err(Flow::Fault(f)) => return Ok(Step::Fault(f)),
            Err(Flow::Error(e)) => return Err(e.at_event(at)),
        };
        db.apply(&op).map_err(|e| e.at_event(at))?;
        Ok(Step::Applied)
    }
}

enum Flow {
    Fault(Fault),
    Error(SimError),
}

impl From<SimError> for Flow {
    fn from(e: SimError) -> Self {
        Flow::Error(e)
    }
}

fn values(
    db: &SimDatabase,
    session: &str,
    table: &str,
    map: &Map<String, serde_json::Value>,
) -> Result<Vec<(String, Value)>, SimError> {
    let t = db.find_table(Some(session), table)?;
    let layout = db
        .containers
        .get(t.0)
        .and_then(|c| c.tables.get(t.1))
        .and_then(|t| t.layout())
        .ok_or_else(|| SimError::Scenario(format!("{table}: no layout")))?;
    map.iter()
        .map(|(name, v)| {
            let col = layout
                .column(name)
                .ok_or_else(|| SimError::Scenario(format!("{table}: no column {name}")))?;
            Ok((name.clone(), json_value(col, v)?))
        })
        .collect()
}

fn to_op(db: &mut SimDatabase, event: Event) -> Result<Option<DbOp>, Flow> {
    Ok(Some(match event {
        Event::Begin {
            session,
            pdb,
            user,
            private_strand,
        } => DbOp::Begin {
            session,
            pdb,
            user,
            private_strand,
        },
        Event::Insert {
            session,
            table,
            values: v,
            fails,
        } => {
            open_session(db, &session)?;
            let row = values(db, &session, &table, &v)?;
            DbOp::Insert {
                session,
                table,
                row,
                fails,
            }
        }
        Event::Update {
            session,
            table,
            filter,
            set,
        } => {
            open_session(db, &session)?;
            let filter = values(db, &session, &table, &filter)?;
            let set = values(db, &session, &table, &set)?;
            DbOp::Update {
                session,
                table,
                rows: vec![RowSel::Match(filter)],
                set,
            }
        }
        Event::Delete {
            session,
            table,
            filter,
        } => {
            open_session(db, &session)?;
            let filter = values(db, &session, &table, &filter)?;
            DbOp::Delete {
                session,
                table,
                rows: vec![RowSel::Match(filter)],
            }
        }
        Event::Savepoint { session, name } => DbOp::Savepoint { session, name },
        Event::RollbackTo { session, name } => DbOp::RollbackTo { session, name },
        Event::Commit { session } => DbOp::Commit { session },
        Event::Rollback { session } => DbOp::Rollback { session },
        Event::CreateTable { table, user } => DbOp::CreateTable { user, spec: table },
        Event::AddColumn { table, column } => DbOp::AddColumn { table, column },
        Event::DropTable { table } => DbOp::DropTable { table },
        Event::Truncate { table } => DbOp::Truncate { table },
        Event::AddPartition {
            table,
            name,
            less_than,
        } => DbOp::AddPartition {
            table,
            name,
            less_than,
        },
        Event::LogSwitch => DbOp::LogSwitch,
        Event::Archive => DbOp::Archive,
        Event::Purge {
            up_to_sequence,
            remove_file,
        } => DbOp::Purge {
            up_to_sequence,
            remove_file,
        },
        Event::Gap { sequence } => DbOp::Gap { sequence },
        Event::FlushStrand { session } => DbOp::FlushStrand { session },
        Event::Tick { millis } => DbOp::Tick { millis },
        Event::KillSession { session } => DbOp::KillSession { session },
        Event::InstanceCrash => DbOp::InstanceCrash,
        Event::Restore { new_dbid } => DbOp::Restore { new_dbid },
        Event::EnableThread { thread } => DbOp::EnableThread { thread },
        Event::Fault { fault } => return Err(Flow::Fault(fault)),
        Event::LobWrite {
            session,
            table,
            filter,
            column,
            offset,
            value,
        } => {
            open_session(db, &session)?;
            let data = values(
                db,
                &session,
                &table,
                &Map::from_iter([(column.clone(), value)]),
            )?
            .pop()
            .map(|(_, v)| v)
            .unwrap_or(Value::Null);
            lob_op(
                db,
                session,
                table,
                &filter,
                column,
                LobCall::Write { offset, data },
            )?
        }
        Event::LobTrim {
            session,
            table,
            filter,
            column,
            length,
        } => lob_op(
            db,
            session,
            table,
            &filter,
            column,
            LobCall::Trim { length },
        )?,
        Event::LobErase {
            session,
            table,
            filter,
            column,
            amount,
            offset,
        } => lob_op(
            db,
            session,
            table,
            &filter,
            column,
            LobCall::Erase { amount, offset },
        )?,
    }))
}

/// A DBMS_LOB call on the first row matching `filter`.
fn lob_op(
    db: &mut SimDatabase,
    session: String,
    table: String,
    filter: &Map<String, serde_json::Value>,
    column: String,
    call: LobCall,
) -> Result<DbOp, SimError> {
    open_session(db, &session)?;
    let row = RowSel::Match(values(db, &session, &table, filter)?);
    Ok(DbOp::Lob {
        session,
        table,
        row,
        column,
        call,
    })
}

/// A session's first statement opens it with defaults.
fn open_session(db: &mut SimDatabase, session: &str) -> Result<(), SimError> {
    if !db.sessions.contains_key(session) {
        db.apply(&DbOp::Begin {
            session: session.to_owned(),
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
