//! Markdown mutations: `kb_patch`, `kb_edit_table`, `kb_create`, `kb_move`, `kb_delete`.
//!
//! The source is committed first (atomic write guarded by the revision's SHA-256), then the
//! changed paths are reconciled in the background. A mutation waits briefly for that so that
//! `indexSynchronized` is usually `true`; it never fails because indexing failed.

use std::time::Duration;

use super::Engine;
use crate::edit::{PatchOp, plan};
use crate::error::{ConflictReason, Error, ErrorCode, Result};
use crate::table::plan_table_edit;
use crate::wire::{
    CreateRequest, DeleteRequest, MoveRequest, MutationResponse, PatchRequest, TableEditRequest,
    TableEditResponse,
};
use crate::workspace::{PathContext, RelPath};

/// Attempts of a patch when the file keeps changing under it (`docs/reference/original-server.md`
/// §9.2).
const ATTEMPTS: usize = 3;
/// How long a mutation waits for the index to catch up before answering.
const SYNC_WAIT: Duration = Duration::from_millis(500);

const WRITES_DISABLED: &str =
    "Workspace writes are disabled. Set knowledgeBase.allowWrites to true to enable mutation tools.";

impl Engine {
    fn require_writes(&self) -> Result<()> {
        if self.config.knowledge_base.allow_writes {
            Ok(())
        } else {
            Err(Error::invalid_argument(WRITES_DISABLED))
        }
    }

    /// Schedules reconciliation of `paths` and waits up to [`SYNC_WAIT`] for it.
    fn synchronize(&self, paths: &[&RelPath]) -> (bool, Option<String>) {
        crate::failpoint("mutate.before-index-update");
        let t = std::time::Instant::now();
        let generations: Vec<(&RelPath, u64)> =
            paths.iter().map(|p| (*p, self.service.schedule(p))).collect();
        let synced = generations.iter().all(|(p, g)| self.service.wait_synced(p, *g, SYNC_WAIT));
        let error = if synced { None } else { self.service.synchronization().last_error };
        tracing::debug!(target: "lvs::timing", "mutation waited {:?} for the index", t.elapsed());
        (synced, error)
    }

    /// An exclusive OS lock shared by every process writing this project's Markdown: it makes the
    /// final hash check and the rename of a write one step across processes, not just threads.
    pub(super) fn mutation_lock(&self) -> Result<crate::workspace::LockFile> {
        crate::workspace::LockFile::acquire(
            &self.core.layout.dir().join("MUTATION.lock"),
            "the mutation lock file",
        )
    }

    /// Removes the temp files that killed writes left beside the Markdown (writes still in
    /// flight, in any process, are recognised by their process id and left alone). Runs before
    /// every reindex and a second after the server starts; a failure is logged, never fatal.
    pub fn sweep_temp_files(&self) {
        let outcome = self.core.workspace.sweep_temp_files();
        match outcome {
            Ok(removed) if !removed.is_empty() => tracing::warn!(
                "removed {} temp file(s) left by an interrupted write: {}",
                removed.len(),
                removed.join(", ")
            ),
            Ok(_) => {}
            Err(e) => tracing::warn!("could not remove leftover temp files: {}", e.message),
        }
    }

    /// Synchronizes `path` (and `previous`, for a move) and builds the response.
    fn respond(
        &self,
        path: &RelPath,
        source_hash: Option<String>,
        previous: Option<&RelPath>,
    ) -> MutationResponse {
        let paths: Vec<&RelPath> = previous.into_iter().chain(std::iter::once(path)).collect();
        let (index_synchronized, index_error) = self.synchronize(&paths);
        MutationResponse {
            path: path.as_str().to_owned(),
            source_hash,
            index_synchronized,
            index_error,
            previous_path: previous.map(|p| p.as_str().to_owned()),
        }
    }

