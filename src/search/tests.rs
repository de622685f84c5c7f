//! Unit tests of the ranking pipeline over in-memory candidate lists: request checks, the
//! vector side's outcome and floor, fusion (RRF against the contract vectors), the lexical
//! tiers, the refetch of missing hits, explain and staleness. No index, no files.

use std::collections::HashMap;

use super::*;
use crate::error::ErrorCode;

fn request(query: &str) -> SearchRequest {
    SearchRequest { query: query.to_owned(), ..SearchRequest::default() }
}

fn config() -> SearchConfig {
    SearchConfig::default()
}

/// A lexical hit of chunk `id` in `path`, indexed at `hash`.
fn hit(id: u64, path: &str, hash: &str) -> LexicalHit {
    LexicalHit {
        chunk_id: id,
        path: path.to_owned(),
        heading_path: format!("見出し {id}"),
        anchor: format!("1.p{id}~a~b"),
        source_hash: hash.to_owned(),
        score: 1.0,
        snippet: format!("[所有権] {id}"),
    }
}

fn ids(ranked: &[(u64, f64)]) -> Vec<u64> {
    ranked.iter().map(|r| r.0).collect()
}

#[test]
fn plan_checks_each_field_with_one_sentence() {
    let c = config();
    let e = plan(&request("   "), &c).expect_err("empty");
    assert_eq!((e.code, e.message.as_str()), (ErrorCode::InvalidArgument, "query must not be empty."));
    let e = plan(&SearchRequest { top_k: Some(0), ..request("所有権") }, &c).expect_err("topK 0");
    assert_eq!(e.message, "topK must be greater than zero.");
    let p = plan(&SearchRequest { top_k: Some(500), ..request("  所有権 ") }, &c).expect("plan");
    assert_eq!((p.query.as_str(), p.top_k, p.mode), ("所有権", MAX_TOP_K as usize, SearchMode::Hybrid));
    assert!(p.scope.is_none() && !p.explain);
    let p = plan(&request("x"), &SearchConfig { max_results: 0, ..config() }).expect("plan");
    assert_eq!(p.top_k, 1, "a configured maxResults of 0 still answers one hit");
    let p =
        plan(&SearchRequest { include_globs: Some(vec!["ja/**".into()]), ..request("x") }, &c).expect("plan");
    assert!(p.scope.as_ref().is_some_and(|g| g.matches("ja/a.md") && !g.matches("en/a.md")));
}

#[test]
fn vector_step_follows_the_mode_and_the_provider() {
    let c = SearchConfig { semantic_candidate_pool_size: 20, ..config() };
    let mode = |m: SearchMode, k: usize| Plan {
        query: "q".into(),
        top_k: k,
        mode: m,
        scope: None,
        explain: false,
        max_per_file: None,
        detail: HitDetail::Full,
        filters: None,
        config: c.clone(),
    };
    let (on, off) = (true, false);
    assert_eq!(vector_step(&mode(SearchMode::Lexical, 5), on).expect("lexical"), VectorStep::Skip);
    assert_eq!(vector_step(&mode(SearchMode::Hybrid, 5), on).expect("hybrid"), VectorStep::Ask { pool: 20 });
    assert_eq!(vector_step(&mode(SearchMode::Semantic, 40), on).expect("pool"), VectorStep::Ask { pool: 40 });
    assert!(
        matches!(vector_step(&mode(SearchMode::Hybrid, 5), off), Ok(VectorStep::Warn(w)) if w.contains("lexical search only"))
    );
    let e = vector_step(&mode(SearchMode::Semantic, 5), off).expect_err("semantic without embeddings");
    assert_eq!(e.code, ErrorCode::IndexNotReady);
    assert!(e.message.contains("embedding.provider: none"), "{}", e.message);
}

