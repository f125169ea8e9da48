//! The redo logs: one sequence after another per thread in a ring of online groups, log
//! switches, archived copies at each destination, and where a record lands (its RS_ID).

use cdc_core::{RedoAddr, RedoThread, RsId, Scn};

use super::SimDatabase;
use super::records::{Group, Placed, record_size};
use super::sessions::SessionName;

/// Usable bytes of a 512-byte redo block after its 16-byte header.
const BLOCK_PAYLOAD: u64 = 496;

/// An archived copy of a log at one destination.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ArchivedCopy {
    pub dest: usize,
    pub name: String,
    pub deleted: bool,
    pub removed: bool,
}

/// One log sequence of one thread.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RedoLog {
    pub thread: RedoThread,
    pub sequence: u32,
    pub incarnation: u32,
    pub first_scn: Scn,
    pub next_scn: Option<Scn>,
    pub group: u32,
    /// Still in its online group (not yet overwritten by a later sequence).
    pub online: bool,
    pub used_bytes: u64,
    pub records: Vec<Placed>,
    pub copies: Vec<ArchivedCopy>,
    /// The sequence was lost (a gap): no copy anywhere.
    pub lost: bool,
    pub switched_at: u64,
    /// The log holds the first (`dictionary_begin`) or the last (`dictionary_end`) record of
    /// a dictionary build: V$ARCHIVED_LOG's flags.
    pub dictionary_begin: bool,
    pub dictionary_end: bool,
    /// FIRST_TIME: the database's clock (ms since the epoch) when the log was opened.
    pub first_time_ms: u64,
}

impl RedoLog {
    /// The file of the log's online group.
    pub fn online_name(&self, db: &str) -> String {
        format!("/opt/oracle/oradata/{db}/redo{:02}.log", self.group)
    }
}

impl SimDatabase {
    /// Whether the redo has reached `rs_id`: a record at or after it was written. A simulated
    /// database restarted from its seed replays its workload until then, so a stored position
    /// finds the redo it resumes from.
    pub fn redo_reached(&self, rs_id: RsId) -> bool {
        self.logs.iter().any(|log| {
            log.records
                .last()
                .is_some_and(|placed| placed.rs_id >= rs_id)
        })
    }

    /// Opens a thread's next sequence in the next group of its ring.
    pub(super) fn open_log(&mut self, thread_idx: usize, thread: RedoThread, sequence: u32) {
        let groups = self.config.online_groups.max(2);
        let group = (thread_idx as u32) * groups + ((sequence - 1) % groups) + 1;
        // the group's previous log is overwritten: Oracle waits for it to be archived first
        let archive_now: Vec<usize> = self
            .logs
            .iter()
            .enumerate()
            .filter(|(_, l)| l.online && l.group == group && l.thread == thread)
            .map(|(i, _)| i)
            .collect();
        for i in archive_now {
            self.archive_log(i);
            if let Some(l) = self.logs.get_mut(i) {
                l.online = false;
            }
        }
        let first_scn = Scn(self.scn);
        let first_time_ms = u64::try_from(self.clock.epoch_nanos() / 1_000_000).unwrap_or(0);
        self.logs.push(RedoLog {
            thread,
            sequence,
            incarnation: self.incarnation,
            first_scn,
            next_scn: None,
            group,
            online: true,
            used_bytes: 0,
            records: Vec::new(),
            copies: Vec::new(),
            lost: false,
            switched_at: 0,
            dictionary_begin: false,
            dictionary_end: false,
            first_time_ms,
        });
        let idx = self.logs.len() - 1;
        if thread_idx < self.current.len() {
            self.current[thread_idx] = idx;
        } else {
            self.current.push(idx);
        }
    }

    /// Copies a switched log to every archive destination, once.
    fn archive_log(&mut self, idx: usize) {
        let db = self.config.db_name.clone();
        let dests = self.config.archive_dests.len().max(1);
        let incarnation_id = 1_190_000_000 + self.incarnation;
        let Some(log) = self.logs.get_mut(idx) else {
            return;
        };
        if log.next_scn.is_none() || !log.copies.is_empty() || log.lost {
            return;
        }
        for dest in 0..dests {
            log.copies.push(ArchivedCopy {
                dest,
                name: format!(
                    "/opt/oracle/arch{}/{db}/{}_{}_{incarnation_id}.arc",
                    dest + 1,
                    log.thread,
                    log.sequence
                ),
                deleted: false,
                removed: false,
            });
        }
    }

