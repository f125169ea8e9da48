//! `cdc-connect-bridge`: the Kafka side of oracle-cdc and the `oracle-cdc` binary. It sits at
//! the top of the layers (`docs/architecture.md`), over `cdc-logminer`'s records, in four parts:
//!
//! | module | what it is |
//! |---|---|
//! | [`record`] | the record format, pure: engine records to Kafka records (`docs/records.md`) |
//! | [`kafka`] | Kafka I/O: the one client builder, producer, topics, offsets topic, schema topic, read-back |
//! | [`worker`] | the task: the engine on its thread, the bounded queue, delivery (exactly-once, at-least-once), acknowledgements, redelivery after a restart |
//! | [`operator`] | the supervisor, the control surface, the Kafka Connect REST API and the metrics |
//!
//! The binary (`src/bin/oracle-cdc/`) is a thin shell over them, with the demo.

pub mod kafka;
pub mod memory;
pub mod operator;
pub mod record;
pub mod worker;

pub use record::builder::{KafkaRecord, RecordBuilder, RecordContext, SourceOffset};
pub use record::envelope::TableFormat;
pub use record::error::BridgeError;
pub use record::fields::{FieldKind, field_kind, render, write_rendered};
pub use record::headers::Header;
pub use record::key::KeyPlan;
pub use record::order::EventOrder;
pub use record::settings::RecordSettings;
pub use record::topics::{SideTopics, table_topic};
