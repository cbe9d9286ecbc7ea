//! Every workaround for tower-lsp 0.20 lives here (its issue tracker: github.com/ebkalderon/tower-lsp), so that moving to
//! tower-lsp-server later touches one file.
//!
//! 1. **Ordering.** `Server` polls up to four handler futures at once, so an `.await` in `did_change`
//!    could reorder edits. [`OrderedIngress`] applies `didOpen`/`didChange`/`didClose` synchronously
//!    in `Service::call`, which `Server::serve` invokes strictly in wire order.
//! 2. **Exit.** 0.20 keeps reading stdin after `exit`; a client that waits for the process before
//!    closing the pipe hangs. `exit` ends the process (0 after `shutdown`, 1 otherwise).
//! 3. **Panics.** A panic while polling a handler becomes an `InternalError` reply and a log line
//!    instead of tearing down the serve loop.
//! 4. **Null params.** `"params": null` on `shutdown`/`exit` is accepted (0.20 refuses it).
//! 5. **Malformed input.** One undecodable body ends a 0.20 session; [`sanitized_input`] drops it.
//! 6. **Server→client requests.** Dropping a future that awaits a client reply makes 0.20 panic
//!    ("receiver already dropped", tower-lsp#417) when the reply arrives, and four handlers blocked on
//!    client replies wedge stdio. [`client_request`] runs the request in a detached task that always
//!    awaits to completion; the timeout is on the caller's receiver.
//! 7. **Pre-serialized output.** tower-lsp serializes every outgoing message through
//!    `serde_json::Value`; for `publishDiagnostics` that detour costs more than the analysis. The
//!    output is one queue of whole frames: [`MuxWriter`] (what tower-lsp writes to) cuts its byte
//!    stream into frames, [`Outbox`] adds frames the server serialized itself, and [`write_frames`]
//!    writes them in queue order, so frames never interleave.
//! 8. **Ids 0.20 cannot hold.** 0.20's `Id` is an `i64` or a string; a message whose id is any other
//!    JSON number (`1.5`, `1e3`, `-0.0`, past `i64::MAX`) fails its decoder, which answers once and
//!    then reads nothing more. [`sanitized_input`] answers such a request itself (`-32600`, id `null`,
//!    as JSON-RPC says when the id cannot be read), drops such a response, and the session goes on.
//! 9. **`$/` requests.** 0.20 turns MethodNotFound for a `$/` method into no reply at all, also for a
//!    request with an id; LSP requires the error for those. [`OrderedIngress`] answers them.
//! 10. **Before `initialize`.** The ordered ingress would apply text sync sent before the server was
//!     initialized (and publish diagnostics for it); LSP says such notifications are dropped. The
//!     ingress applies nothing until an `initialize` request has succeeded.
//! 11. **Capabilities lsp-types 0.94 lacks.** Its `ServerCapabilities` has no field for LSP 3.18's
//!     `inlineCompletionProvider`; the `initialize` result gets the ingress's
//!     [`Ingress::extra_capabilities`] merged into its `capabilities` on the way out.
//! 12. **The version a request was sent for.** A request's future is first polled after later
//!     notifications may have been applied, so a handler cannot tell which version the client had.
//!     [`Ingress::stamp_request`] sees each request in `call`, in wire order, and may add that to its
//!     params (`lsp::inline` answers only for it).

use std::any::Any;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use serde_json::Value;
use tower::Service;
use tower_lsp::jsonrpc::{Error, ErrorCode, Id, Request, Response};
use tower_lsp::{Client, ExitedError};

/// What the ingress hands text-sync notifications to. Must be cheap: it runs on the read loop.
pub trait Ingress: Send + Sync + 'static {
    fn notification(&self, method: &str, params: Option<&Value>);
    /// Server capabilities to add to the `initialize` result (item 11), read once it is answered.
    fn extra_capabilities(&self) -> serde_json::Map<String, Value> {
        serde_json::Map::new()
    }
    /// New params for a request as it arrives (item 12), or `None` to leave it as it is.
    fn stamp_request(&self, _method: &str, _params: Option<&Value>) -> Option<Value> {
        None
    }
}

