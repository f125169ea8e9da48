//! cdc-logminer's integration tests, one binary with a module per area: the decoder
//! (`decode_*`), the redo simulator (`sim_*`), the capture engine over the simulator (`engine_*`)
//! and the real Oracle source without its client (`source_oracle`).

mod engine_support;

mod decode_errors;
mod decode_exclusion;
mod decode_fuzz;
mod decode_internal;
mod decode_parallel;
mod decode_shapes;
mod engine_faults;
mod engine_journal;
mod engine_lag;
mod engine_new_tables;
mod engine_policies;
mod engine_restart;
mod engine_retention;
mod engine_snapshot;
mod engine_strands;
mod engine_topology;
mod engine_truth;
mod sim_decode_roundtrip;
mod sim_determinism;
mod sim_dictionary;
mod sim_faults;
mod sim_lobs;
mod sim_pdb;
mod sim_scenarios;
mod sim_snapshot;
mod sim_strands;
mod sim_workload;
mod source_oracle;
