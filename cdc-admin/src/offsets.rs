//! `offsets show` and `offsets set`: the stored position in words, and the spec's procedure
//! for moving it ("Reading and moving the offset by hand": stop → read → edit → PATCH →
//! resume) with the edits of [`cdc_offset::edit`], checked against the database first.
//!
//! ```text
//!  GET offsets ─► Stored::None | Readable(Position) | Unreadable{raw, error} (CDC-3002)
//!      show: in words │ the raw fields, the error, exit 1
//!      set:  plan ─► (refusals) ─► applying ─► stop ─► read again, plan again ─► PATCH
//!            ─► before_resume (resnapshot's signal) ─► resume ─► applied
//!  an Unreadable offset is replaced only with --replace-unreadable: a fresh offset at --scn
//!  keeping what of it still reads and is needed (cdc_offset::codec::salvage)
//! ```
//!
//! # Error handling
//!
//! Nothing is retried. Every refusal comes before the first ops event, and changes nothing. A
//! failure after the stop and before the PATCH leaves the old offset and a STOPPED connector,
//! and says how to resume it; one after the PATCH says that the new offset is stored.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use cdc_core::config::CdcConfig;
use cdc_core::{CdcError, ConXid, OpsKind, Scn};
use cdc_logminer::RedoSource;
use cdc_offset::codec::{self, Salvaged, offsets_request};
use cdc_offset::edit::{self, Direction};
use cdc_offset::{DbIdentity, OffsetError, Position, ResumePoint, SnapshotProgress};
use rdkafka::ClientConfig;
use serde_json::{Map, Value, json};

use crate::error::AdminError;
use crate::redo::{self, RedoReport};
use crate::rest::ConnectClient;

/// The test hook that fails `offsets set` at one of its steps, as a crash between them would:
/// `after-stop` (the connector is stopped, nothing else done) or `before-patch` (the edited
/// offset is ready, the PATCH not sent). For the tests of what a failure leaves behind.
pub const FAIL_AT_VAR: &str = "ORACLE_CDC_ADMIN_FAIL_AT";

/// The flag that replaces an offset the connector cannot read.
pub const REPLACE_UNREADABLE_FLAG: &str = "--replace-unreadable";

/// The stored offset, as the connector's REST API gives it.
#[derive(Debug)]
pub enum Stored {
    /// No offset: the first start begins at `cdc.start.scn` or the current SCN.
    None,
    Readable(Position),
    /// An offset the connector cannot start from (CDC-3002).
    Unreadable(Unreadable),
}

/// An offset that does not decode: what is stored, and why it does not read.
#[derive(Debug)]
pub struct Unreadable {
    /// The stored offset, as stored.
    pub raw: Value,
    pub error: OffsetError,
}

impl Unreadable {
    /// The stop the connector makes of it: code, message, action and runbook.
    pub fn stop(&self) -> CdcError {
        CdcError::new(self.error.code(), self.error.to_string())
    }

    /// The stored fields in the order stored (none when the offset is not a JSON object).
    pub fn fields(&self) -> Map<String, Value> {
        self.raw.as_object().cloned().unwrap_or_default()
    }

    /// Why `offsets set` without [`REPLACE_UNREADABLE_FLAG`] refuses to move this one.
    pub fn refused_without_flag(&self, scn: Scn) -> AdminError {
        AdminError::Refused(format!(
            "the stored offset cannot be read, so the connector cannot start from it: {}. \
             `oracle-cdc-admin offsets show` prints what is stored. Give \
             {REPLACE_UNREADABLE_FLAG} to replace it with a fresh offset at SCN {scn} that keeps \
             what still reads of dbid, resetlogs_scn, journal_generation, released_xids, \
             signal_offset and the fields this version does not know; the rest is dropped",
            self.stop()
        ))
    }

    /// Why a command that needs a readable offset refuses this one.
    pub fn refusal(&self, name: &str) -> AdminError {
        AdminError::Refused(format!(
            "the stored offset of {name} cannot be read, so the connector cannot start from it: \
             {}. The offset is left as it is; `oracle-cdc-admin offsets show` prints what is \
             stored, and `oracle-cdc-admin offsets set --scn N --reason TEXT \
             {REPLACE_UNREADABLE_FLAG}` replaces it with a fresh offset at SCN N",
            self.stop()
        ))
    }
}

/// The connector's stored offset, from its REST API, read or not.
pub fn read_stored(
    rest: &ConnectClient,
    name: &str,
    config: &CdcConfig,
) -> Result<Stored, AdminError> {
    let body = rest.offsets(name)?;
    let raw = codec::stored_offset(&body, &config.topics.prefix).map_err(|e| {
        AdminError::Failed(format!(
            "the answer of {}/connectors/{name}/offsets is not Kafka Connect's: {e}",
            rest.base()
        ))
    })?;
    Ok(match raw {
        None => Stored::None,
        Some(raw) => match Position::from_json_value(raw) {
            Ok(position) => Stored::Readable(position),
            Err(error) => Stored::Unreadable(Unreadable {
                raw: raw.clone(),
                error,
            }),
        },
    })
}

/// The connector's stored position; an offset that does not read is refused
/// ([`Unreadable::refusal`]).
pub fn read_position(
    rest: &ConnectClient,
    name: &str,
    config: &CdcConfig,
) -> Result<Option<Position>, AdminError> {
    match read_stored(rest, name, config)? {
        Stored::None => Ok(None),
        Stored::Readable(position) => Ok(Some(position)),
        Stored::Unreadable(unreadable) => Err(unreadable.refusal(name)),
    }
}

/// Opens the database the configuration names (the simulator replays its workload up to
/// `position`).
pub fn open_source(
    config: &CdcConfig,
    position: Option<&Position>,
) -> Result<cdc_logminer::ConfiguredSource, AdminError> {
    cdc_logminer::source::from_config(config, position)
        .map_err(|e| AdminError::Source(e.to_string()))
}

