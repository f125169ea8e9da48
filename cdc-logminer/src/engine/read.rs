//! Reading a step: the log window, the mining query read whole, and what happens when a read
//! fails (reconnect, mine again, shrink the window, or stop).

use super::*;

pub(super) struct ReadStep {
    pub(super) rows: StepRows,
    pub(super) cut: bool,
    /// What the step covers, for a replay of it (`None`: nothing was read).
    pub(super) extent: Option<StepExtent>,
}

pub(super) enum ReadError {
    Source(SourceError),
    Stop(CdcError),
}

impl From<SourceError> for ReadError {
    fn from(e: SourceError) -> Self {
        ReadError::Source(e)
    }
}

pub(super) enum StepFailure {
    Retry,
    Stop(CdcError),
}

/// The typed stop for a source error outside a step (opening, resolving the dictionary): what
/// a step would retry is CDC-1001 here, the rest as classified.
pub fn source_stop(error: SourceError) -> CdcError {
    match recovery_for(error, &[]) {
        Recovery::Stop(e) => e,
        Recovery::Reconnect(e) | Recovery::Remine(e) | Recovery::Shrink(e) => CdcError::new(
            CdcCode::TransientDatabase,
            format!("reading the dictionary failed: {e}"),
        )
        .with_source(e),
    }
}

impl From<SourceSetupError> for CdcError {
    /// The stop a setup failure is: a connection failure is classified like the same error
    /// mid-run (ORA-01017 a missing privilege, CDC-5002; DPI-1047, no Oracle client, CDC-1001
    /// with the install hint); a transient one is CDC-1001 too; the rest (the simulator, a
    /// build without the Oracle source) also CDC-1001. None was retried: a task start does
    /// not retry its connection.
    fn from(error: SourceSetupError) -> CdcError {
        match error {
            SourceSetupError::Oracle(source @ SourceError::ClientLibraryMissing { .. }) => {
                CdcError::new(
                    CdcCode::TransientDatabase,
                    format!("connecting to Oracle failed: {source}"),
                )
                .without_retry()
                .with_source(source)
            }
            SourceSetupError::Oracle(source) => match recovery_for(source, &[]) {
                Recovery::Stop(stop) => stop,
                Recovery::Reconnect(e) | Recovery::Remine(e) | Recovery::Shrink(e) => {
                    CdcError::new(
                        CdcCode::TransientDatabase,
                        format!("connecting to Oracle failed: {e}"),
                    )
                    .without_retry()
                    .with_source(e)
                }
            },
            other => CdcError::new(CdcCode::TransientDatabase, other.to_string()).without_retry(),
        }
    }
}

impl<S: RedoSource> CaptureEngine<S> {
    pub(super) fn read_step(&mut self) -> Result<ReadStep, StepFailure> {
        match self.try_read_step() {
            Ok(read) => Ok(read),
            Err(ReadError::Stop(e)) => Err(StepFailure::Stop(e)),
            Err(ReadError::Source(e)) => Err(self.recover(e)),
        }
    }

