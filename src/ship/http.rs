//! The guard rails of the HTTP clients (ClickHouse's and OTLP's, issue 44.6
//! and 44.7): a connection that is not made in [`Limits::connect`] (TCP and
//! TLS) fails; a connection that moves no byte either way for
//! [`Limits::idle`] while a request is written or its reply awaited fails;
//! and no more than [`ERROR_REPLY_CAP`] bytes of a reply that is not a 2xx
//! are read (the `clickhouse` crate reads an error's body whole, where we
//! cannot cap it, so the cap is here, under HTTP). The whole request's
//! limit is its caller's (`tokio::time::timeout`), as it depends on what is
//! asked.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll, ready};
use std::time::Duration;

use hyper_util::client::legacy::connect::{Connected, Connection};
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::{Instant, Sleep};

/// How long a connection (TCP and TLS) may take.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// The most read of a reply that is not a 2xx, its head included: an error's
/// text is a line or a few; more is not an answer.
pub const ERROR_REPLY_CAP: usize = 32 * 1024;

/// A client's connect timeout and the longest a connection may move no
/// byte while a request is written or its reply awaited (None: no limit).
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub connect: Duration,
    pub idle: Option<Duration>,
}

/// Set when a connection of a client cut a reply at [`ERROR_REPLY_CAP`]:
/// the `clickhouse` crate drops the I/O error of an error's body, so its
/// caller asks this to say why the text is missing.
#[derive(Debug, Default)]
pub struct Cut(AtomicBool);

impl Cut {
    /// Whether a reply was cut since the last call.
    pub fn take(&self) -> bool {
        self.0.swap(false, Ordering::Relaxed)
    }
}

/// What is said when a reply is cut.
pub fn cut_note(status: u16) -> String {
    format!(
        "the reply (HTTP {status}) is over {} KiB: not read past that",
        ERROR_REPLY_CAP / 1024
    )
}

/// A connector (`inner`) whose connections are made within the limits and
/// [`Guarded`].
#[derive(Clone)]
pub struct Connector<C> {
    inner: C,
    limits: Limits,
    cut: Arc<Cut>,
}

impl<C> Connector<C> {
    pub fn new(inner: C, limits: Limits, cut: Arc<Cut>) -> Connector<C> {
        Connector { inner, limits, cut }
    }
}

type BoxError = Box<dyn std::error::Error + Send + Sync>;

impl<C> tower_service::Service<http::Uri> for Connector<C>
where
    C: tower_service::Service<http::Uri> + Send + 'static,
    C::Response: hyper::rt::Read + hyper::rt::Write + Connection + Unpin + Send + 'static,
    C::Future: Send + 'static,
    C::Error: Into<BoxError>,
{
    type Response = TokioIo<Guarded<TokioIo<C::Response>>>;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, BoxError>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, uri: http::Uri) -> Self::Future {
        let connecting = self.inner.call(uri);
        let (limits, cut) = (self.limits, self.cut.clone());
        Box::pin(async move {
            // NB: the TLS handshake too: a server that accepts and never answers hangs it.
            match tokio::time::timeout(limits.connect, connecting).await {
                Ok(Ok(io)) => Ok(TokioIo::new(Guarded::new(
                    TokioIo::new(io),
                    limits.idle,
                    cut,
                ))),
                Ok(Err(e)) => Err(e.into()),
                Err(_) => Err(Box::new(io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!(
                        "no connection in {} s (connect timeout)",
                        limits.connect.as_secs()
                    ),
                )) as BoxError),
            }
        })
    }
}

/// The wait of one direction: a timer armed while it is pending, pushed
/// back by any byte moved either way.
struct Wait {
    timer: Option<Pin<Box<Sleep>>>,
    last: Instant,
}

impl Wait {
    fn new() -> Wait {
        Wait {
            timer: None,
            last: Instant::now(),
        }
    }

