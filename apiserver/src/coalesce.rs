//! Fewer, fuller writes on an HTTP/2 connection: the frames of every stream that is
//! ready go out together.
//!
//! hyper's HTTP/2 connection task writes whatever frames are queued each time it runs,
//! and tokio runs a task woken by another right after it (the LIFO slot), so a watch
//! event sent to 100 streams went out as 100 TLS records in 100 `writev`s and, for a
//! client in another process, 100 wake-ups (issue #21's profiles of the aggregator's
//! watch cell). h2 also flushes after every DATA frame it does not copy, to free the
//! slot it keeps the frame in. [`Coalesce`] copies what is written and holds it over
//! those flushes until the connection task's next turn: the task wakes itself, goes to
//! the back of the run queue, every stream task already runnable queues its frames,
//! and the connection's next read (h2 reads before it writes, each time it runs) marks
//! the turn; the flush after it writes everything held. It is Nagle's idea with no
//! timer: nothing waits for data that is not already on its way, and an idle
//! connection's answer is one poll later. The server wraps every HTTP/2 connection it
//! accepts over TLS in it (plain HTTP/2 has no records to save, and was measured slower
//! with it), and the aggregator the HTTP/2 connections its watches share.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// Bytes held before they go out without waiting for the turn; a write this large on
/// its own goes straight through, uncopied.
const HOLD: usize = 64 * 1024;

/// The buffer's capacity a connection keeps once what it held is written: a burst (a
/// large list's frames) does not leave every connection holding 128 KiB for its life.
const KEEP: usize = 16 * 1024;

/// Flushes put off before the bytes held go out even if no read has marked a turn (a
/// connection that stops reading still sends what it wrote).
const MAX_PUT_OFF: u8 = 16;

/// A connection whose writes are gathered until the flush after its task's next turn.
pub struct Coalesce<S> {
    inner: S,
    held: Vec<u8>,
    /// Flushes put off since bytes were first held; 0 when none are.
    put_off: u8,
    /// A read has happened since the first flush was put off: the task has had its
    /// turn.
    turned: bool,
}

impl<S> Coalesce<S> {
    /// `inner`, with its writes gathered.
    pub fn new(inner: S) -> Self {
        Self {
            inner,
            held: Vec::new(),
            put_off: 0,
            turned: false,
        }
    }

    /// The connection underneath.
    pub fn get_ref(&self) -> &S {
        &self.inner
    }
}

impl<S: AsyncWrite + Unpin> Coalesce<S> {
    /// Writes out everything held.
    fn poll_write_held(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let mut written = 0;
        let result = loop {
            if written == self.held.len() {
                break Poll::Ready(Ok(()));
            }
            match Pin::new(&mut self.inner).poll_write(cx, &self.held[written..]) {
                Poll::Ready(Ok(0)) => break Poll::Ready(Err(io::ErrorKind::WriteZero.into())),
                Poll::Ready(Ok(n)) => written += n,
                Poll::Ready(Err(e)) => break Poll::Ready(Err(e)),
                Poll::Pending => break Poll::Pending,
            }
        };
        self.held.drain(..written);
        if self.held.is_empty() {
            self.put_off = 0;
            self.turned = false;
            if self.held.capacity() > KEEP {
                self.held = Vec::new();
            }
        }
        result
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Coalesce<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if this.put_off > 0 {
            this.turned = true;
        }
        Pin::new(&mut this.inner).poll_read(cx, buf)
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Coalesce<S> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.poll_write_vectored(cx, &[io::IoSlice::new(buf)])
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let len: usize = bufs.iter().map(|b| b.len()).sum();
        if this.held.len() >= HOLD || (len >= HOLD && !this.held.is_empty()) {
            ready!(this.poll_write_held(cx))?;
        }
        if len >= HOLD {
            return Pin::new(&mut this.inner).poll_write_vectored(cx, bufs);
        }
        for buf in bufs {
            this.held.extend_from_slice(buf);
        }
        Poll::Ready(Ok(len))
    }

    fn is_write_vectored(&self) -> bool {
        true
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if !this.held.is_empty() {
            if !this.turned && this.put_off < MAX_PUT_OFF {
                // Woken from inside its own poll, a tokio task goes to the back of
                // the run queue: every task runnable now runs before the next turn.
                this.put_off += 1;
                cx.waker().wake_by_ref();
                return Poll::Ready(Ok(()));
            }
            ready!(this.poll_write_held(cx))?;
        }
        Pin::new(&mut this.inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        ready!(this.poll_write_held(cx))?;
        Pin::new(&mut this.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// A connection that records each write it is given and reads one byte each time.
    #[derive(Default)]
    struct Writes(Vec<Vec<u8>>);

    impl AsyncRead for Writes {
        fn poll_read(
            self: Pin<&mut Self>,
            _: &mut Context<'_>,
            buf: &mut ReadBuf<'_>,
        ) -> Poll<io::Result<()>> {
            buf.put_slice(b"r");
            Poll::Ready(Ok(()))
        }
    }

    impl AsyncWrite for Writes {
        fn poll_write(
            self: Pin<&mut Self>,
            _: &mut Context<'_>,
            buf: &[u8],
        ) -> Poll<io::Result<usize>> {
            self.get_mut().0.push(buf.to_vec());
            Poll::Ready(Ok(buf.len()))
        }
        fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
            Poll::Ready(Ok(()))
        }
        fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
            Poll::Ready(Ok(()))
        }
    }

    #[tokio::test]
    async fn writes_are_held_over_flushes_until_a_read_marks_the_next_turn() {
        let mut io = Coalesce::new(Writes::default());
        io.write_all(b"one,").await.unwrap();
        io.flush().await.unwrap();
        io.write_all(b"two,").await.unwrap();
        io.flush().await.unwrap();
        assert!(
            io.get_ref().0.is_empty(),
            "nothing goes out in the same turn"
        );
        io.read_u8().await.unwrap();
        io.flush().await.unwrap();
        io.write_all(b"three").await.unwrap();
        io.read_u8().await.unwrap();
        io.flush().await.unwrap();
        assert_eq!(
            io.get_ref().0.len(),
            1,
            "a read before the first put-off is no turn"
        );
        io.read_u8().await.unwrap();
        io.flush().await.unwrap();
        assert_eq!(
            io.get_ref().0,
            vec![b"one,two,".to_vec(), b"three".to_vec()]
        );
    }

    #[tokio::test]
    async fn a_connection_that_never_reads_still_sends_what_it_wrote() {
        let mut io = Coalesce::new(Writes::default());
        io.write_all(b"held").await.unwrap();
        for _ in 0..MAX_PUT_OFF {
            io.flush().await.unwrap();
        }
        assert!(io.get_ref().0.is_empty());
        io.flush().await.unwrap();
        assert_eq!(io.get_ref().0, vec![b"held".to_vec()]);
    }

    #[tokio::test]
    async fn a_large_write_goes_straight_through_after_what_is_held() {
        let mut io = Coalesce::new(Writes::default());
        io.write_all(b"head").await.unwrap();
        let large = vec![7u8; HOLD];
        io.write_all(&large).await.unwrap();
        io.write_all(b"tail").await.unwrap();
        assert_eq!(io.get_ref().0, vec![b"head".to_vec(), large]);
        io.write_all(&[1u8; HOLD - 1]).await.unwrap();
        io.shutdown().await.unwrap();
        assert_eq!(io.get_ref().0.last().unwrap().len(), HOLD + 3);
        assert!(io.held.capacity() <= KEEP, "a burst's buffer is let go");
    }
}
