//! The operator's edits of a stored offset (`docs/runbooks.md`, "Moving the offset by hand"), as
//! `oracle-cdc-admin offsets set` applies them (`docs/admin.md`). Each takes the offset as read
//! and returns the offset to store; everything an edit does not name stays as read, in particular
//! `dbid`, `resetlogs_scn` (they tie the offset to its database) and `released_xids` (it stops a
//! late COMMIT of a released transaction from being published in part), and the unknown fields.
//!
//! Checks that need the database (the SCN is not above the current SCN, its redo is not
//! purged) are the admin tool's (`cdc-admin`); these functions only refuse what the offset itself shows to be
//! the wrong edit.

use cdc_core::{ConXid, Scn};

use crate::error::EditError;
use crate::position::{FirstStart, Position, ResumePoint};

/// Where a new resume SCN lies from the current one (the `direction` of the `offsets-set` ops
/// event).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Direction {
    Backward,
    Same,
    Forward,
}

impl Direction {
    pub fn of(position: &Position, scn: Scn) -> Direction {
        match scn.cmp(&position.resume.scn) {
            std::cmp::Ordering::Less => Direction::Backward,
            std::cmp::Ordering::Equal => Direction::Same,
            std::cmp::Ordering::Greater => Direction::Forward,
        }
    }

    /// The word used in the ops event.
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::Backward => "backward",
            Direction::Same => "same",
            Direction::Forward => "forward",
        }
    }
}

/// "Mine again from an earlier SCN": `resume_scn` set to `scn`, `resume_rs_id` and
/// `resume_ssn` removed, so the restart mines from the first SCN of the log holding `scn`.
/// Commits up to the last acknowledged one are still skipped; combine with [`deliver_again`]
/// to publish them again too. `scn` equal to the current `resume_scn` is allowed: it drops the
/// address, which mines from the start of that log. A later SCN is refused: that is
/// [`skip_forward`].
pub fn mine_again_from(position: &Position, scn: Scn) -> Result<Position, EditError> {
    if Direction::of(position, scn) == Direction::Forward {
        return Err(EditError::WouldSkipForward {
            current: position.resume.scn,
            requested: scn,
        });
    }
    Ok(with_resume_scn(position, scn))
}

/// "Deliver again": the five `last_commit_*` fields removed and `event_index` 0, so the skip
/// rule no longer skips the commits that were acknowledged. Used with [`mine_again_from`];
/// alone it re-publishes only what a restart mines again anyway (the acknowledged commit's
/// records, when the resume point is still before it).
pub fn deliver_again(position: &Position) -> Position {
    let mut edited = position.clone();
    edited.last_commit = None;
    edited
}

/// "Skip forward": `resume_scn` set to the later `scn`, `resume_rs_id` and `resume_ssn`
/// removed. Every change between the old position and the new one is not delivered, and a
/// transaction open at `scn` is delivered without its earlier changes: this is the one place
/// where data is left out, and only because an operator chose it. An SCN that is not later is
/// refused: that is [`mine_again_from`].
///
/// Beyond the runbook's hand edit, the new SCN also becomes a start floor (the `start_*` fields,
/// with no listed transactions) until the next commit is acknowledged. Mining starts at the
/// first SCN of the log holding `scn`, so it reads the commits of that log below `scn` too,
/// some of transactions whose earlier rows are in older logs; without the floor those commits
/// (after the old last commit) would be published, some in part. With it, exactly the commits
/// at or after `scn` are published, and rows below it only for transactions that began at or
/// after it: the hand edit's meaning, without its partial transactions.
pub fn skip_forward(position: &Position, scn: Scn) -> Result<Position, EditError> {
    if Direction::of(position, scn) != Direction::Forward {
        return Err(EditError::NotForward {
            current: position.resume.scn,
            requested: scn,
        });
    }
    let mut edited = with_resume_scn(position, scn);
    edited.first_start = Some(FirstStart::new(scn, [], scn));
    Ok(edited)
}

/// Removes an XID from `released_xids` (the operator action of CDC-7001, with the resume point
/// moved back to the transaction's first SCN by [`mine_again_from`]).
pub fn forget_released(position: &Position, xid: ConXid) -> Result<Position, EditError> {
    let mut edited = position.clone();
    if !edited.released_xids.forget(xid) {
        return Err(EditError::NotReleased { xid });
    }
    Ok(edited)
}

