//! Index format versions (issue #18): an index written by the previous format is rebuilt by the
//! next `reindex` with one sentence saying so; one written by a newer format is refused in one
//! sentence and left as it is until `reindex --force`. Neither is read as if it were ours.

use redb::{Database, ReadableDatabase, TableDefinition};

use crate::support::Project;

const MANIFEST: TableDefinition<'_, &str, &str> = TableDefinition::new("manifest");
const META: TableDefinition<'_, &str, u64> = TableDefinition::new("meta");

fn store_path(project: &Project) -> std::path::PathBuf {
    project.root().join(".local-vector-search-mcp/meta.redb")
}

fn generation(project: &Project) -> u64 {
    let status =
        std::fs::read_to_string(project.root().join(".local-vector-search-mcp/status.json")).unwrap();
    serde_json::from_str::<serde_json::Value>(&status).unwrap()["generation"].as_u64().unwrap()
}

fn stored_schema_version(project: &Project) -> String {
    let db = Database::create(store_path(project)).unwrap();
    let txn = db.begin_read().unwrap();
    let t = txn.open_table(MANIFEST).unwrap();
    t.get("schema_version").unwrap().unwrap().value().to_owned()
}

/// Replaces the store with one in the layout format 1 (`lvs-1`) wrote: JSON document, chunk and
/// element records, hashes as hex strings, at the lexical index's generation.
pub(crate) fn write_format_1_store(project: &Project) {
    let generation = generation(project);
    let path = store_path(project);
    std::fs::remove_file(&path).unwrap();
    let db = Database::create(&path).unwrap();
    let txn = db.begin_write().unwrap();
    {
        let mut m = txn.open_table(MANIFEST).unwrap();
        for (k, v) in [
            ("schema_version", "lvs-1"),
            ("record_version", "1"),
            ("chunker_version", "6"),
            ("analyzer_version", "1"),
            ("chunking_max_chunk_bytes", "4096"),
            ("chunking_max_elements", "20"),
            ("chunking_include_front_matter", "false"),
        ] {
            m.insert(k, v).unwrap();
        }
        let mut meta = txn.open_table(META).unwrap();
        meta.insert("generation", generation).unwrap();
        meta.insert("next_chunk_id", 3).unwrap();
        let docs: TableDefinition<'_, &str, &[u8]> = TableDefinition::new("documents");
        let doc = br#"{"v":1,"source_hash":"00","len":1,"mtime_ns":1,"indexed_at":"t","chunk_ids":[1,2]}"#;
        txn.open_table(docs).unwrap().insert("docs/a.md", doc.as_slice()).unwrap();
        let chunks: TableDefinition<'_, u64, &[u8]> = TableDefinition::new("chunks");
        let chunk = br#"{"v":1,"path":"docs/a.md","anchor":"p1~0~0","text":"x","heading_path":null,"embedding_text_hash":"h","start_line":1,"end_line":1}"#;
        txn.open_table(chunks).unwrap().insert(1, chunk.as_slice()).unwrap();
        let elements: TableDefinition<'_, &str, &[u8]> = TableDefinition::new("elements");
        txn.open_table(elements).unwrap().insert("docs/a.md", b"[]".as_slice()).unwrap();
        let vectors: TableDefinition<'_, u64, &str> = TableDefinition::new("vectors");
        txn.open_table(vectors).unwrap().insert(1, "h").unwrap();
    }
    txn.commit().unwrap();
}

#[test]
fn an_index_of_the_previous_format_is_rebuilt_by_the_next_reindex_with_one_sentence() {
    let project = Project::from_fixture("ja");
    project.ok(&["reindex"]);
    let before = project.search_paths("京都");
    assert!(!before.is_empty());
    let files = crate::support::markdown_files(project.root()).len();
    write_format_1_store(&project);

    let out = project.run(&["reindex"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "reindex failed: {stderr}");
    let said: Vec<&str> = stderr.lines().filter(|l| l.contains("format lvs-1")).collect();
    assert_eq!(said.len(), 1, "not said once: {stderr}");
    assert!(said[0].contains("older version") && said[0].contains("rebuilt from the Markdown"), "{stderr}");
    let summary = String::from_utf8_lossy(&out.stdout);
    assert!(summary.starts_with(&format!("indexed {files} file(s)")), "not rebuilt: {summary}");
    assert_ne!(stored_schema_version(&project), "lvs-1");
    assert_eq!(project.search_paths("京都"), before);
    // Rebuilt once: the next reindex has nothing to do and says nothing about formats.
    let out = project.run(&["reindex"]);
    assert!(!String::from_utf8_lossy(&out.stderr).contains("format"));
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("indexed 0 file(s)"));
}