pub struct OrderedIngress<S> {
    inner: S,
    ingress: Arc<dyn Ingress>,
    /// Off in in-process tests, where ending the process would end the test runner.
    exit_process: bool,
    shutdown_seen: bool,
    /// Set when an `initialize` request has been answered with a result (item 10).
    initialized: Arc<AtomicBool>,
}

impl<S> OrderedIngress<S> {
    pub fn new(inner: S, ingress: Arc<dyn Ingress>, exit_process: bool) -> Self {
        OrderedIngress { inner, ingress, exit_process, shutdown_seen: false, initialized: Arc::new(AtomicBool::new(false)) }
    }
}

impl<S> Service<Request> for OrderedIngress<S>
where
    S: Service<Request, Response = Option<Response>, Error = ExitedError>,
    S::Future: Unpin + Send + 'static,
{
    type Response = Option<Response>;
    type Error = ExitedError;
    type Future = CatchPanic<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), ExitedError>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: Request) -> Self::Future {
        let req = without_null_params(req);
        match req.method() {
            "shutdown" => self.shutdown_seen = true,
            "exit" if self.exit_process => {
                let code = if self.shutdown_seen { 0 } else { 1 };
                tracing::info!("exit received; ending the process with status {code}");
                // Give the writer a moment to flush anything already queued.
                std::thread::spawn(move || {
                    std::thread::sleep(Duration::from_millis(30));
                    std::process::exit(code)
                });
            }
            _ => {}
        }
        let id = req.id().cloned();
        let method = req.method().to_string();
        if let (Some(id), true) = (&id, method.starts_with("$/")) {
            // Item 9: no `$/` request is implemented; 0.20 would not answer at all.
            let err = Error { code: ErrorCode::MethodNotFound, message: format!("method not found: {method}").into(), data: None };
            return CatchPanic {
                inner: None,
                ready: Some(Response::from_error(id.clone(), err)),
                id: None,
                method,
                on_success: None,
                ingress: None,
            };
        }
        if id.is_none() && self.initialized.load(Ordering::SeqCst) {
            let ingress = &self.ingress;
            let applied = std::panic::catch_unwind(AssertUnwindSafe(|| ingress.notification(&method, req.params())));
            if let Err(p) = applied {
                tracing::error!("panic while applying {method}: {}", panic_message(&p));
            }
        } else if id.is_none() && method != "exit" {
            tracing::warn!("dropping {method}: the server is not initialized yet");
        }
        let req = match (&id, self.initialized.load(Ordering::SeqCst)) {
            (Some(_), true) => match self.ingress.stamp_request(&method, req.params()) {
                Some(params) => {
                    let (method, id, _) = req.into_parts();
                    let b = Request::build(method).params(params);
                    match id {
                        Some(id) => b.id(id).finish(),
                        None => b.finish(),
                    }
                }
                None => req,
            },
            _ => req,
        };
        let on_success = (method == "initialize").then(|| self.initialized.clone());
        let ingress = (method == "initialize").then(|| self.ingress.clone());
        CatchPanic { inner: Some(self.inner.call(req)), ready: None, id, method, on_success, ingress }
    }
}

/// 0.20 rejects `"params": null` on param-less methods (`shutdown`, `exit`) with InvalidParams;
/// JSON-RPC allows it and some clients send it. Treat it as absent.
fn without_null_params(req: Request) -> Request {
    if !matches!(req.params(), Some(Value::Null)) {
        return req;
    }
    let (method, id, _) = req.into_parts();
    let builder = Request::build(method);
    match id {
        Some(id) => builder.id(id).finish(),
        None => builder.finish(),
    }
}

/// Turns a panic inside a handler future into an `InternalError` reply (or nothing, for a notification).
/// Also carries a reply made without the inner service (`ready`), and marks the session initialized
/// when an `initialize` succeeds (`on_success`).
pub struct CatchPanic<F> {
    inner: Option<F>,
    ready: Option<Response>,
    id: Option<Id>,
    method: String,
    on_success: Option<Arc<AtomicBool>>,
    /// For `initialize`: whose extra capabilities to add to the result (item 11).
    ingress: Option<Arc<dyn Ingress>>,
}

