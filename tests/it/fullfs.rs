//! A real full file system (issue #30): the project lives on a small tmpfs that a filler file
//! fills to the last block. `kb_patch`, `kb_create`, `kb_reindex` and `kb_save_image` then fail
//! with one sentence and lose nothing, the server keeps answering, and once space is freed the
//! next edit goes through and is found.
//!
//! Needs `mount -t tmpfs` (root, or a user namespace that allows it); without it the test prints
//! a skip line and passes.

#![cfg(target_os = "linux")]

use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use lvs::text::sha256_hex;
use lvs::workspace::TEMP_PREFIX;
use serde_json::{Value, json};

use crate::rpc::Rpc;
use crate::support::bin;

/// Size of the tmpfs: room for the project and its index, small enough to fill quickly.
const SIZE: &str = "24m";

/// A tmpfs mounted on a fresh temporary folder; unmounted (lazily) on drop.
struct Tmpfs {
    _dir: tempfile::TempDir,
    mount: PathBuf,
}

impl Tmpfs {
    /// Mounts one, or says why not.
    fn mount() -> Result<Tmpfs, String> {
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let mount = dir.path().join("fs");
        std::fs::create_dir(&mount).map_err(|e| e.to_string())?;
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={SIZE}"), "lvs-fullfs"])
            .arg(&mount)
            .output()
            .map_err(|e| format!("could not run mount: {e}"))?;
        if !out.status.success() {
            return Err(String::from_utf8_lossy(&out.stderr).trim().to_owned());
        }
        Ok(Tmpfs { _dir: dir, mount })
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.mount).status();
    }
}

/// Writes `path` until the file system refuses (ENOSPC); returns the bytes written.
fn fill(path: &Path) -> u64 {
    let mut f = std::fs::File::create(path).unwrap();
    let block = vec![0x5au8; 64 * 1024];
    let mut written = 0u64;
    loop {
        match f.write(&block) {
            Ok(0) => break,
            Ok(n) => written += n as u64,
            Err(e) if e.raw_os_error() == Some(28) => break, // ENOSPC
            Err(e) => panic!("filling the disk failed otherwise: {e}"),
        }
    }
    // Small writes fill the last partial block too.
    while f.write(&[0x5a]).is_ok_and(|n| n == 1) {
        written += 1;
    }
    written
}

fn server(root: &Path) -> Rpc {
    let mut cmd = bin();
    cmd.arg("--project-root").arg(root).arg("--config").arg(root.join("lvsm.yaml"));
    cmd.stderr(std::process::Stdio::null());
    Rpc::spawn(cmd)
}

/// The error text of a failed tool call (asserting it failed, in one line ending in a stop).
fn refusal(frame: &Value, what: &str) -> String {
    assert_eq!(frame["result"]["isError"], true, "{what} succeeded on a full disk: {frame}");
    let text = frame["result"]["content"][0]["text"].as_str().unwrap_or_default().to_owned();
    assert!(!text.trim().is_empty() && !text.contains('\n'), "{what}: not one line: {text:?}");
    text
}

/// Hashes of every file below `root` but the index folder and the filler; temp files included
/// (so a left temp file shows up as a difference).
fn files(root: &Path) -> BTreeSet<(String, String)> {
    let mut out = BTreeSet::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let e = e.unwrap();
            let rel = e.path().strip_prefix(root).unwrap().to_string_lossy().into_owned();
            if rel == ".local-vector-search-mcp" || rel == "filler.bin" {
                continue;
            }
            if e.file_type().unwrap().is_dir() {
                stack.push(e.path());
            } else {
                out.insert((rel, sha256_hex(&std::fs::read(e.path()).unwrap())));
            }
        }
    }
    out
}

fn search_paths(rpc: &mut Rpc, query: &str) -> Vec<String> {
    let r = rpc.call("kb_search", json!({"request": {"query": query, "mode": "lexical", "topK": 20}}));
    let mut paths: Vec<String> =
        r["results"].as_array().unwrap().iter().map(|h| h["path"].as_str().unwrap().to_owned()).collect();
    paths.dedup();
    paths
}

