//! The contract every journal store passes (placeholder while it is written).
