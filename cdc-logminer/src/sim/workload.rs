//! The seeded workload generator: concurrent sessions in one or more containers doing inserts,
//! updates, deletes and key changes over the standard tables, with savepoints and partial
//! rollbacks, full rollbacks, failed statements, multi-row statements, an excluded user, long
//! and huge transactions, DDL (CREATE TABLE, ADD COLUMN, TRUNCATE, ADD PARTITION) and log
//! switches — one [`DbOp`] per step, so a source can run it while the engine mines.

use std::collections::BTreeMap;

use cdc_core::{
    ColumnDef, ColumnType, Decimal, OracleDateTime, TableId, TableLayout, TimeZone, Value,
};
use serde::{Deserialize, Serialize};

use super::SimError;
use super::clock::datetime_from_epoch_nanos;
use super::db::{DbOp, RowSel, SessionName, SimDatabase};
use super::model::{ColumnSpec, Organization, TableSpec};
use super::rng::SimRng;
use super::scenario::ScriptedEvents;
use super::source::Fault;

/// What the generator does. Weights are relative; rates are per transaction or per step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct WorkloadConfig {
    pub seed: u64,
    /// Row changes to make (committed or not); then every open transaction ends.
    pub changes: u64,
    pub sessions: u32,
    pub max_rows_per_tx: u32,
    pub insert_weight: f64,
    pub update_weight: f64,
    pub delete_weight: f64,
    pub key_change_weight: f64,
    /// Per transaction: a savepoint and a rollback to it.
    pub savepoint_rollback_rate: f64,
    /// Per transaction: it ends in ROLLBACK.
    pub full_rollback_rate: f64,
    /// Per statement: it fails (constraint violation) and is undone at once.
    pub failed_statement_rate: f64,
    /// Per UPDATE/DELETE: it touches two rows in one statement (one RS_ID, two SSNs).
    pub multi_row_rate: f64,
    /// Per step: a DDL statement.
    pub ddl_rate: f64,
    /// A user whose transactions a test excludes (`cdc.users.exclude`).
    pub excluded_user: Option<String>,
    pub excluded_user_rate: f64,
    /// Per INSERT into APP.EVENTS: a NOTE long enough to need CSF rows.
    pub long_text_rate: f64,
    /// One transaction stays open from the start to the end of the run.
    pub long_transaction: bool,
    /// One transaction inserts this many rows (0 = none).
    pub huge_transaction_rows: u64,
    /// Think time between steps, up to this many milliseconds.
    pub think_millis: u64,
    /// Per step: an explicit log switch (besides the switches of full logs).
    pub log_switch_rate: f64,
    /// Per CLOB value: it is long enough (2 000–12 000 characters) to be stored out of the
    /// row, so LogMiner shows it as INTERNAL and LOB_WRITE rows. Drawn from a stream of its
    /// own, so the rate changes LOB values only, never which statements a seed makes.
    pub large_lob_rate: f64,
    /// ALTERs the DDL statements may make of APP.CUSTOMERS over the run: add a column (of
    /// several types), drop one, set one unused, drop the unused ones, modify one's type. Past
    /// it, the draw that would have made one truncates HR.AUDIT_LOG. Rows written before such
    /// an ALTER and mined after it come back generic (STATUS 2, `"COL n"`).
    pub max_alters: u32,
    /// Before its first change, the database writes a dictionary build into the redo and
    /// switches logs, so that the build is archived (flagged DICTIONARY_BEGIN/END): the
    /// scheduled build a database with a connector has made before its redo, which a replay
    /// of rows older than an ALTER starts from. Part of the seed's history, so that a
    /// simulator replayed for a restart has it too.
    pub dictionary_build: bool,
}