    /// The direction is pending: Ready(()) once `idle` passed with no byte moved.
    fn pending(&mut self, cx: &mut Context<'_>, idle: Duration) -> Poll<()> {
        if self.timer.is_none() {
            self.last = Instant::now();
            self.timer = Some(Box::pin(tokio::time::sleep(idle)));
        }
        let timer = self.timer.as_mut().expect("armed above");
        loop {
            ready!(timer.as_mut().poll(cx));
            let due = self.last + idle;
            if due <= Instant::now() {
                self.timer = None;
                return Poll::Ready(());
            }
            timer.as_mut().reset(due);
        }
    }
}

/// What is known of the reply being read: its status, from its first bytes
/// after a request was written, and how much of it was read.
struct Reply {
    /// A request was written since the last byte read: the next bytes may start a reply.
    fresh: bool,
    head: Vec<u8>,
    status: u16,
    read: usize,
}

impl Reply {
    /// Sees bytes read; Err once a reply that is not a 2xx is over the cap.
    fn see(&mut self, bytes: &[u8]) -> Result<(), u16> {
        if self.fresh && !bytes.is_empty() {
            let take = (12 - self.head.len()).min(bytes.len());
            self.head.extend_from_slice(&bytes[..take]);
            let prefix = &self.head[..self.head.len().min(7)];
            if self.head.len() >= 12 || !b"HTTP/1.".starts_with(prefix) {
                self.fresh = false;
                // "HTTP/1.1 200 …": a new reply; else more of the one being read.
                if self.head.starts_with(b"HTTP/1.")
                    && let Some(status) = std::str::from_utf8(&self.head[9..12])
                        .ok()
                        .and_then(|s| s.parse().ok())
                {
                    self.status = status;
                    self.read = 0;
                }
                self.head.clear();
            }
        }
        self.read += bytes.len();
        if self.status != 0 && !(200..300).contains(&self.status) && self.read > ERROR_REPLY_CAP {
            return Err(self.status);
        }
        Ok(())
    }
}

/// A connection within the limits (see the module's text).
pub struct Guarded<T> {
    io: T,
    idle: Option<Duration>,
    reading: Wait,
    writing: Wait,
    reply: Reply,
    cut: Arc<Cut>,
}

impl<T> Guarded<T> {
    fn new(io: T, idle: Option<Duration>, cut: Arc<Cut>) -> Guarded<T> {
        Guarded {
            io,
            idle,
            reading: Wait::new(),
            writing: Wait::new(),
            reply: Reply {
                fresh: false,
                head: Vec::with_capacity(12),
                status: 0,
                read: 0,
            },
            cut,
        }
    }

    fn moved(&mut self) {
        let now = Instant::now();
        self.reading.last = now;
        self.writing.last = now;
    }
}

fn timed_out(what: &str, idle: Duration) -> io::Error {
    io::Error::new(
        io::ErrorKind::TimedOut,
        format!("{what} in {} s (read timeout)", idle.as_secs()),
    )
}

impl<T: AsyncRead + Unpin> AsyncRead for Guarded<T> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        match Pin::new(&mut this.io).poll_read(cx, buf) {
            Poll::Ready(Ok(())) => {
                this.reading.timer = None;
                let new = &buf.filled()[before..];
                if !new.is_empty() {
                    this.moved();
                }
                if let Err(status) = this.reply.see(new) {
                    this.cut.0.store(true, Ordering::Relaxed);
                    return Poll::Ready(Err(io::Error::other(cut_note(status))));
                }
                Poll::Ready(Ok(()))
            }
            Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
            Poll::Pending => {
                let Some(idle) = this.idle else {
                    return Poll::Pending;
                };
                ready!(this.reading.pending(cx, idle));
                Poll::Ready(Err(timed_out("no byte of the reply", idle)))
            }
        }
    }
}

