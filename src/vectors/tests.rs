//! Unit tests of the semantic side: prefixes, the embedding client against a fake server,
//! response validation and the usearch index (fusion and the similarity floor are tested in
//! `search/tests.rs`).

use std::time::Duration;

use super::*;
use crate::config::EmbeddingConfig;
use crate::error::ErrorCode;

#[path = "../../tests/fake_embed/mod.rs"]
mod fake_embed;
use fake_embed::{Behaviour, FakeEmbed};

fn config(endpoint: &str, dims: u32) -> EmbeddingConfig {
    EmbeddingConfig {
        endpoint: endpoint.to_owned(),
        dimensions: Some(dims),
        batch_size: 4,
        timeout_seconds: 2,
        ..EmbeddingConfig::default()
    }
}

#[test]
fn prefixes_and_input_types_reach_the_server() {
    let server = FakeEmbed::start(8);
    let mut c = config(&server.endpoint, 8);
    c.query_prefix = "query: ".to_owned();
    c.document_prefix = "passage: ".to_owned();
    c.input_type =
        Some(crate::config::InputTypes { query: "query".to_owned(), document: "passage".to_owned() });
    let e = Embedder::new(&c, None).expect("client");
    let docs = e.embed(&["京都の寺", "東京都庁"]).expect("embed documents");
    let q = e.embed_query("京都").expect("embed query");
    assert_eq!(server.texts(), vec!["passage: 京都の寺", "passage: 東京都庁", "query: 京都"]);
    let types: Vec<Option<String>> = server.seen().into_iter().map(|s| s.input_type).collect();
    assert_eq!(types, vec![Some("passage".to_owned()), Some("query".to_owned())]);
    // The vectors are those of the prefixed texts.
    assert!(docs[0].iter().zip(server.vector("passage: 京都の寺")).all(|(a, b)| (a - b).abs() < 1e-6));
    assert!(q.iter().zip(server.vector("query: 京都")).all(|(a, b)| (a - b).abs() < 1e-6));
    // Without settings nothing is added and no input_type is sent.
    server.clear();
    let plain = Embedder::new(&config(&server.endpoint, 8), None).expect("client");
    plain.embed_query("京都").expect("embed");
    assert_eq!(server.texts(), vec!["京都"]);
    assert_eq!(server.seen()[0].input_type, None);
}

#[test]
fn a_prefix_or_input_type_change_changes_the_vector_manifest() {
    let base = EmbeddingConfig::default();
    let m0 = vector_manifest(&base, true);
    let with = |f: &dyn Fn(&mut EmbeddingConfig)| {
        let mut c = base.clone();
        f(&mut c);
        vector_manifest(&c, true)
    };
    let q = with(&|c| c.query_prefix = "query: ".to_owned());
    let d = with(&|c| c.document_prefix = "passage: ".to_owned());
    let t = with(&|c| {
        c.input_type =
            Some(crate::config::InputTypes { query: "query".to_owned(), document: "passage".to_owned() })
    });
    for m in [&q, &d, &t] {
        assert_ne!(&m0, m);
        assert!(!crate::indexer::compatibility(&m0, m).is_compatible, "{m:?}");
        assert!(!crate::indexer::compatibility(m, &m0).is_compatible, "removing it too: {m:?}");
    }
    // A manifest written before these keys existed matches the unset settings.
    let mut old = m0.clone();
    old.retain(|k, _| {
        !k.starts_with("embedding_query")
            && !k.starts_with("embedding_document")
            && k != "embedding_input_type"
    });
    assert!(crate::indexer::compatibility(&old, &m0).is_compatible);
}

#[test]
fn embedder_sends_model_key_and_batches_and_places_vectors_by_index() {
    let server = FakeEmbed::start(8);
    let e = Embedder::new(&config(&server.endpoint, 8), None).expect("client");
    let texts = ["東京都庁", "京都", "API"];
    let vectors = e.embed(&texts).expect("embed");
    assert_eq!(vectors.len(), 3);
    for (t, v) in texts.iter().zip(&vectors) {
        let want = server.vector(t);
        assert!(v.iter().zip(&want).all(|(a, b)| (a - b).abs() < 1e-6), "{t}: vector out of place");
    }
    let seen = server.seen();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].authorization.as_deref(), Some("Bearer ollama"));
    assert_eq!(seen[0].model, "bge-m3:latest");
    assert_eq!(seen[0].inputs, 3);
}