    /// Reads, transforms and writes `path` with up to three attempts against concurrent edits.
    fn rewrite(&self, path: &RelPath, transform: &dyn Fn(&str) -> Result<String>) -> Result<String> {
        for _ in 0..ATTEMPTS {
            let source = self.core.workspace.read_markdown(path)?;
            let new_text = transform(&source.text)?;
            let mut bytes = Vec::with_capacity(new_text.len() + 3);
            if source.has_bom {
                bytes.extend_from_slice(b"\xEF\xBB\xBF");
            }
            bytes.extend_from_slice(new_text.as_bytes());
            let _lock = self.mutation_lock()?;
            match self.core.workspace.write_atomic(path, &bytes, Some(&source.source_hash), false) {
                Ok(hash) => return Ok(hash),
                Err(e) if e.code == ErrorCode::Conflict => continue,
                Err(e) => return Err(e),
            }
        }
        Err(Error::conflict(
            ConflictReason::SelfHashMismatch,
            "The document kept changing while the patch was being applied; read it again and retry.",
        ))
    }

    /// `kb_patch`.
    pub fn patch(&self, req: &PatchRequest) -> Result<MutationResponse> {
        self.require_writes()?;
        let path = self.core.workspace.rel_path(&req.path, PathContext::MarkdownWrite)?;
        if req.operations.is_empty() {
            return Err(Error::invalid_argument("At least one patch operation is required."));
        }
        let ops = req
            .operations
            .iter()
            .map(|o| PatchOp { kind: o.kind, pointer: o.pointer.clone(), markdown: o.markdown.clone() })
            .collect::<Vec<_>>();
        let hash = self.rewrite(&path, &|text| plan(text, &ops))?;
        Ok(self.respond(&path, Some(hash), None))
    }

    /// `kb_edit_table`.
    pub fn edit_table(&self, req: &TableEditRequest) -> Result<TableEditResponse> {
        self.require_writes()?;
        let path = self.core.workspace.rel_path(&req.path, PathContext::MarkdownWrite)?;
        let new_pointer = std::cell::RefCell::new(String::new());
        let hash = self.rewrite(&path, &|text| {
            let (new_text, anchor) = plan_table_edit(text, req)?;
            *new_pointer.borrow_mut() = anchor;
            Ok(new_text)
        })?;
        let (index_synchronized, index_error) = self.synchronize(&[&path]);
        Ok(TableEditResponse {
            path: path.as_str().to_owned(),
            pointer: new_pointer.into_inner(),
            source_hash: hash,
            index_synchronized,
            index_error,
        })
    }

    /// `kb_create`.
    pub fn create(&self, req: &CreateRequest) -> Result<MutationResponse> {
        self.require_writes()?;
        let path = self.core.workspace.rel_path(&req.path, PathContext::MarkdownWrite)?;
        let hash = {
            let _lock = self.mutation_lock()?;
            self.core.workspace.create_new(&path, req.markdown.as_bytes())?
        };
        Ok(self.respond(&path, Some(hash), None))
    }

    /// `kb_move`.
    pub fn move_document(&self, req: &MoveRequest) -> Result<MutationResponse> {
        self.require_writes()?;
        let from = self.core.workspace.rel_path(&req.source_path, PathContext::MarkdownWrite)?;
        let to = self.core.workspace.rel_path_for_new_name(&req.target_path, PathContext::MarkdownWrite)?;
        let hash = {
            let _lock = self.mutation_lock()?;
            self.core.workspace.move_file(&from, &to, &req.expected_source_hash)?
        };
        Ok(self.respond(&to, Some(hash), Some(&from)))
    }

    /// `kb_delete`.
    pub fn delete_document(&self, req: &DeleteRequest) -> Result<MutationResponse> {
        self.require_writes()?;
        let path = self.core.workspace.rel_path(&req.path, PathContext::MarkdownWrite)?;
        {
            let _lock = self.mutation_lock()?;
            self.core.workspace.delete_file(&path, &req.expected_source_hash)?;
        }
        Ok(self.respond(&path, None, None))
    }
}
