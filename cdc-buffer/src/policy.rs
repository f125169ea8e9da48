//! The orphan and age policies, and the released ledger: pure state machines the engine
//! feeds with what it reads (GV$TRANSACTION, V$SESSION, its clock, how far it has mined).
//!
//! Nothing here touches the buffer or the database. A policy answers with decisions as plain
//! data — which transactions to release or discard, the ops events and DLQ records to write —
//! or with the typed stop; the engine applies them (`TransactionBuffer::release`) and turns
//! the descriptions into records.
//!
//! ```text
//!  every check interval:  GV$TRANSACTION + V$SESSION at SCN s ----+
//!  open transactions (TxnFacts) ----------------------------------+--> OrphanDetector::check
//!  mined-to SCN --------------------------------------------------+      | release: OrphanRelease
//!                                                                        | fail:    CDC-7002
//!  every step: open transactions + clock --> check_age --> discard: AgeDiscard | fail: CDC-4004
//!  release / discard --> ReleasedLedger (last 256, in the offsets) --> COMMIT of one: CDC-7001
//! ```

use std::collections::{BTreeMap, HashMap, HashSet};

use cdc_core::config::{MaxAgeAction, OrphanAction};
use cdc_core::{ConXid, DlqKind, OpsEvent, OpsKind, Scn};

use crate::buffer::{SessionId, TxnView};
use crate::error::{BufferError, TxnSummary};

/// Transactions released as orphans or discarded, newest last; a COMMIT for one of them stops
/// the task with CDC-7001. It is the offset's `released_xids` itself (bounded to the newest
/// 256), so the buffer and the position can never disagree about it.
pub use cdc_offset::ReleasedXids as ReleasedLedger;

/// What the policies need to know about one open transaction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TxnFacts {
    pub key: ConXid,
    pub username: Option<String>,
    pub client_id: Option<String>,
    pub pdb: Option<String>,
    /// The session of its START row or, when the START row was not mined or named none (a
    /// transaction rebuilt from the journal), of a change row mined in this run; `None` when
    /// no row named one (a rebuilt transaction that wrote nothing since the restart).
    pub session: Option<SessionId>,
    pub buffered_at_ms: u64,
    pub first_scn: Scn,
    pub last_scn: Scn,
    pub events: u64,
    pub heap_bytes: u64,
    pub disk_bytes: u64,
}

impl TxnFacts {
    fn summary(&self) -> TxnSummary {
        TxnSummary {
            key: self.key,
            username: self.username.clone(),
            first_scn: self.first_scn,
            events: self.events,
            heap_bytes: self.heap_bytes,
            disk_bytes: self.disk_bytes,
        }
    }

    fn age_ms(&self, now_ms: u64) -> u64 {
        now_ms.saturating_sub(self.buffered_at_ms)
    }

    /// The details both ops events share.
    fn details(&self, now_ms: u64) -> BTreeMap<String, String> {
        let mut d = BTreeMap::new();
        d.insert("xid".to_owned(), self.key.xid.to_string());
        d.insert("con_id".to_owned(), self.key.con.to_string());
        d.insert("user".to_owned(), self.username.clone().unwrap_or_default());
        d.insert("first_scn".to_owned(), self.first_scn.to_string());
        d.insert("last_scn".to_owned(), self.last_scn.to_string());
        d.insert("events".to_owned(), self.events.to_string());
        d.insert("age_ms".to_owned(), self.age_ms(now_ms).to_string());
        d
    }
}

impl From<TxnView<'_>> for TxnFacts {
    fn from(view: TxnView<'_>) -> Self {
        let start = view.start();
        TxnFacts {
            key: view.key(),
            username: view.username().map(str::to_owned),
            client_id: start.and_then(|s| s.client_id.clone()),
            pdb: start.and_then(|s| s.pdb.clone()),
            session: view.session(),
            buffered_at_ms: view.buffered_at_ms(),
            first_scn: view.first_scn(),
            last_scn: view.last_row().map_or(view.first_scn(), |(scn, _)| scn),
            events: view.events(),
            heap_bytes: view.heap_bytes(),
            disk_bytes: view.disk_bytes(),
        }
    }
}