#[test]
fn embedder_errors_say_what_is_wrong() {
    let server = FakeEmbed::start(8);
    let e = Embedder::new(&config(&server.endpoint, 8), None).expect("client");
    let cases: Vec<(Behaviour, &str)> = vec![
        (Behaviour::Status(500), "Embedding endpoint returned 500: http://127.0.0.1:"),
        (Behaviour::Status(404), "ollama pull bge-m3:latest"),
        (Behaviour::Status(401), "Check embedding.apiKey."),
        (Behaviour::Garbage, "Embedding endpoint returned invalid JSON"),
        (Behaviour::NoData, "Embedding response is missing 'data' array."),
        (Behaviour::Short, "Embedding response has 1 embeddings for 2 inputs."),
        (Behaviour::Stall(Duration::from_secs(4)), "timed out after 2 s"),
    ];
    for (behaviour, expect) in cases {
        server.set(behaviour.clone());
        let err = e.embed(&["a", "b"]).expect_err("must fail");
        assert_eq!(err.code, ErrorCode::IndexNotReady);
        assert!(err.message.contains(expect), "{behaviour:?}: {}", err.message);
        assert!(!err.message.contains("\"a\""), "input text leaked: {}", err.message);
    }
    server.set(Behaviour::Dims(5));
    let vectors = e.embed(&["a"]).expect("wrong dims still parse");
    let err = check_dimensions(&vectors, 8).expect_err("dims");
    assert_eq!(err.message, "Embedding dimension mismatch. Expected 8, got 5.");
}

#[test]
fn embedder_reports_an_endpoint_that_is_down() {
    // A port nothing listens on: bind, read the port, close.
    let port = std::net::TcpListener::bind("127.0.0.1:0").expect("bind").local_addr().expect("addr").port();
    let e = Embedder::new(&config(&format!("http://127.0.0.1:{port}/v1"), 8), None).expect("client");
    let err = e.embed(&["a"]).expect_err("down");
    assert!(err.message.contains("is not reachable"), "{}", err.message);
    assert!(err.message.contains("embedding.provider: none"), "{}", err.message);
}

#[test]
fn response_validation_rejects_bad_items() {
    let bad = [
        (serde_json::json!({"data": [{"embedding": [0.1]}]}), "no integer 'index'"),
        (serde_json::json!({"data": [{"index": 3, "embedding": [0.1]}]}), "out of range"),
        (serde_json::json!({"data": [{"index": 0, "embedding": []}]}), "no 'embedding' array"),
        (serde_json::json!({"data": [{"index": 0, "embedding": ["x"]}]}), "not a finite number"),
    ];
    for (json, expect) in bad {
        let err = embed::parse_response(&json, 1).expect_err("bad");
        assert!(err.message.contains(expect), "{json}: {}", err.message);
    }
    let dup =
        serde_json::json!({"data": [{"index": 0, "embedding": [1.0]}, {"index": 0, "embedding": [1.0]}]});
    assert!(embed::parse_response(&dup, 2).expect_err("dup").message.contains("repeats index 0"));
}

fn unit(dims: usize, hot: usize) -> Vec<f32> {
    let mut v = vec![0.0; dims];
    v[hot] = 1.0;
    v
}

#[test]
fn index_add_search_save_load_and_view() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join(VECTOR_FILE);
    let mut ix = VectorIndex::new(16).expect("index");
    for key in 1..=2_000u64 {
        ix.add(key, &fake_embed::vector(&format!("文書 {key} の本文"), 16)).expect("add");
    }
    ix.add(5_000, &unit(16, 3)).expect("add");
    assert_eq!(ix.len(), 2_001);
    let hits = ix.search(&unit(16, 3), 3, None).expect("search");
    assert_eq!(hits[0].0, 5_000);
    assert!(hits[0].1 < 0.01, "distance {}", hits[0].1);
    // Replacing a key keeps one vector.
    ix.add(5_000, &unit(16, 4)).expect("replace");
    assert_eq!(ix.len(), 2_001);
    ix.save(&path).expect("save");
    let loaded = VectorIndex::load(&path, 16).expect("load");
    assert_eq!(loaded.len(), 2_001);
    assert_eq!(loaded.search(&unit(16, 4), 1, None).expect("search")[0].0, 5_000);
    let view = VectorIndex::view(&path).expect("view");
    assert_eq!(view.dims(), 16);
    assert_eq!(view.search(&unit(16, 4), 1, None).expect("search")[0].0, 5_000);
    let got = loaded.get(5_000).expect("vector");
    for p in Precision::ALL {
        let mut other = VectorIndex::with_precision(16, p).expect("index");
        other.add(1, &unit(16, 2)).expect("add");
        other.add(2, &unit(16, 9)).expect("add");
        assert_eq!(other.search(&unit(16, 9), 1, None).expect("search")[0].0, 2, "{p:?}");
    }
    assert!((got[4] - 1.0).abs() < 1e-3, "f16 round trip: {got:?}");
    let err = VectorIndex::load(&path, 32).expect_err("dims");
    assert_eq!(err.message, "Embedding dimension mismatch. Expected 32, got 16.");
    let err = loaded.search(&unit(8, 1), 1, None).expect_err("query dims");
    assert_eq!(err.message, "Embedding dimension mismatch. Expected 16, got 8.");
}