impl Default for WorkloadConfig {
    fn default() -> Self {
        WorkloadConfig {
            seed: 1,
            changes: 1000,
            sessions: 4,
            max_rows_per_tx: 4,
            insert_weight: 3.0,
            update_weight: 4.0,
            delete_weight: 3.0,
            key_change_weight: 0.5,
            savepoint_rollback_rate: 0.1,
            full_rollback_rate: 0.05,
            failed_statement_rate: 0.02,
            multi_row_rate: 0.05,
            ddl_rate: 0.002,
            excluded_user: Some("ETL_BATCH".into()),
            excluded_user_rate: 0.1,
            long_text_rate: 0.02,
            long_transaction: false,
            huge_transaction_rows: 0,
            think_millis: 200,
            log_switch_rate: 0.001,
            large_lob_rate: 0.1,
            max_alters: 6,
            dictionary_build: false,
        }
    }
}

/// What one step did.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    Applied,
    /// A scripted fault to queue on the source.
    Fault(Fault),
    Done,
}

/// A workload: the random generator or a scripted scenario.
#[derive(Debug, Clone)]
pub enum Workload {
    Random(Box<RandomWorkload>),
    Script(ScriptedEvents),
}

impl Workload {
    pub fn random(config: WorkloadConfig) -> Workload {
        Workload::Random(Box::new(RandomWorkload::new(config)))
    }

    /// One step; `Ok(false)` once done. Scripted faults are dropped here; use
    /// [`Workload::step_full`] to see them.
    pub fn step(&mut self, db: &mut SimDatabase) -> Result<bool, SimError> {
        Ok(!matches!(self.step_full(db)?, Step::Done))
    }

    pub fn step_full(&mut self, db: &mut SimDatabase) -> Result<Step, SimError> {
        match self {
            Workload::Random(w) => w.step(db),
            Workload::Script(s) => s.step(db),
        }
    }

    /// Runs to the end.
    pub fn run(&mut self, db: &mut SimDatabase) -> Result<Vec<Fault>, SimError> {
        let mut faults = Vec::new();
        loop {
            match self.step_full(db)? {
                Step::Done => return Ok(faults),
                Step::Fault(f) => faults.push(f),
                Step::Applied => {}
            }
        }
    }
}

#[derive(Debug, Clone, Default)]
struct SessionPlan {
    rows_left: u32,
    rollback: bool,
    savepoint_done: bool,
    savepoint_at: Option<u32>,
}

/// The seeded random workload.
#[derive(Debug, Clone)]
pub struct RandomWorkload {
    config: WorkloadConfig,
    rng: SimRng,
    /// Sizes and text of out-of-row LOB values.
    lob_rng: SimRng,
    changes: u64,
    plans: BTreeMap<SessionName, SessionPlan>,
    next_ids: BTreeMap<(usize, String), i64>,
    created: u32,
    alters: u32,
    added_columns: u32,
    huge_left: u64,
    finishing: bool,
    built: bool,
}

/// The session of the transaction open from start to end (`long_transaction`).
fn long_tx() -> SessionName {
    SessionName::from("LONG_TX")
}

/// The session of the transaction of `huge_transaction_rows` rows.
fn huge_tx() -> SessionName {
    SessionName::from("HUGE_TX")
}

impl RandomWorkload {
    pub fn new(config: WorkloadConfig) -> RandomWorkload {
        RandomWorkload {
            rng: SimRng::new(config.seed ^ 0x57AB_1E00),
            lob_rng: SimRng::new(config.seed ^ 0x10B_5EED),
            huge_left: config.huge_transaction_rows,
            config,
            changes: 0,
            plans: BTreeMap::new(),
            next_ids: BTreeMap::new(),
            created: 0,
            alters: 0,
            added_columns: 0,
            finishing: false,
            built: false,
        }
    }

    /// The next key of a table: past every key it holds when the workload first writes it
    /// (1 for an empty table), so rows loaded before the run keep theirs.
    fn next_id(&mut self, db: &SimDatabase, con: usize, table: &str) -> i64 {
        let id = self
            .next_ids
            .entry((con, table.to_owned()))
            .or_insert_with(|| first_free_id(db, con, table));
        let v = *id;
        *id += 1;
        v
    }

