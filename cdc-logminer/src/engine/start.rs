//! Opening the engine: the database's identity and topology, the first-start or stored
//! position, and where the first step reads from.

use super::*;

/// What the topology check found: the identity the offset is checked against, and how the
/// session is given its redo.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Topology {
    pub(super) identity: DbIdentity,
    pub(super) session_mode: SessionMode,
    /// The database clock's offset from UTC, in minutes.
    pub(super) utc_offset_minutes: i32,
    /// A primary opened read-write: the one kind of database a dictionary build can run on.
    pub(super) writable: bool,
    /// The one enabled redo thread (thread 1 when the database names none).
    pub(super) thread: RedoThread,
}

/// Identity and topology at start and after every reconnect (CDC-5001 for each refusal): one
/// enabled redo thread, a role and open mode that qualify for `cdc.capture.mode`, a valid
/// archive destination, and a `cdc.mining.mode` the session's container allows.
pub(super) fn check_topology<S: RedoSource>(
    source: &mut S,
    settings: &EngineSettings,
) -> Result<Topology, CdcError> {
    let identity = source.identity().map_err(source_stop)?;
    if identity.enabled_threads.len() > 1 {
        return Err(CdcError::new(
            CdcCode::Topology,
            format!(
                "the database has {} enabled redo threads; one position covers one thread, so \
                 RAC is not supported yet",
                identity.enabled_threads.len()
            ),
        ));
    }
    check_role(&identity, settings.capture_mode)?;
    check_archive_destination(&identity, settings.archive_destination.as_deref())?;
    let session_mode = resolve_mining_mode(settings.mining_mode, &identity)?;
    for pdb in &settings.pdbs {
        if !identity.open_pdbs.iter().any(|p| &p.name == pdb) {
            return Err(CdcError::new(
                CdcCode::TransientDatabase,
                format!("the pluggable database {pdb} in cdc.database.pdbs is not open"),
            ));
        }
    }
    Ok(Topology {
        identity: DbIdentity::new(identity.dbid, identity.resetlogs_scn),
        session_mode,
        utc_offset_minutes: identity.utc_offset_minutes,
        writable: identity.role == crate::source::DatabaseRole::Primary
            && identity.open_mode == crate::source::OpenMode::ReadWrite,
        thread: identity
            .enabled_threads
            .first()
            .copied()
            .unwrap_or(RedoThread(1)),
    })
}

/// The position of a first start (`docs/decisions.md`, D9): the current SCN (or `cdc.start.scn`),
/// and the transactions already open, which are mined whole.
pub(super) fn first_start_position<S: RedoSource>(
    source: &mut S,
    settings: &EngineSettings,
    identity: DbIdentity,
) -> Result<Position, CdcError> {
    let open_scn = source.current_scn().map_err(source_stop)?;
    let open: Vec<(ConXid, Scn)> = source
        .active_transactions()
        .map_err(source_stop)?
        .into_iter()
        .map(|t| (ConXid::new(t.con, t.xid), t.start_scn))
        .collect();
    let floor = match settings.start_scn {
        Some(scn) => scn,
        None => source.current_scn().map_err(source_stop)?,
    };
    Ok(Position::first_start(identity, 0, open_scn, &open, floor))
}

/// Where the first step reads: from the resume address (inclusive), or from the start of the
/// log holding `resume_scn`.
pub(super) fn initial_cursor<S: RedoSource>(
    source: &mut S,
    settings: &EngineSettings,
    position: &Position,
) -> Result<Cursor, CdcError> {
    if let Some(addr) = position.resume.addr {
        return Ok(Cursor {
            bound: RedoBound::AtOrAfter(addr),
            log_seq: addr.log_seq(),
            mined_to: None,
        });
    }
    let inventory = source
        .log_inventory(&LogInventoryQuery {
            from: Scn::ZERO,
            mode: settings.capture_mode,
            destination: settings.archive_destination.clone(),
        })
        .map_err(source_stop)?;
    let scn = position.resume.scn;
    let holding_log = |logs: &[crate::source::LogFile]| {
        logs.iter()
            .filter(|l| l.first_scn <= scn && scn < l.next_scn)
            .map(|l| l.sequence)
            .min()
    };
    let mut holding = holding_log(&inventory);
    if holding.is_none() && settings.capture_mode == CaptureMode::ArchiveOnly {
        // the start is in redo not archived yet: the online logs name its sequence, and
        // mining waits until that log is archived
        let online = source
            .log_inventory(&LogInventoryQuery {
                from: Scn::ZERO,
                mode: CaptureMode::Online,
                destination: settings.archive_destination.clone(),
            })
            .map_err(source_stop)?;
        holding = holding_log(&online);
    }
    let Some(log_seq) = holding else {
        let oldest = inventory.iter().map(|l| l.first_scn).min();
        return Err(CdcError::new(
            if oldest.is_some_and(|o| o > scn) {
                CdcCode::LogPurged
            } else {
                CdcCode::LogGap
            },
            format!(
                "no log holds SCN {scn}, where mining must start (the oldest listed log starts \
                 at {})",
                oldest
                    .map(|o| o.to_string())
                    .unwrap_or_else(|| "none".into())
            ),
        ));
    };
    Ok(Cursor {
        bound: RedoBound::Start,
        log_seq,
        mined_to: None,
    })
}

