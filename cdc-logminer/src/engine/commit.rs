//! A COMMIT: the transaction's changes streamed as records, each with the position a restart
//! continues from; records between transactions; the per-table order of a transaction.

use super::*;

/// Counts one transaction's changes per table, for [`ChangeRecord::table_order`]. A table
/// [`SchemaVersions`] registered is counted in the slot of its number (the engine keeps one of
/// these across commits, rather than hashing each change's table name); a table it never
/// registered is counted by name.
#[derive(Debug, Default)]
pub(super) struct TableOrders {
    /// The commit being counted: a slot stamped with an earlier one counts nothing yet, so a
    /// commit starts without visiting the slots.
    pub(super) commit: u64,
    /// By table number: the commit that last counted in it, and its count.
    pub(super) numbered: Vec<(u64, u64)>,
    pub(super) unnumbered: foldhash::HashMap<TableId, u64>,
}

impl TableOrders {
    /// Starts counting the changes of a commit.
    pub(super) fn start(&mut self) {
        self.commit += 1;
        if !self.unnumbered.is_empty() {
            self.unnumbered.clear();
        }
    }

    /// The 1-based place of the next change to `table`, whose number is `number` when
    /// [`SchemaVersions`] gave it one.
    pub(super) fn next(&mut self, number: Option<usize>, table: &TableId) -> u64 {
        let Some(number) = number else {
            let count = match self.unnumbered.get_mut(table) {
                Some(count) => count,
                None => self.unnumbered.entry(table.clone()).or_default(),
            };
            *count += 1;
            return *count;
        };
        if number >= self.numbered.len() {
            self.numbered.resize(number + 1, (0, 0));
        }
        let (commit, count) = &mut self.numbered[number];
        if *commit != self.commit {
            *commit = self.commit;
            *count = 0;
        }
        *count += 1;
        *count
    }
}

impl<S: RedoSource> CaptureEngine<S> {
    /// The first acknowledged commit ends the first-start rule; from there on the skip rule
    /// only needs the last commit, which every later record carries.
    pub(super) fn end_first_start(&mut self) {
        if self.commit.first_start.take().is_some() {
            self.commit.start_scns = foldhash::HashMap::default();
        }
    }

    pub(super) fn commit(
        &mut self,
        row: &mut MinedRow,
        key: ConXid,
        sink: &mut dyn RecordSink,
    ) -> Result<u64, EngineError> {
        let commit_addr = self.row_addr(row)?;
        let decision = self.commit.skip.decide(commit_addr, row.scn);
        let mined_to = RedoMark::new(commit_addr, row.scn);
        let failures = self.held.failures.take(key);
        let Some(mut stream) = self.buffer.commit(key)? else {
            // rows that failed pin their transaction, so it has an entry
            debug_assert!(failures.is_empty());
            return Ok(0);
        };
        // holds of the other open transactions: fixed while this commit is emitted; the resume
        // candidate takes the lowest address and the lowest SCN of them, which the buffer
        // keeps ordered
        let holds = stream.holds();
        let other_holds = holds.others.map(|(scn, addr)| RedoMark::new(addr, scn));
        let own_hold = holds
            .own
            .map(|(scn, addr)| RedoMark::new(addr, scn))
            .unwrap_or(mined_to);
        let event_count = stream.event_count();
        if let Some(journal) = self.journal.as_mut()
            && let Err(e) = journal.check_ended(stream.key(), decision, event_count)
        {
            drop(stream);
            return Err(e.into());
        }
        // what each record of this commit names as the last commit, with its own event_index
        let this_commit = LastCommit {
            scn: row.scn,
            xid: key,
            thread: row.thread,
            addr: commit_addr,
            event_index: 0,
        };
        let mut side = 0;
        if !failures.is_empty() {
            // a failure without a DLQ record (CDC-6001) decides as under
            // cdc.on.decode.error=fail, and stops first
            let stopping = failures.iter().position(|f| f.dlq.is_none());
            let mode = match stopping {
                Some(_) => DecodeErrorAction::Fail,
                None => self.settings.on_decode_error,
            };
            match failures::at_commit(mode, decision, event_count, failures.len() as u64) {
                AtCommit::Pass => {}
                AtCommit::Stop => {
                    if let Some(first) = failures.into_iter().nth(stopping.unwrap_or(0)) {
                        drop(stream);
                        return Err(first.error.into());
                    }
                }
                AtCommit::Send { acknowledged } => {
                    let resume =
                        record_resume(mined_to, other_holds, own_hold, RecordPlace::BeforeLast);
                    Arc::make_mut(&mut self.commit.position).set_record(
                        resume,
                        LastCommit {
                            event_index: acknowledged,
                            ..this_commit
                        },
                    );
                    for (dlq, ops) in failures.into_iter().filter_map(|f| f.dlq) {
                        for kind in [RecordKind::Dlq(dlq), RecordKind::Ops(ops)] {
                            sink.accept(EngineRecord {
                                kind,
                                position: Arc::clone(&self.commit.position),
                            })?;
                            side += 1;
                        }
                        self.metrics.dlq_records += 1;
                        self.metrics.ops_events += 1;
                    }
                    self.metrics.records += side;
                }
            }
        }
        if event_count == 0 || decision == SkipDecision::SkipWhole {
            if decision == SkipDecision::SkipWhole && event_count > 0 {
                self.metrics.transactions_skipped += 1;
            }
            // drain so a spilled file is read to its end and checked, then deleted
            while stream.next_change()?.is_some() {}
            let resolved = stream.key();
            stream.finish()?;
            if side > 0 {
                self.end_first_start();
                self.commit.skip = self.commit.position.skip_rule();
                self.commit.last_record_ms = self.clock.now_ms();
            }
            return Ok(side + self.journal_ended(resolved, sink)?);
        }
        let mut emitted = 0;
        let first_scn = stream.first_scn();
        let data_bytes = stream.data_bytes();
        let (pdb, username) = stream
            .take_start()
            .map_or((None, None), |start| (start.pdb, start.username));
        let info = Arc::new(CommitInfo {
            con_xid: key,
            pdb: pdb.or_else(|| row.src_con_name.take()),
            commit_scn: row.scn,
            commit_addr,
            commit_time: row.timestamp,
            thread: row.thread,
            username: username.or_else(|| row.username.take()),
            first_scn,
            event_count,
            data_bytes,
        });
        // a record's resume point depends only on whether it is its transaction's last: the
        // two are computed once per commit, not once per record
        let resume_before_last =
            record_resume(mined_to, other_holds, own_hold, RecordPlace::BeforeLast);
        let resume_last = record_resume(mined_to, other_holds, own_hold, RecordPlace::Last);
        let mut index = 0u64;
        self.commit.table_orders.start();
        while let Some(event) = stream.next_change()? {
            let this = index;
            index += 1;
            let (layout, table) = self.schemas.layouts.of(&event);
            let table_order = self.commit.table_orders.next(table, &event.change.table);
            if !decision.emits(this) {
                continue;
            }
            let resume = match RecordPlace::of(this, event_count) {
                RecordPlace::BeforeLast => resume_before_last,
                RecordPlace::Last => resume_last,
            };
            // in place: the same as `at_record`, with one copy of the position per record
            Arc::make_mut(&mut self.commit.position).set_record(
                resume,
                LastCommit {
                    event_index: this + 1,
                    ..this_commit
                },
            );
            let record = EngineRecord {
                kind: RecordKind::Change(ChangeRecord {
                    commit: Arc::clone(&info),
                    event,
                    event_index: this,
                    table_order,
                    layout,
                }),
                position: Arc::clone(&self.commit.position),
            };
            sink.accept(record)?;
            emitted += 1;
        }
        let resolved = stream.key();
        stream.finish()?;
        self.end_first_start();
        self.commit.skip = self.commit.position.skip_rule();
        self.metrics.transactions_committed += 1;
        self.metrics.records += emitted;
        self.commit.last_record_ms = self.clock.now_ms();
        let tombstones = self.journal_ended(resolved, sink)?;
        Ok(side + emitted + tombstones)
    }