#[test]
fn vector_answer_applies_the_floor_and_turns_failures_into_errors_or_warnings() {
    // Similarities 0.90, 0.88, 0.80: the default relative floor (0.04) keeps the first two.
    let found = vec![(1, 0.10), (2, 0.12), (3, 0.20)];
    let mut warnings = Vec::new();
    let kept = vector_answer(SearchMode::Hybrid, Ok(found), &config(), &Pending::default(), &mut warnings);
    assert_eq!(kept.expect("ok"), Some(vec![(1, 0.10), (2, 0.12)]));
    assert!(warnings.is_empty());
    // Pending chunks: the answer stands, with a warning naming the count and the last error.
    let pending = Pending { chunks: 3, last_error: Some("connection refused".into()) };
    let kept = vector_answer(SearchMode::Semantic, Ok(vec![]), &config(), &pending, &mut warnings);
    assert_eq!(kept.expect("ok"), Some(vec![]));
    assert_eq!(warnings.len(), 1);
    assert!(
        warnings[0].starts_with("3 chunk(s) have no vector yet (last embedding error: connection refused)")
    );
    // A failure: semantic mode fails, hybrid falls back to lexical with a warning.
    let down = || Err(Error::index_not_ready("the endpoint is down."));
    let e = vector_answer(SearchMode::Semantic, down(), &config(), &Pending::default(), &mut warnings)
        .expect_err("semantic");
    assert_eq!(
        e.message,
        "Semantic search is unavailable: the endpoint is down. Use mode lexical or hybrid meanwhile."
    );
    let mut warnings = Vec::new();
    let none = vector_answer(SearchMode::Hybrid, down(), &config(), &Pending::default(), &mut warnings);
    assert_eq!(none.expect("fallback"), None);
    assert_eq!(
        warnings,
        ["Semantic search is unavailable: the endpoint is down. Falling back to lexical search."]
    );
    assert_eq!(effective_mode(SearchMode::Hybrid, false), SearchMode::Lexical);
    assert_eq!(effective_mode(SearchMode::Hybrid, true), SearchMode::Hybrid);
    assert_eq!(effective_mode(SearchMode::Semantic, false), SearchMode::Semantic);
}

#[test]
fn lexical_mode_keeps_the_tiers_and_needs_no_refetch() {
    let p = Plan {
        query: "q".into(),
        top_k: 2,
        mode: SearchMode::Lexical,
        scope: None,
        explain: false,
        max_per_file: None,
        detail: HitDetail::Full,
        filters: None,
        config: config(),
    };
    assert_eq!(lexical_step(SearchMode::Lexical, &p), LexicalStep::Tiered { top_k: 2 });
    assert_eq!(lexical_step(SearchMode::Hybrid, &p), LexicalStep::Rank { pool: 50 });
    assert_eq!(lexical_step(SearchMode::Semantic, &p), LexicalStep::Skip);
    let mut c = Candidates::new(None);
    // The index answers the all-words tier (7) before the partial match (3).
    c.set_lexical_hits(vec![hit(7, "a.md", "h"), hit(3, "b.md", "h"), hit(9, "b.md", "h")], 1);
    let ranked = c.rank(SearchMode::Lexical, fusion(&config()), 2);
    assert_eq!(ranked, vec![(7, 1.0), (3, 0.5)], "1/rank, cut at topK");
    assert!(c.missing(&ranked).is_empty());
}