/// `offsets show`: the position in words (text) or as JSON.
pub fn describe(
    name: &str,
    position: Option<&Position>,
    redo: Option<&RedoReport>,
) -> (String, Value) {
    let Some(p) = position else {
        let text = format!(
            "{name}: no offset stored; the first start begins at cdc.start.scn or the current SCN\n"
        );
        return (text, json!({"connector": name, "offset": null}));
    };
    let mut out = format!("{name}\n");
    let line = |out: &mut String, label: &str, value: String| {
        out.push_str(&format!("  {label:<22} {value}\n"));
    };
    let resume = match p.resume.addr {
        Some(addr) => format!("SCN {} at redo address {addr}", p.resume.scn),
        None => format!(
            "SCN {} (from the start of the log holding it)",
            p.resume.scn
        ),
    };
    line(&mut out, "resume point", resume);
    let last = match &p.last_commit {
        Some(c) => format!(
            "{} at SCN {} (thread {}), {} record(s) acknowledged",
            c.xid, c.scn, c.thread, c.event_index
        ),
        None => "none (nothing after the resume point is skipped)".to_owned(),
    };
    line(&mut out, "last commit", last);
    line(&mut out, "database", p.identity.to_string());
    line(
        &mut out,
        "journal generation",
        p.journal_generation.to_string(),
    );
    let released: Vec<String> = p.released_xids.iter().map(|x| x.to_string()).collect();
    line(
        &mut out,
        "released XIDs",
        if released.is_empty() {
            "none".to_owned()
        } else {
            released.join(", ")
        },
    );
    let snapshot = p.snapshot.as_deref().map(SnapshotProgress::from_json);
    let snapshot_text = match &snapshot {
        None => "none started".to_owned(),
        Some(Err(e)) => format!("unreadable ({e})"),
        Some(Ok(s)) => describe_snapshot(s),
    };
    line(&mut out, "snapshot", snapshot_text);
    line(
        &mut out,
        "tables pending",
        p.snapshot_pending
            .clone()
            .filter(|t| !t.is_empty())
            .unwrap_or_else(|| "none".to_owned()),
    );
    line(
        &mut out,
        "last signal handled",
        p.signal_offset
            .map_or_else(|| "none".to_owned(), |o| format!("offset {o}")),
    );
    if let Some(first) = &p.first_start {
        line(
            &mut out,
            "start floor",
            format!(
                "SCN {} (until the first commit is acknowledged)",
                first.floor_scn
            ),
        );
    }
    if let Some(redo) = redo {
        out.push_str(&redo.render_text());
    }
    let json = json!({
        "connector": name,
        "offset": Value::Object(p.to_offset_map()),
        "resume_scn": p.resume.scn.0.to_string(),
        "last_commit": p.last_commit.as_ref().map(|c| json!({
            "xid": c.xid.to_string(),
            "scn": c.scn.0.to_string(),
            "event_index": c.event_index,
        })),
        "dbid": p.identity.dbid,
        "resetlogs_scn": p.identity.resetlogs_scn.0.to_string(),
        "released_xids": released,
        "snapshot": match &snapshot {
            Some(Ok(s)) => snapshot_json(s),
            _ => Value::Null,
        },
        "snapshot_pending": p.snapshot_pending,
        "signal_offset": p.signal_offset,
        "redo": redo.map(RedoReport::to_json),
    });
    (out, json)
}

/// `offsets show` of an offset that does not read: the fields as stored (an offset holds no
/// secret; nothing of the configuration is printed), the decoder's error with its code, and
/// the command that replaces it. The command then exits 1.
pub fn describe_unreadable(name: &str, unreadable: &Unreadable) -> (String, Value) {
    let stop = unreadable.stop();
    let mut out = format!(
        "{name}: the stored offset cannot be read, so the connector cannot start from it\n  \
         {stop}\n"
    );
    match &unreadable.raw {
        Value::Object(fields) if fields.is_empty() => {
            out.push_str("stored fields: none (an empty object)\n");
        }
        Value::Object(fields) => {
            out.push_str("stored fields, as stored:\n");
            for (field, value) in fields {
                out.push_str(&format!("  {field:<22} {value}\n"));
            }
        }
        other => out.push_str(&format!("stored value, as stored: {other}\n")),
    }
    out.push_str(&format!(
        "replace it with a fresh offset (see {}): oracle-cdc-admin offsets set --scn N \
         --reason TEXT {REPLACE_UNREADABLE_FLAG}\n",
        stop.code().runbook()
    ));
    let json = json!({
        "connector": name,
        "readable": false,
        "code": stop.code().id(),
        "error": unreadable.error.to_string(),
        "runbook": stop.code().runbook(),
        "offset": unreadable.raw,
    });
    (out, json)
}

fn describe_snapshot(s: &SnapshotProgress) -> String {
    let done = s.tables.iter().filter(|(_, t)| t.done).count();
    let state = if s.stopped {
        "stopped"
    } else if s.complete {
        "complete"
    } else if s.paused {
        "paused"
    } else {
        "running"
    };
    format!(
        "{state} ({}), {done} of {} table(s) done, {} row(s)",
        s.scope.as_str(),
        s.tables.len(),
        s.rows()
    )
}

fn snapshot_json(s: &SnapshotProgress) -> Value {
    json!({
        "complete": s.complete,
        "stopped": s.stopped,
        "paused": s.paused,
        "scope": s.scope.as_str(),
        "rows": s.rows(),
        "tables": s.tables.iter().map(|(name, t)| json!({
            "table": name, "done": t.done, "rows": t.rows,
        })).collect::<Vec<_>>(),
    })
}

/// What `offsets set` is asked to do.
#[derive(Debug, Clone)]
pub struct SetRequest {
    pub scn: Scn,
    pub reason: String,
    pub operator: String,
    pub allow_skip: bool,
    pub redeliver: bool,
    pub forget_released: Vec<ConXid>,
    /// How long the connector may take to stop.
    pub stop_timeout: Duration,
    /// Replace an offset that does not read (CDC-3002) with a fresh one at `scn`.
    pub replace_unreadable: bool,
    /// The command the ops events name: `offsets set`, or `resnapshot` moving past a gap.
    pub command: &'static str,
}