/// Polls `kb_status` until no reindex runs and one has ended; returns its `last`.
fn last_reindex(rpc: &mut Rpc) -> Value {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let status = rpc.call("kb_status", json!({}));
        if status["indexing"]["isRunning"] == false && !status["indexing"]["last"].is_null() {
            return status["indexing"]["last"].clone();
        }
        assert!(Instant::now() < deadline, "the reindex did not end: {status}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_full_disk_refuses_edits_in_one_sentence_loses_nothing_and_the_next_edit_after_freeing_space_lands() {
    let fs = match Tmpfs::mount() {
        Ok(fs) => fs,
        Err(why) => {
            println!("SKIP fullfs: cannot mount a tmpfs here ({why}); run as root to test a full disk");
            return;
        }
    };
    let root = fs.mount.join("project");
    std::fs::create_dir_all(root.join("docs")).unwrap();
    std::fs::write(
        root.join("lvsm.yaml"),
        "knowledgeBase:\n  root: .\n  allowWrites: true\nembedding:\n  provider: none\n",
    )
    .unwrap();
    std::fs::write(root.join("docs/a.md"), "# 文書\n\nkiwiold の段落。\n\n別の段落。\n").unwrap();
    std::fs::write(root.join("docs/b.md"), "# 二\n\ncommonbase の段落。\n").unwrap();
    let out = bin()
        .arg("--project-root")
        .arg(&root)
        .arg("--config")
        .arg(root.join("lvsm.yaml"))
        .args(["reindex", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));

    let mut rpc = server(&root);
    last_reindex(&mut rpc); // the start-up catch-up, with room
    let read = rpc.call("kb_read", json!({"request": {"path": "docs/a.md"}}));
    let pointer = read["elements"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["text"].as_str().unwrap().contains("kiwiold"))
        .unwrap()["pointer"]
        .as_str()
        .unwrap()
        .to_owned();
    // Let the writer close (idle), so the failures below are the disk's, not a busy writer's.
    std::thread::sleep(Duration::from_millis(1500));
    let filled = fill(&root.join("filler.bin"));
    assert!(filled > 0, "the filler wrote nothing");
    let before = files(&root);

    // kb_patch: refused in one sentence naming the disk; the file keeps its bytes.
    let patch = json!({"request": {"path": "docs/a.md", "operations": [
        {"kind": "replace_element", "pointer": pointer, "markdown": "mangonew の段落。"}]}});
    let text = refusal(&rpc.call_raw("kb_patch", patch.clone()), "kb_patch");
    assert!(text.contains("disk refused it") && text.contains("free space"), "{text}");
    // kb_create: refused; no empty or half file appears.
    let create = json!({"request": {"path": "docs/new.md", "markdown": "# 新\n\nplumnew の文書。\n"}});
    let text = refusal(&rpc.call_raw("kb_create", create.clone()), "kb_create");
    assert!(text.contains("disk refused it"), "{text}");
    // kb_save_image (the engine in-process: its downloader reaches only a local test server).
    let images = crate::assets::Server::start();
    let engine = crate::assets::engine(&root, true);
    let mut req = crate::assets::save_req(images.url("/ok.png"));
    req.target_path = Some("images/saved.png".to_owned());
    let err = engine.save_image_with(&req, &images.downloader()).unwrap_err();
    assert!(!err.message.contains('\n') && err.message.contains("disk refused it"), "{}", err.message);
    drop(engine);
    // kb_reindex --all: ends failed with one sentence; the old index still answers.
    rpc.call("kb_reindex", json!({"request": {"scope": "all"}}));
    let last = last_reindex(&mut rpc);
    assert_eq!(last["outcome"], "failed", "a reindex on a full disk: {last}");
    let error = last["error"].as_str().unwrap();
    assert!(!error.contains('\n') && error.contains("disk refused it"), "{error:?}");
    assert_eq!(files(&root), before, "a file changed, appeared or was left behind on the full disk");
    assert!(!files(&root).iter().any(|(p, _)| p.rsplit('/').next().unwrap().starts_with(TEMP_PREFIX)));
    // The server keeps serving.
    assert_eq!(search_paths(&mut rpc, "kiwiold"), vec!["docs/a.md".to_owned()]);
    assert_eq!(search_paths(&mut rpc, "commonbase"), vec!["docs/b.md".to_owned()]);

    // Free the space: the same calls now land and are found.
    std::fs::remove_file(root.join("filler.bin")).unwrap();
    let done = rpc.call("kb_patch", patch);
    assert!(done["sourceHash"].is_string() || done.is_object(), "{done}");
    rpc.call("kb_create", create);
    if let Err(status) = rpc.synchronized_by(Instant::now() + Duration::from_secs(120)) {
        panic!("the edits after freeing space never reached the index: {status}");
    }
    assert_eq!(search_paths(&mut rpc, "mangonew"), vec!["docs/a.md".to_owned()]);
    assert_eq!(search_paths(&mut rpc, "plumnew"), vec!["docs/new.md".to_owned()]);
    assert_eq!(search_paths(&mut rpc, "kiwiold"), Vec::<String>::new());
    drop(rpc);
}
