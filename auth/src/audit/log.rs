//! The log backend: events as JSON lines in a file (`--audit-log-path`), written by a
//! thread of its own so that request handling does not wait on the disk.
//!
//! Events go through a bounded channel to the writer thread, which writes each as one
//! line and flushes whenever it has nothing more queued, so a quiet log is on disk at
//! once and a busy one is written in batches.

use std::fmt;
use std::fs::OpenOptions;
use std::io::{self, BufWriter, Write};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use super::event::Event;

/// What to do with an event when the queue to the writer is full (the disk is slower than
/// the requests, for a while).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Overflow {
    /// Wait for room: the request that records the event waits, and no event is lost.
    /// kube-apiserver's default (`--audit-log-mode=blocking`) waits on every write; kapi
    /// waits only when the queue is full.
    #[default]
    Block,
    /// Drop the event and count it ([`AuditLog::dropped`]), as kube-apiserver's `batch`
    /// mode does when its buffer is full.
    Drop,
}

/// How an [`AuditLog`] queues events.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AuditLogOptions {
    /// Events queued for the writer at most (kube-apiserver's batch buffer is 10000).
    pub capacity: usize,
    /// What to do when the queue is full.
    pub overflow: Overflow,
    /// The log file's mode, as the operator names it (`--audit-log-file-mode`). Without
    /// one the file is its owner's alone (`0600`): made so, and an existing file that is
    /// wider is tightened, since the log may hold request bodies.
    pub file_mode: Option<u32>,
    /// The largest event written whole (kube-apiserver's
    /// `--audit-log-truncate-max-event-size`, 100 KiB). A larger one loses its request
    /// and response objects, then the response status's message past 4 KiB, and is
    /// marked `audit.k8s.io/truncated: "true"`; unlike kube's truncate plugin (off by
    /// default there), this is always on and never drops the event.
    pub max_event_bytes: usize,
}

/// The annotation of an event whose objects were left out for its size.
pub const TRUNCATED_ANNOTATION: &str = "audit.k8s.io/truncated";

/// [`AuditLogOptions::max_event_bytes`]'s default (kube's).
pub const DEFAULT_MAX_EVENT_BYTES: usize = 100 * 1024;

/// How much of a response status's message an event too large to write whole keeps.
const TRUNCATED_MESSAGE_BYTES: usize = 4 * 1024;

impl Default for AuditLogOptions {
    fn default() -> Self {
        AuditLogOptions {
            capacity: 10_000,
            overflow: Overflow::Block,
            file_mode: None,
            max_event_bytes: DEFAULT_MAX_EVENT_BYTES,
        }
    }
}

enum Message {
    Event(Box<Event>),
    /// Answer once everything before is written and flushed.
    Flush(SyncSender<()>),
    /// Flush and stop.
    Close,
}

/// The audit log: a handle to the writer thread. Clones share it.
#[derive(Clone)]
pub struct AuditLog {
    tx: SyncSender<Message>,
    shared: Arc<Shared>,
}

struct Shared {
    overflow: Overflow,
    dropped: AtomicU64,
    write_errors: AtomicU64,
    writer: Mutex<Option<JoinHandle<()>>>,
}

impl fmt::Debug for AuditLog {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AuditLog")
            .field("overflow", &self.shared.overflow)
            .field("dropped", &self.dropped())
            .field("write_errors", &self.write_errors())
            .finish_non_exhaustive()
    }
}