/// A DLQ record of kind `transaction-discarded`, as data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiscardedTransactionDlq {
    pub key: ConXid,
    pub pdb: Option<String>,
    pub user: Option<String>,
    pub first_scn: Scn,
    pub last_scn: Scn,
    pub events: u64,
    pub age_ms: u64,
    pub message: String,
}

impl DiscardedTransactionDlq {
    /// The record's `kind`.
    pub fn kind(&self) -> DlqKind {
        DlqKind::TransactionDiscarded
    }
}

/// The orphan settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OrphanSettings {
    /// `cdc.transaction.orphan.check.interval.ms`.
    pub check_interval_ms: u64,
    /// `cdc.transaction.orphan.action`.
    pub action: OrphanAction,
}

impl Default for OrphanSettings {
    fn default() -> Self {
        OrphanSettings {
            check_interval_ms: 300_000,
            action: OrphanAction::Release,
        }
    }
}

/// GV$TRANSACTION and the live sessions, read by the engine at current SCN `scn`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DatabaseSnapshot {
    pub scn: Scn,
    pub transactions: HashSet<ConXid>,
    pub sessions: HashSet<SessionId>,
}

/// Where one transaction stands after a check; only [`OrphanVerdict::Orphan`] acts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OrphanVerdict {
    /// Buffered for less than the check interval: not checked.
    Young,
    /// Listed in GV$TRANSACTION.
    Present,
    /// Absent in this check only (first absent at `since`).
    AbsentOnce { since: Scn },
    /// Absent twice, but mining has not passed the SCN of the first absence yet.
    MiningNotPast { since: Scn },
    /// Absent twice and mined past, but its session (of its START row, or of its first change
    /// row) still exists.
    SessionAlive { since: Scn },
    /// Absent twice and mined past, but no row mined names its session (it was rebuilt from
    /// the journal and wrote nothing since), so the session cannot be checked: kept (release
    /// needs all three conditions).
    SessionUnknown { since: Scn },
    /// An orphan: released or a stop, by the action.
    Orphan { since: Scn },
}

/// A transaction to release: drop it as a rollback (`TransactionBuffer::release`, which also
/// adds it to the ledger) and write the ops event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OrphanRelease {
    pub key: ConXid,
    pub ops_event: OpsEvent,
}

/// The result of one orphan check.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OrphanCheck {
    /// Every open transaction's verdict, by key.
    pub verdicts: Vec<(ConXid, OrphanVerdict)>,
    pub releases: Vec<OrphanRelease>,
}

#[derive(Debug, Clone, Copy)]
struct Absence {
    since: Scn,
    checks: u32,
}

/// The orphan rule (`docs/decisions.md`, D20) as a state machine over consecutive checks.
#[derive(Debug, Clone)]
pub struct OrphanDetector {
    settings: OrphanSettings,
    last_check_ms: u64,
    absences: HashMap<ConXid, Absence>,
}

impl OrphanDetector {
    /// A detector whose first check is due one interval after `now_ms`.
    pub fn new(settings: OrphanSettings, now_ms: u64) -> Self {
        OrphanDetector {
            settings,
            last_check_ms: now_ms,
            absences: HashMap::new(),
        }
    }

    pub fn settings(&self) -> OrphanSettings {
        self.settings
    }

    /// Whether a check is due (one interval since the last one).
    pub fn is_due(&self, now_ms: u64) -> bool {
        now_ms.saturating_sub(self.last_check_ms) >= self.settings.check_interval_ms
    }

