//! The envelope `k8s.io/apimachinery/pkg/runtime/serializer/protobuf` puts around every
//! object, and the frames of a protobuf watch.
//!
//! A body is the four bytes `k8s\0`, then a `runtime.Unknown`: `typeMeta` (1: its
//! `apiVersion` 1 and `kind` 2), `raw` (2: the kind's own message), `contentEncoding`
//! (3) and `contentType` (4), the last two written empty. A watch stream is a run of
//! frames, each a four-byte big-endian length and a `metav1.WatchEvent`: `type` (1) and
//! `object` (2, a `RawExtension` whose `raw` (1) is a whole enveloped body). These
//! numbers are the serializer's own format (`runtime/generated.proto`,
//! `meta/v1/generated.proto`), fixed since Kubernetes 1.3.

use super::wire::{Reader, Value, begin_nested, bytes_field, bytes_field_head, end_nested};

/// The magic bytes before every Kubernetes protobuf body.
pub const MAGIC: &[u8; 4] = b"k8s\0";

/// The media type of Kubernetes protobuf bodies.
pub const MEDIA_TYPE: &str = "application/vnd.kubernetes.protobuf";

/// The media type of a protobuf watch stream.
pub const WATCH_MEDIA_TYPE: &str = "application/vnd.kubernetes.protobuf;stream=watch";

/// An enveloped body, read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Envelope<'a> {
    /// `typeMeta.apiVersion`.
    pub api_version: &'a str,
    /// `typeMeta.kind`.
    pub kind: &'a str,
    /// The object's own message.
    pub raw: &'a [u8],
}

/// Why a body is not an enveloped object.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EnvelopeError {
    /// The body does not start with [`MAGIC`].
    #[error(
        "provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]"
    )]
    NoMagic,
    /// The `runtime.Unknown` after it is not a message.
    #[error("{0}")]
    Wire(String),
}

/// Writes `raw` (an object's message) in its envelope.
pub fn wrap(api_version: &str, kind: &str, raw: &[u8], out: &mut Vec<u8>) {
    begin_wrap_sized(api_version, kind, raw.len(), out);
    out.extend_from_slice(raw);
    end_wrap_sized(out);
}

/// Starts an envelope whose object message, `raw_len` bytes long, the caller writes
/// next; [`end_wrap_sized`] finishes it. For a message assembled from parts whose sizes
/// are known (a list of memoised items): nothing moves afterwards.
pub fn begin_wrap_sized(api_version: &str, kind: &str, raw_len: usize, out: &mut Vec<u8>) {
    out.extend_from_slice(MAGIC);
    let mark = begin_nested(out, 1);
    bytes_field(out, 1, api_version.as_bytes());
    bytes_field(out, 2, kind.as_bytes());
    end_nested(out, mark);
    bytes_field_head(out, 2, raw_len);
}

/// Finishes the envelope [`begin_wrap_sized`] started, once its `raw_len` bytes are
/// written.
pub fn end_wrap_sized(out: &mut Vec<u8>) {
    bytes_field(out, 3, b"");
    bytes_field(out, 4, b"");
}

/// Starts an envelope whose object message is written next, straight into `out`;
/// [`end_wrap`] finishes it. Saves copying a large list once.
pub fn begin_wrap(api_version: &str, kind: &str, out: &mut Vec<u8>) -> usize {
    out.extend_from_slice(MAGIC);
    let mark = begin_nested(out, 1);
    bytes_field(out, 1, api_version.as_bytes());
    bytes_field(out, 2, kind.as_bytes());
    end_nested(out, mark);
    begin_nested(out, 2)
}

/// Ends the envelope [`begin_wrap`] started.
pub fn end_wrap(out: &mut Vec<u8>, mark: usize) {
    end_nested(out, mark);
    end_wrap_sized(out);
}

/// Reads an enveloped body.
pub fn unwrap(body: &[u8]) -> Result<Envelope<'_>, EnvelopeError> {
    let rest = body.strip_prefix(MAGIC).ok_or(EnvelopeError::NoMagic)?;
    let mut env = Envelope {
        api_version: "",
        kind: "",
        raw: &[],
    };
    let wire = |e: super::wire::WireError| EnvelopeError::Wire(e.to_string());
    let mut reader = Reader::new(rest);
    while let Some((number, value)) = reader.next_field().map_err(wire)? {
        match (number, value) {
            (1, Value::Len(type_meta)) => {
                let mut tm = Reader::new(type_meta);
                while let Some((n, v)) = tm.next_field().map_err(wire)? {
                    match (n, v) {
                        (1, Value::Len(s)) => env.api_version = utf8(s)?,
                        (2, Value::Len(s)) => env.kind = utf8(s)?,
                        _ => {}
                    }
                }
            }
            (2, Value::Len(raw)) => env.raw = raw,
            (3, Value::Len(enc)) if !enc.is_empty() => {
                return Err(EnvelopeError::Wire(format!(
                    "unsupported content encoding {:?}",
                    String::from_utf8_lossy(enc)
                )));
            }
            (3 | 4, Value::Len(_)) => {}
            (1..=4, _) => {
                return Err(EnvelopeError::Wire(format!(
                    "proto: wrong wireType for field {number} of runtime.Unknown"
                )));
            }
            _ => {}
        }
    }
    Ok(env)
}