/// Whether this process maps or holds open `path` (Linux: `/proc/self/maps` and `fd`).
#[cfg(target_os = "linux")]
fn process_holds(path: &std::path::Path) -> bool {
    let name = path.to_string_lossy().into_owned();
    let mapped = std::fs::read_to_string("/proc/self/maps").unwrap().lines().any(|l| l.ends_with(&name));
    let open = std::fs::read_dir("/proc/self/fd")
        .unwrap()
        .filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
        .any(|target| target == path);
    mapped || open
}

/// The searcher's copy used on Windows ([`VectorIndex::read`]) keeps neither a mapping nor a
/// handle of the file, so the writer can replace it while searches run; it answers from its
/// copy after the file was replaced. A view, by contrast, maps the file (the check can fail).
#[cfg(target_os = "linux")]
#[test]
fn a_read_copy_holds_no_mapping_of_the_vector_file_so_it_can_be_replaced() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join(VECTOR_FILE);
    let mut ix = VectorIndex::new(16).expect("index");
    for key in 1..=300u64 {
        ix.add(key, &fake_embed::vector(&format!("段落 {key}"), 16)).expect("add");
    }
    ix.add(7_000, &unit(16, 3)).expect("add");
    ix.save(&path).expect("save");
    let copy = VectorIndex::read(&path).expect("read");
    assert_eq!((copy.dims(), copy.len()), (16, 301));
    assert!(!process_holds(&path), "the read copy still maps or holds the file");
    // The writer replaces the file (a new generation without key 7000).
    ix.remove(7_000).expect("remove");
    ix.save(&path).expect("save over");
    assert_eq!(copy.search(&unit(16, 3), 1, None).expect("search")[0].0, 7_000, "answers from its copy");
    assert_eq!(VectorIndex::read(&path).expect("re-read").len(), 300, "the next copy sees the new file");
    let view = VectorIndex::view(&path).expect("view");
    assert!(process_holds(&path), "a view maps the file (so the check above can fail)");
    drop(view);
}

#[test]
fn scoped_search_returns_top_k_within_scope() {
    let dims = 32;
    let mut ix = VectorIndex::new(dims).expect("index");
    let query = fake_embed::vector("形態素解析の辞書", dims);
    // 9,000 keys close to the query, 3 in-scope keys far from it.
    let near: Vec<(u64, Vec<f32>)> = (1..=9_000u64)
        .map(|key| (key, fake_embed::vector(&format!("形態素解析の辞書 {key}"), dims)))
        .collect();
    let items: Vec<(u64, &[f32])> = near.iter().map(|(k, v)| (*k, v.as_slice())).collect();
    ix.add_many(&items).expect("add_many");
    assert_eq!(ix.len(), 9_000);
    // add_many replaces keys it already holds.
    ix.add_many(&items[..10]).expect("replace");
    assert_eq!(ix.len(), 9_000);
    for key in [20_001u64, 20_002, 20_003] {
        ix.add(key, &fake_embed::vector(&format!("まったく別の話題 {key}"), dims)).expect("add");
    }
    let small = [20_001u64, 20_002, 20_003];
    let hits = ix.search(&query, 2, Some(&small)).expect("small scope");
    assert_eq!(hits.len(), 2);
    assert!(hits.iter().all(|h| small.contains(&h.0)), "{hits:?}");
    // A large scope (above the exhaustive limit) goes through the filtered HNSW walk.
    let large: Vec<u64> = (4_000..=9_000u64).chain(small).collect();
    let hits = ix.search(&query, 10, Some(&large)).expect("large scope");
    assert_eq!(hits.len(), 10);
    assert!(hits.iter().all(|h| large.contains(&h.0)), "{hits:?}");
    assert!(hits.windows(2).all(|w| w[0].1 <= w[1].1), "nearest first");
}