impl<T: AsyncWrite + Unpin> Guarded<T> {
    fn waited<R>(
        &mut self,
        cx: &mut Context<'_>,
        polled: Poll<io::Result<R>>,
    ) -> Poll<io::Result<R>> {
        match polled {
            Poll::Ready(r) => {
                self.writing.timer = None;
                Poll::Ready(r)
            }
            Poll::Pending => {
                let Some(idle) = self.idle else {
                    return Poll::Pending;
                };
                ready!(self.writing.pending(cx, idle));
                Poll::Ready(Err(timed_out(
                    "the server took no byte of the request",
                    idle,
                )))
            }
        }
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for Guarded<T> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.io).poll_write(cx, buf);
        if let Poll::Ready(Ok(n)) = polled
            && n > 0
        {
            this.moved();
            this.reply.fresh = true;
        }
        this.waited(cx, polled)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.io).poll_write_vectored(cx, bufs);
        if let Poll::Ready(Ok(n)) = polled
            && n > 0
        {
            this.moved();
            this.reply.fresh = true;
        }
        this.waited(cx, polled)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.io).poll_flush(cx);
        this.waited(cx, polled)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_shutdown(cx)
    }
}

impl<T: Connection> Connection for Guarded<T> {
    fn connected(&self) -> Connected {
        self.io.connected()
    }
}

/// The HTTPS-or-HTTP connector of a client, TCP keepalive on, the connect
/// timeout on TCP (and, by [`Connector`], on TLS too); `native_roots`: the
/// system's CA roots when it has any, else the compiled-in ones.
pub fn connector(
    limits: Limits,
    native_roots: bool,
    cut: Arc<Cut>,
) -> Connector<hyper_rustls::HttpsConnector<hyper_util::client::legacy::connect::HttpConnector>> {
    let mut tcp = hyper_util::client::legacy::connect::HttpConnector::new();
    tcp.enforce_http(false);
    tcp.set_keepalive(Some(Duration::from_secs(60)));
    tcp.set_connect_timeout(Some(limits.connect));
    let builder = hyper_rustls::HttpsConnectorBuilder::new();
    let builder = match native_roots.then(|| builder.with_native_roots()) {
        Some(Ok(b)) => b,
        _ => hyper_rustls::HttpsConnectorBuilder::new().with_webpki_roots(),
    };
    let https = builder.https_or_http().enable_http1().wrap_connector(tcp);
    Connector::new(https, limits, cut)
}