/// The object message of an enveloped body, found without reading `typeMeta` or
/// anything after the message: for bodies written by [`wrap`] or [`begin_wrap`], where
/// [`unwrap`]'s checks would only repeat what the writer did. `None` when there is none.
pub fn raw_of(body: &[u8]) -> Option<&[u8]> {
    let rest = body.strip_prefix(MAGIC)?;
    // The writers here put typeMeta (key 0x0a) first and raw (0x12) second; a LIST
    // cuts the message out of every item this way, so read those two keys directly,
    // and walk the fields only for another layout.
    let leading =
        leading_len_field(rest, 0x0a).and_then(|(_, after)| leading_len_field(after, 0x12));
    if let Some((raw, _)) = leading {
        return Some(raw);
    }
    let mut reader = Reader::new(rest);
    while let Ok(Some((number, value))) = reader.next_field() {
        if let (2, Value::Len(raw)) = (number, value) {
            return Some(raw);
        }
    }
    None
}

/// The value of the length-delimited field whose one-byte key is `key`, if `bytes`
/// starts with it, and the bytes after it.
#[inline]
fn leading_len_field(bytes: &[u8], key: u8) -> Option<(&[u8], &[u8])> {
    let (&first, mut rest) = bytes.split_first()?;
    if first != key {
        return None;
    }
    let (len, read) = super::wire::read_varint(rest).ok()?;
    rest = &rest[read..];
    let len = usize::try_from(len).ok()?;
    (len <= rest.len()).then(|| rest.split_at(len))
}

fn utf8(s: &[u8]) -> Result<&str, EnvelopeError> {
    std::str::from_utf8(s)
        .map_err(|_| EnvelopeError::Wire("runtime.Unknown: typeMeta is not UTF-8".into()))
}

/// Appends one watch frame: its length, then a `WatchEvent` of `event_type` (`ADDED`,
/// `BOOKMARK`, `ERROR`, …) holding `object`, an enveloped body.
pub fn watch_frame(event_type: &str, object: &[u8], out: &mut Vec<u8>) {
    let start = out.len();
    out.extend_from_slice(&[0; 4]);
    bytes_field(out, 1, event_type.as_bytes());
    let mark = begin_nested(out, 2);
    bytes_field(out, 1, object);
    end_nested(out, mark);
    let len = (out.len() - start - 4) as u32;
    out[start..start + 4].copy_from_slice(&len.to_be_bytes());
}

/// One watch event, read back: its type and enveloped object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WatchEvent<'a> {
    /// `ADDED`, `MODIFIED`, `DELETED`, `BOOKMARK` or `ERROR`.
    pub event_type: &'a str,
    /// The enveloped object.
    pub object: &'a [u8],
}

/// Splits the first frame off `stream`: the event and what follows it, or `None` when
/// the stream holds no whole frame yet.
pub fn next_watch_frame(stream: &[u8]) -> Result<Option<(WatchEvent<'_>, &[u8])>, EnvelopeError> {
    let Some(head) = stream.get(..4) else {
        return Ok(None);
    };
    let len = u32::from_be_bytes(head.try_into().unwrap()) as usize;
    let Some(frame) = stream.get(4..4 + len) else {
        return Ok(None);
    };
    let wire = |e: super::wire::WireError| EnvelopeError::Wire(e.to_string());
    let mut event = WatchEvent {
        event_type: "",
        object: &[],
    };
    let mut reader = Reader::new(frame);
    while let Some((n, v)) = reader.next_field().map_err(wire)? {
        match (n, v) {
            (1, Value::Len(t)) => event.event_type = utf8(t)?,
            (2, Value::Len(raw_ext)) => {
                let mut r = Reader::new(raw_ext);
                while let Some((n, v)) = r.next_field().map_err(wire)? {
                    if let (1, Value::Len(raw)) = (n, v) {
                        event.object = raw;
                    }
                }
            }
            _ => {}
        }
    }
    Ok(Some((event, &stream[4 + len..])))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn envelopes_and_frames_read_back() {
        let mut body = Vec::new();
        wrap("v1", "ConfigMap", b"\x0a\x00", &mut body);
        assert!(body.starts_with(MAGIC));
        let env = unwrap(&body).unwrap();
        assert_eq!(
            (env.api_version, env.kind, env.raw),
            ("v1", "ConfigMap", &b"\x0a\x00"[..])
        );

        let mut streamed = Vec::new();
        let mark = begin_wrap("v1", "ConfigMap", &mut streamed);
        streamed.extend_from_slice(b"\x0a\x00");
        end_wrap(&mut streamed, mark);
        assert_eq!(streamed, body);
        assert_eq!(raw_of(&body), Some(&b"\x0a\x00"[..]));
        let mut long = Vec::new();
        let message = vec![7u8; 300];
        wrap("apps/v1", "Deployment", &message, &mut long);
        assert_eq!(raw_of(&long), Some(&message[..]));
        assert_eq!(raw_of(b"{}"), None);
        // Another layout (raw before typeMeta) or a short length: the walk decides.
        assert_eq!(raw_of(b"k8s\0\x12\x01\x07\x0a\x00"), Some(&b"\x07"[..]));
        assert_eq!(raw_of(b"k8s\0\x0a\x00\x12\x05\x07"), None);

        let mut stream = Vec::new();
        watch_frame("ADDED", &body, &mut stream);
        watch_frame("BOOKMARK", &body, &mut stream);
        let (first, rest) = next_watch_frame(&stream).unwrap().unwrap();
        assert_eq!((first.event_type, first.object), ("ADDED", &body[..]));
        let (second, rest) = next_watch_frame(rest).unwrap().unwrap();
        assert_eq!(second.event_type, "BOOKMARK");
        assert!(rest.is_empty());
        assert_eq!(next_watch_frame(&stream[..7]).unwrap(), None);
    }

    #[test]
    fn bad_envelopes_are_named() {
        assert_eq!(unwrap(b"{\"kind\":1}"), Err(EnvelopeError::NoMagic));
        assert!(matches!(
            unwrap(b"k8s\0\x0a\x05ab"),
            Err(EnvelopeError::Wire(_))
        ));
    }
}
