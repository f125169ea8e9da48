//! Applying a step in redo order: each row to the transaction buffer, undecodable rows held
//! for their transaction's end, LOB locator rows merged into their INSERT.

use super::*;

/// The ROW_ID LogMiner puts on the INSERT of a row with LOB locators; the UPDATE that follows
/// writes the LOB values with the row's real ROWID, as Oracle logs such an insert
/// (`docs/simulator.md`, the CLOB insert row of "Reference behaviours and the simulator").
pub(super) const LOB_LOCATOR_ROWID: &str = "AAAAAAAAAAAAAAAAAA";

/// LOB rows (locator select, writes, trims, erases) and INTERNAL rows.
pub(super) fn is_lob_row(operation: Operation) -> bool {
    matches!(
        operation,
        Operation::Internal
            | Operation::SelLobLocator
            | Operation::LobWrite
            | Operation::LobTrim
            | Operation::LobErase
    )
}

/// The INSERT with the locator UPDATE folded in, when `update` is that UPDATE: same table
/// and schema version, its WHERE values those of the inserted row, and it changes nothing but
/// the columns the INSERT showed as `EMPTY_CLOB()`/`EMPTY_BLOB()`. One row inserted is one
/// change, as the database made it; the change takes the real ROWID.
pub(super) fn merge_locator_update(held: &ChangeEvent, update: &RowChange) -> Option<ChangeEvent> {
    let insert = &held.change;
    if update.op != ChangeOp::Update
        || update.table != insert.table
        || update.schema_version != insert.schema_version
    {
        return None;
    }
    let inserted = insert.after.as_ref()?;
    let value_of = |column: u16| {
        inserted
            .iter()
            .find(|c| c.column == column)
            .map(|c| &c.value)
    };
    let same_row = update
        .before
        .as_ref()?
        .iter()
        .all(|c| value_of(c.column) == Some(&c.value));
    let only_locators = update
        .after
        .as_ref()?
        .iter()
        .all(|c| match value_of(c.column) {
            Some(Value::EmptyLob) => true,
            Some(v) => *v == c.value,
            None => false,
        });
    if !same_row || !only_locators {
        return None;
    }
    let mut merged = held.clone();
    if let (Some(after), Some(written)) = (merged.change.after.as_mut(), update.after.as_ref()) {
        for column in after.iter_mut() {
            if column.value == Value::EmptyLob
                && let Some(w) = written.iter().find(|w| w.column == column.column)
            {
                column.value = w.value.clone();
            }
        }
    }
    merged.change.row_id = update.row_id.clone();
    Some(merged)
}

impl<S: RedoSource> CaptureEngine<S> {
    /// Applies a step that was read whole, decoded by [`StepDecoder::decode_and_apply`]: a
    /// large step on a thread of its own while the chunks before are applied, in redo order.
    pub(super) fn apply(
        &mut self,
        read: ReadStep,
        sink: &mut dyn RecordSink,
    ) -> Result<u64, EngineError> {
        self.metrics.rows_mined += read.rows.len() as u64;
        self.read.zero_rows_seen = 0;
        self.read.zero_rows_skipped = 0;
        if let Some(extent) = read.extent {
            self.lag_step_begins(extent);
        }
        // the rows are applied owned: what a START or COMMIT row names moves into the buffer
        // instead of being copied
        let decoder = self.decoder.clone();
        let applied = decoder.decode_and_apply(read.rows, |rows, decoded| {
            self.apply_decoded(rows, decoded, sink)
        });
        self.lag_step_ends();
        let applied = applied?;
        if applied.pipelined {
            self.metrics.pipelined_steps += 1;
        }
        if read.cut {
            self.metrics.step_cuts += 1;
        }
        Ok(applied.records)
    }