impl<F> Future for CatchPanic<F>
where
    F: Future<Output = Result<Option<Response>, ExitedError>> + Unpin,
{
    type Output = Result<Option<Response>, ExitedError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = &mut *self;
        let Some(inner) = this.inner.as_mut() else { return Poll::Ready(Ok(this.ready.take())) };
        match std::panic::catch_unwind(AssertUnwindSafe(|| Pin::new(inner).poll(cx))) {
            Ok(Poll::Ready(Ok(Some(resp)))) => {
                if let Some(flag) = this.on_success.take()
                    && resp.is_ok()
                {
                    flag.store(true, Ordering::SeqCst);
                }
                let resp = match this.ingress.take() {
                    Some(ingress) => with_capabilities(resp, ingress.extra_capabilities()),
                    None => resp,
                };
                Poll::Ready(Ok(Some(resp)))
            }
            Ok(p) => p,
            Err(payload) => {
                let msg = panic_message(&payload);
                tracing::error!("handler for {} panicked: {msg}", this.method);
                Poll::Ready(Ok(this.id.take().map(|id| {
                    let err = Error {
                        code: ErrorCode::InternalError,
                        message: format!("xeforge: internal error in {}: {msg}", this.method).into(),
                        data: None,
                    };
                    Response::from_error(id, err)
                })))
            }
        }
    }
}

/// The `initialize` response with `extra` merged into its `capabilities` (item 11).
fn with_capabilities(resp: Response, extra: serde_json::Map<String, Value>) -> Response {
    if extra.is_empty() {
        return resp;
    }
    let (id, body) = resp.into_parts();
    let body = body.map(|mut v| {
        if let Some(caps) = v.get_mut("capabilities").and_then(Value::as_object_mut) {
            caps.extend(extra);
        }
        v
    });
    Response::from_parts(id, body)
}

