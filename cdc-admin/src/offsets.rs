//! `offsets show` and `offsets set`: the stored position in words, and the spec's procedure
//! for moving it ("Reading and moving the offset by hand": stop → read → edit → PATCH →
//! resume) with the edits of [`cdc_offset::edit`], checked against the database first.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use cdc_core::config::CdcConfig;
use cdc_core::{ConXid, OpsKind, Scn};
use cdc_logminer::RedoSource;
use cdc_offset::codec::{offsets_request, position_from_offsets_body};
use cdc_offset::edit::{self, Direction};
use cdc_offset::{DbIdentity, Position, ResumePoint, SnapshotProgress};
use rdkafka::ClientConfig;
use serde_json::{Value, json};

use crate::error::AdminError;
use crate::redo::{self, RedoReport};
use crate::rest::ConnectClient;

/// The test hook that fails `offsets set` at one of its steps, as a crash between them would:
/// `after-stop` (the connector is stopped, nothing else done) or `before-patch` (the edited
/// offset is ready, the PATCH not sent). For the tests of what a failure leaves behind.
pub const FAIL_AT_VAR: &str = "ORACLE_CDC_ADMIN_FAIL_AT";

/// The connector's stored position, from its REST API.
pub fn read_position(
    rest: &ConnectClient,
    name: &str,
    config: &CdcConfig,
) -> Result<Option<Position>, AdminError> {
    let body = rest.offsets(name)?;
    position_from_offsets_body(&body, &config.topics.prefix).map_err(|e| {
        AdminError::Failed(format!(
            "the offset of {name} cannot be read: {e} (the stored offset is left as it is)"
        ))
    })
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
}

/// What `offsets set` did.
#[derive(Debug, Clone)]
pub struct SetOutcome {
    pub direction: &'static str,
    pub previous: Option<Scn>,
    pub position: Position,
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
                return Err(AdminError::Refused(format!(
                    "SCN {} is after the resume point {}: every change in between would not be \
                     delivered. Give --allow-skip to skip it deliberately",
                    request.scn, current.resume.scn
                )));
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

/// `offsets set`, the whole procedure. `source` answers the database checks; `skipped` is
/// printed before a move forward (what will not be delivered).
pub fn set(
    rest: &ConnectClient,
    name: &str,
    config: &CdcConfig,
    source: &mut dyn RedoSource,
    ops: &OpsWriter<'_>,
    request: &SetRequest,
) -> Result<SetOutcome, AdminError> {
    let mut text = String::new();
    let before = read_position(rest, name, config)?;
    let identity = match &before {
        Some(p) => p.identity,
        None => {
            let id = source
                .identity()
                .map_err(|e| AdminError::Source(e.to_string()))?;
            DbIdentity::new(id.dbid, id.resetlogs_scn)
        }
    };
    // refused edits and database checks come before anything changes
    check_scn(source, config, request.scn)?;
    let (_, direction) = edited(before.as_ref(), identity, request)?;
    if direction == "forward"
        && let Some(previous) = &before
    {
        text.push_str(&format!(
            "skipping forward: the changes committed between SCN {} and SCN {} to the captured \
             tables ({}) will not be delivered; reload them afterwards (oracle-cdc-admin \
             resnapshot)\n",
            previous.resume.scn,
            request.scn,
            captured_tables(source, config),
        ));
    }
    let mut details = BTreeMap::from([
        ("connector".to_owned(), name.to_owned()),
        ("command".to_owned(), "offsets set".to_owned()),
        ("reason".to_owned(), request.reason.clone()),
        ("operator".to_owned(), request.operator.clone()),
        ("direction".to_owned(), direction.to_owned()),
        (
            "previous_resume_scn".to_owned(),
            before
                .as_ref()
                .map(|p| p.resume.scn.0.to_string())
                .unwrap_or_default(),
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
        let current = read_position(rest, name, config)?;
        let (position, now) = edited(current.as_ref(), identity, request)?;
        if now != direction {
            return Err(AdminError::Refused(format!(
                "the offset moved while the connector stopped: the move is now {now}, not \
                 {direction}; run the command again"
            )));
        }
        if fail_at("before-patch") {
            return Err(AdminError::Failed(format!("{FAIL_AT_VAR}=before-patch")));
        }
        rest.patch_offsets(name, &offsets_request(&config.topics.prefix, &position))?;
        Ok((current, position))
    })();
    let (current, position) = result.map_err(|e| failed(e, true))?;
    text.push_str(&format!(
        "offset set: resume SCN {} → {} ({direction}){}{}\n",
        current
            .as_ref()
            .map_or_else(|| "none".to_owned(), |p| p.resume.scn.to_string()),
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
    rest.resume(name).map_err(|error| {
        let _ = ops.write(&details, "failed", Some(("error", error.to_string())));
        AdminError::Failed(format!(
            "{error}; the new offset is stored but the connector is STOPPED; resume it with: \
             curl -X PUT {}/connectors/{name}/resume",
            rest.base()
        ))
    })?;
    text.push_str(&format!("resumed {name}\n"));
    if let Err(error) = ops.write(&details, "applied", None) {
        text.push_str(&format!(
            "warning: the offset was set, but the `applied` ops event could not be written: {error}\n"
        ));
    }
    Ok(SetOutcome {
        direction,
        previous: current.map(|p| p.resume.scn),
        position,
        text,
    })
}

/// The tables the connector captures, as the database lists them (the include patterns when
/// it cannot say).
fn captured_tables(source: &mut dyn RedoSource, config: &CdcConfig) -> String {
    let filter =
        |t: &cdc_core::TableId| config.is_table_included(t.pdb.as_deref(), &t.owner, &t.table);
    match source.resolve_objects(&filter) {
        Ok(objects) => {
            let mut names: Vec<String> = objects.iter().map(|o| o.table.to_string()).collect();
            names.sort();
            names.dedup();
            if names.is_empty() {
                "none".to_owned()
            } else {
                names.join(", ")
            }
        }
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
}