impl<S: RedoSource> CaptureEngine<S> {
    /// Opens the engine: checks the database's identity and topology, resolves the captured
    /// tables, and places the cursor: from `position` when there is one (a restart), else at
    /// the current SCN (or `cdc.start.scn`) with the transactions already open mined whole.
    /// On a restart the position's `journal_generation` becomes this task start's: the stored
    /// one plus one.
    pub fn open(
        mut source: S,
        settings: EngineSettings,
        position: Option<Position>,
        clock: Box<dyn Clock>,
    ) -> Result<CaptureEngine<S>, CdcError> {
        let Topology {
            identity,
            session_mode,
            utc_offset_minutes,
            writable,
            thread,
        } = check_topology(&mut source, &settings)?;
        let nls = source.nls().map_err(source_stop)?;
        let charsets = Arc::new(Charsets {
            database: nls.character_set,
            national: nls.national_character_set,
        });
        let mut buffer = TransactionBuffer::open(settings.buffer.clone())?;
        let pool = DecodePool::new(settings.decode_threads).map_err(|e| {
            CdcError::new(CdcCode::TransientDatabase, format!("{e}")).without_retry()
        })?;
        let now = clock.now_ms();
        let restarting = position.is_some();
        let held_failures = HeldFailures::with_max(settings.held_failures_max);
        let (position, stored) = match position {
            Some(stored) => {
                stored.check_identity(identity).map_err(CdcError::from)?;
                let mut position = stored.clone();
                position.journal_generation = position.journal_generation.saturating_add(1);
                (position, Some(stored))
            }
            None => (
                first_start_position(&mut source, &settings, identity)?,
                None,
            ),
        };
        let cursor = initial_cursor(&mut source, &settings, &position)?;
        let journal_start = JournalStart::new(stored.as_ref(), &cursor, thread);
        // the released ledger survives restarts in the offset; the buffer checks every COMMIT
        // against it (CDC-7001)
        *buffer.ledger_mut() = position.released_xids.clone();
        let mut published = settings.published.clone();
        published.prune(position.resume.scn);
        let ddl_from = position.resume.scn;
        let mut engine = CaptureEngine {
            read: ReadState {
                cursor,
                window: AdaptiveWindow::new(settings.max_logs_per_step, settings.target_latency),
                session_started_ms: None,
                backoff: Backoff::new(settings.retry_max_time, identity.dbid ^ now),
                remines: 0,
                identity,
                session_mode,
                zero_rows: Vec::new(),
                zero_rows_seen: 0,
                zero_rows_skipped: 0,
            },
            decoder: StepDecoder {
                objects: Arc::default(),
                tables: Arc::default(),
                options: DecodeOptions {
                    log_sensitive_data: settings.log_sensitive_data,
                },
                pool: Arc::new(pool),
            },
            held: Held {
                lob_inserts: foldhash::HashMap::default(),
                failures: held_failures,
            },
            commit: CommitState {
                skip: position.skip_rule(),
                first_start: position.first_start.clone(),
                position: Arc::new(position),
                start_scns: foldhash::HashMap::default(),
                table_orders: TableOrders::default(),
                last_record_ms: now,
            },
            schemas: SchemaState {
                layouts: SchemaVersions::default(),
                next_version: HashMap::new(),
                published,
                charsets,
                ddl_from,
            },
            side: SideRecords::default(),
            lag: LagState::new(settings.dictionary_builds, utc_offset_minutes, writable),
            orphans: OrphanDetector::new(settings.orphan, now),
            journal: None,
            journal_start,
            signals: SignalState::default(),
            retention: Default::default(),
            snapshot: SnapshotState::open(&settings.snapshot, None, None, false, Vec::new())?,
            source,
            settings,
            clock,
            buffer,
            metrics: EngineMetrics::default(),
            started: false,
        };
        let valid_from = engine.commit.position.resume.scn;
        let differing = engine.refresh_objects(valid_from, Refresh::Start)?;
        // a first start (no offset, or offsets deleted) has no records to reconcile with what
        // the topic says: its stored versions are history, and only their numbering counts
        if restarting {
            engine.check_stored_schemas(&differing)?;
        }
        // the captured tables are known now: the snapshot a start takes up, made durable by
        // the start heartbeat
        let tables: Vec<TableId> = engine.decoder.tables.keys().cloned().collect();
        engine.snapshot = SnapshotState::open(
            &engine.settings.snapshot,
            engine.commit.position.snapshot.as_deref(),
            engine.commit.position.snapshot_pending.as_deref(),
            restarting,
            tables,
        )?;
        if let Some(text) = engine.snapshot.progress_text() {
            Arc::make_mut(&mut engine.commit.position).snapshot = Some(text);
        }
        Ok(engine)
    }
}
