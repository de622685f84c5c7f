//! The CLI end to end: Japanese search behaviour, incremental reindex, crash repair, errors.

use std::time::Duration;

use crate::support::{Project, bin, fixture};

#[test]
fn japanese_search_facts_hold_through_the_binary() {
    let project = Project::from_fixture("ja");
    let facts: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fixture("ja.facts.json")).unwrap()).unwrap();
    for q in facts["queries"].as_array().unwrap() {
        let query = q["query"].as_str().unwrap();
        let paths = project.search_paths(query);
        for must in q["mustMatch"].as_array().unwrap() {
            assert!(
                paths.iter().any(|p| p == must.as_str().unwrap()),
                "{query}: {must} missing in {paths:?}"
            );
        }
        for not in q["mustNotMatch"].as_array().unwrap() {
            assert!(
                !paths.iter().any(|p| p == not.as_str().unwrap()),
                "{query}: {not} must not match ({paths:?})"
            );
        }
        if let Some(first) = q["firstResult"].as_str() {
            assert_eq!(paths.first().map(String::as_str), Some(first), "{query}: first result");
        }
    }
}

#[test]
fn search_json_has_the_kb_search_shape_and_snippets_mark_matches() {
    let project = Project::from_fixture("ja");
    let v = project.search("形態素解析", &[]);
    let hit = &v["results"][0];
    assert_eq!(hit["path"], "tokenizer.md");
    let pointer = hit["pointer"].as_str().unwrap();
    assert_eq!(pointer.split('~').count(), 3, "v2 anchor: {pointer}");
    assert_eq!(hit["fullPointer"], format!("tokenizer.md::{pointer}"));
    assert_eq!(hit["score"], 1.0);
    assert_eq!(hit["searchMode"], "lexical");
    assert_eq!(hit["readHint"]["maxElements"], 20);
    assert_eq!(hit["stale"], false);
    assert_eq!(hit["indexedSourceHash"].as_str().unwrap().len(), 64);
    assert!(hit["snippet"].as_str().unwrap().contains("[形態素解析]"), "{}", hit["snippet"]);
    assert!(v["warning"].is_null());
    // The anchor reads back the same element.
    let read: serde_json::Value =
        serde_json::from_str(&project.ok(&["read", "tokenizer.md", pointer, "--json"])).unwrap();
    assert_eq!(read["pointer"], pointer);
}

#[test]
fn search_scopes_count_top_k_within_scope() {
    let project = Project::empty();
    for i in 0..99 {
        project.write(&format!("noise/n{i:02}.md"), "# 検索\n\n検索 検索 検索 検索 検索\n");
    }
    project.write("docs/target.md", "# 目的\n\n少しだけ検索という語がある文書。\n");
    let v = project.search("検索", &["--top-k", "1", "--include-glob", "docs/**"]);
    let results = v["results"].as_array().unwrap();
    assert_eq!(results.len(), 1);
    assert_eq!(results[0]["path"], "docs/target.md");
    let v = project.search("検索", &["--top-k", "50", "--exclude-glob", "noise/**"]);
    assert_eq!(v["results"].as_array().unwrap().len(), 1);
}

#[test]
fn incremental_reindex_after_edit_delete_and_rename() {
    let project = Project::from_fixture("ja");
    let first: serde_json::Value = serde_json::from_str(&project.ok(&["reindex", "--json"])).unwrap();
    assert_eq!(first["scannedFiles"], 6);
    assert_eq!(first["indexedFiles"], 6);
    let again: serde_json::Value = serde_json::from_str(&project.ok(&["reindex", "--json"])).unwrap();
    assert_eq!((again["indexedFiles"].as_u64(), again["skippedFiles"].as_u64()), (Some(0), Some(6)));

    project.write("kyoto.md", "# 京都\n\n嵐山で紅葉を見た。\n");
    std::fs::remove_file(project.root().join("tocho.md")).unwrap();
    std::fs::rename(project.root().join("tokenizer.md"), project.root().join("renamed.md")).unwrap();
    let r: serde_json::Value = serde_json::from_str(&project.ok(&["reindex", "--json"])).unwrap();
    assert_eq!(r["indexedFiles"], 2, "{r}");
    assert_eq!(r["deletedFiles"], 2, "{r}");
    assert_eq!(project.search_paths("嵐山"), ["kyoto.md"]);
    assert!(project.search_paths("都庁").is_empty());
    assert_eq!(project.search_paths("形態素解析"), ["renamed.md"]);

    let status: serde_json::Value = serde_json::from_str(&project.ok(&["status", "--json"])).unwrap();
    assert_eq!(status["project"]["documents"], 5);
    assert_eq!(status["indexMode"], "lexical");
    assert_eq!(status["compatibility"]["isCompatible"], true);
}

/// Files in the killed-reindex project: more than one of the indexer's commits (1,000 files
/// each), so the kill can land after a commit and well before the end.
const KILLED_FILES: usize = 1_500;

