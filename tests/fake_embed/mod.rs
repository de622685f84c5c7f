//! A real OpenAI-compatible embedding server on 127.0.0.1 for tests: deterministic vectors,
//! and switches to fail, stall, answer garbage or return the wrong dimensions.
//!
//! Vectors are hashed character bigrams (and single characters), L2-normalised: texts that
//! share words are close, unrelated texts are not, so semantic ranking is testable without a
//! model. Shared by the unit tests (`src/vectors/tests.rs`) and the integration tests.

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

/// How the server answers.
#[derive(Clone, Debug, PartialEq)]
pub enum Behaviour {
    /// Deterministic vectors of the server's dimensions.
    Ok,
    /// This HTTP status with an OpenAI-style error body.
    Status(u16),
    /// Sleep this long before answering normally.
    Stall(Duration),
    /// Vectors of this many dimensions instead.
    Dims(usize),
    /// A body that is not JSON.
    Garbage,
    /// JSON without `data`.
    NoData,
    /// One vector fewer than inputs.
    Short,
}

/// One request the server saw.
#[derive(Clone, Debug)]
pub struct Seen {
    /// `Authorization` header.
    pub authorization: Option<String>,
    /// `model` field.
    pub model: String,
    /// Number of inputs.
    pub inputs: usize,
    /// `input_type` field, if any.
    pub input_type: Option<String>,
}

#[derive(Debug)]
struct State {
    behaviour: Behaviour,
    seen: Vec<Seen>,
    /// Inputs embedded so far (every text of every successful request).
    texts: Vec<String>,
    /// An input equal to `.0` is embedded as if it were `.1` (a model whose nearest
    /// neighbours are wrong).
    aliases: Vec<(String, String)>,
}

/// A running fake server; stops when dropped.
pub struct FakeEmbed {
    /// `http://127.0.0.1:<port>/v1`
    pub endpoint: String,
    dims: usize,
    state: Arc<Mutex<State>>,
    stop: Arc<AtomicBool>,
    port: u16,
}

impl FakeEmbed {
    /// Starts a server producing vectors of `dims` dimensions.
    pub fn start(dims: usize) -> FakeEmbed {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
        let port = listener.local_addr().expect("local addr").port();
        let state = Arc::new(Mutex::new(State {
            behaviour: Behaviour::Ok,
            seen: Vec::new(),
            texts: Vec::new(),
            aliases: Vec::new(),
        }));
        let stop = Arc::new(AtomicBool::new(false));
        {
            let state = Arc::clone(&state);
            let stop = Arc::clone(&stop);
            thread::spawn(move || {
                for conn in listener.incoming() {
                    if stop.load(Ordering::SeqCst) {
                        break;
                    }
                    let Ok(conn) = conn else { continue };
                    let state = Arc::clone(&state);
                    thread::spawn(move || serve(conn, dims, &state));
                }
            });
        }
        FakeEmbed { endpoint: format!("http://127.0.0.1:{port}/v1"), dims, state, stop, port }
    }

    /// Changes how the next requests are answered.
    pub fn set(&self, behaviour: Behaviour) {
        self.state.lock().expect("state").behaviour = behaviour;
    }

    /// From now on, the input `from` is embedded as if it were `to`.
    pub fn alias(&self, from: &str, to: &str) {
        self.state.lock().expect("state").aliases.push((from.to_owned(), to.to_owned()));
    }

    /// Requests seen so far.
    pub fn seen(&self) -> Vec<Seen> {
        self.state.lock().expect("state").seen.clone()
    }

    /// Texts embedded successfully so far.
    pub fn texts(&self) -> Vec<String> {
        self.state.lock().expect("state").texts.clone()
    }

    /// Forgets the requests and texts seen.
    pub fn clear(&self) {
        let mut s = self.state.lock().expect("state");
        s.seen.clear();
        s.texts.clear();
    }

    /// The vector this server returns for `text`.
    pub fn vector(&self, text: &str) -> Vec<f32> {
        vector(text, self.dims)
    }
}

impl Drop for FakeEmbed {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }
}