/// What an edit makes of the stored offset.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub position: Position,
    /// `backward`, `same`, `forward`, or `initial` (no offset, or none that reads its
    /// `resume_scn`).
    pub direction: &'static str,
    /// The stored resume SCN, when there is one that reads.
    pub previous: Option<Scn>,
    /// Set when an unreadable offset is replaced: what of it was kept and what dropped.
    pub replaced: Option<Replaced>,
}

/// An unreadable offset replaced: the decoder's error, and one line per field kept or dropped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Replaced {
    pub error: String,
    pub kept: Vec<String>,
    pub dropped: Vec<String>,
    /// The field names kept and dropped, for the ops events.
    pub kept_fields: Vec<String>,
    pub dropped_fields: Vec<String>,
}

/// What `offsets set` did.
#[derive(Debug, Clone)]
pub struct SetOutcome {
    pub direction: &'static str,
    pub previous: Option<Scn>,
    pub position: Position,
    pub replaced: Option<Replaced>,
    pub text: String,
}

/// The Kafka side of `offsets set`: where the `offsets-set` events go.
#[derive(Debug)]
pub struct OpsWriter<'a> {
    pub client: &'a ClientConfig,
    pub config: &'a CdcConfig,
}

impl OpsWriter<'_> {
    fn write(
        &self,
        details: &BTreeMap<String, String>,
        outcome: &str,
        extra: Option<(&str, String)>,
    ) -> Result<(), AdminError> {
        let mut details = details.clone();
        details.insert("outcome".to_owned(), outcome.to_owned());
        if let Some((k, v)) = extra {
            details.insert(k.to_owned(), v);
        }
        let resume = details
            .get("new_resume_scn")
            .and_then(|s| s.parse::<u64>().ok())
            .map(Scn);
        crate::ops::write_event(
            self.client,
            self.config,
            OpsKind::OffsetsSet,
            details,
            resume,
            crate::context::CALL_TIMEOUT,
        )
    }
}

fn fail_at(step: &str) -> bool {
    std::env::var(FAIL_AT_VAR).is_ok_and(|v| v == step)
}

/// The edited position, or why the edit is refused. `current` is the stored position (`None`:
/// no offset yet, `identity` gives the database's).
pub fn edited(
    current: Option<&Position>,
    identity: DbIdentity,
    request: &SetRequest,
) -> Result<(Position, &'static str), AdminError> {
    let Some(current) = current else {
        if request.redeliver || !request.forget_released.is_empty() {
            return Err(AdminError::Refused(
                "there is no offset yet: --redeliver and --forget-released have nothing to edit"
                    .to_owned(),
            ));
        }
        return Ok((
            Position::new(ResumePoint::from_scn(request.scn), identity, 0),
            "initial",
        ));
    };
    let direction = Direction::of(current, request.scn);
    let mut position = match direction {
        Direction::Forward => {
            if !request.allow_skip {
                return Err(forward_refused(current.resume.scn, request.scn));
            }
            edit::skip_forward(current, request.scn)
        }
        Direction::Backward | Direction::Same => edit::mine_again_from(current, request.scn),
    }
    .map_err(|e| AdminError::Refused(e.to_string()))?;
    if request.redeliver {
        position = edit::deliver_again(&position);
    }
    for xid in &request.forget_released {
        position = edit::forget_released(&position, *xid)
            .map_err(|e| AdminError::Refused(e.to_string()))?;
    }
    Ok((position, direction.as_str()))
}

fn forward_refused(from: Scn, to: Scn) -> AdminError {
    AdminError::Refused(format!(
        "SCN {to} is after the resume point {from}: every change in between would not be \
         delivered. Give --allow-skip to skip it deliberately"
    ))
}

/// What `request` makes of `stored`, or why it is refused. `database` is the database's
/// identity (asked when there is no readable offset); `journal_generation` the highest
/// generation the journal topic holds for the connector (asked when an unreadable offset's own
/// does not read).
pub fn plan(
    stored: &Stored,
    database: Option<DbIdentity>,
    journal_generation: Option<u64>,
    request: &SetRequest,
) -> Result<Plan, AdminError> {
    let unreadable = match stored {
        Stored::Unreadable(unreadable) => unreadable,
        _ if request.replace_unreadable => return Err(nothing_to_replace(stored)),
        Stored::Readable(stored) => {
            let (position, direction) = edited(Some(stored), stored.identity, request)?;
            return Ok(Plan {
                position,
                direction,
                previous: Some(stored.resume.scn),
                replaced: None,
            });
        }
        Stored::None => {
            let identity = database.ok_or_else(|| {
                AdminError::Failed("the database's identity was not read".to_owned())
            })?;
            let (position, direction) = edited(None, identity, request)?;
            return Ok(Plan {
                position,
                direction,
                previous: None,
                replaced: None,
            });
        }
    };
    if !request.replace_unreadable {
        return Err(unreadable.refused_without_flag(request.scn));
    }
    let database = database
        .ok_or_else(|| AdminError::Failed("the database's identity was not read".to_owned()))?;
    replacement(unreadable, database, journal_generation, request)
}

fn nothing_to_replace(stored: &Stored) -> AdminError {
    AdminError::Refused(format!(
        "{REPLACE_UNREADABLE_FLAG}: the stored offset {}, so there is nothing to replace; move it \
         without the flag",
        if matches!(stored, Stored::None) {
            "is absent"
        } else {
            "reads"
        }
    ))
}

/// Why a field that is not kept was not: it does not read, or it is absent.
fn why_not<T>(field: &Option<Result<T, OffsetError>>) -> String {
    match field {
        Some(Err(e)) => format!("as stored it does not read: {e}"),
        _ => "not stored".to_owned(),
    }
}

