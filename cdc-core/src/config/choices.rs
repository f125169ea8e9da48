//! The closed sets of values some keys take (`cdc.capture.mode`, `cdc.lob.mode`, …).
//!
//! Each enum carries its allowed spellings, so the key table, the error messages and the
//! generated documentation list exactly the values the parser accepts.

use std::fmt;

/// Declares a config enum with its canonical spellings. Parsing ignores ASCII case, because
/// Kafka Connect users write `ONLINE` as often as `online`.
macro_rules! choice {
    (
        $(#[$meta:meta])*
        $name:ident { $( $(#[$vmeta:meta])* $variant:ident = $text:literal ),+ $(,)? }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
        pub enum $name {
            $( $(#[$vmeta])* #[serde(rename = $text)] $variant ),+
        }

        impl $name {
            /// The accepted spellings, canonical form.
            pub const ALLOWED: &'static [&'static str] = &[$($text),+];

            /// The canonical spelling.
            pub fn as_str(self) -> &'static str {
                match self {
                    $( Self::$variant => $text ),+
                }
            }

            /// Reads a value, ignoring ASCII case and surrounding blanks.
            pub fn from_config(text: &str) -> Option<Self> {
                let text = text.trim();
                $( if text.eq_ignore_ascii_case($text) { return Some(Self::$variant); } )+
                None
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

choice! {
    /// `cdc.journal.converter`: how the journal topic is read back at task start. Only the
    /// JSON forms exist: the connector writes its journal as JSON itself.
    JournalConverterKind {
        /// JSON with or without the schema envelope.
        Tolerant = "TolerantJsonConverter",
        /// Kafka Connect's JsonConverter: `cdc.journal.converter.schemas.enable` (default
        /// true) says whether the envelope is required or refused.
        Json = "org.apache.kafka.connect.json.JsonConverter",
    }
}

choice! {
    /// `cdc.source`: where redo comes from.
    SourceKind {
        /// A real Oracle database through LogMiner.
        Oracle = "oracle",
        /// The deterministic redo simulator (demo and tests).
        Sim = "sim",
    }
}

choice! {
    /// `cdc.sim.database.role`: the role the simulated database reports.
    SimRole {
        Primary = "primary",
        PhysicalStandby = "physical_standby",
        LogicalStandby = "logical_standby",
        SnapshotStandby = "snapshot_standby",
    }
}

choice! {
    /// `cdc.sim.open.mode`: the open mode the simulated database reports.
    SimOpenMode {
        ReadWrite = "read_write",
        ReadOnly = "read_only",
        ReadOnlyWithApply = "read_only_with_apply",
        Mounted = "mounted",
    }
}

choice! {
    /// `exactly.once.support`: what the connector asks of the Connect worker.
    ExactlyOnceSupport {
        Requested = "requested",
        Required = "required",
    }
}

choice! {
    /// `transaction.boundary`: who decides where a Kafka transaction ends.
    TransactionBoundary {
        /// Connect's default; here at-least-once delivery (a Kafka transaction per poll is
        /// not built).
        Poll = "poll",
        /// Kafka transactions committed at a fixed interval, as Connect allows; refused at
        /// validation, not built.
        Interval = "interval",
        /// The connector ends Kafka transactions at Oracle commit boundaries: exactly once.
        Connector = "connector",
    }
}

choice! {
    /// `cdc.capture.mode`: which redo logs are mined.
    CaptureMode {
        /// Archived logs plus the online logs for the part not yet archived.
        Online = "online",
        /// Archived logs only; a change is visible once its log is archived.
        ArchiveOnly = "archive_only",
    }
}

choice! {
    /// `cdc.mining.mode`: how the LogMiner session is given its redo.
    MiningMode {
        /// DBMS_LOGMNR.ADD_LOGFILE for every log of the window.
        Logs = "logs",
        /// START_LOGMNR by SCN range only.
        Range = "range",
        /// `range` when connected to a PDB, else `logs`.
        Auto = "auto",
    }
}

choice! {
    /// `cdc.transaction.max.age.action`: what happens to a transaction open too long.
    MaxAgeAction {
        /// Stop the task with CDC-4004.
        Fail = "fail",
        /// Drop it after an ops event and a DLQ record; it joins the released ledger.
        Discard = "discard",
    }
}

choice! {
    /// `cdc.transaction.orphan.action`: what happens to a transaction the database forgot.
    OrphanAction {
        /// Drop it as a rollback, with an ops event; it joins the released ledger.
        Release = "release",
        /// Stop the task with CDC-7002.
        Fail = "fail",
    }
}

choice! {
    /// `cdc.lob.mode`: how LOB columns are delivered.
    LobMode {
        /// No LOB fields at all.
        Skip = "skip",
        /// Assembled from redo; a placeholder when the redo does not hold the value.
        Inline = "inline",
        /// As `inline`, and values missing from redo are read back `AS OF` the commit SCN.
        Reselect = "reselect",
    }
}

choice! {
    /// `cdc.lob.oversize.action`: a committed LOB larger than `cdc.lob.max.bytes`.
    LobOversizeAction {
        /// Stop the task with CDC-3003.
        Fail = "fail",
        /// Deliver `cdc.unavailable.placeholder` instead of the value.
        Placeholder = "placeholder",
    }
}

choice! {
    /// `cdc.on.decode.error`: a DML row that cannot be decoded.
    DecodeErrorAction {
        /// Stop the task with CDC-3001.
        Fail = "fail",
        /// Write the row to the dead letter topic with an ops event.
        Dlq = "dlq",
    }
}

choice! {
    /// `cdc.snapshot.mode`: when tables are read whole.
    SnapshotMode {
        Initial = "initial",
        None = "none",
        SnapshotOnly = "snapshot_only",
        OnSignal = "on_signal",
    }
}

choice! {
    /// `cdc.key.missing`: a captured table with no primary key, no usable unique index and no
    /// `cdc.key.columns` entry.
    KeyMissing {
        /// Stop the task with CDC-3001.
        Fail = "fail",
        /// Key records by ROWID.
        Rowid = "rowid",
        /// Records without a key.
        None = "none",
    }
}

choice! {
    /// `cdc.output.format`: the record value layout.
    OutputFormat {
        /// The Debezium-compatible change envelope.
        Debezium = "debezium",
    }
}

choice! {
    /// `cdc.decimal.mode`: how NUMBER values are written.
    DecimalMode {
        Precise = "precise",
        String = "string",
        Double = "double",
    }
}

choice! {
    /// `cdc.temporal.mode`: how DATE, TIMESTAMP and INTERVAL values are written.
    TemporalMode {
        Adaptive = "adaptive",
        IsoString = "iso_string",
    }
}

choice! {
    /// `cdc.schema.name.adjustment.mode` and `cdc.field.name.adjustment.mode`.
    NameAdjustment {
        /// Names as Oracle spells them.
        None = "none",
        /// Characters Avro forbids become `_`, `_` before a leading digit.
        Avro = "avro",
        /// Forbidden characters and `_` become `_uXXXX`.
        AvroUnicode = "avro_unicode",
    }
}
