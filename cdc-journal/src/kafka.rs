//! The journal topic on Kafka (placeholder while it is written).