    /// One check: `open` are the open transactions, `snapshot` what the database lists at
    /// SCN `snapshot.scn`, `mined_to` the SCN mining has reached. An orphan is a transaction
    /// buffered for at least the interval that was absent from GV$TRANSACTION in two
    /// consecutive checks, whose first absence mining has passed (it is still open, so its
    /// end was not seen), and whose session is gone (its START row's, or without one its first
    /// change row's: both name the session of the transaction). With action `fail` any
    /// orphan stops the task with CDC-7002.
    pub fn check(
        &mut self,
        now_ms: u64,
        mined_to: Scn,
        snapshot: &DatabaseSnapshot,
        open: impl IntoIterator<Item = TxnFacts>,
    ) -> Result<OrphanCheck, BufferError> {
        self.last_check_ms = now_ms;
        let mut absences = HashMap::new();
        let mut result = OrphanCheck::default();
        let mut orphans = Vec::new();
        for facts in open {
            let verdict = if facts.age_ms(now_ms) < self.settings.check_interval_ms {
                OrphanVerdict::Young
            } else if snapshot.transactions.contains(&facts.key) {
                OrphanVerdict::Present
            } else {
                let mut absence = self.absences.get(&facts.key).copied().unwrap_or(Absence {
                    since: snapshot.scn,
                    checks: 0,
                });
                absence.checks += 1;
                let since = absence.since;
                let verdict = if absence.checks < 2 {
                    OrphanVerdict::AbsentOnce { since }
                } else if mined_to <= since {
                    OrphanVerdict::MiningNotPast { since }
                } else {
                    match facts.session {
                        None => OrphanVerdict::SessionUnknown { since },
                        Some(s) if snapshot.sessions.contains(&s) => {
                            OrphanVerdict::SessionAlive { since }
                        }
                        Some(_) => OrphanVerdict::Orphan { since },
                    }
                };
                if !matches!(verdict, OrphanVerdict::Orphan { .. }) {
                    absences.insert(facts.key, absence);
                }
                verdict
            };
            if let OrphanVerdict::Orphan { since } = verdict {
                orphans.push((facts.clone(), since, mined_to));
            }
            result.verdicts.push((facts.key, verdict));
        }
        // Only transactions still open and still absent keep their count.
        self.absences = absences;
        result.verdicts.sort_by_key(|(key, _)| *key);
        orphans.sort_by_key(|(facts, _, _)| facts.key);
        if orphans.is_empty() {
            return Ok(result);
        }
        match self.settings.action {
            OrphanAction::Fail => Err(BufferError::OrphanTransaction {
                orphans: orphans.iter().map(|(f, _, _)| f.summary()).collect(),
            }),
            OrphanAction::Release => {
                result.releases = orphans
                    .into_iter()
                    .map(|(facts, since, mined_to)| orphan_release(&facts, since, mined_to, now_ms))
                    .collect();
                Ok(result)
            }
        }
    }
}

fn orphan_release(facts: &TxnFacts, since: Scn, mined_to: Scn, now_ms: u64) -> OrphanRelease {
    let mut details = facts.details(now_ms);
    details.insert(
        "client_id".to_owned(),
        facts.client_id.clone().unwrap_or_default(),
    );
    details.insert("absent_at_scn".to_owned(), since.to_string());
    let session = facts
        .session
        .map(|s| format!("({},{})", s.sid, s.serial))
        .unwrap_or_default();
    details.insert(
        "reason".to_owned(),
        format!(
            "absent from GV$TRANSACTION in two consecutive checks since SCN {since}, mined to \
             SCN {mined_to} without its COMMIT or ROLLBACK, and session {session} of its START \
             row is gone"
        ),
    );
    OrphanRelease {
        key: facts.key,
        ops_event: OpsEvent::new(OpsKind::TransactionOrphanReleased, details),
    }
}

/// The age settings; `max_age_ms: None` is unlimited (the default).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AgeSettings {
    /// `cdc.transaction.max.age.ms`.
    pub max_age_ms: Option<u64>,
    /// `cdc.transaction.max.age.action`.
    pub action: MaxAgeAction,
}

impl Default for AgeSettings {
    fn default() -> Self {
        AgeSettings {
            max_age_ms: None,
            action: MaxAgeAction::Fail,
        }
    }
}

/// A transaction to discard: drop it (`TransactionBuffer::release`, which also adds it to the
/// ledger), then write the ops event and the DLQ record — nothing is discarded silently.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgeDiscard {
    pub key: ConXid,
    pub ops_event: OpsEvent,
    pub dlq: DiscardedTransactionDlq,
}

