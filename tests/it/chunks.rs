//! `export-chunks`: the project's chunk stream as NDJSON (`docs/design/scale.md`), the same
//! chunks the index holds, each one addressable here by `path` + `anchor`.

use serde_json::Value;

use crate::support::Project;

#[test]
fn export_chunks_writes_the_index_chunks_as_ndjson_that_point_back_into_the_project() {
    let p = Project::empty();
    let guide = "---\ntitle: 設定の手引き\ntags: [api, 設計]\ndraft:\n---\n\n# 設定\n\n接続先を書く。\n\n## 詳細 (MCP)\n\n詳しい説明。\n";
    p.write("docs/guide.md", guide);
    p.write("notes/memo.md", "# メモ\n\n短いメモ。\n");
    p.write("notes/bad.md", "");
    std::fs::write(p.root().join("notes/latin1.md"), b"# caf\xe9\n").unwrap();
    let out = p.run(&["export-chunks"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("not exported: notes/latin1.md"), "the skipped file is named: {stderr}");
    let lines: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect();
    // The same chunks as the index.
    p.ok(&["reindex"]);
    let status: Value = serde_json::from_str(&p.ok(&["status", "--json"])).unwrap();
    assert_eq!(lines.len() as u64, status["project"]["chunks"].as_u64().unwrap(), "{status}");
    let paths: Vec<&str> = lines.iter().map(|l| l["path"].as_str().unwrap()).collect();
    assert!(paths.windows(2).all(|w| w[0] <= w[1]), "files in path order: {paths:?}");
    let detail = lines.iter().find(|l| l["text"].as_str().unwrap().contains("詳しい説明")).unwrap();
    assert_eq!(detail["path"], "docs/guide.md");
    assert!(detail["heading_path"].as_str().unwrap().contains("詳細 (MCP)"), "{detail}");
    assert_eq!(detail["source_hash"], lvs::text::sha256_hex(guide.as_bytes()));
    let text = detail["text"].as_str().unwrap();
    assert_eq!(detail["chunk_hash"], lvs::text::xxh64_hex(text.as_bytes()));
    let (start, end) = (detail["start_line"].as_u64().unwrap(), detail["end_line"].as_u64().unwrap());
    assert!(start >= 1 && start <= end && end <= guide.lines().count() as u64, "{detail}");
    assert_eq!(detail["front_matter"]["tags"], serde_json::json!(["api", "設計"]));
    assert_eq!(detail["front_matter"]["title"], "設定の手引き");
    assert_eq!(detail["front_matter"]["draft"], Value::Null);
    // The anchor names the chunk's first element: `read` finds it in the project.
    let anchor = detail["anchor"].as_str().unwrap();
    let read: Value = serde_json::from_str(&p.ok(&["read", "docs/guide.md", anchor, "--json"])).unwrap();
    assert!(read.to_string().contains("詳細 (MCP)") || read.to_string().contains("詳しい説明"), "{read}");
    let memo = lines.iter().find(|l| l["path"] == "notes/memo.md").unwrap();
    assert_eq!(memo["front_matter"], serde_json::json!({}));
}
