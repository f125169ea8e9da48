//! Private strands: a transaction's redo held back from the log until it commits, its strand
//! fills, or the log switches, keeping the SCNs it was made at.

use super::SimDatabase;
use super::records::{Group, record_size};
use super::sessions::SessionName;

impl SimDatabase {
    /// Writes the session's private strand to its thread's log now.
    pub(super) fn flush_strand(&mut self, session: &SessionName) {
        let Some(s) = self.sessions.get_mut(session) else {
            return;
        };
        let thread = s.thread;
        let groups = match s.tx.as_mut() {
            Some(tx) => {
                tx.strand_bytes = 0;
                std::mem::take(&mut tx.strand)
            }
            None => return,
        };
        for g in groups {
            self.write_group(thread, g);
        }
    }

    /// Hands a group to the transaction's strand or the log.
    pub(super) fn emit(&mut self, session: &SessionName, group: Group) {
        let strand_limit = self.config.strand_bytes;
        let Some(s) = self.sessions.get_mut(session) else {
            return;
        };
        let thread = s.thread;
        if let Some(tx) = s.tx.as_mut().filter(|t| t.private) {
            tx.strand_bytes += group
                .records
                .iter()
                .map(|r| record_size(&r.body))
                .sum::<u64>();
            tx.strand.push(group);
            if tx.strand_bytes >= strand_limit {
                self.flush_strand(session);
            }
            return;
        }
        self.write_group(thread, group);
    }
}