#[test]
fn hybrid_fuses_then_refetches_only_the_ranked_hits() {
    let mut c = Candidates::new(Some(vec![(99, 0.1), (12, 0.2)]));
    c.set_lexical_ranks(vec![10, 11, 12], 0);
    let ranked = c.rank(SearchMode::Hybrid, Fusion { rrf_k: 60, lexical_weight: 1.0 }, 3);
    // 12 is in both lists; no chunk matches every word, so the vector-only 99 joins.
    assert_eq!(ids(&ranked), vec![12, 10, 99]);
    assert_eq!(c.missing(&ranked), vec![12, 10, 99], "hybrid reads ranks only: every hit is fetched");
    // The refetch finds 12 and 10; 99 is a vector key the lexical index no longer holds.
    c.add_hits([hit(12, "a.md", "h1"), hit(10, "a.md", "h1")]);
    assert_eq!(c.missing(&ranked), vec![99]);
    let hits = c.assemble(&ranked, SearchMode::Hybrid, true, HitDetail::Full, 60, |_| Some("h1".into()));
    assert_eq!(hits.iter().map(|h| h.pointer.as_str()).collect::<Vec<_>>(), ["1.p12~a~b", "1.p10~a~b"]);
    let first = &hits[0];
    assert_eq!(
        (first.search_mode.as_deref(), first.full_pointer.as_deref()),
        (Some("hybrid"), Some("a.md::1.p12~a~b"))
    );
    let explain = first.explain.as_ref().expect("explain");
    assert_eq!((explain.lexical_rank, explain.lexical_all_terms), (Some(3), Some(false)));
    assert_eq!((explain.vector_rank, explain.vector_distance, explain.rrf_k), (Some(2), Some(0.2), Some(60)));
    assert!((explain.fused_score - (1.0 / 63.0 + 1.0 / 62.0)).abs() < 1e-12);
    assert_eq!(first.read_hint.as_ref().map(|r| r.pointer.as_str()), Some(first.pointer.as_str()));
}

#[test]
fn semantic_ranks_the_vector_list_alone() {
    let mut c = Candidates::new(Some(vec![(5, 0.1), (6, 0.3)]));
    let ranked = c.rank(SearchMode::Semantic, fusion(&config()), 10);
    assert_eq!(ranked, vec![(5, 1.0), (6, 0.5)]);
    c.add_hits([hit(5, "a.md", "h"), hit(6, "a.md", "h")]);
    let hits = c.assemble(&ranked, SearchMode::Semantic, false, HitDetail::Full, 60, |_| Some("h".into()));
    assert_eq!(hits.len(), 2);
    assert!(hits.iter().all(|h| h.explain.is_none() && h.search_mode.as_deref() == Some("semantic")));
}

#[test]
fn a_hit_is_stale_when_its_file_changed_or_went_away_and_each_file_is_hashed_once() {
    let mut c = Candidates::new(None);
    c.set_lexical_hits(
        vec![
            hit(1, "same.md", "h1"),
            hit(2, "edited.md", "old"),
            hit(3, "gone.md", "h3"),
            hit(4, "same.md", "h1"),
        ],
        4,
    );
    let now: HashMap<&str, &str> = HashMap::from([("same.md", "h1"), ("edited.md", "new")]);
    let mut asked: Vec<String> = Vec::new();
    let ranked = c.rank(SearchMode::Lexical, fusion(&config()), 10);
    let hits = c.assemble(&ranked, SearchMode::Lexical, false, HitDetail::Full, 60, |p| {
        asked.push(p.to_owned());
        now.get(p).map(|h| (*h).to_owned())
    });
    let stale: Vec<(&str, Option<bool>)> = hits.iter().map(|h| (h.path.as_str(), h.stale)).collect();
    assert_eq!(
        stale,
        [
            ("same.md", Some(false)),
            ("edited.md", Some(true)),
            ("gone.md", Some(true)),
            ("same.md", Some(false))
        ]
    );
    assert_eq!(
        hits[1].indexed_source_hash.as_deref(),
        Some("old"),
        "the hit says which revision it came from"
    );
    assert_eq!(asked, ["same.md", "edited.md", "gone.md"]);
}

