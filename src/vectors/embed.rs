//! The OpenAI-compatible embedding client (`docs/reference/original-server.md` §3.2, §6.1).
//!
//! `POST {endpoint}/embeddings` with `{"model", "input": [...]}` and `Authorization: Bearer`.
//! Documents and queries may carry a configured prefix (`embedding.documentPrefix`,
//! `embedding.queryPrefix`) and an `input_type` field (`embedding.inputType`).
//! Texts, keys and vectors are never logged; error messages name the endpoint, never the input.
//! The client uses no proxy and follows no redirect, so a loopback endpoint stays loopback.

use std::time::Duration;

use serde_json::Value;

use crate::config::{EmbeddingConfig, InputTypes};
use crate::error::{Error, Result};

/// Most characters of a server's own error text quoted in a message.
const SERVER_TEXT_LIMIT: usize = 200;

/// A client for one embedding endpoint and model. Its `Debug` output redacts the API key.
pub struct Embedder {
    client: reqwest::blocking::Client,
    endpoint: String,
    url: String,
    api_key: String,
    model: String,
    batch_size: usize,
    timeout: Duration,
    query_prefix: String,
    document_prefix: String,
    input_type: Option<InputTypes>,
}

impl std::fmt::Debug for Embedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Embedder")
            .field("endpoint", &self.endpoint)
            .field("api_key", &"<redacted>")
            .field("model", &self.model)
            .field("batch_size", &self.batch_size)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl Embedder {
    /// A client for `config`; `timeout` caps `embedding.timeoutSeconds` (queries use a shorter
    /// one than indexing). Must not run on an async runtime thread (it blocks).
    pub fn new(config: &EmbeddingConfig, timeout_cap: Option<Duration>) -> Result<Embedder> {
        let mut timeout = Duration::from_secs(config.timeout_seconds.max(1));
        if let Some(cap) = timeout_cap {
            timeout = timeout.min(cap);
        }
        let client = reqwest::blocking::Client::builder()
            .timeout(timeout)
            .connect_timeout(timeout.min(Duration::from_secs(10)))
            .no_proxy()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| Error::internal(format!("The embedding HTTP client could not be created: {e}.")))?;
        let endpoint = config.endpoint.trim_end_matches('/').to_owned();
        Ok(Embedder {
            client,
            url: format!("{endpoint}/embeddings"),
            endpoint: shown_endpoint(&endpoint),
            api_key: config.api_key.clone(),
            model: config.model.clone(),
            batch_size: config.batch_size.max(1),
            timeout,
            query_prefix: config.query_prefix.clone(),
            document_prefix: config.document_prefix.clone(),
            input_type: config.input_type.clone(),
        })
    }

    /// Texts per request (`embedding.batchSize`).
    pub fn batch_size(&self) -> usize {
        self.batch_size
    }

    /// Embeds one batch of documents (chunk embedding texts): one request, one vector per
    /// text, in input order. Each text gets `embedding.documentPrefix`.
    pub fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        let input_type = self.input_type.as_ref().map(|t| t.document.as_str());
        self.request(texts, &self.document_prefix, input_type)
    }

    /// Embeds one search query, with `embedding.queryPrefix`.
    pub fn embed_query(&self, query: &str) -> Result<Vec<f32>> {
        let input_type = self.input_type.as_ref().map(|t| t.query.as_str());
        let mut vectors = self.request(&[query], &self.query_prefix, input_type)?;
        Ok(vectors.pop().unwrap_or_default())
    }

    fn request(&self, texts: &[&str], prefix: &str, input_type: Option<&str>) -> Result<Vec<Vec<f32>>> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let input: Vec<String> = texts.iter().map(|t| format!("{prefix}{t}")).collect();
        let mut body = serde_json::json!({ "model": self.model, "input": input });
        if let Some(t) = input_type {
            body["input_type"] = Value::from(t);
        }
        let response = self
            .client
            .post(&self.url)
            .bearer_auth(&self.api_key)
            .json(&body)
            .send()
            .map_err(|e| self.request_error(&e))?;
        let status = response.status();
        let bytes = response.bytes().map_err(|e| self.request_error(&e))?;
        if !status.is_success() {
            let detail = server_error_text(&bytes).map(|t| format!(" ({t})")).unwrap_or_default();
            return Err(unavailable(format!(
                "Embedding endpoint returned {}: {}{detail}.{}",
                status.as_u16(),
                self.endpoint,
                status_hint(status.as_u16(), &self.model)
            )));
        }
        let json: Value = serde_json::from_slice(&bytes).map_err(|_| {
            unavailable(format!("Embedding endpoint returned invalid JSON: {}.", self.endpoint))
        })?;
        parse_response(&json, texts.len())
    }

    fn request_error(&self, e: &reqwest::Error) -> Error {
        if e.is_timeout() {
            unavailable(format!(
                "Embedding endpoint request timed out after {} s: {}; raise embedding.timeoutSeconds or check the server.",
                self.timeout.as_secs(),
                self.endpoint
            ))
        } else if e.is_connect() {
            unavailable(format!(
                "Embedding endpoint request failed: {} is not reachable; start the embedding server (e.g. `ollama serve`) or set embedding.provider: none.",
                self.endpoint
            ))
        } else {
            unavailable(format!("Embedding endpoint request failed: {}: {}.", self.endpoint, root_cause(e)))
        }
    }
}