    /// Applies `rows` with their decoded forms, in order, moving the cursor past each. The rows
    /// are borrowed where they lie and dropped with their chunk: moving each out to apply it
    /// copied a few hundred bytes per row.
    pub(super) fn apply_decoded(
        &mut self,
        rows: &mut [MinedRow],
        decoded: DecodedRows<'_>,
        sink: &mut dyn RecordSink,
    ) -> Result<u64, EngineError> {
        let mut records = 0;
        for row in rows {
            let Some(decoded) = decoded.next() else {
                // the decoder gives one result per row: only if a decode thread died, which
                // its scope then reports as its panic
                return Err(CdcError::new(
                    CdcCode::Decode,
                    format!(
                        "the decode thread stopped before the row at SCN {} ({})",
                        row.scn, row.rs_id
                    ),
                )
                .into());
            };
            let addr = row.addr();
            let zero = addr.is_err().then(|| ZeroRow {
                scn: row.scn,
                key: row.con_xid(),
                operation: row.operation,
                rollback: row.rollback,
            });
            if let Some(zero) = zero {
                let read = &mut self.read;
                if read.zero_rows.get(read.zero_rows_seen) == Some(&zero) {
                    // applied by an earlier step, after the row the cursor stands on
                    read.zero_rows_seen += 1;
                    read.zero_rows_skipped += 1;
                    continue;
                }
                // the ones not given again here will not come again
                read.zero_rows.truncate(read.zero_rows_seen);
            }
            records += self.apply_row(row, decoded, sink)?;
            match addr {
                Ok(addr) => {
                    self.read.cursor.bound = RedoBound::After(addr);
                    self.read.cursor.log_seq = addr.log_seq();
                    self.read.cursor.mined_to = Some(RedoMark::new(addr, row.scn));
                    self.read.zero_rows.clear();
                    self.read.zero_rows_seen = 0;
                    self.metrics.mined_to_scn = self.metrics.mined_to_scn.max(row.scn.get());
                }
                Err(_) => {
                    if let Some(zero) = zero {
                        self.read.zero_rows.push(zero);
                        self.read.zero_rows_seen = self.read.zero_rows.len();
                    }
                }
            }
        }
        Ok(records)
    }