    pub(super) fn try_read_step(&mut self) -> Result<ReadStep, ReadError> {
        // the step covers the redo up to the current SCN; it also feeds the lag metrics
        let current = self.source.current_scn()?;
        self.metrics.current_scn = current.get();
        let query = LogInventoryQuery {
            from: Scn::ZERO,
            mode: self.settings.capture_mode,
            destination: self.settings.archive_destination.clone(),
        };
        let inventory = self.source.log_inventory(&query)?;
        self.observe_retention(&inventory);
        let plan = plan_logs(
            &inventory,
            self.read.cursor.log_seq,
            self.settings.capture_mode,
        )
        .map_err(ReadError::Stop)?;
        if plan.logs.is_empty() {
            // archive_only: the cursor's log is not archived yet
            return Ok(ReadStep {
                rows: StepRows::default(),
                cut: false,
                extent: None,
            });
        }
        let window_logs = plan.window(self.read.window.logs()).to_vec();
        let start_scn = window_logs
            .first()
            .map(|l| l.first_scn)
            .unwrap_or(Scn::ZERO);
        let now = self.clock.now_ms();
        if let Some(since) = self.read.session_started_ms
            && now.saturating_sub(since) >= millis(self.settings.session_max_age)
        {
            self.source.end_session()?;
            self.read.session_started_ms = None;
            self.metrics.session_recycles += 1;
        }
        self.source.start_session(&MiningWindow {
            logs: window_logs.clone(),
            start_scn,
            mode: self.read.session_mode,
            dictionary: crate::source::DictionarySource::OnlineCatalog,
        })?;
        if self.read.session_started_ms.is_none() {
            self.read.session_started_ms = Some(now);
        }
        let query = self.mining_query(self.read.cursor.bound);
        let mut rows = StepRows::default();
        let mut ddl_text = String::new();
        let mut cut = false;
        let table_filter = Arc::clone(&self.settings.table_filter);
        let objects = &*self.decoder.objects;
        self.source.mine(&query, &mut |row: MinedRow| {
            let ends_step = row.operation == Operation::Ddl && {
                ddl_text.push_str(row.sql_redo.as_deref().unwrap_or(""));
                if row.csf {
                    false
                } else {
                    let text = std::mem::take(&mut ddl_text);
                    ddl_ends_step(&row, &classify_ddl(&text), objects, &*table_filter)
                }
            };
            rows.push(row);
            if ends_step {
                cut = true;
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        })?;
        let rows = rows
            .join_continuations()
            .map_err(|e| ReadError::Stop(e.into()))?;
        let extent = StepExtent {
            logs: window_logs,
            from: query.from,
            oldest_scn: rows.iter().map(|r| r.scn).min().unwrap_or(start_scn),
            last: rows.iter().filter_map(|r| r.addr().ok()).last(),
        };
        Ok(ReadStep {
            rows,
            cut,
            extent: Some(extent),
        })
    }

    /// The mining query of the captured objects from `from`.
    pub(super) fn mining_query(&self, from: RedoBound) -> MiningQuery {
        let mut objects: Vec<(ConId, ObjectId)> = self.decoder.objects.keys().copied().collect();
        objects.sort();
        MiningQuery {
            from,
            objects,
            excluded_users: self.settings.users_exclude.clone(),
            inlist_max: self.settings.inlist_max,
            timeout: self.settings.query_timeout,
            fetch_size: self.settings.fetch_size,
            // LOB values are not assembled yet (cdc.lob.mode=skip)
            lob_rows: false,
        }
    }

    /// Applies the recovery policy to a failed read: mine the step again, or stop.
    pub(super) fn recover(&mut self, error: SourceError) -> StepFailure {
        self.metrics.step_retries += 1;
        match recovery_for(error, &self.settings.extra_transient) {
            Recovery::Stop(e) => StepFailure::Stop(e),
            Recovery::Remine(e) => {
                self.read.remines += 1;
                if self.read.remines > MAX_CONSECUTIVE_REMINES {
                    return StepFailure::Stop(
                        CdcError::new(
                            CdcCode::MiningStepRetry,
                            format!(
                                "{} steps in a row failed and were mined again; the last: {e}",
                                self.read.remines
                            ),
                        )
                        .with_source(e),
                    );
                }
                tracing::warn!(error = %e, "mining step discarded; mining it again");
                StepFailure::Retry
            }
            Recovery::Shrink(e) => {
                self.metrics.step_timeouts += 1;
                tracing::warn!(error = %e, "mining step timed out; halving the window");
                // the session may still be busy with the cancelled query
                let _ = self.source.end_session();
                self.read.session_started_ms = None;
                match self.read.window.on_timeout(self.settings.query_timeout) {
                    Ok(()) => StepFailure::Retry,
                    Err(stop) => StepFailure::Stop(stop),
                }
            }
            Recovery::Reconnect(e) => match self.reconnect(e) {
                Ok(()) => StepFailure::Retry,
                Err(stop) => stop,
            },
        }
    }

    pub(super) fn reconnect(&mut self, cause: SourceError) -> Result<(), StepFailure> {
        let mut last = cause;
        loop {
            let Some(delay) = self.read.backoff.next_delay(self.clock.now_ms()) else {
                return Err(StepFailure::Stop(
                    CdcError::new(
                        CdcCode::TransientDatabase,
                        format!(
                            "the database stayed unavailable for cdc.retry.max.time.ms ({} ms) \
                             after {} attempts; the last error: {last}",
                            self.settings.retry_max_time.as_millis(),
                            self.read.backoff.attempts()
                        ),
                    )
                    .without_retry()
                    .with_source(last),
                ));
            };
            tracing::warn!(error = %last, delay_ms = delay.as_millis() as u64, "reconnecting");
            self.clock.sleep(delay);
            self.read.session_started_ms = None;
            match self.source.reconnect() {
                Ok(()) => {
                    self.metrics.reconnects += 1;
                    // the identity is checked again after every reconnect (CDC-5001)
                    let topology = check_topology(&mut self.source, &self.settings)
                        .map_err(StepFailure::Stop)?;
                    if topology.identity != self.read.identity {
                        return Err(StepFailure::Stop(CdcError::new(
                            CdcCode::Topology,
                            format!(
                                "after reconnecting, the database is {}, not {}",
                                topology.identity, self.read.identity
                            ),
                        )));
                    }
                    // a session that lands in another container mines another way
                    if topology.session_mode != self.read.session_mode {
                        return Err(StepFailure::Stop(CdcError::new(
                            CdcCode::Topology,
                            format!(
                                "after reconnecting, the session mines in {} mode instead of \
                                 {}: it is connected to another kind of container",
                                topology.session_mode.as_str(),
                                self.read.session_mode.as_str()
                            ),
                        )));
                    }
                    self.side.ops.push(OpsEvent {
                        kind: OpsKind::Reconnected,
                        details: BTreeMap::from([("cause".to_owned(), last.to_string())]),
                    });
                    return Ok(());
                }
                Err(e) => match recovery_for(e, &self.settings.extra_transient) {
                    Recovery::Stop(stop) => return Err(StepFailure::Stop(stop)),
                    Recovery::Reconnect(e) | Recovery::Remine(e) | Recovery::Shrink(e) => last = e,
                },
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A source that cannot be built is the stop the same failure is mid-run, never retried at
    /// a task start: a refused login CDC-5002, no Oracle client CDC-1001 with the install hint,
    /// an unreachable listener CDC-1001.
    #[test]
    fn setup_failures_are_coded_stops() {
        let stop = |error: SourceError| CdcError::from(SourceSetupError::Oracle(error));

        let login = stop(SourceError::from_driver_message(
            "ORA-01017: invalid username/password; logon denied",
        ));
        assert_eq!(login.code(), CdcCode::Privilege);

        let client = stop(SourceError::from_driver_message(
            "DPI-1047: Cannot locate a 64-bit Oracle Client library: \"libclntsh.so: cannot open \
             shared object file\"",
        ));
        assert_eq!(client.code(), CdcCode::TransientDatabase);
        assert!(!client.is_retried());
        let text = client.to_string();
        assert!(
            text.starts_with("[CDC-1001] connecting to Oracle failed: DPI-1047"),
            "{text}"
        );
        assert!(text.contains("Instant Client"), "{text}");

        let listener = stop(SourceError::from_driver_message(
            "ORA-12541: TNS:no listener",
        ));
        assert_eq!(listener.code(), CdcCode::TransientDatabase);
        assert!(!listener.is_retried());

        for other in [
            SourceSetupError::MissingLogin,
            SourceSetupError::OracleNotBuilt,
            SourceSetupError::Sim("no such scenario file".into()),
        ] {
            let stop = CdcError::from(other);
            assert_eq!(stop.code(), CdcCode::TransientDatabase);
            assert!(!stop.is_retried());
        }
    }
}