/// A generated Japanese note; `番号{i}` makes each file findable on its own.
fn numbered_note(i: usize) -> String {
    let places = ["京都", "大阪", "奈良", "神戸", "札幌", "仙台", "横浜", "福岡"];
    let topics = ["予算", "設計", "試験", "報告", "契約", "採用", "研修", "監査"];
    let (place, topic) = (places[i % places.len()], topics[i / places.len() % topics.len()]);
    format!(
        "# {place}の{topic}について\n\n番号{i}の記録。{place}で{topic}の会議を開いた。\n\n\
         ## 議題\n\n- {topic}の見直し\n- 次回の日程\n\n担当者は資料を共有する。\n"
    )
}

/// The `status.json` snapshot every commit leaves (documents indexed so far), if there is one.
fn committed_documents(root: &std::path::Path) -> Option<u64> {
    let bytes = std::fs::read(root.join(".local-vector-search-mcp/status.json")).ok()?;
    serde_json::from_slice::<serde_json::Value>(&bytes).ok()?["documents"].as_u64()
}

#[cfg(unix)]
#[test]
fn a_killed_reindex_is_repaired_by_the_next_run() {
    use std::os::unix::process::ExitStatusExt;
    use std::process::Stdio;
    use std::time::Instant;

    let project = Project::empty();
    for i in 0..KILLED_FILES {
        project.write(&format!("notes/{:02}/n{i:04}.md", i / 100), &numbered_note(i));
    }
    let total = KILLED_FILES as u64;
    let mut child = bin()
        .arg("--project-root")
        .arg(project.root())
        .args(["--embedding-provider", "none", "reindex", "--json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Kill only once a commit is on disk and the run is not over: that is a reindex in progress.
    let deadline = Instant::now() + Duration::from_secs(300);
    let seen = loop {
        if let Some(done) = committed_documents(project.root()).filter(|&d| d > 0) {
            break done;
        }
        if let Some(status) = child.try_wait().unwrap() {
            panic!("reindex ended ({status}) before it was killed; the kill would prove nothing");
        }
        assert!(Instant::now() < deadline, "no commit within 300 s");
        std::thread::sleep(Duration::from_millis(2));
    };
    assert!(seen < total, "the first commit already held all {total} files");
    child.kill().unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.signal(), Some(9), "killed by SIGKILL, not exited: {:?}", out.status);
    assert!(
        out.stdout.is_empty(),
        "the killed run printed its summary: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    let committed = committed_documents(project.root()).unwrap();
    assert!(committed < total, "the index was complete before the kill ({committed} documents)");

    // The next run repairs and finishes; it does not redo what was committed.
    let r: serde_json::Value = serde_json::from_str(&project.ok(&["reindex", "--json"])).unwrap();
    assert_eq!(r["scannedFiles"].as_u64(), Some(total), "{r}");
    let indexed = r["indexedFiles"].as_u64().unwrap();
    assert!(
        indexed > 0 && indexed + committed <= total,
        "indexed {indexed} after {committed} committed: {r}"
    );
    assert!(r["failedFiles"].as_array().is_none_or(Vec::is_empty), "{r}");
    let status: serde_json::Value = serde_json::from_str(&project.ok(&["status", "--json"])).unwrap();
    assert_eq!(status["project"]["documents"].as_u64(), Some(total), "{status}");
    let again: serde_json::Value = serde_json::from_str(&project.ok(&["reindex", "--json"])).unwrap();
    assert_eq!(again["indexedFiles"], 0, "nothing left to do: {again}");
    // Search agrees with the files: notes from every commit, before and after the kill.
    for i in [0, 500, 999, 1_000, 1_250, KILLED_FILES - 1] {
        let want = format!("notes/{:02}/n{i:04}.md", i / 100);
        let paths = project.search_paths(&format!("番号{i}"));
        assert_eq!(paths.first(), Some(&want), "番号{i}: {paths:?}");
    }
}

#[test]
fn controlled_failures_exit_1_with_one_sentence() {
    let project = Project::from_fixture("ja");
    let out = project.run(&["read", "../outside.md"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("Path contains an invalid or unsafe component."), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");

    let out = project.run(&["read", "missing.md"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("was not found"));

    let out = project.run(&["search", "   "]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("query must not be empty."));

    let out = project.run(&["search", "x", "--mode", "semantic"]);
    assert_eq!(out.status.code(), Some(1));

    let out = bin().args(["--search-mode", "bogus", "status"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
}

#[test]
fn read_and_outline_print_the_source() {
    let project = Project::from_fixture("ja");
    let text = std::fs::read_to_string(project.root().join("kyoto.md")).unwrap();
    let out = project.ok(&["read", "kyoto.md"]);
    assert!(out.starts_with(text.trim_start_matches('\u{feff}').trim_end()), "{out}");
    let outline: serde_json::Value =
        serde_json::from_str(&project.ok(&["outline", "kyoto.md", "--json"])).unwrap();
    assert_eq!(outline["path"], "kyoto.md");
    assert!(outline["headings"][0]["pointer"].as_str().unwrap().starts_with("1~"));
}

/// Damaged lexical files (truncated segments, garbage metadata, missing segment files): the next
/// `reindex` rebuilds the lexical index (re-chunking the stored paths from their unchanged
/// Markdown under their stored chunk ids, so the reindex itself finds nothing to index), with
/// the same results as before. (`search` repairs by itself too: `autoindex.rs`.)
#[test]
fn a_damaged_lexical_index_is_rebuilt_by_the_next_reindex() {
    let project = Project::from_fixture("ja");
    project.ok(&["reindex"]);
    let before = project.search_paths("京都");
    assert!(!before.is_empty());
    let lexical = project.root().join(".local-vector-search-mcp/lexical");
    type Damage = fn(&std::path::Path);
    let damages: [(&str, Damage); 3] = [
        ("truncated term and index files", |p| {
            if p.extension().is_some_and(|e| e == "term" || e == "idx") {
                std::fs::OpenOptions::new().write(true).open(p).unwrap().set_len(10).unwrap();
            }
        }),
        ("garbage meta.json", |p| {
            if p.file_name().is_some_and(|n| n == "meta.json") {
                std::fs::write(p, "{ not json").unwrap();
            }
        }),
        ("deleted store files", |p| {
            if p.extension().is_some_and(|e| e == "store") {
                std::fs::remove_file(p).unwrap();
            }
        }),
    ];
    for (what, damage) in damages {
        for entry in std::fs::read_dir(&lexical).unwrap() {
            damage(&entry.unwrap().path());
        }
        let summary = project.ok(&["reindex"]);
        assert!(
            summary.starts_with("indexed 0 file(s)"),
            "{what}: the repair was counted as new indexing: {summary}"
        );
        assert_eq!(project.search_paths("京都"), before, "{what}");
    }
}

/// A damaged store (`meta.redb` truncated or garbage) or status file: `reindex` says what it
/// found, starts over from the Markdown (the store is derived) and search agrees with the files.
#[test]
fn a_damaged_store_or_status_file_is_rebuilt_by_the_next_reindex() {
    let project = Project::from_fixture("ja");
    project.ok(&["reindex"]);
    let before = project.search_paths("京都");
    assert!(!before.is_empty());
    let dir = project.root().join(".local-vector-search-mcp");
    let store = dir.join("meta.redb");
    let good = std::fs::read(&store).unwrap();
    let files = crate::support::markdown_files(project.root()).len();
    let damages: [(&str, std::path::PathBuf, Vec<u8>); 3] = [
        ("truncated meta.redb", store.clone(), good[..good.len().min(5000)].to_vec()),
        (
            "garbage meta.redb",
            store.clone(),
            (0..100_000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect(),
        ),
        ("garbage status.json", dir.join("status.json"), b"{ not json".to_vec()),
    ];
    for (what, path, bytes) in damages {
        std::fs::write(&path, bytes).unwrap();
        let out = project.run(&["reindex"]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{what}: reindex failed: {stderr}");
        let summary = String::from_utf8_lossy(&out.stdout);
        if what.contains("meta.redb") {
            assert!(stderr.contains("the index store is damaged"), "{what}: not reported: {stderr}");
            assert!(summary.starts_with(&format!("indexed {files} file(s)")), "{what}: {summary}");
        } else {
            assert!(stderr.contains("status.json"), "{what}: not reported: {stderr}");
        }
        assert_eq!(project.search_paths("京都"), before, "{what}");
    }
}

/// A relative `--project-root` resolves against the working directory in every command (issue
/// #26): `reindex`, `search`, `read` and `status` from the parent folder see the same project as
/// with the absolute path, and a missing one is named as resolved.
#[test]
fn a_relative_project_root_resolves_against_the_working_directory() {
    let project = Project::from_fixture("ja");
    let parent = project.root().parent().unwrap();
    let name = project.root().file_name().unwrap().to_str().unwrap().to_owned();
    let run = |args: &[&str]| {
        bin()
            .current_dir(parent)
            .args(["--project-root", &name, "--embedding-provider", "none"])
            .args(args)
            .output()
            .unwrap()
    };
    let ok = |args: &[&str]| crate::support::expect_success(run(args), args);
    ok(&["reindex"]);
    let status: serde_json::Value = serde_json::from_str(&ok(&["status", "--json"])).unwrap();
    assert_eq!(status["project"]["root"], project.root().display().to_string());
    let hits: serde_json::Value =
        serde_json::from_str(&ok(&["search", "京都", "--json", "--mode", "lexical"])).unwrap();
    assert_eq!(hits["results"][0]["path"], "kyoto.md", "{hits}");
    assert_eq!(project.search_paths("京都")[0], "kyoto.md");
    assert!(ok(&["read", "kyoto.md"]).contains("京都"));
    // `./name/../name` is normalised; a missing relative root is named as resolved.
    let dotted = format!("./{name}/../{name}");
    let out = bin()
        .current_dir(parent)
        .args(["--project-root", &dotted, "--embedding-provider", "none", "status", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let out = bin().current_dir(parent).args(["--project-root", "no-such-dir", "status"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--project-root directory does not exist"), "{err}");
    assert!(err.contains(&parent.join("no-such-dir").display().to_string()), "{err}");
}