/// Reads a body, at most `cap` bytes of it: the bytes, and whether there was more.
pub async fn read_capped<B>(mut body: B, cap: usize) -> Result<(bytes::Bytes, bool), B::Error>
where
    B: hyper::body::Body<Data = bytes::Bytes> + Unpin,
{
    use http_body_util::BodyExt as _;
    let mut out = bytes::BytesMut::new();
    while let Some(frame) = body.frame().await {
        let Ok(data) = frame?.into_data() else {
            continue;
        };
        let room = cap - out.len();
        if data.len() > room {
            out.extend_from_slice(&data[..room]);
            return Ok((out.freeze(), true));
        }
        out.extend_from_slice(&data);
    }
    Ok((out.freeze(), false))
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

    /// A server on 127.0.0.1 that accepts and never answers: the port.
    async fn black_hole() -> u16 {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        tokio::spawn(async move {
            let mut held = Vec::new();
            while let Ok((s, _)) = listener.accept().await {
                held.push(s);
            }
        });
        port
    }

    /// A server that reads a request and answers a 200's head, then no byte of its body.
    async fn head_and_no_body() -> u16 {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        tokio::spawn(async move {
            let mut held = Vec::new();
            while let Ok((mut s, _)) = listener.accept().await {
                let mut buf = [0u8; 4096];
                let _ = s.read(&mut buf).await;
                let _ = s
                    .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n")
                    .await;
                held.push(s);
            }
        });
        port
    }

    /// Whatever `f` does, it is done within `bound` (a hang fails the test).
    async fn within<T>(bound: Duration, f: impl Future<Output = T>) -> T {
        tokio::time::timeout(bound, f)
            .await
            .expect("still waiting: it hangs")
    }

    /// 44.6: with no read timeout, a request to a server that accepts and
    /// never answers (or answers a head and no body) waited for ever.
    #[tokio::test]
    async fn a_reply_that_does_not_come_fails_after_the_idle_limit() {
        let limits = Limits {
            connect: Duration::from_secs(2),
            idle: Some(Duration::from_millis(500)),
        };
        for port in [black_hole().await, head_and_no_body().await] {
            let client =
                hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
                    .build(connector(limits, false, Arc::default()));
            let request = http::Request::get(format!("http://127.0.0.1:{port}/"))
                .body(http_body_util::Empty::<bytes::Bytes>::new())
                .unwrap();
            let said: BoxError = within(Duration::from_secs(30), async {
                let response = client.request(request).await?;
                read_capped(response.into_body(), 1024)
                    .await
                    .map(|_| ())
                    .map_err(BoxError::from)
            })
            .await
            .unwrap_err();
            let said = crate::ship::clickhouse::unreached("127.0.0.1", &*said);
            assert!(said.contains("(read timeout)"), "{said}");
        }
    }

    /// 44.6: `record --ship` stuck in its start probe against a store that
    /// accepts and never answers, where README says such a store is a
    /// warning. The probe (and the first statement of --ship-create-schema)
    /// now ends, as an error `record` takes for a warning ([`ChError::retry`]).
    #[tokio::test]
    async fn a_record_ship_start_probe_that_gets_no_answer_ends_as_a_warning() {
        use crate::ship::Destination;
        let (hole, mute) = (black_hole().await, head_and_no_body().await);
        let mut probes = Vec::new();
        for port in [hole, mute] {
            for url in [
                format!("clickhouse://127.0.0.1:{port}/diag"),
                format!("otlp+http://127.0.0.1:{port}/v1/logs"),
            ] {
                for (create, on_cluster) in [(false, None), (true, None), (true, Some("fleet"))] {
                    let url = url.clone();
                    probes.push(tokio::spawn(async move {
                        let d = Destination::parse(&url, None, &[]).unwrap();
                        let e = d.prepare(create, on_cluster, None).await.unwrap_err();
                        (url, (create, on_cluster), e)
                    }));
                }
            }
        }
        for probe in probes {
            let (url, create, e) = within(Duration::from_secs(60), probe).await.unwrap();
            assert!(e.retry(), "{url} {create:?}: {e}");
            assert!(
                e.to_string().contains("does not answer"),
                "{url} {create:?}: {e}"
            );
        }
    }

    #[test]
    fn a_reply_that_is_not_a_2xx_is_cut_at_the_cap_and_a_2xx_is_not() {
        let mut r = Reply {
            fresh: true,
            head: Vec::new(),
            status: 0,
            read: 0,
        };
        // A head in pieces.
        assert!(r.see(b"HTTP/1").is_ok());
        assert!(r.see(b".1 500 Internal").is_ok());
        assert_eq!(r.status, 500);
        assert_eq!(r.see(&vec![b'x'; ERROR_REPLY_CAP]), Err(500));
        // The next request's reply, a 200, is not cut.
        r.fresh = true;
        assert!(r.see(b"HTTP/1.1 200 OK\r\n").is_ok());
        assert!(r.see(&vec![b'x'; 10 * ERROR_REPLY_CAP]).is_ok());
        // More of an error written while the request was still being sent: still the error's.
        r.fresh = true;
        assert!(r.see(b"HTTP/1.1 503 Busy\r\n").is_ok());
        r.fresh = true;
        assert!(r.see(b"more of it").is_ok());
        assert_eq!(r.status, 503);
        assert_eq!(r.see(&vec![b'x'; ERROR_REPLY_CAP]), Err(503));
    }
}