/// A fresh offset at `request.scn` in place of `unreadable`, keeping what of it still reads and
/// a restart needs:
///
/// - `dbid` and `resetlogs_scn` when both read, checked against `database` (a mismatch is
///   refused: the offset belongs to another database or incarnation, CDC-5001); otherwise the
///   database's;
/// - `journal_generation`: the stored one when it reads (as every edit keeps it: chunks of a
///   newer generation were never acknowledged and the next start tombstones them), else the
///   highest generation the journal topic holds, so the next task start (one more) writes
///   under a generation no earlier start used, never an earlier one again;
/// - `released_xids` when it reads (it stops a late COMMIT of a released transaction, CDC-7001);
/// - `signal_offset` when it reads: without it the restarted connector handles every signal
///   on the topic again, from its first;
/// - the fields v1 does not know, as the decoder keeps them (primitives; a list or a map is
///   dropped).
///
/// Everything else is dropped: the resume address, the last commit and its event index (the
/// new resume point is `scn`, with a start floor there as a skip forward sets it, so exactly
/// the commits from `scn` on are published), `snapshot`, `snapshot_pending`, `start_*`,
/// `schema_epoch` (reserved, written as 0).
pub fn replacement(
    unreadable: &Unreadable,
    database: DbIdentity,
    journal_generation: Option<u64>,
    request: &SetRequest,
) -> Result<Plan, AdminError> {
    if request.redeliver {
        return Err(AdminError::Usage(format!(
            "--redeliver with {REPLACE_UNREADABLE_FLAG}: a fresh offset has no last commit, so \
             every commit from its SCN on is delivered anyway"
        )));
    }
    let fields = unreadable.fields();
    let salvaged = codec::salvage(&fields);
    let Salvaged {
        resume_scn,
        dbid,
        resetlogs_scn,
        journal_generation: stored_generation,
        released_xids,
        signal_offset,
        extra,
        refused_extra,
    } = salvaged;
    let mut kept = Vec::new();
    let mut kept_fields: Vec<String> = Vec::new();
    let mut dropped = Vec::new();
    // the stored fields a `dropped` line names already
    let mut described: Vec<&str> = vec![codec::field::V];

    let identity = match (&dbid, &resetlogs_scn) {
        (Some(Ok(dbid)), Some(Ok(resetlogs))) => {
            let stored = DbIdentity::new(*dbid, *resetlogs);
            if stored != database {
                return Err(AdminError::Refused(format!(
                    "the stored offset belongs to {stored}, but the database is {database} \
                     (CDC-5001): an offset of one database or incarnation cannot be used on \
                     another. Check --config; to capture this database from scratch, delete \
                     the offset (DELETE /connectors/NAME/offsets while STOPPED) instead. \
                     Runbook: {}",
                    cdc_core::CdcCode::Topology.runbook()
                )));
            }
            kept.push(format!(
                "dbid, resetlogs_scn: {stored} (the database's, checked)"
            ));
            kept_fields.extend(["dbid".to_owned(), "resetlogs_scn".to_owned()]);
            stored
        }
        _ => {
            let why = if matches!(dbid, Some(Ok(_))) {
                why_not(&resetlogs_scn)
            } else {
                why_not(&dbid)
            };
            described.extend([codec::field::DBID, codec::field::RESETLOGS_SCN]);
            dropped.push(format!(
                "dbid, resetlogs_scn ({why}): the database's {database} is written"
            ));
            database
        }
    };

    let generation = match &stored_generation {
        Some(Ok(generation)) => {
            kept.push(format!("journal_generation: {generation}"));
            kept_fields.push("journal_generation".to_owned());
            *generation
        }
        other => {
            let from_topic = journal_generation.ok_or_else(|| {
                AdminError::Failed(
                    "the journal topic's generations were not read for the replacement's \
                     journal_generation"
                        .to_owned(),
                )
            })?;
            dropped.push(format!(
                "journal_generation ({}): the highest generation the journal topic \
                 holds, {from_topic}, is written, so the next task start uses a newer one",
                why_not(other)
            ));
            described.push(codec::field::JOURNAL_GENERATION);
            from_topic
        }
    };

    // a fresh offset: the skip forward of an offset at SCN 0, so the start floor is the one
    // a skip forward sets
    let base = Position::new(ResumePoint::from_scn(Scn::ZERO), identity, generation);
    let mut position = edit::skip_forward(&base, request.scn).map_err(|_| {
        AdminError::Usage(format!(
            "--scn {}: a fresh offset needs an SCN above 0",
            request.scn
        ))
    })?;

    match released_xids {
        Some(Ok(ledger)) => {
            kept.push(format!("released_xids: {} transaction(s)", ledger.len()));
            kept_fields.push("released_xids".to_owned());
            position.released_xids = ledger;
        }
        Some(Err(e)) => {
            dropped.push(format!(
                "released_xids (it does not read: {e}): a late COMMIT of a transaction released \
                 before is no longer stopped (CDC-7001)"
            ));
            described.push(codec::field::RELEASED_XIDS);
        }
        None => {}
    }
    match signal_offset {
        Some(Ok(offset)) => {
            kept.push(format!("signal_offset: {offset}"));
            kept_fields.push("signal_offset".to_owned());
            position.signal_offset = Some(offset);
        }
        Some(Err(e)) => {
            dropped.push(format!(
                "signal_offset (it does not read: {e}): the connector handles the signals topic \
                 again from its first signal"
            ));
            described.push(codec::field::SIGNAL_OFFSET);
        }
        None => {}
    }
    if !extra.is_empty() {
        let names: Vec<String> = extra.iter().map(|(n, _)| n.to_owned()).collect();
        kept.push(format!(
            "fields this version does not know: {}",
            names.join(", ")
        ));
        kept_fields.extend(names);
        position.extra = extra;
    }
    for (field, error) in &refused_extra {
        dropped.push(format!("{field} ({error})"));
    }
    for xid in &request.forget_released {
        position = edit::forget_released(&position, *xid)
            .map_err(|e| AdminError::Refused(e.to_string()))?;
    }

    let previous = match &resume_scn {
        Some(Ok(scn)) => Some(*scn),
        _ => None,
    };
    let direction = match previous {
        Some(previous) => match request.scn.cmp(&previous) {
            std::cmp::Ordering::Less => "backward",
            std::cmp::Ordering::Equal => "same",
            std::cmp::Ordering::Greater => {
                if !request.allow_skip {
                    return Err(forward_refused(previous, request.scn));
                }
                "forward"
            }
        },
        None => "initial",
    };
    if let Some(v) = fields.get(codec::field::V)
        && v.as_u64() != Some(cdc_offset::POSITION_VERSION)
    {
        dropped.push(format!(
            "v = {v}: the fresh offset is written as v{}, the version this connector reads",
            cdc_offset::POSITION_VERSION
        ));
    }
    // every other stored field is dropped, named in the order stored
    let dropped_fields: Vec<String> = fields
        .keys()
        .filter(|f| f.as_str() != codec::field::V && !kept_fields.contains(f))
        .cloned()
        .collect();
    let rest: Vec<String> = dropped_fields
        .iter()
        .filter(|f| !described.contains(&f.as_str()) && !refused_extra.iter().any(|(r, _)| r == *f))
        .cloned()
        .collect();
    if !rest.is_empty() {
        dropped.push(format!(
            "{}: the new resume point is SCN {} (from the start of the log holding it, with \
             a start floor there: the commits from it on are delivered)",
            rest.join(", "),
            request.scn
        ));
    }
    Ok(Plan {
        position,
        direction,
        previous,
        replaced: Some(Replaced {
            error: unreadable.stop().to_string(),
            kept,
            dropped,
            kept_fields,
            dropped_fields,
        }),
    })
}