    /// What the row names that the buffer keeps (user name, PDB, ROWID) is moved out of it.
    pub(super) fn apply_row(
        &mut self,
        row: &mut MinedRow,
        mut decoded: Result<Decoded, DecodeError>,
        sink: &mut dyn RecordSink,
    ) -> Result<u64, EngineError> {
        // decoded with `RowIds::LeftInRow` (see `StepDecoder::decode`)
        if let Ok(Decoded::Change(change)) = &mut decoded {
            restore_row_id(change, row);
        }
        if row.operation == Operation::MissingScn {
            return Err(CdcError::new(
                CdcCode::Corruption,
                format!(
                    "LogMiner returned MISSING_SCN at SCN {} ({}): the redo has a hole",
                    row.scn, row.rs_id
                ),
            )
            .into());
        }
        if row.xid.is_zero() {
            // internal operations: they never own changes (never create a buffer entry)
            return Ok(0);
        }
        let key = row.con_xid();
        if !self.held.lob_inserts.is_empty()
            && let Some(held) = self.held.lob_inserts.remove(&key)
        {
            if let (Operation::Update, false, Ok(Decoded::Change(update))) =
                (row.operation, row.rollback, &decoded)
                && let Some(merged) = merge_locator_update(&held, update)
            {
                self.buffer.append(key, merged)?;
                self.metrics.events_applied += 1;
                return Ok(0);
            }
            if is_lob_row(row.operation) {
                // LOB rows of the value being inserted come between the two
                self.held.lob_inserts.insert(key, held);
            } else {
                self.buffer.append(key, held)?;
                self.metrics.events_applied += 1;
            }
        }
        match row.operation {
            Operation::Start => {
                if self.commit.first_start.is_some() {
                    self.commit.start_scns.insert(key, row.scn);
                }
                let start = StartInfo {
                    scn: row.scn,
                    addr: row.addr().ok(),
                    username: row.username.take(),
                    session: match (row.session, row.serial) {
                        (Some(sid), Some(serial)) => Some(SessionId { sid, serial }),
                        _ => None,
                    },
                    client_id: None,
                    pdb: row.src_con_name.take(),
                };
                self.buffer.begin(key, start)?;
                Ok(0)
            }
            Operation::Rollback => {
                if self.commit.first_start.is_some() {
                    self.commit.start_scns.remove(&key);
                }
                // the key it rolls back (XIDSQN 0xFFFFFFFF names the open one in its slot)
                let resolved = self.buffer.resolved(key);
                if self.buffer.rollback(key)? {
                    self.metrics.rolled_back_transactions += 1;
                }
                // its undecodable rows were never changes of the database
                let _ = self.held.failures.take(key);
                match resolved {
                    Some(resolved) => self.journal_ended(resolved, sink),
                    None => Ok(0),
                }
            }
            Operation::Commit => {
                self.snapshot.stream_reached(row.scn);
                if self.commit.first_start.is_some() {
                    self.commit.start_scns.remove(&key);
                }
                self.commit(row, key, sink)
            }
            Operation::Insert | Operation::Update | Operation::Delete if row.rollback => {
                let Some(row_id) = row.row_id.take().or_else(|| match &decoded {
                    Ok(Decoded::Change(change)) => change.row_id.clone(),
                    _ => None,
                }) else {
                    return Err(CdcError::new(
                        CdcCode::Decode,
                        format!(
                            "an undo row of transaction {key} at SCN {} ({}) names no ROWID",
                            row.scn, row.rs_id
                        ),
                    )
                    .into());
                };
                let addr = self.row_addr(row)?;
                if self.held.failures.undo(key, &row_id) {
                    return Ok(0);
                }
                self.buffer.undo(
                    key,
                    UndoRecord {
                        scn: row.scn,
                        addr,
                        row_id,
                    },
                )?;
                Ok(0)
            }
            Operation::Insert | Operation::Update | Operation::Delete => match decoded {
                Ok(Decoded::Change(change)) => {
                    if !self.keeps_row(key, row.scn) {
                        return Ok(0);
                    }
                    self.apply_change(row, key, change)
                }
                Ok(_) => Ok(0),
                // a row the first start leaves out cannot fail the task, whatever it holds (a
                // row older than the start under a table altered since comes back generic)
                Err(_) if !self.keeps_row(key, row.scn) => Ok(0),
                // no exact version: the row as a replay with a redo dictionary names it
                Err(error) if error.is_lag_case() => match self.replayed_change(row, &error) {
                    Ok(change) => self.apply_change(row, key, change),
                    Err(stop) => {
                        self.metrics.decode_failures += 1;
                        self.row_failed(row, key, DlqKind::DecodeError, stop, sink)
                    }
                },
                Err(error) => self.decode_failure(row, key, error, sink),
            },
            Operation::Ddl => {
                // a start without a resume address reads its window from the start of the
                // log holding its SCN: the layouts it read at start already have the DDL
                // before that SCN, and applying it again would take the dictionary's newest
                // layout for the rows that follow it (or stop again at a DDL an operator
                // moved the offset past)
                if let Ok(Decoded::Ddl(info)) = &decoded
                    && row.scn >= self.schemas.ddl_from
                    && self.keeps_row(key, row.scn)
                {
                    self.apply_ddl(row, info)?;
                }
                self.emit_pending(sink)
            }
            // the undo of a change LogMiner could not give takes back its failure
            Operation::Unsupported if row.rollback => {
                if let Some(row_id) = &row.row_id
                    && !self.held.failures.undo(key, row_id)
                {
                    tracing::debug!(xid = %key, scn = %row.scn, "UNSUPPORTED undo row matched no held row");
                }
                Ok(0)
            }
            Operation::Unsupported => {
                let table = self.captured_table(row);
                if table.is_none() || !self.keeps_row(key, row.scn) {
                    return Ok(0);
                }
                let error = CdcError::new(
                    CdcCode::Decode,
                    format!(
                        "LogMiner cannot give the data of a change to {} (UNSUPPORTED row, \
                         transaction {key}, SCN {}, RS_ID {}, STATUS {}, INFO {:?})",
                        table.as_ref().map(|t| t.to_string()).unwrap_or_default(),
                        row.scn,
                        row.rs_id.to_string().trim(),
                        row.status,
                        row.info.as_deref().unwrap_or("")
                    ),
                );
                self.row_failed(row, key, DlqKind::UnsupportedRow, error, sink)
            }
            // LOB and XML rows are not assembled yet (cdc.lob.mode=skip); INTERNAL and the
            // rest carry nothing to publish.
            _ => Ok(0),
        }
    }

