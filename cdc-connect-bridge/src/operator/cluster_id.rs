//! The Kafka cluster id that `GET /` reports, as Connect's `kafka_cluster_id`: learnt once, in
//! the background, from the brokers the connector delivers to, so that `GET /` never waits on
//! a broker.
//!
//! ```text
//!  start ─► thread "cluster-id": fetch (metadata, ≤ 10 s) ─► Some(id) ─► ClusterId set; done
//!                                    │ no answer / client error
//!                                    ▼
//!                          wait 1 s, 2 s, … 30 s; again (until the REST API is gone)
//! ```
//!
//! # Error handling
//!
//! Nothing stops on a failure here: the id stays unknown (`null`) and the next attempt follows
//! the backoff. A failure is logged at debug only; the task reports an unreachable broker
//! itself.

use std::sync::{Arc, OnceLock, Weak};
use std::time::Duration;

use crate::kafka::KafkaClients;

/// How long one attempt waits for the brokers' metadata.
const FETCH_TIMEOUT: Duration = Duration::from_secs(10);
const FIRST_BACKOFF: Duration = Duration::from_secs(1);
const MAX_BACKOFF: Duration = Duration::from_secs(30);

/// The cluster id once known, shared between the REST API and the thread that learns it.
#[derive(Debug, Clone, Default)]
pub struct ClusterId(Arc<OnceLock<String>>);

impl ClusterId {
    /// An id known from the start (tests, embedders that know their cluster).
    pub fn known(id: impl Into<String>) -> ClusterId {
        let cell = OnceLock::new();
        let _ = cell.set(id.into());
        ClusterId(Arc::new(cell))
    }

    pub fn get(&self) -> Option<&str> {
        self.0.get().map(String::as_str)
    }

    /// Learns the id from `clients` on a thread of its own, retrying with backoff until the
    /// brokers name it; the thread ends once it is known or every `ClusterId` sharing it is
    /// dropped.
    pub fn learn_in_background(&self, clients: KafkaClients) -> std::io::Result<()> {
        let cell = Arc::downgrade(&self.0);
        std::thread::Builder::new()
            .name("cluster-id".to_owned())
            .spawn(move || learn(&clients, &cell))
            .map(|_| ())
    }
}

impl PartialEq for ClusterId {
    fn eq(&self, other: &ClusterId) -> bool {
        self.get() == other.get()
    }
}

impl Eq for ClusterId {}

fn learn(clients: &KafkaClients, cell: &Weak<OnceLock<String>>) {
    let mut backoff = FIRST_BACKOFF;
    loop {
        if cell.strong_count() == 0 {
            return;
        }
        match clients.fetch_cluster_id(FETCH_TIMEOUT) {
            Ok(Some(id)) => {
                tracing::info!(kafka_cluster_id = %id, "Kafka cluster id learnt");
                if let Some(cell) = cell.upgrade() {
                    let _ = cell.set(id);
                }
                return;
            }
            Ok(None) => tracing::debug!(
                bootstrap = %clients.bootstrap,
                "the brokers did not name their cluster yet; asking again in {backoff:?}"
            ),
            Err(error) => tracing::debug!(
                %error,
                "the Kafka cluster id could not be asked for; asking again in {backoff:?}"
            ),
        }
        std::thread::sleep(backoff);
        backoff = (backoff * 2).min(MAX_BACKOFF);
    }
}
