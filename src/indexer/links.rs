//! The writer's side of the link graph: one copy, `links.bin` (`links::LinkGraph`), kept in
//! memory by the writer and rewritten after a commit that changed a document's links or
//! anchors (`docs/design/links.md`, "Where the graph lives").
//!
//! Invariants:
//!
//! - The in-memory graph holds the links of exactly the store's documents: a batch stages the
//!   links of the documents it writes, and they replace the graph's entries only when the store
//!   committed the batch; a touched path the store no longer has leaves the graph.
//! - `links.gen` names the generation `links.bin` is valid for. The store keeps no copy of the
//!   links, so a snapshot that is behind (a crash between the store commit and the snapshot)
//!   is repaired from the Markdown: one generation behind, the paths of the store's last batch
//!   are read and their links extracted again; any other mismatch (or a damaged file) extracts
//!   every stored document's links.

use super::Indexer;
use crate::error::{Error, Result};
use crate::links::{DocLinks, LinkGraph, extract};
use crate::markdown::Document;
use crate::workspace::RelPath;

/// The file earlier formats kept the graph in (besides a redb table); removed on a rebuild.
const LEGACY_SNAPSHOT: &str = "links.json";

impl Indexer {
    /// Loads the graph for the store's generation: `links.bin` when `links.gen` says it is
    /// current, else repaired from the Markdown (see the module docs). A snapshot behind the
    /// store is repaired when the writer opens, before any commit (the last batch must be the
    /// one the snapshot missed); a current one is loaded when a commit first needs it.
    pub(super) fn load_links(&mut self) -> Result<()> {
        let path = self.layout.links_path();
        let valid_for = self.layout.links_generation();
        if valid_for == Some(self.generation) {
            match LinkGraph::read(&path) {
                Ok(graph) => {
                    self.links = Some(graph);
                    return Ok(());
                }
                Err(e) => tracing::warn!("{} Extracting the links again from the Markdown.", e.message),
            }
        }
        let documents = self.store.counts()?.0;
        let behind_one = valid_for.is_some_and(|g| g + 1 == self.generation);
        let (mut graph, paths) = match LinkGraph::read(&path) {
            Ok(graph) if behind_one => (graph, self.store.last_batch()?),
            _ => (LinkGraph::new(self.generation), self.store.documents()?.into_keys().collect()),
        };
        if documents == 0 && valid_for.is_none() {
            tracing::debug!("writing the first link graph snapshot");
        } else {
            tracing::warn!(
                "the link graph snapshot is missing, damaged or behind the index; extracting the links of {} file(s) again from the Markdown",
                paths.len()
            );
        }
        let present = self.store.contains_documents(&paths)?;
        for (path, there) in paths.into_iter().zip(present) {
            match there.then(|| self.links_of(&path)).flatten() {
                Some(links) => graph.docs.insert(path, links),
                None => graph.docs.remove(&path),
            };
        }
        graph.generation = self.generation;
        self.links = Some(graph);
        self.links_dirty = true;
        Ok(())
    }

    /// The links of a stored document as its file holds them now (`None`: unreadable or gone;
    /// the next reconcile of that path removes or re-indexes it).
    fn links_of(&self, path: &str) -> Option<DocLinks> {
        let rel = RelPath::new(path).ok()?;
        let source = self.workspace.read_markdown(&rel).ok()?;
        Some(extract(&source.text, &Document::parse(&source.text)))
    }

    /// An empty graph (the store was wiped for a rebuild); the file of older formats goes.
    pub(super) fn restart_links(&mut self) -> Result<()> {
        self.links = Some(LinkGraph::new(self.generation));
        self.links_staged.clear();
        self.links_dirty = true;
        match std::fs::remove_file(self.layout.dir().join(LEGACY_SNAPSHOT)) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                Err(Error::io("the old link graph snapshot", &e))
            }
            _ => Ok(()),
        }
    }

    /// After the store committed a batch that touched `touched`: the staged links of the
    /// documents it wrote replace theirs, paths it deleted leave the graph.
    pub(super) fn apply_staged_links(&mut self, touched: &[String]) -> Result<()> {
        if self.links.is_none() {
            self.load_links()?;
        }
        let present = self.store.contains_documents(touched)?;
        let mut staged = std::mem::take(&mut self.links_staged);
        let Some(graph) = self.links.as_mut() else { return Ok(()) };
        for (path, there) in touched.iter().zip(present) {
            if !there {
                self.links_dirty |= graph.docs.remove(path).is_some();
            } else if let Some(links) = staged.remove(path)
                && graph.docs.get(path) != Some(&links)
            {
                graph.docs.insert(path.clone(), links);
                self.links_dirty = true;
            }
        }
        Ok(())
    }

    /// The rest of a commit: the link graph snapshot (`links.bin` is megabytes on a large
    /// project; it is written after a waiting edit is answered, before the edit counts as
    /// synchronized).
    pub fn finish_commit(&mut self) -> Result<()> {
        if !self.links_pending {
            return Ok(());
        }
        let t0 = std::time::Instant::now();
        self.write_links()?;
        self.links_pending = false;
        self.session.clean = true;
        tracing::debug!(target: "lvs::timing", "links {:?}", t0.elapsed());
        Ok(())
    }

    /// Whether [`Indexer::finish_commit`] has `links.bin` to rewrite (the graph changed since it
    /// was written), not only the tiny `links.gen`.
    pub fn links_rewrite_pending(&self) -> bool {
        self.links_pending && self.links_dirty
    }

    /// Writes `links.bin` when the graph changed since it was written, then `links.gen` (the
    /// generation the snapshot is valid for), so an unchanged graph costs one tiny write and a
    /// crash before the snapshot was written is still detected on open.
    pub(super) fn write_links(&mut self) -> Result<()> {
        if self.links.is_none() {
            self.load_links()?;
        }
        if self.links_dirty
            && let Some(graph) = self.links.as_mut()
        {
            graph.generation = self.generation;
            graph.write(&self.layout.links_path())?;
            self.links_dirty = false;
        }
        crate::workspace::write_file_atomic(
            &self.layout.links_generation_path(),
            self.generation.to_string().as_bytes(),
            "the link graph generation",
        )
    }
}