/// The age policy: transactions open in the buffer for longer than the maximum are discarded
/// or stop the task with CDC-4004, by the action.
pub fn check_age(
    settings: AgeSettings,
    now_ms: u64,
    open: impl IntoIterator<Item = TxnFacts>,
) -> Result<Vec<AgeDiscard>, BufferError> {
    let Some(max_age_ms) = settings.max_age_ms else {
        return Ok(Vec::new());
    };
    let mut too_old: Vec<TxnFacts> = open
        .into_iter()
        .filter(|f| f.age_ms(now_ms) > max_age_ms)
        .collect();
    too_old.sort_by_key(|f| f.key);
    if too_old.is_empty() {
        return Ok(Vec::new());
    }
    match settings.action {
        MaxAgeAction::Fail => Err(BufferError::TransactionTooOld {
            max_age_ms,
            transactions: too_old.iter().map(TxnFacts::summary).collect(),
        }),
        MaxAgeAction::Discard => Ok(too_old
            .into_iter()
            .map(|facts| {
                let age_ms = facts.age_ms(now_ms);
                AgeDiscard {
                    key: facts.key,
                    ops_event: OpsEvent::new(OpsKind::TransactionDiscarded, facts.details(now_ms)),
                    dlq: DiscardedTransactionDlq {
                        key: facts.key,
                        pdb: facts.pdb.clone(),
                        user: facts.username.clone(),
                        first_scn: facts.first_scn,
                        last_scn: facts.last_scn,
                        events: facts.events,
                        age_ms,
                        message: format!(
                            "transaction {} was open for {age_ms} ms, longer than \
                             cdc.transaction.max.age.ms ({max_age_ms} ms), and was discarded \
                             with its {} buffered changes",
                            facts.key, facts.events
                        ),
                    },
                }
            })
            .collect()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cdc_core::{CdcCode, ConId, Xid};

    const INTERVAL: u64 = 1_000;
    const GONE: SessionId = SessionId { sid: 10, serial: 1 };
    const ALIVE: SessionId = SessionId { sid: 11, serial: 7 };

    fn key(n: u16) -> ConXid {
        ConXid::new(ConId(3), Xid::new(5, n, 900))
    }

    fn facts(n: u16, buffered_at_ms: u64, session: Option<SessionId>) -> TxnFacts {
        TxnFacts {
            key: key(n),
            username: Some("APP".into()),
            client_id: Some("batch-7".into()),
            pdb: Some("FREEPDB1".into()),
            session,
            buffered_at_ms,
            first_scn: Scn(100),
            last_scn: Scn(150),
            events: 3,
            heap_bytes: 300,
            disk_bytes: 0,
        }
    }

    fn snapshot(scn: u64, present: &[u16]) -> DatabaseSnapshot {
        DatabaseSnapshot {
            scn: Scn(scn),
            transactions: present.iter().map(|n| key(*n)).collect(),
            sessions: [ALIVE].into_iter().collect(),
        }
    }

    fn detector(action: OrphanAction) -> OrphanDetector {
        OrphanDetector::new(
            OrphanSettings {
                check_interval_ms: INTERVAL,
                action,
            },
            0,
        )
    }

    /// One row of the orphan table: the transaction's session, whether it is present in each
    /// of two checks (at SCN 1000 and 2000), the mined-to SCN at the second check, and the
    /// verdict after the second check.
    struct Case {
        name: &'static str,
        buffered_at_ms: u64,
        session: Option<SessionId>,
        present: [bool; 2],
        mined_to: u64,
        expected: OrphanVerdict,
    }

    #[test]
    fn orphan_rule_table() {
        let since = Scn(1000);
        let cases = [
            Case {
                name: "all three conditions",
                buffered_at_ms: 0,
                session: Some(GONE),
                present: [false, false],
                mined_to: 1001,
                expected: OrphanVerdict::Orphan { since },
            },
            Case {
                name: "younger than the interval",
                buffered_at_ms: 2_500,
                session: Some(GONE),
                present: [false, false],
                mined_to: 5000,
                expected: OrphanVerdict::Young,
            },
            Case {
                name: "present",
                buffered_at_ms: 0,
                session: Some(GONE),
                present: [false, true],
                mined_to: 5000,
                expected: OrphanVerdict::Present,
            },
            Case {
                name: "absent only in the second check",
                buffered_at_ms: 0,
                session: Some(GONE),
                present: [true, false],
                mined_to: 5000,
                expected: OrphanVerdict::AbsentOnce { since: Scn(2000) },
            },
            Case {
                name: "mining at the first absence",
                buffered_at_ms: 0,
                session: Some(GONE),
                present: [false, false],
                mined_to: 1000,
                expected: OrphanVerdict::MiningNotPast { since },
            },
            Case {
                name: "mining before the first absence",
                buffered_at_ms: 0,
                session: Some(GONE),
                present: [false, false],
                mined_to: 900,
                expected: OrphanVerdict::MiningNotPast { since },
            },
            Case {
                name: "session still alive",
                buffered_at_ms: 0,
                session: Some(ALIVE),
                present: [false, false],
                mined_to: 5000,
                expected: OrphanVerdict::SessionAlive { since },
            },
            Case {
                name: "START row never mined",
                buffered_at_ms: 0,
                session: None,
                present: [false, false],
                mined_to: 5000,
                expected: OrphanVerdict::SessionUnknown { since },
            },
        ];
        for case in cases {
            let mut d = detector(OrphanAction::Release);
            let first = snapshot(1000, if case.present[0] { &[1] } else { &[] });
            let second = snapshot(2000, if case.present[1] { &[1] } else { &[] });
            let f = facts(1, case.buffered_at_ms, case.session);
            d.check(2_000, Scn(1000), &first, [f.clone()]).unwrap();
            let result = d.check(3_000, Scn(case.mined_to), &second, [f]).unwrap();
            assert_eq!(
                result.verdicts,
                vec![(key(1), case.expected)],
                "{}",
                case.name
            );
            let released = matches!(case.expected, OrphanVerdict::Orphan { .. });
            assert_eq!(
                result.releases.len(),
                usize::from(released),
                "{}",
                case.name
            );
        }
    }

    #[test]
    fn the_first_check_alone_never_releases() {
        let mut d = detector(OrphanAction::Release);
        let r = d
            .check(
                5_000,
                Scn(9_999),
                &snapshot(1000, &[]),
                [facts(1, 0, Some(GONE))],
            )
            .unwrap();
        assert_eq!(
            r.verdicts,
            vec![(key(1), OrphanVerdict::AbsentOnce { since: Scn(1000) })]
        );
        assert!(r.releases.is_empty());
    }

    #[test]
    fn reappearing_resets_the_count() {
        let mut d = detector(OrphanAction::Release);
        let f = facts(1, 0, Some(GONE));
        d.check(1_000, Scn(10), &snapshot(100, &[]), [f.clone()])
            .unwrap();
        d.check(2_000, Scn(200), &snapshot(200, &[1]), [f.clone()])
            .unwrap();
        let r = d
            .check(3_000, Scn(400), &snapshot(300, &[]), [f.clone()])
            .unwrap();
        assert_eq!(
            r.verdicts[0].1,
            OrphanVerdict::AbsentOnce { since: Scn(300) }
        );
        let r = d.check(4_000, Scn(400), &snapshot(400, &[]), [f]).unwrap();
        assert_eq!(r.verdicts[0].1, OrphanVerdict::Orphan { since: Scn(300) });
    }

    #[test]
    fn a_transaction_that_ended_between_checks_loses_its_count() {
        let mut d = detector(OrphanAction::Release);
        d.check(
            1_000,
            Scn(10),
            &snapshot(100, &[]),
            [facts(1, 0, Some(GONE))],
        )
        .unwrap();
        // it committed; a later transaction in the same slot would start from scratch
        d.check(2_000, Scn(300), &snapshot(200, &[]), []).unwrap();
        let r = d
            .check(
                3_000,
                Scn(400),
                &snapshot(300, &[]),
                [facts(1, 0, Some(GONE))],
            )
            .unwrap();
        assert_eq!(
            r.verdicts[0].1,
            OrphanVerdict::AbsentOnce { since: Scn(300) }
        );
    }

    #[test]
    fn release_describes_the_ops_event() {
        let mut d = detector(OrphanAction::Release);
        let f = facts(1, 0, Some(GONE));
        d.check(
            2_000,
            Scn(10),
            &snapshot(1000, &[2]),
            [f.clone(), facts(2, 0, Some(GONE))],
        )
        .unwrap();
        let r = d
            .check(
                3_000,
                Scn(1500),
                &snapshot(1400, &[2]),
                [f, facts(2, 0, Some(GONE))],
            )
            .unwrap();
        assert_eq!(r.releases.len(), 1);
        let release = &r.releases[0];
        assert_eq!(release.key, key(1));
        assert_eq!(release.ops_event.kind, OpsKind::TransactionOrphanReleased);
        let d = &release.ops_event.details;
        for (k, v) in [
            ("xid", "5.1.900"),
            ("con_id", "3"),
            ("user", "APP"),
            ("first_scn", "100"),
            ("last_scn", "150"),
            ("events", "3"),
            ("age_ms", "3000"),
            ("client_id", "batch-7"),
            ("absent_at_scn", "1000"),
        ] {
            assert_eq!(d.get(k).map(String::as_str), Some(v), "{k}");
        }
        assert!(d["reason"].contains("session (10,1)"), "{}", d["reason"]);
        assert_eq!(r.verdicts[1], (key(2), OrphanVerdict::Present));
    }

    #[test]
    fn fail_action_stops_with_7002() {
        let mut d = detector(OrphanAction::Fail);
        let f = facts(1, 0, Some(GONE));
        d.check(2_000, Scn(10), &snapshot(1000, &[]), [f.clone()])
            .unwrap();
        let error = d
            .check(3_000, Scn(1500), &snapshot(1400, &[]), [f])
            .unwrap_err();
        assert_eq!(error.code(), CdcCode::OrphanTransaction);
        assert!(error.to_string().contains("3:5.1.900"), "{error}");
    }

    #[test]
    fn checks_are_due_every_interval() {
        let mut d = detector(OrphanAction::Release);
        assert!(!d.is_due(999));
        assert!(d.is_due(1_000));
        d.check(1_200, Scn(1), &DatabaseSnapshot::default(), [])
            .unwrap();
        assert!(!d.is_due(2_100));
        assert!(d.is_due(2_200));
    }

    #[test]
    fn age_policy_table() {
        let open = || [facts(1, 0, None), facts(2, 4_000, None)];
        // unlimited
        assert!(
            check_age(AgeSettings::default(), 1_000_000, open())
                .unwrap()
                .is_empty()
        );
        let fail = AgeSettings {
            max_age_ms: Some(5_000),
            action: MaxAgeAction::Fail,
        };
        let discard = AgeSettings {
            max_age_ms: Some(5_000),
            action: MaxAgeAction::Discard,
        };
        // at the limit is not over it
        assert!(check_age(fail, 5_000, open()).unwrap().is_empty());
        assert!(check_age(discard, 5_000, open()).unwrap().is_empty());
        // over it: fail names the transaction
        let error = check_age(fail, 5_001, open()).unwrap_err();
        assert_eq!(error.code(), CdcCode::TransactionTooOld);
        assert!(error.to_string().contains("3:5.1.900"), "{error}");
        assert!(!error.to_string().contains("3:5.2.900"), "{error}");
        // over it: discard describes the ops event and the DLQ record
        let discards = check_age(discard, 9_001, open()).unwrap();
        assert_eq!(discards.len(), 2);
        let first = &discards[0];
        assert_eq!(first.key, key(1));
        assert_eq!(first.ops_event.kind, OpsKind::TransactionDiscarded);
        assert_eq!(first.ops_event.details["age_ms"], "9001");
        assert_eq!(first.ops_event.details["xid"], "5.1.900");
        assert_eq!(first.dlq.kind(), DlqKind::TransactionDiscarded);
        assert_eq!(first.dlq.age_ms, 9_001);
        assert_eq!(first.dlq.pdb.as_deref(), Some("FREEPDB1"));
        assert_eq!(first.dlq.events, 3);
        assert!(first.dlq.message.contains("discarded"));
        assert_eq!(discards[1].dlq.age_ms, 5_001);
    }

    #[test]
    fn ledger_keeps_the_newest_256() {
        let mut ledger = ReleasedLedger::new();
        for n in 0..300u16 {
            ledger.release(key(n));
        }
        assert_eq!(ledger.len(), ReleasedLedger::CAPACITY);
        assert!(!ledger.contains(key(43)));
        assert!(ledger.contains(key(44)));
        assert_eq!(ledger.iter().next(), Some(key(44)));
        ledger.release(key(100));
        assert_eq!(ledger.len(), ReleasedLedger::CAPACITY);
        assert!(ledger.forget(key(100)));
        assert!(!ledger.forget(key(100)));
    }
}
