//! cdc-buffer's integration tests, one binary with a module per area: the buffer's
//! behaviour, spill-file corruption and a full disk, the frame golden files, and the model test.

mod common;

mod buffer;
mod corruption;
mod disk_full;
mod golden;
mod model;
