//! Topic creation: the admin client the worker creates topics with, the table topics created
//! on a thread of their own ([`TopicCreator`]), and the side topics of a configuration.

use std::collections::HashSet;
use std::fmt;
use std::sync::Arc;
use std::sync::mpsc::{self, Sender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use cdc_core::config::CdcConfig;
use parking_lot::Mutex;
use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::client::DefaultClientContext;
use rdkafka::error::{KafkaError, RDKafkaErrorCode};

use crate::kafka::offsets::block_on;
use crate::kafka::{CALL_TIMEOUT, KafkaFailure};

/// How a topic the worker creates is configured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopicSpec {
    pub name: String,
    pub partitions: i32,
    /// `None`: the broker's default replication factor.
    pub replication: Option<i16>,
    pub configs: Vec<(&'static str, String)>,
}

impl TopicSpec {
    /// One partition, the broker's default replication, no settings.
    pub fn plain(name: impl Into<String>) -> TopicSpec {
        TopicSpec {
            name: name.into(),
            partitions: 1,
            replication: None,
            configs: Vec::new(),
        }
    }
}

/// Creates topics that do not exist yet; existing topics are left as they are.
pub struct TopicAdmin {
    pub(super) admin: AdminClient<DefaultClientContext>,
    pub(super) known: HashSet<String>,
    /// How long a created topic may take to appear in the metadata.
    pub(super) metadata_wait: Duration,
}

impl fmt::Debug for TopicAdmin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TopicAdmin")
            .field("known", &self.known.len())
            .finish_non_exhaustive()
    }
}

impl TopicAdmin {
    /// Creates `spec.name` unless it exists (or was seen before).
    pub fn ensure(&mut self, spec: &TopicSpec) -> Result<(), KafkaFailure> {
        self.ensure_all(std::slice::from_ref(spec))
    }

    /// Creates those of `specs` that do not exist (and were not seen before) in one request,
    /// then waits until the metadata shows every one of them: the side topics at start, and
    /// the table topics asked for while the previous request ran. On a busy broker one round
    /// trip each took about 9 ms, a second per hundred topics.
    pub fn ensure_all(&mut self, specs: &[TopicSpec]) -> Result<(), KafkaFailure> {
        let mut new: Vec<&TopicSpec> = Vec::with_capacity(specs.len());
        for spec in specs {
            if !self.known.contains(&spec.name) && !new.iter().any(|n| n.name == spec.name) {
                new.push(spec);
            }
        }
        let Some(first) = new.first() else {
            return Ok(());
        };
        let topics: Vec<NewTopic<'_>> = new.iter().map(|spec| new_topic(spec)).collect();
        let options = AdminOptions::new().operation_timeout(Some(CALL_TIMEOUT));
        let results = match block_on(self.admin.create_topics(&topics, &options)) {
            Ok(results) => results,
            // the client refused the request before sending it, for one of the topics: one
            // at a time, so that the error names that topic
            Err(KafkaError::AdminOpCreation(_)) if new.len() > 1 => {
                for spec in new {
                    self.ensure(spec)?;
                }
                return Ok(());
            }
            Err(source) => {
                return Err(KafkaFailure::CreateTopicRequest {
                    topic: if new.len() > 1 {
                        format!("{} (and {} more)", first.name, new.len() - 1)
                    } else {
                        first.name.clone()
                    },
                    source,
                });
            }
        };
        for result in results {
            match result {
                Ok(_) | Err((_, RDKafkaErrorCode::TopicAlreadyExists)) => {}
                Err((topic, code)) => return Err(KafkaFailure::CreateTopic { topic, code }),
            }
        }
        let names: Vec<&str> = new.iter().map(|spec| spec.name.as_str()).collect();
        self.wait_for_metadata(&names)?;
        self.known.extend(names.iter().map(|&name| name.to_owned()));
        Ok(())
    }

    /// How long a created topic may take to appear in the metadata (30 s unless set).
    pub fn with_metadata_wait(mut self, wait: Duration) -> TopicAdmin {
        self.metadata_wait = wait;
        self
    }