/// The checks against the database: the SCN is not above the current SCN and its redo is
/// still there.
pub fn check_scn(
    source: &mut dyn RedoSource,
    config: &CdcConfig,
    scn: Scn,
) -> Result<RedoReport, AdminError> {
    let report = redo::check(source, config, ResumePoint::from_scn(scn))?;
    if scn > report.current_scn {
        return Err(AdminError::Refused(format!(
            "SCN {scn} is above the database's current SCN {}",
            report.current_scn
        )));
    }
    if let Some(problem) = &report.problem {
        return Err(AdminError::Refused(format!(
            "the redo from SCN {scn} is not available: {problem}"
        )));
    }
    Ok(report)
}

fn database_identity(source: &mut dyn RedoSource) -> Result<DbIdentity, AdminError> {
    let id = source
        .identity()
        .map_err(|e| AdminError::Source(e.to_string()))?;
    Ok(DbIdentity::new(id.dbid, id.resetlogs_scn))
}

/// The highest generation of the chunks the journal topic holds for the connector (0 when it
/// holds none): the `journal_generation` of a fresh offset whose stored one does not read.
fn journal_generation_in_topic(
    config: &CdcConfig,
    client: &ClientConfig,
) -> Result<u64, AdminError> {
    let report = crate::journal::inspect(config, client.get("bootstrap.servers")).map_err(|e| {
        AdminError::Kafka(format!(
            "reading the journal topic {} for its newest generation (the replacement's \
             journal_generation): {e}",
            config.topics.txjournal
        ))
    })?;
    let live = report
        .transactions
        .iter()
        .flat_map(|t| t.generations.iter().copied());
    let findings = report
        .findings
        .iter()
        .filter_map(|f| f.key.as_ref().map(|k| k.generation));
    Ok(live.chain(findings).max().unwrap_or(0))
}

/// `offsets set`, the whole procedure ([`set_then`] with nothing between the PATCH and the
/// resume).
pub fn set(
    rest: &ConnectClient,
    name: &str,
    config: &CdcConfig,
    source: &mut dyn RedoSource,
    ops: &OpsWriter<'_>,
    request: &SetRequest,
) -> Result<SetOutcome, AdminError> {
    set_then(rest, name, config, source, ops, request, &mut |_| Ok(None))
}

