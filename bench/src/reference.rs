//! The serialisation reference for lists: the time `serde_json` takes, in this
//! process, to serialise one list kapi answered (parsed once into a
//! `serde_json::Value`, then written with `serde_json::to_vec`, median of several
//! runs). The issue's target for a list of 10,000 objects is under twice that.

use std::time::{Duration, Instant};

/// What one serialisation reference measured.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Serialization {
    /// Objects in the list.
    pub objects: usize,
    /// The list's size as kapi sent it, in bytes.
    pub bytes: usize,
    /// The median time of one `serde_json::to_vec` of the list.
    pub median: Duration,
    /// How many serialisations the median is of.
    pub runs: usize,
}

/// Parses `body` (a list of `objects` items) and times `runs` serialisations of it, on
/// a blocking thread (it is CPU work).
pub async fn measure(
    body: bytes::Bytes,
    objects: usize,
    runs: usize,
) -> Result<Serialization, String> {
    tokio::task::spawn_blocking(move || measure_now(&body, objects, runs))
        .await
        .map_err(|e| format!("the serialisation reference: {e}"))?
}

fn measure_now(body: &[u8], objects: usize, runs: usize) -> Result<Serialization, String> {
    let list: serde_json::Value =
        serde_json::from_slice(body).map_err(|e| format!("parsing a list: {e}"))?;
    let items = list["items"].as_array().map_or(0, Vec::len);
    if items != objects {
        return Err(format!("a list of {items} items, expected {objects}"));
    }
    let mut times = Vec::with_capacity(runs.max(1));
    for _ in 0..runs.max(1) {
        let begun = Instant::now();
        let written = serde_json::to_vec(&list).map_err(|e| format!("serialising: {e}"))?;
        times.push(begun.elapsed());
        std::hint::black_box(written);
    }
    times.sort();
    Ok(Serialization {
        objects,
        bytes: body.len(),
        median: times[times.len() / 2],
        runs: times.len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_are_parsed_counted_and_timed() {
        let body = br#"{"kind":"WidgetList","items":[{"a":1},{"b":2}]}"#;
        let measured = measure_now(body, 2, 5).expect("a list");
        assert_eq!(
            (measured.objects, measured.bytes, measured.runs),
            (2, body.len(), 5)
        );
        assert!(measure_now(body, 3, 1).is_err());
    }
}
