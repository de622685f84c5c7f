//! File names in one normal form through the real binary: a file whose name is on disk in NFD
//! (as macOS writes it) is read, patched, searched by path glob and listed when addressed in
//! NFC, answers carry the name as it is on disk, and reindexing keeps one document per file;
//! the reverse (NFC on disk, NFD typed) too.

use std::ffi::OsStr;

use serde_json::{Value, json};
use unicode_normalization::UnicodeNormalization;

use crate::rpc::Rpc;
use crate::support::Project;

/// A stdio server over `p` with writes allowed.
fn server(p: &Project) -> Rpc {
    p.write("lvsm.yaml", "knowledgeBase:\n  allowWrites: true\n");
    let config = p.root().join("lvsm.yaml");
    Rpc::start(&[
        OsStr::new("--project-root"),
        p.root().as_os_str(),
        OsStr::new("--embedding-provider"),
        OsStr::new("none"),
        OsStr::new("--config"),
        config.as_os_str(),
    ])
}

/// Each (on disk, typed) pair: NFD on disk addressed in NFC, and NFC on disk addressed in NFD.
fn forms() -> Vec<(String, String)> {
    let nfc = "資料/ガイド.md".to_owned();
    let nfd: String = nfc.nfd().collect();
    assert_ne!(nfc, nfd);
    vec![(nfd.clone(), nfc.clone()), (nfc, nfd)]
}

#[test]
fn a_name_in_one_normal_form_is_read_patched_searched_and_listed_by_the_other() {
    for (on_disk, typed) in forms() {
        let p = Project::empty();
        p.write(&on_disk, "# ガイド\n\nnamesword の説明です。\n");
        p.write("other.md", &format!("# Other\n\nnamesword elsewhere, see [the guide]({typed}#ガイド).\n"));
        let r: Value = serde_json::from_str(&p.ok(&["reindex", "--json"])).unwrap();
        assert_eq!(r["indexedFiles"], 2, "{r}");
        let mut rpc = server(&p);

        let read = rpc.call("kb_read", json!({"request": {"path": typed}}));
        assert_eq!(read["path"], on_disk.as_str(), "answered with the name on disk");
        let anchor = read["elements"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["text"].as_str().is_some_and(|m| m.contains("namesword")))
            .map(|e| e["pointer"].as_str().unwrap().to_owned())
            .unwrap_or_else(|| panic!("paragraph not found: {read}"));

        let patched = rpc.call(
            "kb_patch",
            json!({"request": {"path": typed, "operations": [
                {"kind": "replace_element", "pointer": anchor, "markdown": "patchedword の説明です。"}]}}),
        );
        assert_eq!(patched["path"], on_disk.as_str(), "{patched}");
        assert_eq!(
            std::fs::read_to_string(p.root().join(&on_disk)).unwrap(),
            "# ガイド\n\npatchedword の説明です。\n"
        );
        let entries: Vec<String> = std::fs::read_dir(p.root().join("資料"))
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        assert_eq!(entries.len(), 1, "no second file under the other form: {entries:?}");

        // the edit is searchable under the name on disk, found by a glob in the typed form
        let star = "資料/*イド.md";
        let glob: String = if typed.nfc().eq(typed.chars()) { star.to_owned() } else { star.nfd().collect() };
        let hits = rpc.call(
            "kb_search",
            json!({"request": {"query": "patchedword", "mode": "lexical", "includeGlobs": [typed.clone()]}}),
        );
        assert_eq!(hits["results"].as_array().unwrap().len(), 1, "{hits}");
        assert_eq!(hits["results"][0]["path"], on_disk.as_str());
        let by_star = rpc.call(
            "kb_search",
            json!({"request": {"query": "patchedword", "mode": "lexical", "includeGlobs": [glob]}}),
        );
        assert_eq!(by_star["results"][0]["path"], on_disk.as_str(), "{by_star}");

        let files = rpc.call("kb_list_files", json!({"request": {}}));
        let listed: Vec<&str> =
            files["files"].as_array().unwrap().iter().filter_map(|f| f["relativePath"].as_str()).collect();
        assert!(listed.contains(&on_disk.as_str()) && !listed.contains(&typed.as_str()), "{files}");

        // a link typed in the other form reaches the file (and its heading): not broken
        let links = rpc.call("kb_links", json!({"request": {"path": "other.md", "direction": "outgoing"}}));
        assert_eq!(links["edges"][0]["to"], on_disk.as_str(), "{links}");
        assert_eq!(links["edges"][0]["broken"], false, "{links}");
        let incoming = rpc.call("kb_links", json!({"request": {"path": typed, "direction": "incoming"}}));
        assert_eq!(incoming["edges"][0]["from"], "other.md", "{incoming}");
        drop(rpc);

        // one document per file, however often it is reindexed
        let again: Value = serde_json::from_str(&p.ok(&["reindex", "--json", "--all"])).unwrap();
        assert_eq!(again["scannedFiles"], 2, "{again}");
        let status: Value = serde_json::from_str(&p.ok(&["status", "--json"])).unwrap();
        assert_eq!(status["project"]["documents"], 2, "{status}");
        let found = p.search("patchedword", &[]);
        assert_eq!(found["results"].as_array().unwrap().len(), 1, "{found}");
    }
}

#[test]
fn a_catalog_entry_in_one_normal_form_names_the_file_stored_in_the_other() {
    for (on_disk, typed) in forms() {
        let p = Project::empty();
        p.write(
            "lvsm.yaml",
            "knowledgeBase:\n  root: .\ncatalog:\n  index: index.yaml\n  scan: [\"資料/**/*.md\"]\n",
        );
        p.write(
            "index.yaml",
            &format!("version: 1\ndocs:\n  - id: guide\n    path: {typed}\n    title: ガイド\n"),
        );
        p.write(&on_disk, "# ガイド\n\n本文。\n");
        let out = p.run(&["--config", "lvsm.yaml", "check"]);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(0), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
        assert_eq!(stdout, "", "no missing file and no unindexed document");
    }
}