    /// A new topic may take a moment to appear in metadata. One that does not appear, with at
    /// least one partition, within the wait is an error naming it: nothing could be written
    /// to it. One topic is asked about alone; several, with the whole cluster's metadata.
    fn wait_for_metadata(&self, topics: &[&str]) -> Result<(), KafkaFailure> {
        let started = Instant::now();
        let asked = match topics {
            [one] => Some(*one),
            _ => None,
        };
        loop {
            let metadata = self
                .admin
                .inner()
                .fetch_metadata(asked, CALL_TIMEOUT)
                .map_err(|e| KafkaFailure::kafka("reading topic metadata", e))?;
            let ready: HashSet<&str> = metadata
                .topics()
                .iter()
                .filter(|t| t.error().is_none() && !t.partitions().is_empty())
                .map(|t| t.name())
                .collect();
            let Some(missing) = topics.iter().find(|topic| !ready.contains(*topic)) else {
                return Ok(());
            };
            if started.elapsed() > self.metadata_wait {
                return Err(KafkaFailure::TopicNotVisible {
                    topic: (*missing).to_owned(),
                    waited: self.metadata_wait,
                });
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

fn new_topic(spec: &TopicSpec) -> NewTopic<'_> {
    let replication = TopicReplication::Fixed(i32::from(spec.replication.unwrap_or(-1)));
    let mut topic = NewTopic::new(&spec.name, spec.partitions, replication);
    for (key, value) in &spec.configs {
        topic = topic.set(key, value);
    }
    topic
}

/// Creates the table topics on a thread of its own, so that the first record of a table never
/// holds up the records of the others. The first record of a new topic is sent at once: the
/// producer keeps it until the topic shows in its metadata (for up to
/// `topic.metadata.propagation.max.ms`, 30 s by default, after which it fails the record). A
/// topic that cannot be created is reported by [`TopicCreator::take_failure`]; its records are
/// never acknowledged, so no offset passes them.
pub struct TopicCreator {
    requests: Option<Sender<TopicSpec>>,
    requested: foldhash::HashSet<String>,
    failure: Arc<Mutex<Option<KafkaFailure>>>,
    thread: Option<JoinHandle<()>>,
}

impl fmt::Debug for TopicCreator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TopicCreator")
            .field("requested", &self.requested.len())
            .finish_non_exhaustive()
    }
}

/// Topics created in one CreateTopics request at most.
const MAX_TOPICS_PER_REQUEST: usize = 100;

impl TopicCreator {
    /// Starts the thread, which creates topics with `admin`. `known`: topics that exist.
    pub fn start(
        mut admin: TopicAdmin,
        known: impl IntoIterator<Item = String>,
    ) -> std::io::Result<TopicCreator> {
        let (requests, received) = mpsc::channel::<TopicSpec>();
        let failure = Arc::new(Mutex::new(None));
        let thread = {
            let failure = Arc::clone(&failure);
            std::thread::Builder::new()
                .name("oracle-cdc-topics".into())
                .spawn(move || {
                    // what was asked for while the last request ran goes in the next one
                    for spec in received.iter() {
                        let mut batch = vec![spec];
                        batch.extend(received.try_iter().take(MAX_TOPICS_PER_REQUEST - 1));
                        if let Err(error) = admin.ensure_all(&batch) {
                            *failure.lock() = Some(error);
                            return;
                        }
                    }
                })?
        };
        Ok(TopicCreator {
            requests: Some(requests),
            requested: known.into_iter().collect(),
            failure,
            thread: Some(thread),
        })
    }

    /// Has `topic` created (one partition, the broker's default replication) unless it exists
    /// or was asked for before; returns at once.
    pub fn request(&mut self, topic: &str) {
        if !self.requested.contains(topic) {
            self.request_spec(TopicSpec::plain(topic));
        }
    }

    /// Has `spec.name` created as `spec` says unless it exists or was asked for before;
    /// returns at once.
    pub fn request_spec(&mut self, spec: TopicSpec) {
        if !self.requested.insert(spec.name.clone()) {
            return;
        }
        if let Some(requests) = &self.requests {
            // a closed channel means the thread stopped on a failure, which `take_failure`
            // reports
            let _ = requests.send(spec);
        }
    }

    /// The failure that stopped the thread, once.
    pub fn take_failure(&self) -> Option<KafkaFailure> {
        self.failure.lock().take()
    }
}

impl Drop for TopicCreator {
    /// Lets the thread finish the topics asked for, then joins it.
    fn drop(&mut self) {
        self.requests = None;
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The side topics of a configuration, with their settings: ops (delete), heartbeat
/// (delete, 24 h), signals (delete), schema and txjournal (compact), DLQ (delete; only when
/// something can go there), transactions (only when enabled).
pub fn side_topic_specs(config: &CdcConfig) -> Vec<TopicSpec> {
    let topics = &config.topics;
    let replication = topics.internal_replication_factor;
    let spec = |name: &str, configs: Vec<(&'static str, String)>| TopicSpec {
        name: name.to_owned(),
        partitions: 1,
        replication,
        configs,
    };
    let delete = || ("cleanup.policy", "delete".to_owned());
    let compact = || ("cleanup.policy", "compact".to_owned());
    let mut specs = vec![
        spec(&topics.ops, vec![delete()]),
        spec(
            &topics.heartbeat,
            vec![delete(), ("retention.ms", "86400000".to_owned())],
        ),
        spec(&topics.signals, vec![delete()]),
        spec(&topics.schema, vec![compact()]),
        spec(&topics.txjournal, vec![compact()]),
    ];
    let dlq_used = config.decode.on_decode_error == cdc_core::config::DecodeErrorAction::Dlq
        || config.transaction.max_age_action == cdc_core::config::MaxAgeAction::Discard;
    if dlq_used {
        specs.push(spec(&topics.dlq, vec![delete()]));
    }
    if topics.transactions_enabled {
        specs.push(spec(&topics.transactions, vec![delete()]));
    }
    specs
}