/// Deterministic embedding: hashed characters and character bigrams, L2-normalised.
pub fn vector(text: &str, dims: usize) -> Vec<f32> {
    let mut v = vec![0f32; dims];
    let chars: Vec<char> = text.chars().filter(|c| !c.is_whitespace()).collect();
    let mut bump = |key: u64, w: f32| {
        let h = key.wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(17).wrapping_mul(0xC2B2_AE3D_27D4_EB4F);
        v[(h % dims as u64) as usize] += w;
    };
    for (i, c) in chars.iter().enumerate() {
        bump(*c as u64, 0.5);
        if let Some(n) = chars.get(i + 1) {
            bump(((*c as u64) << 21) | (*n as u64), 1.0);
        }
    }
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        v.iter_mut().for_each(|x| *x /= norm);
    } else {
        v[0] = 1.0;
    }
    v
}

fn serve(conn: TcpStream, dims: usize, state: &Mutex<State>) {
    let mut reader = BufReader::new(conn.try_clone().expect("clone stream"));
    let mut line = String::new();
    if reader.read_line(&mut line).is_err() || line.is_empty() {
        return;
    }
    let mut length = 0usize;
    let mut authorization = None;
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h).is_err() || h.trim().is_empty() {
            break;
        }
        let (name, value) = h.split_once(':').unwrap_or((&h, ""));
        match name.trim().to_ascii_lowercase().as_str() {
            "content-length" => length = value.trim().parse().unwrap_or(0),
            "authorization" => authorization = Some(value.trim().to_owned()),
            _ => {}
        }
    }
    let mut body = vec![0u8; length];
    if reader.read_exact(&mut body).is_err() {
        return;
    }
    let request: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
    let inputs: Vec<String> = request["input"]
        .as_array()
        .map(|a| a.iter().filter_map(|v| v.as_str().map(str::to_owned)).collect())
        .unwrap_or_default();
    let (behaviour, aliases) = {
        let mut s = state.lock().expect("state");
        s.seen.push(Seen {
            authorization,
            model: request["model"].as_str().unwrap_or_default().to_owned(),
            inputs: inputs.len(),
            input_type: request["input_type"].as_str().map(str::to_owned),
        });
        (s.behaviour.clone(), s.aliases.clone())
    };
    let seen_inputs = inputs.clone();
    let inputs: Vec<String> = inputs
        .into_iter()
        .map(|t| aliases.iter().find(|(from, _)| *from == t).map_or(t, |(_, to)| to.clone()))
        .collect();
    let path_ok = line.split_whitespace().nth(1) == Some("/v1/embeddings");
    let (status, body) = if !path_ok {
        (404, r#"{"error":{"message":"no such route"}}"#.to_owned())
    } else {
        match behaviour {
            Behaviour::Status(code) => (code, r#"{"error":{"message":"model is overloaded"}}"#.to_owned()),
            Behaviour::Garbage => (200, "<html>not json</html>".to_owned()),
            Behaviour::NoData => (200, r#"{"object":"list"}"#.to_owned()),
            Behaviour::Stall(d) => {
                thread::sleep(d);
                (200, embeddings(&inputs, dims, 0))
            }
            Behaviour::Dims(n) => (200, embeddings(&inputs, n, 0)),
            Behaviour::Short => (200, embeddings(&inputs, dims, 1)),
            Behaviour::Ok => {
                state.lock().expect("state").texts.extend(seen_inputs.iter().cloned());
                (200, embeddings(&inputs, dims, 0))
            }
        }
    };
    let mut conn = conn;
    let _ = write!(
        conn,
        "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = conn.flush();
}

fn embeddings(inputs: &[String], dims: usize, drop_last: usize) -> String {
    let n = inputs.len().saturating_sub(drop_last);
    // Answer in reverse order: clients must place vectors by `index`, not by position.
    let data: Vec<serde_json::Value> = inputs[..n]
        .iter()
        .enumerate()
        .rev()
        .map(|(i, t)| serde_json::json!({"object": "embedding", "index": i, "embedding": vector(t, dims)}))
        .collect();
    serde_json::json!({"object": "list", "data": data, "model": "fake"}).to_string()
}