pub fn panic_message(p: &Box<dyn Any + Send>) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "panic".to_string()
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ClientRequestError {
    #[error("the client did not answer {0} within {1:?}")]
    Timeout(&'static str, Duration),
    #[error("the client answered {0} with an error: {1}")]
    Client(&'static str, Error),
    #[error("the server's runtime dropped the {0} request")]
    Dropped(&'static str),
}

/// Send a request to the client from a detached task that always awaits the reply, and wait for it
/// here for at most `timeout`. Dropping the returned future is safe (see the module docs).
pub async fn client_request<R>(client: &Client, params: R::Params, timeout: Duration) -> Result<R::Result, ClientRequestError>
where
    R: tower_lsp::lsp_types::request::Request,
    R::Params: Send + 'static,
    R::Result: Send + 'static,
{
    let (tx, rx) = tokio::sync::oneshot::channel();
    let client = client.clone();
    tokio::spawn(async move {
        let res = client.send_request::<R>(params).await;
        let _ = tx.send(res);
    });
    match tokio::time::timeout(timeout, rx).await {
        Err(_) => Err(ClientRequestError::Timeout(R::METHOD, timeout)),
        Ok(Err(_)) => Err(ClientRequestError::Dropped(R::METHOD)),
        Ok(Ok(Err(e))) => Err(ClientRequestError::Client(R::METHOD, e)),
        Ok(Ok(Ok(v))) => Ok(v),
    }
}

/// Fire-and-forget notification from sync code (the ingress, workers): queued on the runtime.
pub fn spawn_notification<N>(client: &Client, params: N::Params)
where
    N: tower_lsp::lsp_types::notification::Notification,
    N::Params: Send + 'static,
{
    let client = client.clone();
    if let Ok(handle) = tokio::runtime::Handle::try_current() {
        handle.spawn(async move { client.send_notification::<N>(params).await });
    }
}

/// tower-lsp 0.20 reads stdin through a `FramedRead`, which ends the stream — and so the whole
/// session — after the first body it cannot decode. This pump re-frames the input and keeps back
/// any frame 0.20 could not decode: a request gets its JSON-RPC error through `outbox` (id `null`),
/// anything else is dropped and logged. One malformed message costs one message.
pub fn sanitized_input<R>(input: R, outbox: Outbox) -> tokio::io::DuplexStream
where
    R: tokio::io::AsyncRead + Unpin + Send + 'static,
{
    use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
    let (mut tx, rx) = tokio::io::duplex(1 << 16);
    tokio::spawn(async move {
        let mut r = BufReader::new(input);
        loop {
            let mut len: Option<usize> = None;
            let mut line = String::new();
            loop {
                line.clear();
                match r.read_line(&mut line).await {
                    Ok(0) | Err(_) => return,
                    Ok(_) => {}
                }
                let l = line.trim_end();
                if l.is_empty() {
                    if len.is_some() {
                        break;
                    }
                    continue;
                }
                // Found anywhere in the line, so a body shorter than its header said resynchronises.
                if let Some(i) = l.find("Content-Length:") {
                    len = l[i + "Content-Length:".len()..].trim().parse().ok();
                }
            }
            let Some(n) = len.filter(|n| *n <= 256 << 20) else { continue };
            let mut body = vec![0; n];
            if r.read_exact(&mut body).await.is_err() {
                return;
            }
            if let Err(bad) = check_message(&body) {
                tracing::warn!("rejecting a message ({} bytes): {}", body.len(), bad.message());
                if let Some(reply) = bad.reply() {
                    outbox.send(reply);
                }
                continue;
            }
            let header = format!("Content-Length: {n}\r\n\r\n");
            if tx.write_all(header.as_bytes()).await.is_err() || tx.write_all(&body).await.is_err() {
                return;
            }
        }
    });
    rx
}

/// Why a frame is kept from tower-lsp (see items 5 and 8).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Malformed {
    /// Not JSON at all: JSON-RPC's Parse error.
    NotJson,
    /// JSON, but not a request 0.20 can decode (not an object, no `"jsonrpc": "2.0"`, a method that is
    /// not a string, an id that is not a string, null or an integer within i64): Invalid Request.
    BadRequest,
    /// Something that is meant as a response but cannot be decoded as one: dropped, never answered.
    BadResponse,
}

impl Malformed {
    fn message(self) -> &'static str {
        match self {
            Malformed::NotJson => "not JSON",
            Malformed::BadRequest => "not a JSON-RPC 2.0 request the server can read (its id must be a string, null or an integer)",
            Malformed::BadResponse => "a response whose id or body cannot be read",
        }
    }

    /// The error response JSON-RPC asks for, when one is owed.
    fn reply(self) -> Option<String> {
        let (code, message) = match self {
            Malformed::NotJson => (ErrorCode::ParseError, "Parse error: the message is not JSON"),
            Malformed::BadRequest => (
                ErrorCode::InvalidRequest,
                "Invalid Request: not a JSON-RPC 2.0 request the server can read (an id must be a string, null or an integer)",
            ),
            Malformed::BadResponse => return None,
        };
        // JSON-RPC: when the id cannot be read, the reply's id is null.
        serde_json::to_string(&Response::from_error(Id::Null, Error { code, message: message.into(), data: None })).ok()
    }
}

/// Whether tower-lsp 0.20's decoder will take `body`. Requests and notifications are checked on
/// their JSON value (they can be megabytes: one parse); responses, small and rare, are decoded as
/// 0.20 decodes them.
pub fn check_message(body: &[u8]) -> Result<(), Malformed> {
    let Ok(value) = serde_json::from_slice::<Value>(body) else { return Err(Malformed::NotJson) };
    let Value::Object(m) = &value else { return Err(Malformed::BadRequest) };
    let id_ok = |v: &Value| match v {
        Value::Number(n) => n.is_i64(),
        Value::String(_) | Value::Null => true,
        _ => false,
    };
    let version_ok = m.get("jsonrpc").and_then(Value::as_str) == Some("2.0");
    match m.get("method") {
        Some(Value::String(_)) if version_ok && m.get("id").is_none_or(id_ok) => Ok(()),
        Some(_) => Err(Malformed::BadRequest),
        None if m.contains_key("result") || m.contains_key("error") => {
            serde_json::from_value::<Response>(value).map(drop).map_err(|_| Malformed::BadResponse)
        }
        None => Err(Malformed::BadRequest),
    }
}

/// One whole message for the output queue (see item 7 of the module docs).
pub enum Frame {
    Bytes(Vec<u8>),
    /// The tower-lsp side has finished: everything queued before this is written, then the writer stops.
    Close,
}

/// Queues JSON-RPC bodies the server serialized itself.
#[derive(Clone)]
pub struct Outbox {
    tx: tokio::sync::mpsc::UnboundedSender<Frame>,
}

impl Outbox {
    /// Queue one message body (a JSON-RPC notification); false once the output has closed.
    pub fn send(&self, body: String) -> bool {
        let mut frame = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
        frame.extend_from_slice(body.as_bytes());
        self.tx.send(Frame::Bytes(frame)).is_ok()
    }
}

/// The `AsyncWrite` tower-lsp writes to: accepts every byte at once and queues each complete frame.
pub struct MuxWriter {
    tx: tokio::sync::mpsc::UnboundedSender<Frame>,
    pending: Vec<u8>,
}

/// A queue for `output`: the writer for tower-lsp, the outbox for the server, and the receiver
/// [`write_frames`] drains.
pub fn mux() -> (MuxWriter, Outbox, tokio::sync::mpsc::UnboundedReceiver<Frame>) {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    (MuxWriter { tx: tx.clone(), pending: Vec::new() }, Outbox { tx }, rx)
}

impl MuxWriter {
    /// Moves every complete `header\r\n\r\nbody` frame at the front of `pending` to the queue.
    fn cut_frames(&mut self) {
        let mut start = 0;
        while let Some(len) = frame_len(&self.pending[start..]) {
            let end = start + len;
            let _ = self.tx.send(Frame::Bytes(self.pending[start..end].to_vec()));
            start = end;
        }
        self.pending.drain(..start);
    }
}

/// Length of the complete frame at the start of `buf`, if it is all there.
fn frame_len(buf: &[u8]) -> Option<usize> {
    let head_end = buf.windows(4).position(|w| w == b"\r\n\r\n")?;
    let head = std::str::from_utf8(&buf[..head_end]).ok()?;
    let n: usize = head.split("\r\n").find_map(|l| l.strip_prefix("Content-Length:").map(|v| v.trim().parse().ok()))??;
    let total = head_end + 4 + n;
    (buf.len() >= total).then_some(total)
}

impl tokio::io::AsyncWrite for MuxWriter {
    fn poll_write(mut self: Pin<&mut Self>, _: &mut Context<'_>, buf: &[u8]) -> Poll<std::io::Result<usize>> {
        self.pending.extend_from_slice(buf);
        self.cut_frames();
        Poll::Ready(Ok(buf.len()))
    }
    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

impl Drop for MuxWriter {
    fn drop(&mut self) {
        let _ = self.tx.send(Frame::Close);
    }
}

/// Writes queued frames to `output` until the tower-lsp side closes, flushing whenever the queue
/// runs dry. Ends early if the output fails (the client went away).
pub async fn write_frames<O: tokio::io::AsyncWrite + Unpin>(mut rx: tokio::sync::mpsc::UnboundedReceiver<Frame>, mut output: O) {
    use tokio::io::AsyncWriteExt;
    while let Some(frame) = rx.recv().await {
        let Frame::Bytes(bytes) = frame else { break };
        if output.write_all(&bytes).await.is_err() {
            return;
        }
        if rx.is_empty() && output.flush().await.is_err() {
            return;
        }
    }
    let _ = output.flush().await;
}

#[cfg(test)]
mod mux_tests {
    use super::*;
    use tokio::io::AsyncWriteExt;

    #[tokio::test]
    async fn frames_split_across_writes_come_out_whole_and_in_order() {
        let (mut w, outbox, rx) = mux();
        let a = b"Content-Length: 2\r\n\r\n{}";
        // A frame cut in the header, another in the body, an injected one between.
        w.write_all(&a[..7]).await.unwrap();
        w.write_all(&a[7..]).await.unwrap();
        w.write_all(b"Content-Length: 4\r\n\r\n[1").await.unwrap();
        assert!(outbox.send("\"x\"".into()));
        w.write_all(b",]").await.unwrap();
        drop(w);
        let mut out = Vec::new();
        write_frames(rx, &mut out).await;
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "Content-Length: 2\r\n\r\n{}Content-Length: 3\r\n\r\n\"x\"Content-Length: 4\r\n\r\n[1,]"
        );
    }
}
