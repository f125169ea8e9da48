//! cdc-offset's integration tests, one binary: the golden offsets and the replay-suffix property.

mod golden;
mod replay_suffix;