/// The default hit shape carries what an agent needs to read or edit the hit (path, pointer,
/// heading path, snippet), `stale` only when true, and names the mode once per answer; nothing
/// that repeats another field (`fullPointer`, `readHint`) or says nothing in the common case.
#[test]
fn a_compact_hit_carries_no_bookkeeping_and_full_restores_the_original_shape() {
    let mut c = Candidates::new(None);
    c.set_lexical_hits(vec![hit(1, "same.md", "h1"), hit(2, "edited.md", "old")], 2);
    let now: HashMap<&str, &str> = HashMap::from([("same.md", "h1"), ("edited.md", "new")]);
    let ranked = c.rank(SearchMode::Lexical, fusion(&config()), 10);
    let hits = c.assemble(&ranked, SearchMode::Lexical, false, HitDetail::Compact, 60, |p| {
        now.get(p).map(|h| (*h).to_owned())
    });
    let answer = serde_json::to_value(response(hits, &[], SearchMode::Lexical, HitDetail::Compact)).unwrap();
    assert_eq!(answer["mode"], "lexical", "{answer}");
    let keys = |i: usize| {
        let mut k: Vec<&str> = answer["results"][i].as_object().unwrap().keys().map(String::as_str).collect();
        k.sort_unstable();
        k
    };
    assert_eq!(keys(0), ["headingPath", "path", "pointer", "snippet"], "{answer}");
    assert_eq!(keys(1), ["headingPath", "path", "pointer", "snippet", "stale"], "{answer}");
    assert_eq!(answer["results"][1]["stale"], true);
    // Full: every field of the original, and no answer-level mode.
    let mut c = Candidates::new(None);
    c.set_lexical_hits(vec![hit(1, "same.md", "h1")], 1);
    let ranked = c.rank(SearchMode::Lexical, fusion(&config()), 10);
    let hits = c.assemble(&ranked, SearchMode::Lexical, false, HitDetail::Full, 60, |_| Some("h1".into()));
    let full = serde_json::to_value(response(hits, &[], SearchMode::Lexical, HitDetail::Full)).unwrap();
    assert!(full.get("mode").is_none(), "{full}");
    let hit = full["results"][0].as_object().unwrap();
    for key in [
        "path",
        "pointer",
        "fullPointer",
        "score",
        "searchMode",
        "headingPath",
        "snippet",
        "readHint",
        "indexedSourceHash",
        "stale",
    ] {
        assert!(hit.contains_key(key), "{key} missing from {full}");
    }
    assert_eq!(hit["stale"], false);
}