/// `offsets set`, the whole procedure. `source` answers the database checks. `before_resume`
/// runs once the new offset is stored, before the connector is resumed (resnapshot writes its
/// signal there); the line it returns is printed. If it fails, the connector is left STOPPED
/// with the new offset, the `failed` event is written, and the message says so.
pub fn set_then(
    rest: &ConnectClient,
    name: &str,
    config: &CdcConfig,
    source: &mut dyn RedoSource,
    ops: &OpsWriter<'_>,
    request: &SetRequest,
    before_resume: &mut dyn FnMut(&Position) -> Result<Option<String>, AdminError>,
) -> Result<SetOutcome, AdminError> {
    let mut text = String::new();
    let before = read_stored(rest, name, config)?;
    // refused edits and database checks come before anything changes
    match (&before, request.replace_unreadable) {
        (Stored::Unreadable(unreadable), false) => {
            return Err(unreadable.refused_without_flag(request.scn));
        }
        (Stored::None | Stored::Readable(_), true) => return Err(nothing_to_replace(&before)),
        _ => {}
    }
    let database = match &before {
        Stored::Readable(_) => None,
        Stored::None | Stored::Unreadable(_) => Some(database_identity(source)?),
    };
    check_scn(source, config, request.scn)?;
    let journal_generation = match &before {
        Stored::Unreadable(unreadable)
            if !matches!(
                codec::salvage(&unreadable.fields()).journal_generation,
                Some(Ok(_))
            ) =>
        {
            Some(journal_generation_in_topic(config, ops.client)?)
        }
        _ => None,
    };
    let first = plan(&before, database, journal_generation, request)?;
    let direction = first.direction;
    if let Some(replaced) = &first.replaced {
        text.push_str(&format!(
            "replacing the unreadable offset of {name}: {}\n",
            replaced.error
        ));
        for line in &replaced.kept {
            text.push_str(&format!("  kept     {line}\n"));
        }
        for line in &replaced.dropped {
            text.push_str(&format!("  dropped  {line}\n"));
        }
    }
    if direction == "forward"
        && request.command == "offsets set"
        && let Some(previous) = first.previous
    {
        text.push_str(&format!(
            "skipping forward: the changes committed between SCN {previous} and SCN {} to the \
             captured tables ({}) will not be delivered; reload them afterwards \
             (oracle-cdc-admin resnapshot)\n",
            request.scn,
            captured_tables_text(source, config),
        ));
    }
    let mut details = BTreeMap::from([
        ("connector".to_owned(), name.to_owned()),
        ("command".to_owned(), request.command.to_owned()),
        ("reason".to_owned(), request.reason.clone()),
        ("operator".to_owned(), request.operator.clone()),
        ("direction".to_owned(), direction.to_owned()),
        (
            "previous_resume_scn".to_owned(),
            first.previous.map(|s| s.0.to_string()).unwrap_or_default(),
        ),
        ("new_resume_scn".to_owned(), request.scn.0.to_string()),
    ]);
    if !request.forget_released.is_empty() {
        details.insert(
            "forgotten_released".to_owned(),
            request
                .forget_released
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(","),
        );
    }
    if let Some(replaced) = &first.replaced {
        details.insert("replaced".to_owned(), replaced.error.clone());
        details.insert("kept".to_owned(), replaced.kept_fields.join(","));
        details.insert("dropped".to_owned(), replaced.dropped_fields.join(","));
    }
    ops.write(&details, "applying", None)?;

    let resume_hint = format!(
        "the connector is STOPPED with its previous offset; resume it with: curl -X PUT {}/connectors/{name}/resume",
        rest.base()
    );
    let failed = |error: AdminError, stopped: bool| -> AdminError {
        let _ = ops.write(&details, "failed", Some(("error", error.to_string())));
        if stopped {
            AdminError::Failed(format!("{error}; {resume_hint}"))
        } else {
            error
        }
    };
    rest.stop(name, request.stop_timeout).map_err(|e| {
        let error = failed(e, false);
        AdminError::Failed(format!(
            "{error}; the offset was not changed. The connector may still be stopping: see \
             curl {base}/connectors/{name}/status, and resume it with: curl -X PUT \
             {base}/connectors/{name}/resume",
            base = rest.base()
        ))
    })?;
    text.push_str(&format!("stopped {name}\n"));
    let result = (|| {
        if fail_at("after-stop") {
            return Err(AdminError::Failed(format!("{FAIL_AT_VAR}=after-stop")));
        }
        // the stop committed what was acknowledged: the edit starts from that offset
        let current = read_stored(rest, name, config)?;
        if let (Stored::Unreadable(was), Stored::Unreadable(now)) = (&before, &current)
            && was.raw != now.raw
        {
            return Err(AdminError::Refused(
                "the stored offset changed while the connector stopped; run the command again"
                    .to_owned(),
            ));
        }
        let now = plan(&current, database, journal_generation, request)?;
        if now.direction != direction {
            return Err(AdminError::Refused(format!(
                "the offset moved while the connector stopped: the move is now {}, not \
                 {direction}; run the command again",
                now.direction
            )));
        }
        if fail_at("before-patch") {
            return Err(AdminError::Failed(format!("{FAIL_AT_VAR}=before-patch")));
        }
        rest.patch_offsets(name, &offsets_request(&config.topics.prefix, &now.position))?;
        Ok(now)
    })();
    let done = result.map_err(|e| failed(e, true))?;
    text.push_str(&format!(
        "offset {}: resume SCN {} → {} ({direction}){}{}\n",
        if done.replaced.is_some() {
            "replaced"
        } else {
            "set"
        },
        done.previous
            .map_or_else(|| "none".to_owned(), |scn| scn.to_string()),
        request.scn,
        if request.redeliver {
            "; acknowledged transactions after it are delivered again"
        } else {
            ""
        },
        if request.forget_released.is_empty() {
            String::new()
        } else {
            format!("; forgot released {}", details["forgotten_released"])
        }
    ));
    let stored_but_stopped = |error: &AdminError| {
        let _ = ops.write(&details, "failed", Some(("error", error.to_string())));
        AdminError::Failed(format!(
            "{error}; the new offset is stored but the connector is STOPPED; resume it with: \
             curl -X PUT {}/connectors/{name}/resume",
            rest.base()
        ))
    };
    match before_resume(&done.position) {
        Ok(Some(line)) => text.push_str(&format!("{line}\n")),
        Ok(None) => {}
        Err(error) => return Err(stored_but_stopped(&error)),
    }
    rest.resume(name)
        .map_err(|error| stored_but_stopped(&error))?;
    text.push_str(&format!("resumed {name}\n"));
    if let Err(error) = ops.write(&details, "applied", None) {
        text.push_str(&format!(
            "warning: the offset was set, but the `applied` ops event could not be written: {error}\n"
        ));
    }
    Ok(SetOutcome {
        direction,
        previous: done.previous,
        position: done.position,
        replaced: done.replaced,
        text,
    })
}

/// The tables the connector captures, as the database lists them for its include and exclude
/// patterns: `OWNER.TABLE` (`PDB.OWNER.TABLE` in a container database), the names the
/// connector matches a snapshot signal's patterns against; sorted, each once.
pub fn captured_tables(
    source: &mut dyn RedoSource,
    config: &CdcConfig,
) -> Result<Vec<String>, AdminError> {
    let filter =
        |t: &cdc_core::TableId| config.is_table_included(t.pdb.as_deref(), &t.owner, &t.table);
    let objects = source
        .resolve_objects(&filter)
        .map_err(|e| AdminError::Source(format!("listing the captured tables: {e}")))?;
    let mut names: Vec<String> = objects.iter().map(|o| o.table.to_string()).collect();
    names.sort();
    names.dedup();
    Ok(names)
}

/// [`captured_tables`] for a message: the names, or the include patterns when the database
/// cannot say.
fn captured_tables_text(source: &mut dyn RedoSource, config: &CdcConfig) -> String {
    match captured_tables(source, config) {
        Ok(names) if names.is_empty() => "none".to_owned(),
        Ok(names) => names.join(", "),
        Err(_) => config.tables.include.sources().join(", "),
    }
}