    /// A decoded change of an open transaction, into the buffer (an INSERT with LOB locators
    /// held for the UPDATE that writes them).
    pub(super) fn apply_change(
        &mut self,
        row: &MinedRow,
        key: ConXid,
        change: RowChange,
    ) -> Result<u64, EngineError> {
        let addr = self.row_addr(row)?;
        if change.op == ChangeOp::Insert && change.row_id.as_deref() == Some(LOB_LOCATOR_ROWID) {
            // the row's LOB values and real ROWID come in the UPDATE that follows
            self.buffer.pin_change(key, row.scn, addr)?;
            self.note_origin(key, row);
            self.held.lob_inserts.insert(
                key,
                ChangeEvent {
                    scn: row.scn,
                    addr,
                    change,
                },
            );
            return Ok(0);
        }
        self.buffer.append(
            key,
            ChangeEvent {
                scn: row.scn,
                addr,
                change,
            },
        )?;
        self.note_origin(key, row);
        self.metrics.events_applied += 1;
        Ok(0)
    }

    /// Keeps the session a change row names while none is known for its transaction (a
    /// restart after its START row, or one rebuilt from the journal): the row names the same
    /// session and user as the START row.
    fn note_origin(&mut self, key: ConXid, row: &MinedRow) {
        if let (Some(sid), Some(serial)) = (row.session, row.serial) {
            self.buffer
                .note_origin(key, SessionId { sid, serial }, || row.username.clone());
        }
    }

    pub(super) fn row_addr(&self, row: &MinedRow) -> Result<RedoAddr, CdcError> {
        row.addr().map_err(|_| {
            CdcError::new(
                CdcCode::Corruption,
                format!(
                    "a {} row of transaction {} at SCN {} has the all-zero RS_ID, which is no \
                     redo address",
                    row.operation.name(),
                    row.con_xid(),
                    row.scn
                ),
            )
        })
    }

    /// The first-start rule for a row. A transaction whose START row the engine has not seen
    /// starts, for the rule, at its first row seen: LogMiner can give a START row with an
    /// all-zero XID, which names no transaction, and the rule would otherwise drop the rows
    /// below the floor of a transaction that began after the start's list was read. One that
    /// began before it and is not listed ended before the list, so its commit is below the
    /// floor and skipped whole either way.
    pub(super) fn keeps_row(&mut self, key: ConXid, scn: Scn) -> bool {
        match &self.commit.first_start {
            Some(rule) => {
                let start = *self.commit.start_scns.entry(key).or_insert(scn);
                rule.keeps_row(key, scn, Some(start))
            }
            None => true,
        }
    }

    pub(super) fn captured_table(&self, row: &MinedRow) -> Option<TableId> {
        let object = row.data_obj?;
        self.decoder.objects.get(&(row.src_con_id, object)).cloned()
    }

    pub(super) fn decode_failure(
        &mut self,
        row: &MinedRow,
        key: ConXid,
        error: DecodeError,
        sink: &mut dyn RecordSink,
    ) -> Result<u64, EngineError> {
        self.metrics.decode_failures += 1;
        self.row_failed(row, key, DlqKind::DecodeError, error.into(), sink)
    }