#[test]
fn an_index_made_by_an_older_analyzer_is_rebuilt_by_the_next_reindex_with_one_sentence() {
    // The user upgraded the binary and changed nothing else: no `--force` is needed.
    let project = Project::from_fixture("ja");
    project.write("docs/snippets.md", "# スニペット\n\nコード スニペットを挿入します。\n");
    project.ok(&["reindex"]);
    let files = crate::support::markdown_files(project.root()).len();
    {
        let db = Database::create(store_path(&project)).unwrap();
        let txn = db.begin_write().unwrap();
        txn.open_table(MANIFEST).unwrap().insert("analyzer_version", "1").unwrap();
        txn.commit().unwrap();
    }
    let out = project.run(&["reindex"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "reindex failed: {stderr}");
    let said: Vec<&str> = stderr.lines().filter(|l| l.contains("with analyzer 1")).collect();
    assert_eq!(said.len(), 1, "not said once: {stderr}");
    assert!(said[0].contains("older version") && said[0].contains("rebuilt from the Markdown"), "{stderr}");
    assert!(String::from_utf8_lossy(&out.stdout).starts_with(&format!("indexed {files} file(s)")));
    assert_eq!(project.search_paths("コードスニペット"), ["docs/snippets.md"]);
    let out = project.run(&["reindex"]);
    assert!(!String::from_utf8_lossy(&out.stderr).contains("analyzer"));
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("indexed 0 file(s)"));
}

#[test]
fn an_index_of_a_newer_format_is_refused_in_one_sentence_until_forced() {
    let project = Project::from_fixture("ja");
    project.ok(&["reindex"]);
    let before = project.search_paths("京都");
    let path = store_path(&project);
    std::fs::remove_file(&path).unwrap();
    {
        // A future layout: a manifest of a higher version and tables of other types.
        let db = Database::create(&path).unwrap();
        let txn = db.begin_write().unwrap();
        {
            let mut m = txn.open_table(MANIFEST).unwrap();
            m.insert("schema_version", "lvs-99").unwrap();
            m.insert("record_version", "99").unwrap();
            let docs: TableDefinition<'_, u64, u64> = TableDefinition::new("documents");
            txn.open_table(docs).unwrap().insert(1, 2).unwrap();
        }
        txn.commit().unwrap();
    }
    for _ in 0..2 {
        let out = project.run(&["reindex"]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "a newer index was overwritten: {stderr}");
        assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
        assert!(stderr.contains("written in format lvs-99 by a newer version"), "{stderr}");
        assert!(stderr.contains("reindex --force"), "{stderr}");
        assert_eq!(stored_schema_version(&project), "lvs-99", "the newer index was touched");
    }
    let summary = project.ok(&["reindex", "--force"]);
    let files = crate::support::markdown_files(project.root()).len();
    assert!(summary.starts_with(&format!("indexed {files} file(s)")), "{summary}");
    assert_ne!(stored_schema_version(&project), "lvs-99");
    assert_eq!(project.search_paths("京都"), before);
}

/// Turns the project's index into what format `lvs-3` left: the link graph twice, as a redb
/// `links` table and as `links.json`, and no `links.bin`.
fn make_format_3_index(project: &Project) {
    let dir = project.root().join(".local-vector-search-mcp");
    std::fs::remove_file(dir.join("links.bin")).unwrap();
    std::fs::write(dir.join("links.json"), br#"{"version":"1","generation":1,"docs":{}}"#).unwrap();
    let db = Database::create(store_path(project)).unwrap();
    let txn = db.begin_write().unwrap();
    {
        txn.open_table(MANIFEST).unwrap().insert("schema_version", "lvs-3").unwrap();
        let links: TableDefinition<'_, &str, &[u8]> = TableDefinition::new("links");
        txn.open_table(links).unwrap().insert("docs/a.md", [1u8, 0, 0, 0].as_slice()).unwrap();
    }
    txn.commit().unwrap();
}

#[test]
fn an_lvs_3_index_is_rebuilt_with_one_sentence_and_keeps_its_links_once() {
    let project = Project::empty();
    project.write("docs/a.md", "# A\n\n[b](b.md)\n");
    project.write("docs/b.md", "# B\n\n[a](a.md#a)\n");
    project.ok(&["reindex"]);
    make_format_3_index(&project);

    let out = project.run(&["reindex"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "reindex failed: {stderr}");
    let said: Vec<&str> = stderr.lines().filter(|l| l.contains("WARN") || l.contains("format")).collect();
    assert_eq!(said.len(), 1, "not one sentence: {stderr}");
    assert!(said[0].contains("written in format lvs-3 by an older version"), "{stderr}");
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("indexed 2 file(s)"));
    assert_eq!(stored_schema_version(&project), "lvs-4");
    let dir = project.root().join(".local-vector-search-mcp");
    assert!(!dir.join("links.json").exists(), "the old snapshot was left behind");
    assert!(dir.join("links.bin").is_file());
    let db = Database::create(store_path(&project)).unwrap();
    let tables: Vec<String> = db
        .begin_read()
        .unwrap()
        .list_tables()
        .unwrap()
        .map(|t| redb::TableHandle::name(&t).to_owned())
        .collect();
    assert!(!tables.iter().any(|t| t == "links"), "{tables:?}");
    drop(db);
    let incoming: serde_json::Value =
        serde_json::from_str(&project.ok(&["links", "docs/a.md", "--direction", "incoming", "--json"]))
            .unwrap();
    let from: Vec<&str> =
        incoming["edges"].as_array().unwrap().iter().map(|e| e["from"].as_str().unwrap()).collect();
    assert_eq!(from, ["docs/b.md"]);
}