/// Waits for `condition` at most `timeout`.
pub fn wait_until(timeout: Duration, mut condition: impl FnMut() -> bool) -> bool {
    let started = Instant::now();
    while started.elapsed() < timeout {
        if condition() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    condition()
}

#[cfg(test)]
mod tests {
    use super::*;
    use cdc_core::{ConId, RedoThread, Xid};
    use cdc_offset::LastCommit;

    fn request(scn: u64) -> SetRequest {
        SetRequest {
            scn: Scn(scn),
            reason: "test".to_owned(),
            operator: "me".to_owned(),
            allow_skip: false,
            redeliver: false,
            forget_released: Vec::new(),
            stop_timeout: Duration::from_secs(1),
            replace_unreadable: false,
            command: "offsets set",
        }
    }

    fn xid(sqn: u32) -> ConXid {
        ConXid {
            con: ConId(0),
            xid: Xid::new(1, 2, sqn),
        }
    }

    fn stored() -> Position {
        let mut p = Position::new(
            ResumePoint::from_scn(Scn(1000)),
            DbIdentity::new(42, Scn(7)),
            3,
        );
        p.last_commit = Some(LastCommit {
            scn: Scn(990),
            xid: xid(9),
            thread: RedoThread(1),
            addr: cdc_core::RedoAddr::new(cdc_core::RsId::new(1, 1, 0x10), 0).expect("an address"),
            event_index: 4,
        });
        p.released_xids.release(xid(5));
        p
    }

    #[test]
    fn back_keeps_the_identity_and_the_ledger_and_redeliver_clears_the_last_commit() {
        let current = stored();
        let (moved, direction) =
            edited(Some(&current), current.identity, &request(500)).expect("backward");
        assert_eq!(direction, "backward");
        assert_eq!(moved.resume, ResumePoint::from_scn(Scn(500)));
        assert_eq!(moved.identity, current.identity);
        assert_eq!(moved.released_xids, current.released_xids);
        assert_eq!(moved.last_commit, current.last_commit, "still skipped");
        let again = SetRequest {
            redeliver: true,
            ..request(500)
        };
        let (moved, _) = edited(Some(&current), current.identity, &again).expect("backward");
        assert_eq!(moved.last_commit, None, "delivered again");
    }

    #[test]
    fn forward_needs_allow_skip_and_forgetting_needs_a_released_xid() {
        let current = stored();
        let refused = edited(Some(&current), current.identity, &request(2000));
        assert!(
            matches!(&refused, Err(AdminError::Refused(m)) if m.contains("--allow-skip")),
            "{refused:?}"
        );
        let skip = SetRequest {
            allow_skip: true,
            ..request(2000)
        };
        let (moved, direction) = edited(Some(&current), current.identity, &skip).expect("skip");
        assert_eq!(direction, "forward");
        assert_eq!(moved.first_start.map(|f| f.floor_scn), Some(Scn(2000)));
        let forget = SetRequest {
            forget_released: vec![xid(5)],
            ..request(1000)
        };
        let (moved, direction) = edited(Some(&current), current.identity, &forget).expect("forget");
        assert_eq!(direction, "same");
        assert!(!moved.released_xids.contains(xid(5)));
        let unknown = SetRequest {
            forget_released: vec![xid(6)],
            ..request(1000)
        };
        assert!(edited(Some(&current), current.identity, &unknown).is_err());
    }

    #[test]
    fn without_an_offset_the_database_identity_starts_one() {
        let (p, direction) =
            edited(None, DbIdentity::new(1, Scn(2)), &request(77)).expect("initial");
        assert_eq!(direction, "initial");
        assert_eq!(p.resume.scn, Scn(77));
        assert_eq!(p.identity, DbIdentity::new(1, Scn(2)));
        let redeliver = SetRequest {
            redeliver: true,
            ..request(77)
        };
        assert!(edited(None, DbIdentity::new(1, Scn(2)), &redeliver).is_err());
    }

    /// A stored offset as a v2 connector might leave it: a newer version, a snapshot block
    /// that does not read, a field v1 does not know, and one no offset may hold.
    fn unreadable(extra: &[(&str, Value)]) -> Unreadable {
        let mut raw = json!({
            "v": 2, "resume_scn": 1000, "resume_rs_id": " 0x000001.00000002.0010 ",
            "resume_ssn": 0, "last_commit_scn": 990, "last_commit_xid": "0:1.2.9",
            "last_commit_thread": 1, "last_commit_rs_id": " 0x000001.00000001.0010 ",
            "last_commit_ssn": 0, "event_index": 4, "dbid": 42, "resetlogs_scn": "7",
            "journal_generation": 3, "schema_epoch": 0, "released_xids": "0:1.2.5",
            "snapshot": "{", "signal_offset": 12, "future_field": "kept", "future_list": [1]
        });
        for (k, v) in extra {
            raw[*k] = v.clone();
        }
        let error = Position::from_json_value(&raw).expect_err("it does not read");
        Unreadable { raw, error }
    }

    fn replace(scn: u64) -> SetRequest {
        SetRequest {
            replace_unreadable: true,
            ..request(scn)
        }
    }

    #[test]
    fn an_unreadable_offset_is_moved_only_with_the_flag_and_the_flag_only_for_one() {
        let broken = Stored::Unreadable(unreadable(&[]));
        let refused = plan(
            &broken,
            Some(DbIdentity::new(42, Scn(7))),
            None,
            &request(900),
        );
        let message = refused.expect_err("refused").to_string();
        assert!(message.contains(REPLACE_UNREADABLE_FLAG), "{message}");
        assert!(message.contains("CDC-3002"), "{message}");
        assert!(message.contains("v = 2"), "the decoder's error: {message}");
        for other in [Stored::None, Stored::Readable(stored())] {
            let refused = plan(
                &other,
                Some(DbIdentity::new(42, Scn(7))),
                None,
                &replace(900),
            );
            assert!(
                matches!(&refused, Err(AdminError::Refused(m)) if m.contains("nothing to replace")),
                "{refused:?}"
            );
        }
    }

    #[test]
    fn a_replacement_keeps_what_reads_and_is_needed_and_names_the_rest() {
        let database = DbIdentity::new(42, Scn(7));
        let old = unreadable(&[]);
        let plan = plan(
            &Stored::Unreadable(old),
            Some(database),
            None,
            &replace(900),
        )
        .expect("replaced");
        let p = &plan.position;
        assert_eq!(plan.direction, "backward");
        assert_eq!(plan.previous, Some(Scn(1000)));
        // kept, compared with the stored JSON itself
        assert_eq!(p.identity, database);
        assert_eq!(p.journal_generation, 3);
        let ledger: Vec<String> = p.released_xids.iter().map(|x| x.to_string()).collect();
        assert_eq!(ledger, ["0:1.2.5"]);
        assert_eq!(p.signal_offset, Some(12));
        assert_eq!(p.extra.get("future_field"), Some(&json!("kept")));
        // the rest dropped: a fresh resume point at the SCN with its floor, no last commit
        assert_eq!(p.resume, ResumePoint::from_scn(Scn(900)));
        assert_eq!(p.first_start.as_ref().map(|f| f.floor_scn), Some(Scn(900)));
        assert_eq!(p.last_commit, None);
        assert_eq!(p.snapshot, None);
        assert!(p.extra.get("future_list").is_none());
        let replaced = plan.replaced.expect("what was kept and dropped");
        for field in [
            "dbid",
            "resetlogs_scn",
            "journal_generation",
            "released_xids",
            "signal_offset",
            "future_field",
        ] {
            assert!(
                replaced.kept_fields.iter().any(|f| f == field),
                "{field}: {replaced:?}"
            );
        }
        for field in [
            "resume_rs_id",
            "last_commit_xid",
            "event_index",
            "snapshot",
            "future_list",
        ] {
            assert!(
                replaced.dropped_fields.iter().any(|f| f == field),
                "{field}: {replaced:?}"
            );
            assert!(
                replaced.dropped.iter().any(|l| l.contains(field)),
                "{field} named: {replaced:?}"
            );
        }
        // what is written reads back as written
        let text = p.to_json();
        assert_eq!(Position::from_json(&text).expect("it reads"), *p);
    }

    #[test]
    fn a_replacement_refuses_another_database_and_a_forward_move_without_allow_skip() {
        let stored = Stored::Unreadable(unreadable(&[]));
        let other = plan(
            &stored,
            Some(DbIdentity::new(43, Scn(7))),
            None,
            &replace(900),
        );
        assert!(
            matches!(&other, Err(AdminError::Refused(m)) if m.contains("CDC-5001")),
            "{other:?}"
        );
        let incarnation = plan(
            &stored,
            Some(DbIdentity::new(42, Scn(8))),
            None,
            &replace(900),
        );
        assert!(incarnation.is_err());
        let forward = plan(
            &stored,
            Some(DbIdentity::new(42, Scn(7))),
            None,
            &replace(2000),
        );
        assert!(
            matches!(&forward, Err(AdminError::Refused(m)) if m.contains("--allow-skip")),
            "{forward:?}"
        );
        let skip = SetRequest {
            allow_skip: true,
            ..replace(2000)
        };
        let moved = plan(&stored, Some(DbIdentity::new(42, Scn(7))), None, &skip).expect("skip");
        assert_eq!(moved.direction, "forward");
    }

    #[test]
    fn what_does_not_read_comes_from_the_database_and_the_journal() {
        let old = unreadable(&[
            ("dbid", json!("x")),
            ("journal_generation", Value::Null),
            ("released_xids", json!("nonsense")),
            ("resume_scn", json!(-1)),
        ]);
        let database = DbIdentity::new(77, Scn(1));
        let stored = Stored::Unreadable(old);
        // the journal's generations are needed, and must have been read
        assert!(plan(&stored, Some(database), None, &replace(900)).is_err());
        let plan = plan(&stored, Some(database), Some(11), &replace(900)).expect("replaced");
        assert_eq!(plan.position.identity, database);
        assert_eq!(plan.position.journal_generation, 11);
        assert!(plan.position.released_xids.is_empty());
        assert_eq!(plan.direction, "initial", "no stored resume_scn reads");
        let replaced = plan.replaced.expect("replaced");
        assert!(
            replaced.dropped.iter().any(|l| l.contains("CDC-7001")),
            "{replaced:?}"
        );
        assert!(
            replaced.dropped.iter().any(|l| l.starts_with("dbid")),
            "{replaced:?}"
        );
    }

    #[test]
    fn an_empty_offset_is_shown_and_replaced_from_the_database() {
        let raw = json!({});
        let error = Position::from_json_value(&raw).expect_err("empty");
        let empty = Unreadable { raw, error };
        let (text, value) = describe_unreadable("c", &empty);
        assert!(
            text.contains("[CDC-3002]") && text.contains("empty object"),
            "{text}"
        );
        assert!(text.contains(REPLACE_UNREADABLE_FLAG), "{text}");
        assert_eq!(value["readable"], false);
        assert_eq!(value["code"], "CDC-3002");
        let plan = replacement(&empty, DbIdentity::new(5, Scn(6)), Some(0), &replace(900))
            .expect("replaced");
        assert_eq!(plan.position.identity, DbIdentity::new(5, Scn(6)));
        assert_eq!(plan.direction, "initial");
    }

    #[test]
    fn the_stored_fields_are_shown_as_stored() {
        let old = unreadable(&[]);
        let (text, value) = describe_unreadable("c", &old);
        assert!(text.contains("runbooks.md#cdc-3002"), "{text}");
        for (field, stored) in old.raw.as_object().expect("an object") {
            let line = format!("  {field:<22} {stored}");
            assert!(text.contains(&line), "{line} in {text}");
        }
        assert_eq!(value["offset"], old.raw);
    }
}
