//! The worker's table topics, created off the delivery thread, against a real Kafka-protocol
//! broker: a new topic's first records are sent before it exists and delivered once it does,
//! and a topic that cannot be created is reported.
//!
//! Needs `CDC_TEST_BROKER` (`eval "$(scripts/tansu.sh start)"`). Without it the tests print why
//! and pass, except under CI (`CI` set), where a missing broker is a failure.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use cdc_connect_bridge::kafka::{KafkaClients, TopicCreator, TopicSpec};
use cdc_connect_bridge::worker::acks::AckTracker;
use parking_lot::Mutex;
use rdkafka::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer};

use crate::e2e_support;
use e2e_support::{broker, unique};

/// The partitions of `topic` as the broker's metadata shows them (none when it is unknown).
fn partitions(broker: &str, topic: &str) -> usize {
    let consumer: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", broker)
        .set("allow.auto.create.topics", "false")
        .create()
        .unwrap();
    let metadata = consumer
        .fetch_metadata(Some(topic), Duration::from_secs(10))
        .unwrap();
    metadata
        .topics()
        .iter()
        .find(|t| t.name() == topic && t.error().is_none())
        .map_or(0, |t| t.partitions().len())
}

#[test]
fn a_new_topics_first_records_are_sent_before_it_exists_and_delivered_once_it_does() {
    let Some(broker) = broker() else { return };
    let clients = KafkaClients::plain(&broker);
    let acks = Arc::new(Mutex::new(AckTracker::new()));
    let producer = clients.producer(None, Arc::clone(&acks), true).unwrap();
    let mut creator = TopicCreator::start(clients.admin().unwrap(), Vec::new()).unwrap();
    let topics: Vec<String> = (0..3).map(|i| unique(&format!("topics-new{i}-"))).collect();
    for topic in &topics {
        assert_eq!(partitions(&broker, topic), 0, "{topic} exists already");
    }

    // what the delivery thread does: ask for the topic, then send at once, without waiting
    let started = Instant::now();
    let mut sent = 0u32;
    for round in 0..20 {
        for topic in &topics {
            creator.request(topic);
            let seq = acks.lock().register(1, None);
            producer
                .send_plain(topic, format!("k{round}").as_bytes(), Some(b"v"), seq)
                .unwrap();
            sent += 1;
        }
    }
    let sending = started.elapsed();
    producer.flush(Duration::from_secs(60)).unwrap();

    assert!(creator.take_failure().is_none());
    let mut tracker = acks.lock();
    assert!(tracker.take_failure().is_none(), "a record failed");
    assert_eq!(tracker.acked_records(), u64::from(sent));
    drop(tracker);
    for topic in &topics {
        // created by the worker with one partition: the producer never had the broker create it
        assert_eq!(partitions(&broker, topic), 1, "{topic}");
    }
    eprintln!("{sent} records sent in {sending:?} to 3 topics created meanwhile");
}

#[test]
fn a_topic_that_cannot_be_created_is_reported_once_by_name() {
    let Some(broker) = broker() else { return };
    let clients = KafkaClients::plain(&broker);
    let mut creator = TopicCreator::start(clients.admin().unwrap(), Vec::new()).unwrap();
    // a topic with no partition: refused before it reaches the broker
    let bad = unique("topics-bad-");
    let mut spec = TopicSpec::plain(bad.clone());
    spec.partitions = -5;
    creator.request_spec(spec);
    let deadline = Instant::now() + Duration::from_secs(30);
    let failure = loop {
        if let Some(failure) = creator.take_failure() {
            break failure;
        }
        assert!(Instant::now() < deadline, "no failure reported for {bad:?}");
        std::thread::sleep(Duration::from_millis(20));
    };
    let message = failure.to_string();
    assert!(message.contains(&bad), "{message}");
    // reported once; the thread has stopped and later requests return at once
    assert!(creator.take_failure().is_none());
    creator.request(&unique("topics-after-"));
}

#[test]
fn several_topics_are_created_in_one_call_and_a_bad_one_is_named() {
    let Some(broker) = broker() else { return };
    let clients = KafkaClients::plain(&broker);
    let mut admin = clients.admin().unwrap();
    let mut specs: Vec<TopicSpec> = (0..4)
        .map(|i| TopicSpec::plain(unique(&format!("topics-many{i}-"))))
        .collect();
    // a name asked for twice is one topic
    specs.push(specs[0].clone());
    admin.ensure_all(&specs).unwrap();
    for spec in &specs {
        assert_eq!(partitions(&broker, &spec.name), 1, "{}", spec.name);
    }

    // one topic the client refuses among good ones: the error names it, the others are made
    let good = unique("topics-good-");
    let bad = unique("topics-refused-");
    let mut refused = TopicSpec::plain(bad.clone());
    refused.partitions = -5;
    let error = admin
        .ensure_all(&[TopicSpec::plain(good.clone()), refused])
        .expect_err("a topic of -5 partitions cannot be created");
    let message = error.to_string();
    assert!(message.contains(&bad), "{message}");
    assert!(!message.contains(&good), "{message}");
    assert_eq!(partitions(&broker, &good), 1, "{good}");
}

#[test]
fn a_topic_that_never_shows_a_partition_is_an_error_naming_it() {
    let Some(broker) = broker() else { return };
    let clients = KafkaClients::plain(&broker);
    let mut admin = clients
        .admin()
        .unwrap()
        .with_metadata_wait(Duration::from_secs(2));
    // Apache Kafka refuses a topic of no partition when asked to create it; Tansu creates it
    // and its metadata never shows a partition. Either way the error names the topic.
    let empty = unique("topics-empty-");
    let mut spec = TopicSpec::plain(empty.clone());
    spec.partitions = 0;
    let started = Instant::now();
    let error = admin
        .ensure(&spec)
        .expect_err("a topic of no partition cannot be written to");
    let message = error.to_string();
    assert!(message.contains(&empty), "{message}");
    assert!(started.elapsed() < Duration::from_secs(20), "{message}");
}