    /// The resume candidate between transactions.
    pub(super) fn current_resume(&self) -> ResumePoint {
        let holds = self
            .buffer
            .resume_floor(None)
            .map(|(scn, addr)| RedoMark::new(addr, scn));
        match self.read.cursor.mined_to {
            Some(mined_to) => resume_candidate(mined_to, holds),
            None => self.commit.position.resume,
        }
    }

    pub(super) fn emit_between(
        &mut self,
        sink: &mut dyn RecordSink,
        kind: RecordKind,
    ) -> Result<(), EngineError> {
        let position = Arc::new(self.commit.position.at_heartbeat(self.current_resume()));
        sink.accept(EngineRecord {
            kind,
            position: Arc::clone(&position),
        })?;
        self.commit.position = position;
        self.commit.last_record_ms = self.clock.now_ms();
        self.metrics.records += 1;
        Ok(())
    }

    /// Sends the layouts resolved since the last call, one record each, then the ops events
    /// waiting: those of the DDL that changed the layouts, and of reconnects.
    pub(super) fn emit_pending(&mut self, sink: &mut dyn RecordSink) -> Result<u64, EngineError> {
        let pending = std::mem::take(&mut self.side.schema);
        let ops = std::mem::take(&mut self.side.ops);
        let count = (pending.len() + ops.len()) as u64;
        for change in pending {
            self.emit_between(sink, RecordKind::Schema(change))?;
        }
        for event in ops {
            self.emit_between(sink, RecordKind::Ops(event))?;
            self.metrics.ops_events += 1;
        }
        Ok(count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_orders_count_each_table_by_number_or_name() {
        let orders = TableId::new("APP", "ORDERS");
        let lines = TableId::new("APP", "LINES");
        let docs = TableId::new("APP", "DOCS");
        let mut counted = TableOrders::default();
        counted.start();
        let got: Vec<u64> = [
            (Some(1), &orders),
            (Some(0), &lines),
            (None, &docs),
            (Some(1), &orders),
            (None, &docs),
            (Some(0), &lines),
        ]
        .into_iter()
        .map(|(number, table)| counted.next(number, table))
        .collect();
        assert_eq!(got, [1, 1, 1, 2, 2, 2]);
        // the next commit counts from 1 again
        counted.start();
        assert_eq!(counted.next(Some(1), &orders), 1);
        assert_eq!(counted.next(None, &docs), 1);
        assert_eq!(counted.next(Some(0), &lines), 1);
    }

    proptest::proptest! {
        /// Numbered or not, each change gets the count of its table so far in its commit.
        #[test]
        fn table_orders_are_counts_per_commit(
            commits in proptest::collection::vec(
                proptest::collection::vec(0usize..12, 0..40),
                1..6,
            ),
        ) {
            // tables 0..8 have numbers (in another order), the others none
            let tables: Vec<(Option<usize>, TableId)> = (0..12)
                .map(|i| (7usize.checked_sub(i), TableId::new("APP", format!("T{i}"))))
                .collect();
            let mut orders = TableOrders::default();
            for changes in commits {
                orders.start();
                let mut counts: HashMap<usize, u64> = HashMap::new();
                for table in changes {
                    let count = counts.entry(table).or_default();
                    *count += 1;
                    let (number, name) = &tables[table];
                    proptest::prop_assert_eq!(orders.next(*number, name), *count);
                }
            }
        }
    }
}