    /// A row of a captured table that cannot be turned into a change: held with its
    /// transaction, which pins the restart position from it on, and acted on at its COMMIT
    /// (see `failures`).
    pub(super) fn row_failed(
        &mut self,
        row: &MinedRow,
        key: ConXid,
        kind: DlqKind,
        error: CdcError,
        sink: &mut dyn RecordSink,
    ) -> Result<u64, EngineError> {
        let addr = self.row_addr(row)?;
        // a committed change LogMiner could not name (CDC-6001) would be lost from its topic
        // in the DLQ: it stops, whatever cdc.on.decode.error says
        let dlq = (self.settings.on_decode_error == DecodeErrorAction::Dlq
            && error.code() != CdcCode::DictionaryUnavailable)
            .then(|| self.dead_letter(row, key, kind, &error));
        let failure = HeldFailure {
            row_id: row.row_id.clone(),
            error,
            dlq,
        };
        if self.held.failures.is_full() {
            tracing::warn!(
                xid = %key, scn = %row.scn, rs_id = %row.rs_id,
                "too many undecodable rows held: acted on at once, before their transaction ends"
            );
            return self.act_at_once(failure, sink);
        }
        if failure.dlq.is_none() {
            // the stop may come long after: say at once what it will be
            tracing::warn!(
                xid = %key, scn = %row.scn, rs_id = %row.rs_id, error = %failure.error,
                "a row could not be decoded: the task stops if its transaction commits"
            );
        }
        self.buffer.pin_change(key, row.scn, addr)?;
        self.note_origin(key, row);
        self.held.failures.hold(key, failure);
        Ok(0)
    }

    /// The DLQ record of a row that cannot be decoded, and its ops event.
    pub(super) fn dead_letter(
        &self,
        row: &MinedRow,
        key: ConXid,
        kind: DlqKind,
        error: &CdcError,
    ) -> (DlqRecord, OpsEvent) {
        let table = self.captured_table(row);
        let may_exclude = table.as_ref().is_some_and(|t| {
            self.decoder
                .tables
                .get(t)
                .is_some_and(DecodeTable::has_exclusions)
        });
        let sql_redo = (self.settings.log_sensitive_data && !may_exclude)
            .then(|| row.sql_redo.clone())
            .flatten();
        let mut details = BTreeMap::new();
        details.insert(
            "table".to_owned(),
            table.as_ref().map(|t| t.to_string()).unwrap_or_default(),
        );
        details.insert("xid".to_owned(), key.to_string());
        details.insert("scn".to_owned(), row.scn.to_string());
        details.insert("operation".to_owned(), row.operation.name().to_owned());
        details.insert("error".to_owned(), error.to_string());
        if matches!(kind, DlqKind::UnsupportedRow) {
            // what the `unsupported-row` event names besides: why LogMiner gave no data
            details.insert("status".to_owned(), row.status.to_string());
            details.insert("info".to_owned(), row.info.clone().unwrap_or_default());
        }
        let dlq = DlqRecord {
            kind,
            xid: key,
            table,
            scn: row.scn,
            addr: row.addr().ok(),
            operation: Some(row.operation),
            status: Some(row.status),
            info: row.info.clone(),
            sql_redo,
            message: error.to_string(),
            details: details.clone(),
        };
        let ops = OpsEvent::new(kind.row_event(), details);
        (dlq, ops)
    }

    /// A failure acted on as its row is applied: stops (`cdc.on.decode.error=fail`), or sends
    /// its DLQ record and ops event between transactions.
    pub(super) fn act_at_once(
        &mut self,
        failure: HeldFailure,
        sink: &mut dyn RecordSink,
    ) -> Result<u64, EngineError> {
        let Some((dlq, ops)) = failure.dlq else {
            return Err(failure.error.into());
        };
        self.emit_between(sink, RecordKind::Dlq(dlq))?;
        self.metrics.dlq_records += 1;
        self.emit_between(sink, RecordKind::Ops(ops))?;
        self.metrics.ops_events += 1;
        Ok(2)
    }
}
