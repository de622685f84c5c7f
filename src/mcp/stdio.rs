//! The stdio transport: rmcp's line protocol, behind a filter that answers the messages of
//! [`super::edge`] itself (with their ids) and hands every other line to rmcp unchanged.
//!
//! stdin → [`pump_in`] → a pipe → rmcp → a pipe → [`pump_out`] → stdout. The filter's own answers
//! and rmcp's are written whole lines at a time under one lock, so they never interleave. A line
//! longer than [`INSPECT_LIMIT`] is not inspected: it streams through to rmcp as it is read
//! (rmcp discards lines over its own limit), so a huge line is never held here.

use std::sync::Arc;

use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, DuplexStream};
use tokio::sync::{Mutex, Notify};
use tokio::task::JoinHandle;

use super::edge::{Transport, refusal};

/// The longest line the filter reads whole to inspect it; longer lines pass through unread.
const INSPECT_LIMIT: usize = 1 << 20;
/// The buffer of each pipe between the filter and rmcp.
const PIPE_BYTES: usize = 64 * 1024;

/// The transport rmcp serves on (its reader and writer), and the task that copies its answers to
/// stdout: await it after rmcp stops, so the last answers are written before the process exits.
pub(super) fn transport() -> ((DuplexStream, DuplexStream), JoinHandle<()>) {
    let (to_rmcp, rmcp_in) = tokio::io::duplex(PIPE_BYTES);
    let (rmcp_out, from_rmcp) = tokio::io::duplex(PIPE_BYTES);
    let stdout = Arc::new(Mutex::new(tokio::io::stdout()));
    let gone = Arc::new(Notify::new());
    tokio::spawn(pump_in(tokio::io::stdin(), to_rmcp, Arc::clone(&stdout), Arc::clone(&gone)));
    let out = tokio::spawn(pump_out(from_rmcp, stdout, gone));
    ((rmcp_in, rmcp_out), out)
}

/// Reads stdin line by line: a line [`refusal`] answers is answered on `stdout`, every other
/// line goes to rmcp. At the end of stdin, or when the client closed stdout (`gone`: nothing
/// could be answered any more), rmcp's input ends too, and with it the server.
async fn pump_in<W: AsyncWrite + Unpin + Send>(
    input: impl AsyncRead + Unpin,
    mut to_rmcp: DuplexStream,
    stdout: Arc<Mutex<W>>,
    gone: Arc<Notify>,
) {
    let mut reader = BufReader::with_capacity(PIPE_BYTES, input);
    let mut line: Vec<u8> = Vec::new();
    // Inside a line too long to inspect: bytes go straight to rmcp until its newline.
    let mut streaming = false;
    loop {
        let buf = tokio::select! {
            read = reader.fill_buf() => match read {
                Ok(buf) => buf,
                Err(e) => {
                    tracing::debug!("stdin: {e}");
                    break;
                }
            },
            () = gone.notified() => {
                tracing::debug!("the client closed stdout; stopping");
                break;
            }
        };
        if buf.is_empty() {
            break;
        }
        let (taken, ends_line) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (i + 1, true),
            None => (buf.len(), false),
        };
        if streaming {
            let sent = to_rmcp.write_all(&buf[..taken]).await;
            reader.consume(taken);
            if sent.is_err() {
                return;
            }
            streaming = !ends_line;
            continue;
        }
        line.extend_from_slice(&buf[..taken]);
        reader.consume(taken);
        if !ends_line {
            if line.len() > INSPECT_LIMIT {
                if to_rmcp.write_all(&line).await.is_err() {
                    return;
                }
                line.clear();
                streaming = true;
            }
            continue;
        }
        let answer = serde_json::from_slice(&line).ok().and_then(|m| refusal(&m, Transport::Stdio));
        match answer {
            Some(refused) => {
                tracing::debug!("answered a message rmcp would answer badly: {}", refused.message);
                let mut text = refused.to_json();
                text.push('\n');
                let mut out = stdout.lock().await;
                if out.write_all(text.as_bytes()).await.is_err() || out.flush().await.is_err() {
                    return;
                }
            }
            None => {
                if to_rmcp.write_all(&line).await.is_err() {
                    return;
                }
            }
        }
        line.clear();
    }
    if !line.is_empty() {
        let _ = to_rmcp.write_all(&line).await;
    }
    let _ = to_rmcp.shutdown().await;
}

/// Copies rmcp's answers to stdout, a whole line under the lock at a time; tells `gone` when
/// stdout is closed.
async fn pump_out<W: AsyncWrite + Unpin + Send>(
    from_rmcp: DuplexStream,
    stdout: Arc<Mutex<W>>,
    gone: Arc<Notify>,
) {
    let mut reader = BufReader::with_capacity(PIPE_BYTES, from_rmcp);
    let mut line = Vec::new();
    loop {
        line.clear();
        match reader.read_until(b'\n', &mut line).await {
            Ok(0) => return,
            Ok(_) => {
                let mut out = stdout.lock().await;
                if out.write_all(&line).await.is_err() || out.flush().await.is_err() {
                    // The client closed stdout: nothing more can be answered.
                    gone.notify_one();
                    return;
                }
            }
            Err(e) => {
                tracing::debug!("rmcp's output: {e}");
                return;
            }
        }
    }
}
