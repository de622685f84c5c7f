//! Unit tests of the semantic side: RRF against the contract vectors, the embedding client
//! against a fake server, response validation and the usearch index.

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
fn rrf_matches_the_contract_vectors() {
    let v = crate::testdata::vectors("search.json");
    for case in v["rrf"].as_array().expect("rrf cases") {
        let lists: Vec<Vec<u64>> = case["lists"]
            .as_array()
            .expect("lists")
            .iter()
            .map(|l| l.as_array().expect("list").iter().map(|x| x.as_u64().expect("id")).collect())
            .collect();
        let refs: Vec<&[u64]> = lists.iter().map(Vec::as_slice).collect();
        let k = case["k"].as_u64().expect("k") as usize;
        let top = case["topK"].as_u64().expect("topK") as usize;
        let fused = fuse(&refs, k, top);
        assert_eq!(fused.len() as u64, case["expectCount"].as_u64().expect("count"));
        assert_eq!(fused[0].0, case["expectFirst"].as_u64().expect("first"));
        let order: Vec<u64> = fused.iter().map(|f| f.0).collect();
        let expect: Vec<u64> =
            case["expectOrder"].as_array().expect("order").iter().map(|x| x.as_u64().expect("id")).collect();
        assert_eq!(order, expect);
        for (id, score) in &fused {
            let want = case["scores"][id.to_string()].as_f64().expect("score");
            assert!((score - want).abs() < 1e-12, "{id}: {score} vs {want}");
        }
    }
}

#[test]
fn rrf_ties_go_to_the_lower_id_and_top_k_cuts() {
    // 5 and 7 each rank first in one list: same score, lower id first.
    let fused = fuse(&[&[7, 1], &[5, 2]], 60, 3);
    assert_eq!(fused.iter().map(|f| f.0).collect::<Vec<_>>(), vec![5, 7, 1]);
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
