//! What runs after each step: the age and orphan policies and the heartbeat.

use super::*;

impl<S: RedoSource> CaptureEngine<S> {
    pub(super) fn run_policies(&mut self, sink: &mut dyn RecordSink) -> Result<u64, EngineError> {
        let now = self.clock.now_ms();
        self.buffer.set_clock_ms(now);
        let mut records = 0;
        let discards = check_age(self.settings.age, now, self.txn_facts())?;
        for mut discard in discards {
            self.held.lob_inserts.remove(&discard.key);
            self.drop_failures(discard.key, &mut discard.ops_event);
            self.buffer.release(discard.key)?;
            Arc::make_mut(&mut self.commit.position).released_xids = self.buffer.ledger().clone();
            let dlq = DlqRecord {
                kind: discard.dlq.kind(),
                xid: discard.key,
                table: None,
                scn: discard.dlq.first_scn,
                addr: None,
                operation: None,
                status: None,
                info: None,
                sql_redo: None,
                message: discard.dlq.message.clone(),
                details: discard.ops_event.details.clone(),
            };
            self.emit_between(sink, RecordKind::Ops(discard.ops_event))?;
            self.emit_between(sink, RecordKind::Dlq(dlq))?;
            self.metrics.transactions_discarded += 1;
            self.metrics.ops_events += 1;
            self.metrics.dlq_records += 1;
            records += 2 + self.journal_ended(discard.key, sink)?;
        }
        if self.orphans.is_due(now) {
            let snapshot = match self.database_snapshot() {
                Ok(snapshot) => snapshot,
                // an orphan check is advisory: a failed read waits for the next interval
                Err(e) => {
                    tracing::warn!(error = %e, "orphan check skipped: GV$TRANSACTION unreadable");
                    return Ok(records);
                }
            };
            let mined_to = self
                .read
                .cursor
                .mined_to
                .map(|m| m.scn)
                .unwrap_or(Scn::ZERO);
            let facts = self.txn_facts();
            let check = self.orphans.check(now, mined_to, &snapshot, facts)?;
            for mut release in check.releases {
                self.held.lob_inserts.remove(&release.key);
                self.drop_failures(release.key, &mut release.ops_event);
                self.buffer.release(release.key)?;
                Arc::make_mut(&mut self.commit.position).released_xids =
                    self.buffer.ledger().clone();
                self.emit_between(sink, RecordKind::Ops(release.ops_event))?;
                self.metrics.orphans_released += 1;
                self.metrics.ops_events += 1;
                records += 1 + self.journal_ended(release.key, sink)?;
            }
        }
        Ok(records)
    }

    /// A transaction discarded or released drops the rows it held that could not be decoded:
    /// its ops event, the trace of everything it held, counts them.
    pub(super) fn drop_failures(&mut self, key: ConXid, event: &mut OpsEvent) {
        let undecodable = self.held.failures.take(key).len();
        if undecodable > 0 {
            event
                .details
                .insert("undecodable_rows".to_owned(), undecodable.to_string());
        }
    }

    pub(super) fn txn_facts(&self) -> Vec<TxnFacts> {
        self.buffer
            .open_transactions()
            .map(TxnFacts::from)
            .collect()
    }

    pub(super) fn database_snapshot(&mut self) -> Result<DatabaseSnapshot, SourceError> {
        let scn = self.source.current_scn()?;
        let active = self.source.active_transactions()?;
        let mut sessions = HashSet::new();
        let open: Vec<(ConXid, Option<SessionId>)> = self
            .buffer
            .open_transactions()
            .map(|t| (t.key(), t.session()))
            .collect();
        for s in open.into_iter().filter_map(|(_, session)| session) {
            if self.source.session_exists(SessionRef {
                sid: s.sid,
                serial: s.serial,
            })? {
                sessions.insert(s);
            }
        }
        Ok(DatabaseSnapshot {
            scn,
            transactions: active.iter().map(|t| ConXid::new(t.con, t.xid)).collect(),
            sessions,
        })
    }

    pub(super) fn emit_heartbeat(
        &mut self,
        sink: &mut dyn RecordSink,
        reason: HeartbeatReason,
    ) -> Result<(), EngineError> {
        let mined_to = self.read.cursor.mined_to.map(|m| m.scn);
        self.emit_between(sink, RecordKind::Heartbeat { reason, mined_to })?;
        self.metrics.heartbeats_sent += 1;
        Ok(())
    }
}
