//! The journal's record format, pinned (placeholder while it is written).
