//! The resume pins of the open transactions, kept ordered so that the lowest can be read
//! without visiting every transaction.
//!
//! The engine asks at every COMMIT for the lowest SCN and the lowest redo address that the
//! *other* open transactions hold the resume point at. With hundreds of transactions open that
//! scan cost more than publishing the commit's records; here each pin change is a sorted
//! insert and removal, and the question is answered from the first two entries of each order.
//!
//! ```text
//!  pins of open transactions   (S1,A3) (S2,A1) (S2,A5)
//!  by_scn    [S1×1, S2×2]      lowest excluding (S1,A3): S2 (S1 counts only that one)
//!  by_addr   [A1×1, A3×1, A5×1]                        A1
//! ```
//!
//! The orders are sorted double-ended queues rather than trees: pins mostly arrive in redo
//! order (a new transaction goes at the back), and a removal from the middle moves the shorter
//! side in one `memmove`, never worse than the visit of every transaction it replaces. A
//! `BTreeMap` cost three times as many instructions per commit here.

use std::collections::VecDeque;

use cdc_core::{RedoAddr, Scn};

/// A pin: the SCN and the redo address a restart must mine from for one transaction.
pub(crate) type Pin = (Scn, RedoAddr);

/// Up to this many distinct pins, a removal scans the order instead of searching it.
const SCAN_MAX: usize = 8;

/// Two multisets of the pins' SCNs and addresses.
#[derive(Debug, Default)]
pub(crate) struct PinIndex {
    by_scn: SortedCounts<Scn>,
    by_addr: SortedCounts<RedoAddr>,
}

impl PinIndex {
    /// A transaction's pin moved from `before` to `after` (`None`: it had or has none).
    pub(crate) fn replace(&mut self, before: Option<Pin>, after: Option<Pin>) {
        if before == after {
            return;
        }
        if let Some((scn, addr)) = before {
            self.by_scn.remove(scn);
            self.by_addr.remove(addr);
        }
        if let Some((scn, addr)) = after {
            self.by_scn.add(scn);
            self.by_addr.add(addr);
        }
    }

    /// The lowest SCN and the lowest address of all pins, leaving out one occurrence of
    /// `except` (the pin of a transaction that does not count); `None` when no pin is left.
    pub(crate) fn floor_without(&self, except: Option<Pin>) -> Option<Pin> {
        let scn = self.by_scn.lowest(except.map(|(scn, _)| scn))?;
        let addr = self.by_addr.lowest(except.map(|(_, addr)| addr))?;
        Some((scn, addr))
    }
}

/// A multiset: distinct keys in ascending order, each with how often it occurs.
#[derive(Debug)]
struct SortedCounts<K> {
    entries: VecDeque<(K, u32)>,
}

impl<K> Default for SortedCounts<K> {
    fn default() -> Self {
        SortedCounts {
            entries: VecDeque::new(),
        }
    }
}

impl<K: Ord + Copy> SortedCounts<K> {
    fn add(&mut self, key: K) {
        // a new transaction's pin is usually the newest redo: it goes at the back
        match self.entries.back_mut() {
            None => return self.entries.push_back((key, 1)),
            Some((last, _)) if *last < key => return self.entries.push_back((key, 1)),
            Some((last, count)) if *last == key => {
                *count += 1;
                return;
            }
            Some(_) => {}
        }
        match self.entries.binary_search_by(|(k, _)| k.cmp(&key)) {
            Ok(at) => {
                if let Some((_, count)) = self.entries.get_mut(at) {
                    *count += 1;
                }
            }
            Err(at) => self.entries.insert(at, (key, 1)),
        }
    }

    fn remove(&mut self, key: K) {
        // the oldest transactions end first, as a rule
        if let Some((first, count)) = self.entries.front_mut()
            && *first == key
        {
            *count -= 1;
            if *count == 0 {
                self.entries.pop_front();
            }
            return;
        }
        // with few transactions open a scan is cheaper than a search over the deque's halves
        let at = if self.entries.len() <= SCAN_MAX {
            self.entries.iter().position(|(k, _)| *k == key)
        } else {
            self.entries.binary_search_by(|(k, _)| k.cmp(&key)).ok()
        };
        if let Some(at) = at
            && let Some((_, count)) = self.entries.get_mut(at)
        {
            *count -= 1;
            if *count == 0 {
                self.entries.remove(at);
            }
        }
    }

    /// The lowest key with one occurrence of `except` taken out.
    fn lowest(&self, except: Option<K>) -> Option<K> {
        let &(first, count) = self.entries.front()?;
        if Some(first) == except && count == 1 {
            self.entries.get(1).map(|&(k, _)| k)
        } else {
            Some(first)
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use cdc_core::RsId;
    use proptest::prelude::*;

    fn pin(scn: u64, addr: u32) -> Pin {
        (
            Scn(scn),
            RedoAddr::new(RsId::new(1, addr + 1, 0), 0).unwrap(),
        )
    }

    #[test]
    fn the_floor_leaves_out_one_occurrence_of_the_excluded_pin() {
        let mut index = PinIndex::default();
        index.replace(None, Some(pin(10, 30)));
        index.replace(None, Some(pin(20, 10)));
        assert_eq!(index.floor_without(None), Some((Scn(10), pin(0, 10).1)));
        // without the first, its SCN goes but the other's address stays the lowest
        assert_eq!(
            index.floor_without(Some(pin(10, 30))),
            Some((Scn(20), pin(0, 10).1))
        );
        index.replace(Some(pin(20, 10)), None);
        assert_eq!(index.floor_without(Some(pin(10, 30))), None);
    }

    /// Applies `steps` (a slot's pin replaced) to an index of `slots` transactions and checks
    /// the floor without `except` against the fold over the other pins after each.
    fn check_floor(
        slots: usize,
        steps: Vec<(usize, Option<(u64, u32)>)>,
        except: usize,
    ) -> Result<(), TestCaseError> {
        let mut index = PinIndex::default();
        let mut pins: Vec<Option<Pin>> = vec![None; slots];
        for (slot, new) in steps {
            let new = new.map(|(s, a)| pin(s, a));
            index.replace(pins[slot], new);
            pins[slot] = new;
            let fold = pins
                .iter()
                .enumerate()
                .filter(|(i, _)| *i != except)
                .filter_map(|(_, p)| *p)
                .reduce(|a, b| (a.0.min(b.0), a.1.min(b.1)));
            prop_assert_eq!(index.floor_without(pins[except]), fold);
        }
        Ok(())
    }

    proptest! {
        /// The index answers as the fold over every pin that the engine used to compute.
        #[test]
        fn the_floor_is_the_fold_over_the_other_pins(
            steps in proptest::collection::vec((0usize..8, proptest::option::of((0u64..6, 0u32..6))), 1..80),
            except in 0usize..8,
        ) {
            check_floor(8, steps, except)?;
        }

        /// The same with more distinct pins than a removal scans ([`SCAN_MAX`]): it searches.
        #[test]
        fn the_floor_is_the_fold_over_many_pins(
            steps in proptest::collection::vec((0usize..32, proptest::option::of((0u64..40, 0u32..40))), 1..200),
            except in 0usize..32,
        ) {
            check_floor(32, steps, except)?;
        }
    }
}
