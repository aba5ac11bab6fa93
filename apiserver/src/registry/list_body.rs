//! A list's response body, written a chunk at a time as the connection takes it.
//!
//! Every item is resolved first (for JSON a [`JsonPiece`](super::JsonPiece): a slice of
//! its stored bytes, or its whole document, parsed only if it must be; for protobuf its
//! message, cut from its memoised envelope), so a list that cannot be encoded fails
//! before its answer starts, and the length is known (`Content-Length`, as for any
//! other answer). The bytes are then copied into chunks only as the body is polled: the
//! client reads the first items while the server writes the next, and a large list is
//! never held twice in memory (kube-apiserver streams its lists item by item the same
//! way: `StreamingCollectionEncodingToJSON`, `StreamingCollectionEncodingToProtobuf`).

use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use hyper::body::{Body, Frame, SizeHint};

/// How much one chunk of the body holds: more than hyper gathers before it writes
/// (about 400 KiB), so each chunk goes out in writes of its own as large as the socket
/// takes. 128 KiB chunks had a 10,000-item list written about 400 KiB at a time, and
/// `kapi-bench`'s client took a tenth fewer such lists a second than whole ones; 1 MiB
/// chunks as many, while 16 such lists at once still hold about 40 MB, not 250
/// (BENCHMARKS.md, issue #25).
const CHUNK: usize = 1024 * 1024;

/// One item of a list, as its encoding writes it.
pub trait EncodedItem: Unpin {
    /// What every item of one list shares (JSON's [`SpliceHead`](super::SpliceHead),
    /// protobuf's field number).
    type Shared: Unpin + std::fmt::Debug;
    /// What goes between two items.
    const SEPARATOR: &'static [u8];
    /// How many bytes [`EncodedItem::write`] writes.
    fn len(&self, shared: &Self::Shared) -> usize;
    /// Appends the item to `out`.
    fn write(&self, shared: &Self::Shared, out: &mut Vec<u8>);
}

/// A list: what comes before its items, the items, and what follows them.
#[derive(Debug)]
pub struct ListBody<I: EncodedItem> {
    head: Bytes,
    shared: I::Shared,
    /// The items not yet written.
    items: std::vec::IntoIter<I>,
    /// How many bytes each item writes; the last `items.len()` are those not yet
    /// written.
    lens: Vec<usize>,
    tail: Bytes,
    /// Bytes not yet taken.
    remaining: usize,
}

impl<I: EncodedItem> ListBody<I> {
    /// The list `head`, `items` (sharing `shared`) with [`EncodedItem::SEPARATOR`]
    /// between them, and `tail`.
    pub fn new(head: Bytes, shared: I::Shared, items: Vec<I>, tail: Bytes) -> Self {
        let separators = items.len().saturating_sub(1) * I::SEPARATOR.len();
        let lens: Vec<usize> = items.iter().map(|i| i.len(&shared)).collect();
        let sizes: usize = lens.iter().sum();
        Self {
            remaining: head.len() + sizes + separators + tail.len(),
            head,
            shared,
            items: items.into_iter(),
            lens,
            tail,
        }
    }

    /// The whole document at once: one chunk of unbounded size, copied once.
    pub fn to_bytes(mut self) -> Bytes {
        self.next_chunk(usize::MAX).unwrap_or_default()
    }

    /// How many bytes are left to take: the whole document's length until the first
    /// chunk is taken.
    pub fn len(&self) -> usize {
        self.remaining
    }

    /// True once every byte was taken (or for a document of none).
    pub fn is_empty(&self) -> bool {
        self.remaining == 0
    }

    /// The next chunk of about `size` bytes (more when one item is larger), `None` at
    /// the end.
    fn next_chunk(&mut self, size: usize) -> Option<Bytes> {
        if self.remaining == 0 {
            return None;
        }
        // Sized exactly first: the item that crosses `size` would otherwise grow the
        // chunk, copying all of it (callgrind: a second copy of every large list).
        let (len, count) = if size >= self.remaining {
            (self.remaining, self.items.len())
        } else {
            let mut len = self.head.len();
            let mut count = 0;
            let written = self.lens.len() - self.items.len();
            for item_len in &self.lens[written..] {
                if len >= size {
                    break;
                }
                len += item_len + I::SEPARATOR.len();
                count += 1;
            }
            if count == self.items.len() {
                // No separator after the list's last item; the tail instead.
                len = len + self.tail.len() - usize::from(count > 0) * I::SEPARATOR.len();
            }
            (len, count)
        };
        let last = count == self.items.len();
        let mut out = Vec::with_capacity(len);
        out.extend_from_slice(&std::mem::take(&mut self.head));
        for (i, item) in self.items.by_ref().take(count).enumerate() {
            item.write(&self.shared, &mut out);
            if i + 1 < count || !last {
                // A byte is pushed, not copied through `memcpy`.
                match I::SEPARATOR {
                    [byte] => out.push(*byte),
                    separator => out.extend_from_slice(separator),
                }
            }
        }
        if last {
            out.extend_from_slice(&std::mem::take(&mut self.tail));
        }
        debug_assert_eq!(out.len(), len);
        self.remaining -= out.len();
        // Its length is its capacity: the buffer becomes the chunk without a copy.
        Some(Bytes::from(out))
    }
}

impl<I: EncodedItem> Body for ListBody<I> {
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
    use crate::registry::{JsonList, JsonPiece, SpliceHead};

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
        for (items, size) in [(0, 0), (1, 10), (3, 10), (200, 2_000), (1_500, 2_000)] {
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