impl AuditLog {
    /// Opens the log at `path` (`--audit-log-path`), appending; `-` is standard output, as
    /// for kube-apiserver. A new file is made readable by its owner only (it may hold
    /// request bodies), and its directory is created if missing.
    pub fn open(path: impl AsRef<Path>, options: AuditLogOptions) -> io::Result<AuditLog> {
        let path = path.as_ref();
        if path == Path::new("-") {
            return Ok(Self::to_writer(io::stdout(), options));
        }
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)?;
        }
        let named =
            |e: io::Error| io::Error::new(e.kind(), format!("audit log {}: {e}", path.display()));
        let mut open = OpenOptions::new();
        open.append(true).create(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut open, options.file_mode.unwrap_or(0o600));
        let file = open.open(path).map_err(named)?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let current = file.metadata().map_err(named)?.permissions().mode() & 0o777;
            // The umask may have narrowed a named mode at creation; a file left wider by
            // an earlier run is narrowed to the owner's.
            let wanted = options.file_mode.unwrap_or(current & 0o700);
            if wanted != current {
                if options.file_mode.is_none() {
                    tracing::warn!(
                        path = %path.display(),
                        mode = format_args!("{current:04o}"),
                        "the audit log was readable by others: tightened"
                    );
                }
                file.set_permissions(std::fs::Permissions::from_mode(wanted))
                    .map_err(named)?;
            }
        }
        Ok(Self::to_writer(file, options))
    }

    /// A log writing to `out` (a file, standard output, a buffer in tests).
    pub fn to_writer(out: impl Write + Send + 'static, options: AuditLogOptions) -> AuditLog {
        let (tx, rx) = mpsc::sync_channel(options.capacity.max(1));
        let shared = Arc::new(Shared {
            overflow: options.overflow,
            dropped: AtomicU64::new(0),
            write_errors: AtomicU64::new(0),
            writer: Mutex::new(None),
        });
        let writer_shared = shared.clone();
        let handle = std::thread::Builder::new()
            .name("kapi-audit-log".into())
            .spawn(move || {
                write_events(
                    rx,
                    BufWriter::new(out),
                    &writer_shared,
                    options.max_event_bytes,
                )
            })
            .expect("spawning the audit log writer thread");
        *shared.writer.lock().unwrap_or_else(|e| e.into_inner()) = Some(handle);
        AuditLog { tx, shared }
    }

    /// Queues `event` for writing. Blocks only when the queue is full and the log was
    /// opened with [`Overflow::Block`]. After [`close`](Self::close), events are dropped.
    pub fn record(&self, event: Event) {
        let msg = Message::Event(Box::new(event));
        let sent = match self.shared.overflow {
            Overflow::Block => self.tx.send(msg).is_ok(),
            Overflow::Drop => match self.tx.try_send(msg) {
                Ok(()) => true,
                Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => false,
            },
        };
        if !sent {
            self.shared.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Waits until every event recorded before is written and flushed.
    pub fn flush(&self) {
        let (ack, done) = mpsc::sync_channel(1);
        if self.tx.send(Message::Flush(ack)).is_ok() {
            // An error means the writer stopped, after writing what it had.
            let _ = done.recv();
        }
    }

    /// Writes what is queued, flushes, and stops the writer (on shutdown). Events
    /// recorded afterwards, through any clone, are dropped.
    pub fn close(&self) {
        let _ = self.tx.send(Message::Close);
        let handle = self
            .shared
            .writer
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        if let Some(handle) = handle {
            let _ = handle.join();
        }
    }

    /// Events dropped: with [`Overflow::Drop`] on a full queue, or recorded after
    /// [`close`](Self::close).
    pub fn dropped(&self) -> u64 {
        self.shared.dropped.load(Ordering::Relaxed)
    }

    /// Events (or flushes) that failed to write.
    pub fn write_errors(&self) -> u64 {
        self.shared.write_errors.load(Ordering::Relaxed)
    }
}

/// The writer thread: until closed, or every [`AuditLog`] handle is gone.
fn write_events(
    rx: Receiver<Message>,
    mut out: BufWriter<impl Write>,
    shared: &Shared,
    max_event_bytes: usize,
) {
    let mut line = Vec::with_capacity(4096);
    let mut acks = Vec::new();
    let failed = |e: io::Error| {
        shared.write_errors.fetch_add(1, Ordering::Relaxed);
        tracing::error!(error = %e, "cannot write to the audit log");
    };
    while let Ok(first) = rx.recv() {
        let mut closing = false;
        // Take everything queued, then flush once.
        for msg in std::iter::once(first).chain(std::iter::from_fn(|| rx.try_recv().ok())) {
            match msg {
                Message::Event(mut event) => {
                    serialize(&mut line, &event);
                    if line.len() > max_event_bytes {
                        truncate(&mut event);
                        serialize(&mut line, &event);
                    }
                    line.push(b'\n');
                    if let Err(e) = out.write_all(&line) {
                        failed(e);
                    }
                }
                Message::Flush(ack) => acks.push(ack),
                Message::Close => {
                    closing = true;
                    break;
                }
            }
        }
        if let Err(e) = out.flush() {
            failed(e);
        }
        for ack in acks.drain(..) {
            let _ = ack.send(());
        }
        if closing {
            break;
        }
    }
    let _ = out.flush();
}

fn serialize(line: &mut Vec<u8>, event: &Event) {
    line.clear();
    // Serializing an Event cannot fail: string keys, no non-finite floats.
    serde_json::to_writer(&mut *line, event).expect("an Event serializes");
}

/// What an event too large to write whole keeps: everything but its objects and the
/// tail of a long message.
fn truncate(event: &mut Event) {
    event.request_object = None;
    event.response_object = None;
    if let Some(status) = &mut event.response_status {
        if status.message.len() > TRUNCATED_MESSAGE_BYTES {
            let mut cut = TRUNCATED_MESSAGE_BYTES;
            while !status.message.is_char_boundary(cut) {
                cut -= 1;
            }
            status.message.truncate(cut);
            status.message.push_str("...");
        }
        if let Some(details) = &mut status.details {
            details.causes.clear();
        }
    }
    event
        .annotations
        .insert(TRUNCATED_ANNOTATION.to_string(), "true".to_string());
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audit::event::{EVENT_API_VERSION, EventUser, MicroTime};
    use crate::audit::policy::{Level, Stage};

    fn event(n: usize) -> Event {
        Event {
            kind: "Event".into(),
            api_version: EVENT_API_VERSION.into(),
            level: Level::Metadata,
            audit_id: format!("id-{n}"),
            stage: Stage::ResponseComplete,
            request_uri: "/api".into(),
            verb: "get".into(),
            user: EventUser::default(),
            impersonated_user: None,
            source_ips: vec![],
            user_agent: String::new(),
            object_ref: None,
            response_status: None,
            request_object: Some(serde_json::json!({"text": "a\nb"})),
            response_object: None,
            request_received_timestamp: MicroTime::now(),
            stage_timestamp: MicroTime::now(),
            annotations: Default::default(),
        }
    }

    #[test]
    fn large_events_are_written_without_their_objects() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.log");
        let log = AuditLog::open(&path, AuditLogOptions::default()).unwrap();
        let mut big = event(0);
        big.request_object = Some(serde_json::json!({"data": "x".repeat(1 << 20)}));
        big.response_status = Some(crate::audit::event::ResponseStatus {
            code: 422,
            message: "y".repeat(64 * 1024),
            ..Default::default()
        });
        log.record(big);
        log.record(event(1));
        log.close();
        let text = std::fs::read_to_string(&path).unwrap();
        let sizes: Vec<usize> = text.lines().map(str::len).collect();
        assert!(sizes[0] < 8 * 1024, "{sizes:?}");
        let events = lines(&path);
        assert_eq!(events[0].audit_id, "id-0");
        assert_eq!(events[0].request_object, None);
        assert_eq!(events[0].annotations[TRUNCATED_ANNOTATION], "true");
        let status = events[0].response_status.as_ref().unwrap();
        assert_eq!((status.code, status.message.len()), (422, 4 * 1024 + 3));
        assert!(events[1].request_object.is_some(), "a small event is whole");
        assert!(!events[1].annotations.contains_key(TRUNCATED_ANNOTATION));
    }

    fn lines(path: &Path) -> Vec<Event> {
        std::fs::read_to_string(path)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).expect("a JSON line"))
            .collect()
    }

    #[test]
    fn writes_json_lines_and_appends() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("logs/audit.log");
        let log = AuditLog::open(&path, AuditLogOptions::default()).unwrap();
        for n in 0..3 {
            log.record(event(n));
        }
        log.flush();
        let events = lines(&path);
        assert_eq!(
            events
                .iter()
                .map(|e| e.audit_id.as_str())
                .collect::<Vec<_>>(),
            ["id-0", "id-1", "id-2"]
        );
        assert_eq!(events[0], event(0).clone_with_times(&events[0]));
        log.close();
        // Closed: dropped, counted, not written.
        log.record(event(9));
        assert_eq!(log.dropped(), 1);

        let again = AuditLog::open(&path, AuditLogOptions::default()).unwrap();
        again.record(event(3));
        again.close();
        assert_eq!(lines(&path).len(), 4, "a reopened log appends");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode(&path), 0o600);
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
            AuditLog::open(&path, AuditLogOptions::default())
                .unwrap()
                .close();
            assert_eq!(mode(&path), 0o600, "a wider log is tightened");
            let named = AuditLogOptions {
                file_mode: Some(0o640),
                ..AuditLogOptions::default()
            };
            AuditLog::open(&path, named).unwrap().close();
            assert_eq!(mode(&path), 0o640, "the operator's mode is kept");
        }
    }

    #[test]
    fn events_are_written_without_flush_when_idle() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.log");
        let log = AuditLog::open(&path, AuditLogOptions::default()).unwrap();
        log.record(event(0));
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while lines(&path).is_empty() {
            assert!(
                std::time::Instant::now() < deadline,
                "the line never reached the file"
            );
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
    }

    /// A writer that waits until told to go on.
    struct Gate(mpsc::Receiver<()>);
    impl Write for Gate {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            let _ = self.0.recv();
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn drop_mode_drops_when_full() {
        let (go, gate) = mpsc::channel();
        let log = AuditLog::to_writer(
            // Lines bigger than the writer's buffer go straight to the Gate, and stay
            // there.
            Gate(gate),
            AuditLogOptions {
                capacity: 1,
                overflow: Overflow::Drop,
                ..AuditLogOptions::default()
            },
        );
        let mut big = event(0);
        big.request_object = Some(serde_json::Value::String("x".repeat(64 * 1024)));
        for _ in 0..20 {
            log.record(big.clone());
        }
        assert!(
            log.dropped() > 0,
            "a queue of one and a stuck writer drop events"
        );
        drop(go);
        log.close();
    }

    #[test]
    fn write_errors_are_counted() {
        struct Broken;
        impl Write for Broken {
            fn write(&mut self, _: &[u8]) -> io::Result<usize> {
                Err(io::Error::other("disk on fire"))
            }
            fn flush(&mut self) -> io::Result<()> {
                Err(io::Error::other("disk on fire"))
            }
        }
        let log = AuditLog::to_writer(Broken, AuditLogOptions::default());
        log.record(event(0));
        log.flush();
        assert!(log.write_errors() > 0);
        log.close();
    }

    impl Event {
        fn clone_with_times(&self, other: &Event) -> Event {
            Event {
                request_received_timestamp: other.request_received_timestamp,
                stage_timestamp: other.stage_timestamp,
                ..self.clone()
            }
        }
    }
}