    fn step(&mut self, db: &mut SimDatabase) -> Result<Step, SimError> {
        if self.config.dictionary_build && !self.built {
            self.built = true;
            db.apply(&DbOp::DictionaryBuild)?;
            db.apply(&DbOp::LogSwitch)?;
            return Ok(Step::Applied);
        }
        let think = self.rng.below(self.config.think_millis + 1);
        db.apply(&DbOp::Tick { millis: think })?;
        if (self.changes >= self.config.changes && self.huge_left == 0) || self.finishing {
            self.finishing = true;
            // end the open transactions one per step, then stop
            let open: Vec<SessionName> = db
                .sessions
                .iter()
                .filter(|(n, s)| !n.is_internal() && s.has_tx())
                .map(|(n, _)| n.clone())
                .collect();
            return match open.first() {
                Some(name) => {
                    let rollback = self.plans.get(name).is_some_and(|p| p.rollback);
                    let session = name.clone();
                    db.apply(&if rollback {
                        DbOp::Rollback { session }
                    } else {
                        DbOp::Commit { session }
                    })?;
                    Ok(Step::Applied)
                }
                None => Ok(Step::Done),
            };
        }
        if self.config.long_transaction && !db.sessions.contains_key(&long_tx()) {
            let long = long_tx();
            let pdb = db.containers.first().and_then(|c| c.name.clone());
            db.apply(&DbOp::Begin {
                session: long.clone(),
                pdb,
                user: Some("APP".into()),
                private_strand: Some(true),
            })?;
            self.dml(db, &long, "APP.EVENTS")?;
            return Ok(Step::Applied);
        }
        if self.huge_left > 0 {
            let huge = huge_tx();
            if !db.sessions.contains_key(&huge) {
                let pdb = db.containers.first().and_then(|c| c.name.clone());
                db.apply(&DbOp::Begin {
                    session: huge.clone(),
                    pdb,
                    user: Some("APP".into()),
                    private_strand: Some(false),
                })?;
            }
            self.dml_insert(db, &huge, "APP.EVENTS")?;
            self.huge_left -= 1;
            if self.huge_left == 0 {
                db.apply(&DbOp::Commit { session: huge })?;
            }
            return Ok(Step::Applied);
        }
        if self.rng.chance(self.config.log_switch_rate) {
            db.apply(&DbOp::LogSwitch)?;
            return Ok(Step::Applied);
        }
        if self.rng.chance(self.config.ddl_rate) {
            self.ddl(db)?;
            return Ok(Step::Applied);
        }
        if self.config.long_transaction && self.rng.chance(0.01) {
            self.dml(db, &long_tx(), "APP.EVENTS")?;
            return Ok(Step::Applied);
        }
        let n = self.config.sessions.max(1);
        let session = SessionName::from(format!("S{}", 1 + self.rng.below(u64::from(n))));
        if db.tx_changes(&session).is_none() || !self.plans.contains_key(&session) {
            // a new transaction: container, user, size, fate
            let pdb = if db.containers.len() > 1 {
                let i = self.rng.below(db.containers.len() as u64) as usize;
                db.containers.get(i).and_then(|c| c.name.clone())
            } else {
                db.containers.first().and_then(|c| c.name.clone())
            };
            let user = match &self.config.excluded_user {
                Some(u) if self.rng.chance(self.config.excluded_user_rate) => u.clone(),
                _ => "APP".into(),
            };
            db.apply(&DbOp::Begin {
                session: session.clone(),
                pdb,
                user: Some(user),
                private_strand: None,
            })?;
            let rows = 1 + self
                .rng
                .below(u64::from(self.config.max_rows_per_tx.max(1)))
                as u32;
            let savepoint_at = self
                .rng
                .chance(self.config.savepoint_rollback_rate)
                .then(|| self.rng.below(u64::from(rows)) as u32);
            self.plans.insert(
                session.clone(),
                SessionPlan {
                    rows_left: rows,
                    rollback: self.rng.chance(self.config.full_rollback_rate),
                    savepoint_done: false,
                    savepoint_at,
                },
            );
        }
        let plan = self.plans.get(&session).cloned().unwrap_or_default();
        if plan.rows_left == 0 {
            self.plans.remove(&session);
            db.apply(&if plan.rollback {
                DbOp::Rollback { session }
            } else {
                DbOp::Commit { session }
            })?;
            return Ok(Step::Applied);
        }
        if let Some(at) = plan.savepoint_at
            && !plan.savepoint_done
        {
            if plan.rows_left == at + 1 && db.tx_has_savepoint(&session).is_none() {
                db.apply(&DbOp::Savepoint {
                    session: session.clone(),
                    name: "SP1".into(),
                })?;
            } else if db.tx_has_savepoint(&session).is_some() && plan.rows_left <= at {
                db.apply(&DbOp::RollbackTo {
                    session: session.clone(),
                    name: "SP1".into(),
                })?;
                if let Some(p) = self.plans.get_mut(&session) {
                    p.savepoint_done = true;
                }
                return Ok(Step::Applied);
            }
        }
        let table = self.pick_table(db, &session);
        self.dml(db, &session, &table)?;
        if let Some(p) = self.plans.get_mut(&session) {
            p.rows_left = p.rows_left.saturating_sub(1);
        }
        Ok(Step::Applied)
    }

