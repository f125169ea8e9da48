//! Operator records as data: the events of the ops topic and the kinds of DLQ record.
//!
//! The engine, the buffer's policies and the bridge make them; the bridge writes them
//! (`docs/records.md` lists each type with its details). Their names are closed sets, so a
//! consumer's filter and our own tests compare enums, never strings typed twice.

use std::collections::BTreeMap;
use std::fmt;

/// Declares a closed set of record names, each with its spelling on the topics.
macro_rules! record_names {
    (
        $(#[$meta:meta])*
        $name:ident { $( $(#[$vmeta:meta])* $variant:ident = $text:literal ),+ $(,)? }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[non_exhaustive]
        pub enum $name {
            $( $(#[$vmeta])* $variant ),+
        }

        impl $name {
            /// Every name, in declaration order.
            pub const ALL: &'static [$name] = &[$(Self::$variant),+];

            /// The name as the topics spell it.
            pub fn as_str(self) -> &'static str {
                match self {
                    $( Self::$variant => $text ),+
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

record_names! {
    /// The `type` of an ops event.
    OpsKind {
        /// Before a task's first record.
        Startup = "startup",
        /// The task stops with an error.
        Stop = "stop",
        /// The database session was reopened after a transient error.
        Reconnected = "reconnected",
        /// A DDL statement was mined.
        DdlSeen = "ddl-seen",
        /// DDL gave a captured table a new schema version, or removed it.
        DdlApplied = "ddl-applied",
        /// DDL made a table match the filters.
        TableAdded = "table-added",
        /// A captured table was dropped or renamed away.
        TableRemoved = "table-removed",
        /// An Oracle transaction spans several Kafka transactions (exactly once).
        TransactionSplit = "transaction-split",
        /// The orphan check released a transaction the database no longer knows.
        TransactionOrphanReleased = "transaction-orphan-released",
        /// The age policy discarded a transaction open too long.
        TransactionDiscarded = "transaction-discarded",
        /// A row that cannot be decoded went to the DLQ.
        DecodeErrorDlq = "decode-error-dlq",
        /// A row LogMiner marks unsupported went to the DLQ.
        UnsupportedRow = "unsupported-row",
        /// A dictionary build into the redo: built, failed, or disabled (no grant).
        DictionaryBuild = "dictionary-build",
        /// A step was mined again with a redo dictionary for rows older than a DDL.
        DictionaryReplay = "dictionary-replay",
        /// A snapshot chunk's rows were published; the offset now records its end.
        SnapshotChunkDone = "snapshot-chunk-done",
        /// A table's snapshot is complete (`table`), or the whole snapshot (`table` = `*`).
        SnapshotComplete = "snapshot-complete",
        /// The answer to a signal: accepted, rejected (with the reason) or done.
        SignalAck = "signal-ack",
        /// The resume point has come to need the oldest redo log still available: the next
        /// purge of that log would stop the task with CDC-2002.
        RedoRetentionWarning = "redo-retention-warning",
        /// Written by `oracle-cdc-admin offsets set` (never by the connector): `applying`
        /// before the offset is changed, then `applied` or `failed`.
        OffsetsSet = "offsets-set",
    }
}

record_names! {
    /// The `kind` of a DLQ record.
    DlqKind {
        /// A row the decoder could not turn into a change.
        DecodeError = "decode-error",
        /// A row LogMiner could not render (`Unsupported` SQL_REDO).
        UnsupportedRow = "unsupported-row",
        /// A transaction the age policy discarded, as a whole.
        TransactionDiscarded = "transaction-discarded",
    }
}

impl DlqKind {
    /// The ops event that follows a DLQ record of a row of this kind.
    pub fn row_event(self) -> OpsKind {
        match self {
            DlqKind::UnsupportedRow => OpsKind::UnsupportedRow,
            DlqKind::DecodeError => OpsKind::DecodeErrorDlq,
            DlqKind::TransactionDiscarded => OpsKind::TransactionDiscarded,
        }
    }
}

/// An event for the ops topic: its type and its `details` map.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpsEvent {
    pub kind: OpsKind,
    pub details: BTreeMap<String, String>,
}

impl OpsEvent {
    /// An event of `kind` with `details`.
    pub fn new(kind: OpsKind, details: BTreeMap<String, String>) -> OpsEvent {
        OpsEvent { kind, details }
    }

    /// The `stop` event of a task that ended with `error`: its code, message, runbook and
    /// operator action.
    pub fn stop(error: &crate::CdcError) -> OpsEvent {
        let code = error.code();
        let details = [
            ("exception", "CdcError".to_owned()),
            ("message", error.to_string()),
            ("code", code.id().to_owned()),
            ("runbook", code.runbook().to_owned()),
            ("operator_action", code.operator_action().to_owned()),
        ];
        OpsEvent::new(
            OpsKind::Stop,
            details
                .into_iter()
                .map(|(key, value)| (key.to_owned(), value))
                .collect(),
        )
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;

    #[test]
    fn names_are_distinct_lower_case_and_hyphenated() {
        for names in [
            OpsKind::ALL.iter().map(|k| k.as_str()).collect::<Vec<_>>(),
            DlqKind::ALL.iter().map(|k| k.as_str()).collect::<Vec<_>>(),
        ] {
            let distinct: BTreeSet<&str> = names.iter().copied().collect();
            assert_eq!(distinct.len(), names.len(), "{names:?}");
            for name in names {
                assert!(
                    name.chars().all(|c| c.is_ascii_lowercase() || c == '-'),
                    "{name}"
                );
            }
        }
    }

    #[test]
    fn a_dlq_row_is_followed_by_its_own_event() {
        assert_eq!(DlqKind::DecodeError.row_event(), OpsKind::DecodeErrorDlq);
        assert_eq!(DlqKind::UnsupportedRow.row_event(), OpsKind::UnsupportedRow);
        assert_eq!(OpsKind::DecodeErrorDlq.to_string(), "decode-error-dlq");
    }
}
