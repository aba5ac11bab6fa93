//! A `{Kind}List` in JSON, written a chunk at a time as the connection takes it.
//!
//! Every item is resolved first ([`JsonPiece`]: a slice of its stored bytes, or its
//! whole document, parsed only if it must be), so a list that cannot be encoded fails
//! before its answer starts, and the length is known (`Content-Length`, as for any
//! other answer). The bytes are then copied into chunks only as the body is polled:
//! the client reads the first items while the server writes the next, and a large list
//! is never held twice in memory (kube-apiserver streams its JSON lists item by item
//! the same way, `StreamingCollectionEncodingToJSON`).

use std::collections::VecDeque;
use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::{Bytes, BytesMut};
use hyper::body::{Body, Frame, SizeHint};

use super::codec::{JsonPiece, SpliceHead};

/// How much one chunk of the body holds: a few system calls' worth for a large list,
/// while the first chunk goes out without waiting for the rest.
const CHUNK: usize = 128 * 1024;

/// A JSON list: what comes before its items, the items, and what follows them.
#[derive(Debug)]
pub struct JsonList {
    head: Bytes,
    splice: SpliceHead,
    items: VecDeque<JsonPiece>,
    tail: Bytes,
    /// Bytes not yet taken.
    remaining: usize,
}

impl JsonList {
    /// The list `head`, `items` (their spliced ones beginning with `splice`), commas
    /// between them, and `tail`.
    pub fn new(head: Bytes, splice: SpliceHead, items: Vec<JsonPiece>, tail: Bytes) -> Self {
        let commas = items.len().saturating_sub(1);
        let sizes: usize = items.iter().map(|i| i.len(&splice)).sum();
        Self {
            remaining: head.len() + sizes + commas + tail.len(),
            head,
            splice,
            items: items.into(),
            tail,
        }
    }

    /// The whole document at once: one chunk of unbounded size, copied once.
    pub fn to_bytes(mut self) -> Bytes {
        self.next_chunk(usize::MAX).unwrap_or_default()
    }

    /// The next chunk of about `size` bytes (more when one item is larger), `None` at
    /// the end.
    fn next_chunk(&mut self, size: usize) -> Option<Bytes> {
        if self.remaining == 0 {
            return None;
        }
        let mut out = BytesMut::with_capacity(size.min(self.remaining));
        if !self.head.is_empty() {
            out.extend_from_slice(&std::mem::take(&mut self.head));
        }
        while out.len() < size {
            let Some(item) = self.items.pop_front() else {
                out.extend_from_slice(&std::mem::take(&mut self.tail));
                break;
            };
            item.write(&self.splice, &mut out);
            if !self.items.is_empty() {
                out.extend_from_slice(b",");
            }
        }
        self.remaining -= out.len();
        Some(out.freeze())
    }
}

impl Body for JsonList {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        Poll::Ready(self.get_mut().next_chunk(CHUNK).map(|c| Ok(Frame::data(c))))
    }

    fn is_end_stream(&self) -> bool {
        self.remaining == 0
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::with_exact(self.remaining as u64)
    }
}

#[cfg(test)]
mod tests {
    use http_body_util::BodyExt;

    use super::*;

    fn list(items: usize, size: usize) -> JsonList {
        let splice = SpliceHead::new("v1", "Thing");
        let rest = Bytes::from(format!("\"name\":\"{}\"}}}}", "x".repeat(size)));
        let pieces = (0..items)
            .map(|i| JsonPiece::Spliced {
                revision: i as i64 + 1,
                rest: rest.clone(),
            })
            .collect();
        let tail = Bytes::from_static(b"],\"kind\":\"ThingList\"}\n");
        JsonList::new(Bytes::from_static(b"{\"items\":["), splice, pieces, tail)
    }

    #[tokio::test]
    async fn chunks_make_the_document_whose_length_was_announced() {
        for (items, size) in [(0, 0), (1, 10), (3, 10), (200, 2_000)] {
            let whole = list(items, size).to_bytes();
            let doc: serde_json::Value = serde_json::from_slice(&whole).unwrap();
            let listed = doc["items"].as_array().unwrap();
            assert_eq!(listed.len(), items);
            if let Some(last) = listed.last() {
                let rv = last["metadata"]["resourceVersion"].as_str().unwrap();
                assert_eq!(rv, items.to_string());
            }

            let body = list(items, size);
            let announced = body.size_hint().exact().unwrap();
            let mut body = std::pin::pin!(body);
            let mut chunks = Vec::new();
            while let Some(frame) = body.frame().await {
                chunks.push(frame.unwrap().into_data().unwrap());
            }
            assert!(body.is_end_stream());
            let streamed: Vec<u8> = chunks.iter().flatten().copied().collect();
            assert_eq!(streamed, whole);
            assert_eq!(streamed.len() as u64, announced);
            // A large list is sent in several chunks, none much over the chunk size.
            let expected = (whole.len() / CHUNK).max(1);
            assert!(chunks.len() >= expected, "{} chunks", chunks.len());
            assert!(chunks.iter().all(|c| c.len() < CHUNK + size + 100));
        }
    }
}