    /// Switches the thread's current log: binds every private strand of the thread's open
    /// transactions into it first, then opens the next sequence.
    fn switch_log(&mut self, thread_idx: usize) {
        if self.switching {
            return;
        }
        self.switching = true;
        let names: Vec<SessionName> = self
            .sessions
            .iter()
            .filter(|(_, s)| {
                s.thread == thread_idx && s.tx.as_ref().is_some_and(|t| !t.strand.is_empty())
            })
            .map(|(n, _)| n.clone())
            .collect();
        for name in names {
            self.flush_strand(&name);
        }
        self.switching = false;
        let next = self.next_scn();
        let Some(&cur) = self.current.get(thread_idx) else {
            return;
        };
        self.switches += 1;
        let (thread, sequence) = match self.logs.get_mut(cur) {
            Some(log) => {
                log.next_scn = Some(next);
                log.switched_at = 0;
                (log.thread, log.sequence)
            }
            None => return,
        };
        if let Some(log) = self.logs.get_mut(cur) {
            log.switched_at = self.switches;
        }
        self.open_log(thread_idx, thread, sequence + 1);
        let lag = u64::from(self.config.archive_lag_switches);
        let due: Vec<usize> = self
            .logs
            .iter()
            .enumerate()
            .filter(|(_, l)| {
                l.next_scn.is_some()
                    && l.copies.is_empty()
                    && !l.lost
                    && self.switches >= l.switched_at + lag
            })
            .map(|(i, _)| i)
            .collect();
        for i in due {
            self.archive_log(i);
        }
    }

    /// Places one redo record (group) at the thread's current position, and returns the redo
    /// address of its last row (a log switch it causes may write other strands after it).
    pub(super) fn write_group(&mut self, thread_idx: usize, group: Group) -> RedoAddr {
        let size: u64 = group.records.iter().map(|r| record_size(&r.body)).sum();
        let Some(&cur) = self.current.get(thread_idx) else {
            return RedoAddr::MIN;
        };
        let Some(log) = self.logs.get_mut(cur) else {
            return RedoAddr::MIN;
        };
        let block = 2 + log.used_bytes / BLOCK_PAYLOAD;
        let offset = 16 + log.used_bytes % BLOCK_PAYLOAD;
        let rs_id = RsId::new(log.sequence, block as u32, offset as u16);
        let last_ssn = group.records.last().map(|r| r.ssn).unwrap_or(0);
        for record in group.records {
            log.records.push(Placed { rs_id, record });
        }
        log.used_bytes += size;
        if log.used_bytes >= self.config.log_size_bytes {
            self.switch_log(thread_idx);
        }
        RedoAddr::new(rs_id, last_ssn).unwrap_or(RedoAddr::MIN)
    }

    /// Switches every thread's log (a `log_switch`), binding open strands first.
    pub(super) fn switch_every_log(&mut self) {
        for t in 0..self.current.len() {
            self.switch_log(t);
        }
    }

    /// Archives every log that is no longer current, whatever the archive lag.
    pub(super) fn archive_switched_logs(&mut self) {
        for i in 0..self.logs.len() {
            self.archive_log(i);
        }
    }

    /// Purges the archived copies of the current incarnation's sequences up to
    /// `up_to_sequence`: RMAN marks them DELETED=YES; an `rm` (`remove_file`) takes the files
    /// and leaves the catalog saying DELETED=NO.
    pub(super) fn purge(&mut self, up_to_sequence: u32, remove_file: bool) {
        let inc = self.incarnation;
        for log in self
            .logs
            .iter_mut()
            .filter(|l| l.sequence <= up_to_sequence && l.incarnation == inc)
        {
            for copy in &mut log.copies {
                if remove_file {
                    copy.removed = true;
                } else {
                    copy.deleted = true;
                    copy.removed = true;
                }
            }
        }
    }

    /// Loses a switched log of the current incarnation: no archived copy, online copy gone.
    pub(super) fn lose_log(&mut self, sequence: u32) {
        let inc = self.incarnation;
        if let Some(log) = self
            .logs
            .iter_mut()
            .find(|l| l.sequence == sequence && l.incarnation == inc && l.next_scn.is_some())
        {
            log.lost = true;
            log.copies.clear();
            log.online = false;
        }
    }

    /// OPEN RESETLOGS after a restore: a new incarnation whose sequences restart at 1,
    /// optionally as another database (a new DBID).
    pub(super) fn restore(&mut self, new_dbid: bool) {
        // open transactions are lost with the old incarnation
        let names: Vec<SessionName> = self.sessions.keys().cloned().collect();
        for n in names {
            self.release_locks(&n);
        }
        self.sessions.clear();
        for t in 0..self.current.len() {
            self.switch_log(t);
        }
        if new_dbid {
            self.dbid += 1 + self.rng.below(1_000_000);
        }
        self.incarnation += 1;
        self.resetlogs_scn = Scn(self.scn + 1);
        self.scn += 1;
        self.publish_scn();
        let threads = self.threads.clone();
        for (i, th) in threads.iter().enumerate() {
            self.open_log(i, *th, 1);
        }
    }

    /// Enables a redo thread (RAC) with its own logs from sequence 1; sessions opened from
    /// now on are spread over the threads.
    pub(super) fn enable_thread(&mut self, thread: RedoThread) {
        if !self.threads.contains(&thread) {
            self.threads.push(thread);
            let idx = self.threads.len() - 1;
            self.open_log(idx, thread, 1);
        }
    }
}