    fn pick_table(&mut self, db: &SimDatabase, session: &SessionName) -> String {
        let con = db.session_con(session).unwrap_or(0);
        let live: Vec<&TableId> = db
            .containers
            .get(con)
            .map(|c| {
                c.tables
                    .iter()
                    .filter(|t| !t.dropped)
                    .map(|t| &t.id)
                    .collect()
            })
            .unwrap_or_default();
        // the same draw as picking from the list of names, without formatting every name
        self.rng
            .pick(&live)
            .map(|id| format!("{}.{}", id.owner, id.table))
            .unwrap_or_else(|| "APP.CUSTOMERS".into())
    }

    /// One DML statement by the weights; falls back to an insert when no row is free.
    fn dml(
        &mut self,
        db: &mut SimDatabase,
        session: &SessionName,
        table: &str,
    ) -> Result<(), SimError> {
        let c = &self.config;
        let choice = self
            .rng
            .weighted(&[
                c.insert_weight,
                c.update_weight,
                c.delete_weight,
                c.key_change_weight,
            ])
            .unwrap_or(0);
        let t = db.find_table(Some(session), table)?;
        // rows not locked by another session, in ROWID order, without copying the table's
        // keys: a huge transaction's table holds millions of rows
        let Some(rows_of) = db.table(t).ok().map(|tb| &tb.rows) else {
            return self.dml_insert(db, session, table);
        };
        let locked = db.rows_locked_by_others(session, t);
        let free_count = rows_of.len()
            - locked
                .iter()
                .filter(|r| rows_of.contains_key(r.as_str()))
                .count();
        let nth_free = |i: u64| -> String {
            rows_of
                .keys()
                .filter(|r| !locked.contains(r))
                .nth(i as usize)
                .cloned()
                .unwrap_or_default()
        };
        if choice == 0 || free_count == 0 {
            return self.dml_insert(db, session, table);
        }
        let mut rows = vec![RowSel::RowId(nth_free(self.rng.below(free_count as u64)))];
        if free_count > 1 && self.rng.chance(self.config.multi_row_rate) {
            let other = nth_free(self.rng.below(free_count as u64));
            if RowSel::RowId(other.clone()) != rows[0] {
                rows.push(RowSel::RowId(other));
            }
        }
        let (layout, key, partitioned) = match db.table(t).ok() {
            Some(tb) => (
                tb.shared_layout(),
                tb.layout().map(|l| l.key.clone()).unwrap_or_default(),
                matches!(tb.organization, Organization::Range { .. }),
            ),
            None => (None, Vec::new(), false),
        };
        let Some(layout) = layout else {
            return Ok(());
        };
        let session_s = session.clone();
        let result = match choice {
            2 => db.apply(&DbOp::Delete {
                session: session_s,
                table: table.to_owned(),
                rows,
            }),
            3 if key.len() == 1 && !partitioned && rows.len() == 1 => {
                // a key change
                let id = self.next_id(db, t.con, table) + 1_000_000;
                let col = layout.column(&key[0]).cloned();
                let value = match col.map(|c| c.data_type) {
                    Some(ColumnType::Number) => Value::Number(Decimal::new(i128::from(id), 0)),
                    _ => Value::Text(format!("K{id}")),
                };
                db.apply(&DbOp::Update {
                    session: session_s,
                    table: table.to_owned(),
                    rows,
                    set: vec![(key[0].clone(), value)],
                })
            }
            _ => {
                let candidates: Vec<&ColumnDef> = layout
                    .columns
                    .iter()
                    .filter(|c| !key.contains(&c.name))
                    .collect();
                if candidates.is_empty() {
                    return self.dml_insert(db, session, table);
                }
                let k = 1 + self.rng.below(candidates.len().min(3) as u64) as usize;
                let mut set = Vec::new();
                for _ in 0..k {
                    if let Some(c) = self.rng.pick(&candidates).copied()
                        && !set.iter().any(|(n, _): &(String, Value)| n == &c.name)
                    {
                        let v = self.value(db, c, None);
                        set.push((c.name.clone(), v));
                    }
                }
                db.apply(&DbOp::Update {
                    session: session_s,
                    table: table.to_owned(),
                    rows,
                    set,
                })
            }
        };
        match result {
            Ok(()) => {
                self.changes += 1;
                Ok(())
            }
            // a row another session locked meanwhile, a partition move: skip the statement
            Err(SimError::Busy(_)) | Err(SimError::Ora(..)) => Ok(()),
            Err(e) => Err(e),
        }
    }

