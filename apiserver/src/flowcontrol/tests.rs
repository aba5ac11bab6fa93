//! Admission tests of the whole module: concurrency shares, rejection, queuing, time-out,
//! fairness and live reconfiguration.

use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio::time::Instant;

use super::queueset::Clock;
use super::shuffle::deal;
use super::testdata::{bootstrap_levels, bootstrap_schemas};
use super::*;

/// A level `test` of 95 shares: with catch-all's 5, it gets every seat of a server of
/// up to 20 (`ceil(n * 0.95) = n`).
fn test_level(response: Value) -> Value {
    level_of_shares(95, response)
}

/// The level `test` of `shares`.
fn level_of_shares(shares: u32, response: Value) -> Value {
    json!({
        "metadata": { "name": "test", "uid": "uid-pl-test" },
        "spec": { "type": "Limited", "limited": {
            "nominalConcurrencyShares": shares,
            "limitResponse": response,
        } },
    })
}

fn queue(queues: u32, hand: u32, length: u32) -> Value {
    json!({ "type": "Queue", "queuing": { "queues": queues, "handSize": hand, "queueLengthLimit": length } })
}

fn controller(response: Value, server_limit: usize) -> Controller {
    Controller::with_clock(&[], &[test_level(response)], server_limit, Clock::manual())
}

fn later() -> Instant {
    Instant::now() + Duration::from_secs(30)
}

fn stats(c: &Controller, level: &str) -> LevelStats {
    c.stats().into_iter().find(|s| s.name == level).unwrap()
}