fn with_resume_scn(position: &Position, scn: Scn) -> Position {
    let mut edited = position.clone();
    edited.resume = ResumePoint::from_scn(scn);
    edited
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::position::{DbIdentity, LastCommit, RedoMark};
    use cdc_core::{ConId, RedoAddr, RedoThread, RsId, Xid};
    use serde_json::json;

    fn stored() -> Position {
        let addr = RedoAddr::new(RsId::new(0x59, 0xd6a1, 0x10), 3).unwrap();
        let mut position = Position::new(
            ResumePoint::at(RedoMark::new(addr, Scn(4_711_000))),
            DbIdentity::new(1_234_567_890, Scn(1)),
            7,
        );
        position.last_commit = Some(LastCommit {
            scn: Scn(4_711_500),
            xid: ConXid::new(ConId(3), Xid::new(5, 12, 900)),
            thread: RedoThread(1),
            addr,
            event_index: 2,
        });
        position
            .released_xids
            .release(ConXid::new(ConId(3), Xid::new(9, 1, 1)));
        position
            .extra
            .insert("future_field", json!("kept"))
            .unwrap();
        position
    }

    /// The fields every edit leaves as read.
    fn assert_kept(before: &Position, after: &Position) {
        assert_eq!(after.identity, before.identity);
        assert_eq!(after.released_xids, before.released_xids);
        assert_eq!(after.journal_generation, before.journal_generation);
        assert_eq!(after.extra, before.extra);
        assert_eq!(after.snapshot, before.snapshot);
    }

    #[test]
    fn mine_again_drops_the_address_and_keeps_the_last_commit() {
        let before = stored();
        let after = mine_again_from(&before, Scn(4_700_000)).unwrap();
        assert_eq!(after.resume, ResumePoint::from_scn(Scn(4_700_000)));
        assert_eq!(after.last_commit, before.last_commit);
        assert_kept(&before, &after);
        let text = after.to_json();
        assert!(
            !text.contains("resume_rs_id") && !text.contains("resume_ssn"),
            "{text}"
        );
        assert!(text.contains(r#""resume_scn":4700000"#), "{text}");
        // the same SCN: only the address goes
        let same = mine_again_from(&before, Scn(4_711_000)).unwrap();
        assert_eq!(same.resume, ResumePoint::from_scn(Scn(4_711_000)));
        // a later SCN is a skip, refused here
        assert_eq!(
            mine_again_from(&before, Scn(4_711_001)).unwrap_err(),
            EditError::WouldSkipForward {
                current: Scn(4_711_000),
                requested: Scn(4_711_001)
            }
        );
    }

    #[test]
    fn deliver_again_drops_the_five_fields_and_event_index() {
        let before = stored();
        let after = deliver_again(&mine_again_from(&before, Scn(4_000_000)).unwrap());
        assert_eq!(after.last_commit, None);
        assert_kept(&before, &after);
        let text = after.to_json();
        for name in crate::codec::LAST_COMMIT_FIELDS {
            assert!(!text.contains(name), "{name} in {text}");
        }
        assert!(!text.contains("event_index"), "{text}");
        assert_eq!(Position::from_json(&text).unwrap(), after);
        assert_eq!(after.skip_rule(), deliver_again(&stored()).skip_rule());
    }

    #[test]
    fn skip_forward_only_moves_forward() {
        let before = stored();
        let after = skip_forward(&before, Scn(4_800_000)).unwrap();
        assert_eq!(after.resume, ResumePoint::from_scn(Scn(4_800_000)));
        assert_eq!(after.last_commit, before.last_commit);
        assert_kept(&before, &after);
        // the new SCN is a floor: commits below it are skipped even when mined again
        let floor = after.first_start.clone().unwrap();
        assert_eq!(
            (floor.floor_scn, floor.open_scn),
            (Scn(4_800_000), Scn(4_800_000))
        );
        assert!(floor.open_xids.is_empty());
        let later = RedoAddr::new(RsId::new(0x60, 1, 0x10), 0).unwrap();
        let rule = after.skip_rule();
        assert_eq!(
            rule.decide(later, Scn(4_799_999)),
            crate::SkipDecision::SkipWhole
        );
        assert_eq!(
            rule.decide(later, Scn(4_800_000)),
            crate::SkipDecision::EmitAll
        );
        let text = after.to_json();
        assert!(
            text.contains(
                r#""start_floor_scn":4800000,"start_open_scn":4800000,"start_open_xids":"""#
            ),
            "{text}"
        );
        assert_eq!(Position::from_json(&text).unwrap(), after);
        for scn in [4_711_000, 4_000_000] {
            assert!(matches!(
                skip_forward(&before, Scn(scn)),
                Err(EditError::NotForward { .. })
            ));
        }
    }

    #[test]
    fn directions() {
        let position = stored();
        assert_eq!(Direction::of(&position, Scn(1)), Direction::Backward);
        assert_eq!(Direction::of(&position, Scn(4_711_000)), Direction::Same);
        assert_eq!(Direction::of(&position, Scn(5_000_000)).as_str(), "forward");
    }

    #[test]
    fn forget_released_removes_one_xid() {
        let before = stored();
        let xid = ConXid::new(ConId(3), Xid::new(9, 1, 1));
        let after = forget_released(&before, xid).unwrap();
        assert!(after.released_xids.is_empty());
        assert_eq!(after.resume, before.resume);
        assert_eq!(
            forget_released(&after, xid).unwrap_err(),
            EditError::NotReleased { xid }
        );
    }
}