    fn dml_insert(
        &mut self,
        db: &mut SimDatabase,
        session: &SessionName,
        table: &str,
    ) -> Result<(), SimError> {
        let t = db.find_table(Some(session), table)?;
        let Some(tb) = db.table(t).ok() else {
            return Ok(());
        };
        let Some(layout) = tb.shared_layout() else {
            return Ok(());
        };
        let partition_bound = tb.partitions.last().and_then(|p| p.less_than);
        let partitions = tb.partitions.len();
        let id = self.next_id(db, t.con, table);
        if let Some(bound) = partition_bound
            && id >= bound
        {
            // the range table needs its next partition first
            let qualified = match db.containers.get(t.con).and_then(|c| c.name.clone()) {
                Some(pdb) => format!("{pdb}.{table}"),
                None => table.to_owned(),
            };
            let op = DbOp::AddPartition {
                table: qualified,
                name: format!("P{}", partitions + 1),
                less_than: Some(bound + 100),
            };
            if db.apply(&op).is_err() {
                return Ok(());
            }
        }
        let row = self.new_row(db, &layout, id);
        let fails = self.rng.chance(self.config.failed_statement_rate);
        match db.apply(&DbOp::Insert {
            session: session.clone(),
            table: table.to_owned(),
            row,
            fails,
        }) {
            Ok(()) => {
                self.changes += 1;
                Ok(())
            }
            Err(SimError::Busy(_)) | Err(SimError::Ora(..)) => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// The values of a new row with key `id`: the key columns (the first column of a table
    /// without a key) from `id`, the others drawn from the seed.
    pub(crate) fn new_row(
        &mut self,
        db: &SimDatabase,
        layout: &TableLayout,
        id: i64,
    ) -> Vec<(String, Value)> {
        layout
            .columns
            .iter()
            .map(|c| c.name.clone())
            .zip(self.new_values(db, layout, id))
            .collect()
    }

    /// [`RandomWorkload::new_row`]'s values alone, in the layout's column order.
    pub(crate) fn new_values(
        &mut self,
        db: &SimDatabase,
        layout: &TableLayout,
        id: i64,
    ) -> Vec<Value> {
        let mut row = Vec::with_capacity(layout.columns.len());
        for c in &layout.columns {
            let v = if is_id_column(layout, c) {
                match c.data_type {
                    ColumnType::Number => Value::Number(Decimal::new(i128::from(id), 0)),
                    _ => Value::Text(format!("C{id}")),
                }
            } else if c.name == "NOTE" && self.rng.chance(self.config.long_text_rate) {
                let n = 3000 + self.rng.below(990) as usize;
                Value::Text(self.text(n))
            } else {
                self.value(db, c, None)
            };
            row.push(v);
        }
        row
    }

    fn ddl(&mut self, db: &mut SimDatabase) -> Result<(), SimError> {
        let con = self.rng.below(db.containers.len().max(1) as u64) as usize;
        let pdb = db.containers.get(con).and_then(|c| c.name.clone());
        let qualify = |t: &str| match &pdb {
            Some(p) => format!("{p}.{t}"),
            None => t.to_owned(),
        };
        let result = match self.rng.below(3) {
            0 => {
                self.created += 1;
                let spec = TableSpec {
                    pdb: pdb.clone(),
                    owner: "APP".into(),
                    name: format!("NEW_T{}", self.created),
                    columns: vec![
                        ColumnSpec {
                            name: "ID".into(),
                            data_type: "NUMBER(10)".into(),
                            nullable: false,
                        },
                        ColumnSpec {
                            name: "V".into(),
                            data_type: "VARCHAR2(50)".into(),
                            nullable: true,
                        },
                    ],
                    primary_key: vec!["ID".into()],
                    unique_indexes: vec![],
                    organization: Organization::Heap,
                };
                db.apply(&DbOp::CreateTable {
                    user: Some("APP".into()),
                    spec,
                })
            }
            1 if self.alters < self.config.max_alters => {
                self.alters += 1;
                let op = self.alter(db, con, qualify("APP.CUSTOMERS"));
                db.apply(&op)
            }
            _ => db.apply(&DbOp::Truncate {
                table: qualify("HR.AUDIT_LOG"),
            }),
        };
        match result {
            Ok(()) | Err(SimError::Ora(..)) => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// One ALTER of `table` (APP.CUSTOMERS in container `con`): the columns it adds
    /// (`EXTRA_n`) are the ones it may drop, set unused or modify.
    fn alter(&mut self, db: &SimDatabase, con: usize, table: String) -> DbOp {
        let layout = db
            .containers
            .get(con)
            .and_then(|c| {
                c.tables
                    .iter()
                    .rfind(|t| !t.dropped && t.id.owner == "APP" && t.id.table == "CUSTOMERS")
            })
            .and_then(|t| t.shared_layout());
        let extras: Vec<ColumnDef> = layout
            .iter()
            .flat_map(|l| &l.columns)
            .filter(|c| c.name.starts_with("EXTRA_"))
            .cloned()
            .collect();
        let hidden = layout
            .as_ref()
            .is_some_and(|l| l.segment.iter().any(Option::is_none));
        let pick = self.rng.pick(&extras).cloned();
        match (self.rng.below(6), pick) {
            (1, Some(c)) => DbOp::DropColumn {
                table,
                column: c.name,
            },
            (2, Some(c)) => DbOp::SetUnused {
                table,
                column: c.name,
            },
            (3, _) if hidden => DbOp::DropUnusedColumns { table },
            (4, Some(c)) => {
                // a longer text, a wider number, or (refused unless the column is empty,
                // ORA-01439) another type
                let data_type = match c.data_type {
                    ColumnType::Varchar2 => format!("VARCHAR2({})", c.length.max(1) * 2),
                    ColumnType::Number if self.rng.chance(0.5) => "VARCHAR2(40)".to_owned(),
                    ColumnType::Number => "NUMBER(16,2)".to_owned(),
                    _ => "VARCHAR2(40)".to_owned(),
                };
                DbOp::ModifyColumn {
                    table,
                    column: ColumnSpec {
                        name: c.name,
                        data_type,
                        nullable: true,
                    },
                }
            }
            _ => {
                self.added_columns += 1;
                const TYPES: &[&str] = &[
                    "VARCHAR2(30)",
                    "NUMBER(12,2)",
                    "DATE",
                    "TIMESTAMP(6)",
                    "NVARCHAR2(20)",
                    "BINARY_DOUBLE",
                    "INTERVAL DAY(2) TO SECOND(6)",
                    "RAW(16)",
                ];
                let data_type = self.rng.pick(TYPES).copied().unwrap_or("VARCHAR2(30)");
                DbOp::AddColumn {
                    table,
                    column: ColumnSpec {
                        name: format!("EXTRA_{}", self.added_columns),
                        data_type: data_type.to_owned(),
                        nullable: true,
                    },
                }
            }
        }
    }

    fn text(&mut self, len: usize) -> String {
        words(&mut self.rng, len)
    }

    fn national(&mut self, len: usize) -> String {
        const PARTS: &[&str] = &[
            "nch\u{e1}r",
            "\u{fc}ber",
            "caf\u{e9}",
            "\u{65e5}\u{672c}",
            "\u{1F600}",
            "plain",
            "O'K",
            "back\\slash",
        ];
        let mut out = String::new();
        while out.chars().count() < len {
            out.push_str(self.rng.pick(PARTS).copied().unwrap_or("x"));
        }
        out.chars().take(len).collect()
    }

    /// A value for a column, drawn from the seed.
    fn value(&mut self, db: &SimDatabase, c: &ColumnDef, _hint: Option<i64>) -> Value {
        if c.nullable && self.rng.chance(0.08) {
            return Value::Null;
        }
        let now = db.clock.epoch_nanos();
        let r = &mut self.rng;
        match c.data_type {
            ColumnType::Number | ColumnType::Float => {
                let scale = c.scale.unwrap_or(r.range(0, 6) as i16).max(0);
                let digits = c.precision.map(|p| u32::from(p).min(18)).unwrap_or(12);
                let max = 10i128.pow(digits.saturating_sub(1).max(1));
                let mut unscaled = r.below(max as u64) as i128;
                if r.chance(0.2) {
                    unscaled = -unscaled;
                }
                Value::Number(Decimal::new(unscaled, scale))
            }
            ColumnType::BinaryDouble => {
                let exp = r.range(0, 20) as i32 - 10;
                let sign = if r.chance(0.3) { -1.0 } else { 1.0 };
                Value::BinaryDouble(sign * (1.0 + r.unit()) * 10f64.powi(exp))
            }
            ColumnType::BinaryFloat => Value::BinaryFloat(((r.unit() - 0.3) * 1e6) as f32),
            ColumnType::Char => {
                let n = r.range(1, u64::from(c.length.clamp(1, 8))) as usize;
                Value::Text(self.text(n).replace(['\n', '\t'], " ").trim().to_owned())
            }
            ColumnType::NChar | ColumnType::NVarchar2 | ColumnType::NClob => {
                let n = r.range(1, u64::from(c.length.clamp(1, 20))) as usize;
                Value::Text(self.national(n))
            }
            ColumnType::Varchar2 | ColumnType::Long => {
                let n = r.range(1, u64::from(c.length.clamp(1, 40))) as usize;
                Value::Text(self.text(n))
            }
            ColumnType::Clob => {
                let n = r.range(1, 2000) as usize;
                let mut text = self.text(n);
                if self.lob_rng.chance(self.config.large_lob_rate) {
                    let more = self.lob_rng.range(2000, 12_000) as usize;
                    // characters beyond the BMP count once in LOB offsets, twice in UTF-16
                    text.push_str(" caf\u{e9} \u{1F600} ");
                    text.push_str(&words(&mut self.lob_rng, more));
                }
                Value::Text(text)
            }
            ColumnType::Raw | ColumnType::Blob | ColumnType::LongRaw => {
                let n = r.range(1, u64::from(c.length.clamp(1, 16)));
                Value::Raw((0..n).map(|_| r.below(256) as u8).collect())
            }
            ColumnType::Date => {
                let t = datetime_from_epoch_nanos(
                    now - i128::from(r.below(400 * 86_400)) * 1_000_000_000,
                );
                Value::Date(OracleDateTime { nanos: 0, ..t })
            }
            ColumnType::Timestamp | ColumnType::TimestampLtz | ColumnType::TimestampTz => {
                let scale = c.scale.unwrap_or(6).clamp(0, 9) as u32;
                let unit = 10i128.pow(9 - scale);
                let nanos = now - i128::from(r.below(86_400_000_000_000));
                let t = datetime_from_epoch_nanos(nanos - nanos.rem_euclid(unit));
                match c.data_type {
                    ColumnType::Timestamp => Value::Timestamp(t),
                    ColumnType::TimestampLtz => Value::TimestampLtz(t),
                    _ => {
                        let zones = [0i16, 330, -300, 60, -90, 545];
                        Value::TimestampTz(
                            t,
                            TimeZone::Offset(r.pick(&zones).copied().unwrap_or(0)),
                        )
                    }
                }
            }
            ColumnType::IntervalYm => {
                let years = 10i64.pow(u32::from(c.precision.unwrap_or(2)).min(4)) - 1;
                let m = r.below((years * 12) as u64) as i64;
                Value::IntervalYm(if r.chance(0.2) { -m } else { m })
            }
            ColumnType::IntervalDs => {
                let days = 10i128.pow(u32::from(c.precision.unwrap_or(2)).min(5)) - 1;
                let scale = c.scale.unwrap_or(6).clamp(0, 9) as u32;
                let unit = 10i128.pow(9 - scale);
                let n = (r.below(u64::MAX >> 1) as i128) % (days * 86_400 * 1_000_000_000);
                let n = n - n.rem_euclid(unit);
                Value::IntervalDs(if r.chance(0.2) { -n } else { n }.into())
            }
            _ => Value::Null,
        }
    }
}

/// Whether the generator writes a row's id into this column: a key column, or the first
/// column of a table without a key.
fn is_id_column(layout: &TableLayout, c: &ColumnDef) -> bool {
    layout.key.contains(&c.name) || (layout.key.is_empty() && c.position == 1)
}

/// One past the highest id the table's rows hold in their id column (a NUMBER, or text such
/// as `C12` / `K1000012`), 1 for an empty table.
pub(crate) fn first_free_id(db: &SimDatabase, con: usize, table: &str) -> i64 {
    let Ok(t) = db.find_table_in(con, table) else {
        return 1;
    };
    let Some(tb) = db.table(t).ok() else {
        return 1;
    };
    let Some(layout) = tb.layout() else {
        return 1;
    };
    let Some(at) = layout.columns.iter().position(|c| is_id_column(layout, c)) else {
        return 1;
    };
    let id_of = |v: &Value| match v {
        Value::Number(d) => d.unscaled_at(0).and_then(|n| i64::try_from(n).ok()),
        Value::Text(s) => s.get(1..).and_then(|digits| digits.parse().ok()),
        _ => None,
    };
    tb.rows
        .values()
        .filter_map(|row| row.get(at).and_then(id_of))
        .max()
        .map_or(1, |max| max.saturating_add(1).max(1))
}

/// `len` bytes of ASCII words with the characters SQL_REDO has to escape (quotes, newlines,
/// tabs).
fn words(rng: &mut SimRng, len: usize) -> String {
    const WORDS: &[&str] = &[
        "alpha",
        "beta",
        "O'Brien",
        "gamma",
        "delta",
        "x",
        "lorem",
        "ipsum",
        "it''s",
        "%",
        "a,b",
        "semi;colon",
        "tab\tbed",
        "new\nline",
        "quote\"d",
    ];
    let mut out = String::with_capacity(len + 8);
    while out.len() < len {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(rng.pick(WORDS).copied().unwrap_or("x"));
    }
    out.truncate(len);
    out
}