/// Starts a request of `flow` at `test` that reports `label` with its seat on `tx`,
/// and waits until it is queued.
async fn enqueue(
    c: &std::sync::Arc<Controller>,
    flow: FlowKey,
    label: &'static str,
    tx: &mpsc::UnboundedSender<(&'static str, Seat)>,
) -> JoinHandle<()> {
    let before = stats(c, "test").waiting();
    let (c2, tx) = (c.clone(), tx.clone());
    let handle = tokio::spawn(async move {
        let seat = c2.admit("test", flow, later()).await.unwrap();
        tx.send((label, seat)).unwrap();
    });
    while stats(c, "test").waiting() == before {
        tokio::task::yield_now().await;
    }
    handle
}

#[test]
fn bootstrap_levels_share_600_seats_as_kube_does() {
    let config = Config::from_objects(&bootstrap_schemas(), &bootstrap_levels());
    let limits = concurrency_limits(config.levels.values(), 600);
    let nominal: Vec<(&str, usize)> = limits
        .iter()
        .map(|(name, l)| (name.as_str(), l.nominal))
        .collect();
    // Shares sum to 245: ceil(600 * shares / 245).
    assert_eq!(
        nominal,
        [
            ("catch-all", 13),
            ("exempt", 0),
            ("global-default", 49),
            ("leader-election", 25),
            ("node-high", 98),
            ("system", 74),
            ("workload-high", 98),
            ("workload-low", 245),
        ]
    );
    // round(nominal * lendablePercent / 100), Go's rounding (half away from zero).
    assert_eq!(limits["system"].lendable, 24);
    assert_eq!(limits["node-high"].lendable, 25);
    assert_eq!(limits["workload-low"].min(), 245 - 221);
    assert_eq!(limits["global-default"].max(), 49 + 600);
}

#[tokio::test]
async fn exempt_level_is_never_limited() {
    let c = Controller::new(&bootstrap_schemas(), &bootstrap_levels(), 1);
    let attrs = RequestAttributes {
        user: "admin".into(),
        groups: vec!["system:masters".to_string()].into(),
        verb: "get".into(),
        path: "/metrics".into(),
        ..Default::default()
    };
    let class = c.classify(&attrs);
    assert!(class.exempt);
    let mut seats = Vec::new();
    for _ in 0..50 {
        seats.push(c.admit_classified(&class, later()).await.unwrap());
    }
    let s = stats(&c, "exempt");
    assert_eq!((s.limit, s.executing(), s.dispatched()), (None, 50, 50));
    drop(seats);
    assert_eq!(stats(&c, "exempt").executing(), 0);
}

#[tokio::test]
async fn reject_level_rejects_at_its_limit() {
    let c = controller(json!({ "type": "Reject" }), 2);
    let flow = || FlowKey::new("fs", "");
    let first = c.admit("test", flow(), later()).await.unwrap();
    let _second = c.admit("test", flow(), later()).await.unwrap();
    let third = c.admit("test", flow(), later()).await.unwrap_err();
    assert_eq!(third, Rejection::ConcurrencyLimit);
    assert_eq!(third.reason(), "concurrency-limit");
    drop(first);
    let _again = c.admit("test", flow(), later()).await.unwrap();
    let s = stats(&c, "test");
    assert_eq!((s.limit, s.executing(), s.dispatched()), (Some(2), 2, 3));
    assert_eq!(s.rejected().concurrency_limit, 1);
    assert_eq!(s.by_schema["fs"].rejected.total(), 1);
}

#[tokio::test]
async fn queued_requests_are_dispatched_in_order() {
    let c = std::sync::Arc::new(controller(queue(1, 1, 10), 1));
    let (tx, mut rx) = mpsc::unbounded_channel();
    let flow = || FlowKey::new("fs", "u");
    let running = c.admit("test", flow(), later()).await.unwrap();
    for label in ["a", "b", "c"] {
        enqueue(&c, flow(), label, &tx).await;
    }
    assert_eq!(
        (stats(&c, "test").executing(), stats(&c, "test").waiting()),
        (1, 3)
    );
    drop(running);
    let mut order = Vec::new();
    for _ in 0..3 {
        let (label, seat) = rx.recv().await.unwrap();
        order.push(label);
        assert_eq!(stats(&c, "test").executing(), 1);
        drop(seat);
    }
    assert_eq!(order, ["a", "b", "c"]);
    let s = stats(&c, "test");
    assert_eq!((s.executing(), s.waiting(), s.dispatched()), (0, 0, 4));
}

#[tokio::test]
async fn a_full_queue_rejects() {
    let c = std::sync::Arc::new(controller(queue(1, 1, 2), 1));
    let (tx, _rx) = mpsc::unbounded_channel();
    let flow = || FlowKey::new("fs", "u");
    let _running = c.admit("test", flow(), later()).await.unwrap();
    let _waiting = [
        enqueue(&c, flow(), "a", &tx).await,
        enqueue(&c, flow(), "b", &tx).await,
    ];
    let full = c.admit("test", flow(), later()).await.unwrap_err();
    assert_eq!((full, full.reason()), (Rejection::QueueFull, "queue-full"));
    assert_eq!(stats(&c, "test").rejected().queue_full, 1);
}

#[tokio::test]
async fn a_waiting_request_times_out_at_its_deadline() {
    let c = controller(queue(4, 2, 10), 1);
    let _running = c
        .admit("test", FlowKey::new("fs", "u"), later())
        .await
        .unwrap();
    let started = std::time::Instant::now();
    let deadline = Instant::now() + Duration::from_millis(50);
    let late = c.admit("test", FlowKey::new("fs", "v"), deadline).await;
    assert_eq!(late.unwrap_err(), Rejection::TimedOut);
    assert!(started.elapsed() >= Duration::from_millis(45));
    let s = stats(&c, "test");
    assert_eq!((s.waiting(), s.rejected().time_out), (0, 1));
}

#[tokio::test]
async fn a_request_gone_while_waiting_leaves_its_queue() {
    let c = controller(queue(4, 2, 10), 1);
    let running = c
        .admit("test", FlowKey::new("fs", "u"), later())
        .await
        .unwrap();
    let waiting = c.admit("test", FlowKey::new("fs", "v"), later());
    // Not ready within a short while: it waits, then is dropped.
    let gone = tokio::time::timeout(Duration::from_millis(20), waiting).await;
    assert!(gone.is_err());
    let s = stats(&c, "test");
    assert_eq!((s.waiting(), s.rejected().cancelled), (0, 1));
    drop(running);
    assert_eq!(stats(&c, "test").executing(), 0);
}

#[tokio::test]
async fn a_flood_does_not_starve_another_flow() {
    let c = std::sync::Arc::new(controller(queue(8, 1, 50), 1));
    let (tx, mut rx) = mpsc::unbounded_channel();
    let flood = || FlowKey::new("fs", "flooder");
    // Another flow dealt a different queue than the flood's.
    let flood_queue = deal(flood().hash(), 8, 1)[0];
    let other = (0..)
        .map(|i| FlowKey::new("fs", format!("user-{i}")))
        .find(|f| deal(f.hash(), 8, 1)[0] != flood_queue)
        .unwrap();
    let running = c.admit("test", flood(), later()).await.unwrap();
    for label in ["A1", "A2", "A3", "A4", "A5", "A6"] {
        enqueue(&c, flood(), label, &tx).await;
    }
    for label in ["B1", "B2", "B3"] {
        enqueue(&c, other.clone(), label, &tx).await;
    }
    drop(running);
    let mut order = Vec::new();
    for _ in 0..9 {
        let (label, seat) = rx.recv().await.unwrap();
        order.push(label);
        drop(seat);
    }
    // The other flow, queued last, is served every other turn.
    assert_eq!(
        order,
        ["B1", "A1", "B2", "A2", "B3", "A3", "A4", "A5", "A6"]
    );
}

#[tokio::test]
async fn virtual_time_favours_the_flow_that_used_less() {
    // One seat; the flood's requests run 100 ms, the other flow's 10 ms.
    let clock = Clock::manual();
    let c = std::sync::Arc::new(Controller::with_clock(
        &[],
        &[test_level(queue(8, 1, 50))],
        1,
        clock.clone(),
    ));
    let (tx, mut rx) = mpsc::unbounded_channel();
    let flood = || FlowKey::new("fs", "flooder");
    let flood_queue = deal(flood().hash(), 8, 1)[0];
    let other = (0..)
        .map(|i| FlowKey::new("fs", format!("user-{i}")))
        .find(|f| deal(f.hash(), 8, 1)[0] != flood_queue)
        .unwrap();
    let running = c.admit("test", flood(), later()).await.unwrap();
    for label in ["A1", "A2"] {
        enqueue(&c, flood(), label, &tx).await;
    }
    for label in ["B1", "B2", "B3"] {
        enqueue(&c, other.clone(), label, &tx).await;
    }
    clock.advance(Duration::from_millis(100));
    drop(running);
    let mut order = Vec::new();
    for _ in 0..5 {
        let (label, seat) = rx.recv().await.unwrap();
        order.push(label);
        let took = if label.starts_with('A') { 100 } else { 10 };
        clock.advance(Duration::from_millis(took));
        drop(seat);
    }
    // The flood's first request cost its queue 100 ms of seat time; the other flow's
    // short requests catch up with that before the flood runs again.
    assert_eq!(order[..3], ["B1", "B2", "B3"]);
}

#[tokio::test]
async fn live_reconfiguration_keeps_seats_sane() {
    // 5 shares of 10 on a server of 2: one seat.
    let c = std::sync::Arc::new(Controller::with_clock(
        &[],
        &[level_of_shares(5, queue(4, 1, 10))],
        2,
        Clock::manual(),
    ));
    let (tx, mut rx) = mpsc::unbounded_channel();
    let running = c
        .admit("test", FlowKey::new("fs", "u"), later())
        .await
        .unwrap();
    enqueue(&c, FlowKey::new("fs", "v"), "waiting", &tx).await;
    // 95 shares of 100: two seats, and fewer queues; the waiting request runs at once.
    let wider = test_level(queue(2, 1, 10));
    c.update(&[], std::slice::from_ref(&wider));
    let (label, seat) = rx.recv().await.unwrap();
    assert_eq!(label, "waiting");
    let s = stats(&c, "test");
    assert_eq!(
        (s.limit, s.queues, s.executing(), s.waiting()),
        (Some(2), 2, 2, 0)
    );
    drop(seat);
    drop(running);
    assert_eq!(stats(&c, "test").executing(), 0);
    // The level removed while a request holds its seat: the seat is still freed.
    let held = c
        .admit("test", FlowKey::new("fs", "u"), later())
        .await
        .unwrap();
    c.update(&[], &[]);
    assert!(c.stats().iter().all(|s| s.name != "test"));
    drop(held);
    // A request for the gone level is admitted by catch-all.
    let seat = c
        .admit("test", FlowKey::new("fs", "u"), later())
        .await
        .unwrap();
    assert_eq!(seat.priority_level(), "catch-all");
}

#[test]
fn wait_is_a_quarter_of_the_time_left_and_at_most_a_minute() {
    let now = Instant::now();
    let in_40s = Some(now + Duration::from_secs(40));
    let default = Duration::from_secs(15);
    assert_eq!(
        wait_deadline(now, in_40s, default),
        now + Duration::from_secs(10)
    );
    assert_eq!(wait_deadline(now, None, default), now + default);
    let in_1h = Some(now + Duration::from_secs(3600));
    assert_eq!(wait_deadline(now, in_1h, default), now + MAX_WAIT);
}