#[test]
fn the_response_joins_warnings_into_one() {
    assert_eq!(response(vec![], &[], SearchMode::Lexical, HitDetail::Compact).warning, None);
    let r = response(vec![], &["A.".to_owned(), "B.".to_owned()], SearchMode::Lexical, HitDetail::Compact);
    assert_eq!(r.warning.as_deref(), Some("A. B."));
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
fn weighted_rrf_adds_weight_over_k_plus_rank() {
    let fused = fuse_weighted(&[(&[1, 2], 2.0), (&[3, 1], 1.0)], 60, 10);
    let score = |id: u64| fused.iter().find(|f| f.0 == id).expect("fused").1;
    assert!((score(1) - (2.0 / 61.0 + 1.0 / 62.0)).abs() < 1e-12);
    assert!((score(2) - 2.0 / 62.0).abs() < 1e-12);
    assert!((score(3) - 1.0 / 61.0).abs() < 1e-12);
    assert_eq!(fused.iter().map(|f| f.0).collect::<Vec<_>>(), vec![1, 2, 3]);
    // Weight 1 everywhere is plain RRF.
    assert_eq!(fuse_weighted(&[(&[7, 1], 1.0), (&[5, 2], 1.0)], 60, 3), fuse(&[&[7, 1], &[5, 2]], 60, 3));
}

#[test]
fn similarity_floor_keeps_the_prefix_close_to_the_best_hit() {
    // (id, cosine distance): similarities 0.90, 0.88, 0.86, 0.80.
    let c = [(1, 0.10), (2, 0.12), (3, 0.14), (4, 0.20)];
    assert_eq!(similarity_floor(&c, 0.0, None), 4, "0 disables the relative floor");
    assert_eq!(similarity_floor(&c, 0.05, None), 3, "0.86 is within 0.05 of 0.90, 0.80 is not");
    assert_eq!(similarity_floor(&c, 0.02, None), 2);
    assert_eq!(similarity_floor(&c, 0.0, Some(0.87)), 2, "absolute floor");
    assert_eq!(similarity_floor(&c, 0.05, Some(0.89)), 1, "the stricter of both");
    assert_eq!(similarity_floor(&c, 0.0, Some(0.95)), 0, "even the best can fail an absolute floor");
    assert_eq!(similarity_floor(&[], 0.05, Some(0.5)), 0);
}

#[test]
fn hybrid_fusion_keeps_the_lexical_order_when_every_word_was_found_and_adds_vectors_otherwise() {
    let f = Fusion { rrf_k: 60, lexical_weight: 1.0 };
    // Lexical: 10, 11 and 12 match every word (all_terms = 3). Vectors: 99 (found by the
    // vectors alone) is nearest, then 12, then 11. Neither 99 nor the vectors' order counts.
    let fused = fuse_hybrid(&[10, 11, 12], 3, &[99, 12, 11], f, 10);
    assert_eq!(fused.iter().map(|f| f.0).collect::<Vec<_>>(), vec![10, 11, 12]);
    // Each hit scores its lexical share: 1/61, 1/62, 1/63 (decreasing with the order shown).
    assert!((fused[0].1 - 1.0 / 61.0).abs() < 1e-12 && (fused[2].1 - 1.0 / 63.0).abs() < 1e-12);
    // Partial matches after the all-words hits keep their lexical places too, even when the
    // vectors like one better.
    let fused = fuse_hybrid(&[10, 11, 12], 2, &[12, 99], f, 10);
    assert_eq!(fused.iter().map(|f| f.0).collect::<Vec<_>>(), vec![10, 11, 12]);
    // No chunk matches every word: weighted RRF, and the vectors add recall and reorder:
    // 11 = 1/62 + 1/62 leads 10 = 1/61, which ties 99 = 1/61 (lower id first), then 12.
    let fused = fuse_hybrid(&[10, 11, 12], 0, &[99, 11], f, 10);
    assert_eq!(fused.iter().map(|f| f.0).collect::<Vec<_>>(), vec![11, 10, 99, 12]);
    // Lexical weight 2: the last of 50 lexical candidates (2/110) still beats the nearest
    // vector-only chunk (1/61).
    let lexical: Vec<u64> = (1..=50).collect();
    let f2 = Fusion { rrf_k: 60, lexical_weight: 2.0 };
    let fused = fuse_hybrid(&lexical, 0, &[99], f2, 51);
    assert_eq!(fused.last().map(|f| f.0), Some(99));
    // top_k cuts both ways.
    assert_eq!(fuse_hybrid(&[10, 11, 12], 2, &[99, 98, 97], f, 2).len(), 2);
    assert_eq!(fuse_hybrid(&[10, 11, 12], 0, &[99, 98, 97], f, 2).len(), 2);
}

#[test]
fn the_default_fusion_keeps_the_lexical_order_and_appends_what_only_the_vectors_found() {
    // `search.lexicalWeight` 1000 (chosen on the tuning halves with e5-small, issue #46): even
    // for a question no chunk has every word of, 50 lexical candidates keep their order whatever
    // the vectors say, and the vector-only chunks follow in the vectors' order.
    let f = Fusion { rrf_k: 60, lexical_weight: crate::config::DEFAULT_LEXICAL_WEIGHT };
    let lexical: Vec<u64> = (1..=50).collect();
    let vectors: Vec<u64> = vec![50, 98, 49, 97, 1];
    let fused = fuse_hybrid(&lexical, 0, &vectors, f, 60);
    let mut want = lexical.clone();
    want.extend([98, 97]);
    assert_eq!(fused.iter().map(|f| f.0).collect::<Vec<_>>(), want);
    // A short lexical list is where the vectors show: the rest of the top 10 is theirs.
    let fused = fuse_hybrid(&[5, 6], 0, &[7, 6, 8], f, 10);
    assert_eq!(fused.iter().map(|f| f.0).collect::<Vec<_>>(), vec![5, 6, 7, 8]);
}

#[test]
fn hybrid_skips_the_vectors_only_when_they_cannot_change_the_answer() {
    let hybrid = |req: SearchRequest, config: &SearchConfig| {
        plan(&SearchRequest { mode: Some(SearchMode::Hybrid), ..req }, config).expect("plan")
    };
    let c = config();
    let p = hybrid(request("京都"), &c);
    assert!(vectors_cannot_change(&p, 3, 1), "a chunk has every word: the lexical order stands");
    assert!(vectors_cannot_change(&p, 50, 0), "ten lexical candidates of weight 1000 fill the answer");
    assert!(!vectors_cannot_change(&p, 9, 0), "nine lexical candidates leave room for a vector-only chunk");
    let explained = hybrid(SearchRequest { explain: Some(true), ..request("京都") }, &c);
    assert!(!vectors_cannot_change(&explained, 50, 1), "explain shows the vector ranks");
    let limited = hybrid(SearchRequest { max_per_file: Some(1), ..request("京都") }, &c);
    assert!(!vectors_cannot_change(&limited, 50, 0), "a per-file limit may reach past the lexical list");
    assert!(vectors_cannot_change(&limited, 50, 2));
    // The bound: w (k + 1) > (k + topK)(k + topK + 1): for k 60 and topK 10, 70 · 71 / 61 =
    // 81.5, so 82 passes and 81 does not; the default passes for every topK up to 50.
    let weighing = |w: f64| SearchConfig { lexical_weight: w, ..config() };
    assert!(vectors_cannot_change(&hybrid(request("京都"), &weighing(82.0)), 50, 0));
    assert!(!vectors_cannot_change(&hybrid(request("京都"), &weighing(81.0)), 50, 0));
    let most = hybrid(SearchRequest { top_k: Some(MAX_TOP_K), ..request("京都") }, &c);
    assert!(vectors_cannot_change(&most, 50, 0));
    let low = SearchConfig { lexical_weight: 1.5, ..config() };
    assert!(!vectors_cannot_change(&hybrid(request("京都"), &low), 50, 0));
    assert!(vectors_cannot_change(&hybrid(request("京都"), &low), 50, 1));
    let lexical =
        plan(&SearchRequest { mode: Some(SearchMode::Lexical), ..request("京都") }, &c).expect("plan");
    assert!(!vectors_cannot_change(&lexical, 50, 1), "only hybrid asks");
}

#[test]
fn max_per_file_comes_from_the_request_or_the_config() {
    let mut c = config();
    assert_eq!(plan(&request("x"), &c).expect("plan").max_per_file, None, "no limit by default");
    c.max_per_file = Some(3);
    assert_eq!(plan(&request("x"), &c).expect("plan").max_per_file, Some(3));
    c.max_per_file = Some(2);
    assert_eq!(plan(&request("x"), &c).expect("plan").max_per_file, Some(2));
    let one = SearchRequest { max_per_file: Some(1), ..request("x") };
    assert_eq!(plan(&one, &c).expect("plan").max_per_file, Some(1), "the request wins");
    let off = SearchRequest { max_per_file: Some(0), ..request("x") };
    assert_eq!(plan(&off, &c).expect("plan").max_per_file, None, "0 lifts the limit");
    let e = plan(&SearchRequest { max_per_file: Some(-1), ..request("x") }, &c).expect_err("negative");
    assert_eq!(e.code, ErrorCode::InvalidArgument);
    assert!(e.message.contains("maxPerFile"), "{}", e.message);
}

#[test]
fn a_per_file_limit_reads_past_the_first_top_k_and_skips_gone_chunks() {
    // Ranked: four chunks of a.md, then b.md, then a chunk that is gone, then c.md.
    let ranked = by_rank([1, 2, 3, 4, 5, 6, 7].into_iter(), usize::MAX);
    let mut c = Candidates::new(None);
    c.add_hits([hit(1, "a.md", "h"), hit(2, "a.md", "h")]);
    // Chunks 3.. are not read yet: select asks for them (at most top_k, in rank order).
    assert_eq!(c.select(&ranked, 1, 3), Err(vec![3, 4, 5]));
    c.add_fetched(
        &[3, 4, 5],
        vec![Some(hit(3, "a.md", "h")), Some(hit(4, "a.md", "h")), Some(hit(5, "b.md", "h"))],
    );
    assert_eq!(c.select(&ranked, 1, 3), Err(vec![6, 7]));
    c.add_fetched(&[6, 7], vec![None, Some(hit(7, "c.md", "h"))]);
    assert_eq!(ids(&c.select(&ranked, 1, 3).expect("all read")), vec![1, 5, 7]);
    assert_eq!(ids(&c.select(&ranked, 2, 3).expect("all read")), vec![1, 2, 5]);
    // Fewer files than top_k: what the limit allows, no more.
    assert_eq!(ids(&c.select(&ranked, 1, 10).expect("all read")), vec![1, 5, 7]);
}

#[test]
fn a_per_file_limit_reads_only_the_hits_it_keeps_when_the_ranking_knew_their_files() {
    // Five chunks of a.md first, then b.md and c.md: with the files known, the first read
    // asks for one chunk of each file and none of a.md's other four.
    let ranked = by_rank([1, 2, 3, 4, 5, 6, 7].into_iter(), usize::MAX);
    let mut c = Candidates::new(None);
    let files = ["a.md", "a.md", "a.md", "a.md", "a.md", "b.md", "c.md"];
    c.set_paths(&[1, 2, 3, 4, 5, 6, 7], files.iter().map(|f| Some((*f).to_owned())).collect());
    assert_eq!(c.select(&ranked, 1, 3), Err(vec![1, 6, 7]));
    c.add_fetched(&[1, 6, 7], vec![Some(hit(1, "a.md", "h")), Some(hit(6, "b.md", "h")), None]);
    // 7 is gone: nothing else is left to read, and a.md keeps its limit.
    assert_eq!(ids(&c.select(&ranked, 1, 3).expect("all read")), vec![1, 6]);
    assert_eq!(c.select(&ranked, 2, 3), Err(vec![2]), "a limit of 2 reads a.md's second chunk");
}

#[test]
fn the_configured_ranking_weights_default_to_the_lexical_defaults() {
    assert_eq!(rank_weights(&config()), RankWeights::default());
}

#[test]
fn later_hits_get_a_short_snippet_cut_around_their_first_match() {
    let long = "...前置きの文がここにある。設定ファイルの[保存先]は、利用者のホームフォルダの下にある隠しフォルダで、名前は設定の種類ごとに決まっており、既定では config.yaml という名前になる。...";
    let s = shorten(long, SHORT_SNIPPET_BYTES);
    assert!(s.len() <= SHORT_SNIPPET_BYTES + 12, "{} bytes: {s}", s.len());
    assert!(s.starts_with("...") && s.ends_with("...") && s.contains("[保存先]"), "{s}");
    // Never inside a mark; short snippets unchanged.
    let marked = format!("{}[とても長い強調された語句]の後", "あ".repeat(60));
    let s = shorten(&marked, 40);
    assert_eq!(s.matches('[').count(), s.matches(']').count(), "{s}");
    assert_eq!(shorten("短い[文]。", 120), "短い[文]。");
    // The first LONG_SNIPPETS hits keep their whole window; later ones are cut.
    let mut c = Candidates::new(None);
    let mut hits = Vec::new();
    for i in 0..5 {
        let mut h = hit(i, "a.md", "h");
        h.snippet = long.to_owned();
        hits.push(h);
    }
    c.set_lexical_hits(hits, 5);
    let ranked = c.rank(SearchMode::Lexical, fusion(&config()), 10);
    let out = c.assemble(&ranked, SearchMode::Lexical, false, HitDetail::Compact, 60, |_| Some("h".into()));
    let lens: Vec<bool> = out.iter().map(|h| h.snippet == long).collect();
    assert_eq!(lens, [true, true, true, false, false]);
}