/// The endpoint as messages and logs show it: without user-info (`https://user:secret@…`), query
/// string or fragment, which may carry credentials. An endpoint without them is shown as given.
fn shown_endpoint(endpoint: &str) -> String {
    let Ok(mut url) = reqwest::Url::parse(endpoint) else { return endpoint.to_owned() };
    if url.username().is_empty()
        && url.password().is_none()
        && url.query().is_none()
        && url.fragment().is_none()
    {
        return endpoint.to_owned();
    }
    let _ = url.set_username("");
    let _ = url.set_password(None);
    url.set_query(None);
    url.set_fragment(None);
    url.as_str().trim_end_matches('/').to_owned()
}

fn unavailable(message: String) -> Error {
    Error::index_not_ready(message)
}

fn root_cause(e: &(dyn std::error::Error + 'static)) -> String {
    let mut cur = e;
    while let Some(next) = cur.source() {
        cur = next;
    }
    cur.to_string()
}

fn status_hint(status: u16, model: &str) -> String {
    match status {
        401 | 403 => " Check embedding.apiKey.".to_owned(),
        404 => format!(
            " Check embedding.endpoint (it should end in /v1) and that model '{model}' exists (e.g. `ollama pull {model}`)."
        ),
        _ => String::new(),
    }
}

/// The server's own error text (`{"error": {"message": …}}` or `{"error": "…"}`), shortened.
fn server_error_text(bytes: &[u8]) -> Option<String> {
    let v: Value = serde_json::from_slice(bytes).ok()?;
    let e = v.get("error")?;
    let text = e.get("message").and_then(Value::as_str).or_else(|| e.as_str())?;
    let one_line: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    Some(one_line.chars().take(SERVER_TEXT_LIMIT).collect())
}

/// Validates an embeddings response: `data[]` with a unique integer `index` in `0..n` and a
/// non-empty array of finite numbers per item; exactly `n` items.
pub(crate) fn parse_response(json: &Value, n: usize) -> Result<Vec<Vec<f32>>> {
    let data = json
        .get("data")
        .and_then(Value::as_array)
        .ok_or_else(|| unavailable("Embedding response is missing 'data' array.".to_owned()))?;
    if data.len() != n {
        return Err(unavailable(format!("Embedding response has {} embeddings for {n} inputs.", data.len())));
    }
    let mut out: Vec<Option<Vec<f32>>> = vec![None; n];
    for (pos, item) in data.iter().enumerate() {
        let index =
            item.get("index").and_then(Value::as_u64).and_then(|i| usize::try_from(i).ok()).ok_or_else(
                || unavailable(format!("Embedding response item {pos} has no integer 'index'.")),
            )?;
        let slot = out.get_mut(index).ok_or_else(|| {
            unavailable(format!("Embedding response index {index} is out of range for {n} inputs."))
        })?;
        if slot.is_some() {
            return Err(unavailable(format!("Embedding response repeats index {index}.")));
        }
        let values =
            item.get("embedding").and_then(Value::as_array).filter(|a| !a.is_empty()).ok_or_else(|| {
                unavailable(format!("Embedding response item {index} has no 'embedding' array."))
            })?;
        let mut vector = Vec::with_capacity(values.len());
        for v in values {
            match v.as_f64().filter(|x| x.is_finite()) {
                Some(x) => vector.push(x as f32),
                None => {
                    return Err(unavailable(format!(
                        "Embedding response item {index} contains a value that is not a finite number."
                    )));
                }
            }
        }
        *slot = Some(vector);
    }
    Ok(out.into_iter().flatten().collect())
}

/// Checks every vector's length against the index dimensions.
pub fn check_dimensions(vectors: &[Vec<f32>], expected: usize) -> Result<()> {
    match vectors.iter().find(|v| v.len() != expected) {
        Some(v) => Err(dimension_mismatch(expected, v.len())),
        None => Ok(()),
    }
}

/// `Embedding dimension mismatch. Expected X, got Y.` (`docs/reference/original-server.md` §6.1).
pub(crate) fn dimension_mismatch(expected: impl std::fmt::Display, got: impl std::fmt::Display) -> Error {
    unavailable(format!("Embedding dimension mismatch. Expected {expected}, got {got}."))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_show_the_endpoint_without_credentials() {
        assert_eq!(shown_endpoint("http://127.0.0.1:11434/v1"), "http://127.0.0.1:11434/v1");
        assert_eq!(shown_endpoint("https://user:pw-SECRET@emb.example/v1"), "https://emb.example/v1");
        assert_eq!(shown_endpoint("https://emb.example/v1?key=SECRET#x"), "https://emb.example/v1");
        // An unreachable endpoint with user-info: the error sentence names it without the secret.
        let config = EmbeddingConfig {
            endpoint: "http://user:pw-SECRET@127.0.0.1:9/v1".to_owned(),
            timeout_seconds: 1,
            ..EmbeddingConfig::default()
        };
        let err = Embedder::new(&config, None).unwrap().embed_query("q").unwrap_err();
        assert!(!err.message.contains("SECRET") && err.message.contains("127.0.0.1:9/v1"), "{}", err.message);
    }

    #[test]
    fn debug_output_never_shows_the_api_key() {
        let config =
            EmbeddingConfig { api_key: "sk-very-secret-key".to_owned(), ..EmbeddingConfig::default() };
        let embedder = Embedder::new(&config, None).expect("client");
        for shown in [format!("{embedder:?}"), format!("{embedder:#?}"), format!("{config:?}")] {
            assert!(!shown.contains("sk-very-secret-key"), "the API key leaked: {shown}");
            assert!(shown.contains("<redacted>"), "{shown}");
        }
    }
}
