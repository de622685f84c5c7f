//! What `kb_find_docs` and `kb_list_tags` derive from a parsed index alone, worked out once per
//! parsed index file and kept with it (`docs::IndexFile::model`), so an unchanged index costs no
//! tag resolution, no normalisation and no counting per call (issue #28).
//!
//! Invariants:
//!
//! - Pure over [`Index`]: the same index gives the same model, so keeping it with the parsed
//!   file (replaced when the file's stamp changes) is never stale.
//! - The per-call answers equal what the queries computed from the index before the model
//!   existed: tag keys and main flags per document, the display name and vocabulary position of
//!   each counted tag (first match wins, as before), and the normalised text of every searched
//!   field.

use std::collections::{HashMap, HashSet};

use super::index::{Index, Resolved, Vocabulary};
use super::norm;

/// The derived data of one index (see the module docs).
#[derive(Debug, Default)]
pub struct Model {
    /// Per document: the canonical key of each tag (as written, in order) and whether it is a
    /// main tag.
    pub keys: Vec<Vec<(String, bool)>>,
    /// Per document: its distinct tag keys, each with the count entry it contributes when it is
    /// the first document of a call to carry the key: `(key id, entry id)`.
    pub counted: Vec<Vec<(usize, usize)>>,
    /// Count entries: display name and vocabulary position.
    pub entries: Vec<(String, Option<usize>)>,
    /// Number of distinct keys (`counted`'s key ids are below it).
    pub key_count: usize,
    /// Per document: `norm` of the title, the aliases and the description (what `text` matches).
    pub text: Vec<Vec<String>>,
    /// Per vocabulary entry: the documents whose tags name it (by its name or an alias).
    pub tag_docs: Vec<usize>,
    /// Per vocabulary entry: the first entry with its normalised name (later ones are not listed).
    pub tag_listed: Vec<bool>,
    /// Per vocabulary entry: `norm` of its name, aliases and description (what a tag query matches).
    pub tag_text: Vec<Vec<String>>,
}

impl Model {
    /// Derives the model of `index`.
    pub fn new(index: &Index) -> Model {
        let vocab = Vocabulary::new(index);
        let resolved: Vec<Vec<Resolved>> =
            index.docs.iter().map(|d| d.tags.iter().map(|t| vocab.resolve(&t.name)).collect()).collect();
        // The display spelling of an unknown tag is its first spelling in the whole index.
        let mut first_spelling: HashMap<String, String> = HashMap::new();
        for r in resolved.iter().flatten() {
            if let Resolved::Unknown(s) = r {
                first_spelling.entry(norm(s)).or_insert_with(|| s.clone());
            }
        }
        let mut key_ids: HashMap<String, usize> = HashMap::new();
        let mut entry_ids: HashMap<(String, Option<usize>), usize> = HashMap::new();
        let mut entries = Vec::new();
        let mut keys = Vec::with_capacity(index.docs.len());
        let mut counted = Vec::with_capacity(index.docs.len());
        for (d, rs) in index.docs.iter().zip(&resolved) {
            let mut doc_keys = Vec::with_capacity(rs.len());
            let mut doc_counted = Vec::new();
            let mut seen = HashSet::new();
            for (t, r) in d.tags.iter().zip(rs) {
                let key = vocab.key(r);
                doc_keys.push((key.clone(), t.main));
                if !seen.insert(key.clone()) {
                    continue;
                }
                let entry = match r {
                    Resolved::Known(p) => (vocab.entries()[*p].name.clone(), Some(*p)),
                    Resolved::Unknown(s) => {
                        (first_spelling.get(&key).cloned().unwrap_or_else(|| s.clone()), None)
                    }
                };
                let next = key_ids.len();
                let key_id = *key_ids.entry(key).or_insert(next);
                let next = entries.len();
                let entry_id = *entry_ids.entry(entry.clone()).or_insert_with(|| {
                    entries.push(entry);
                    next
                });
                doc_counted.push((key_id, entry_id));
            }
            keys.push(doc_keys);
            counted.push(doc_counted);
        }
        let text = index
            .docs
            .iter()
            .map(|d| {
                std::iter::once(&d.title).chain(&d.aliases).chain(&d.description).map(|s| norm(s)).collect()
            })
            .collect();
        let tags = vocab.entries();
        let mut listed = HashSet::new();
        let tag_listed = tags.iter().map(|e| listed.insert(norm(&e.name))).collect();
        let tag_text = tags
            .iter()
            .map(|e| {
                std::iter::once(&e.name).chain(&e.aliases).chain(&e.description).map(|s| norm(s)).collect()
            })
            .collect();
        Model {
            keys,
            counted,
            entries,
            key_count: key_ids.len(),
            text,
            tag_docs: tag_doc_counts(index, &vocab),
            tag_listed,
            tag_text,
        }
    }
}

/// Per vocabulary entry, the documents whose tags name it (by its name or an alias).
fn tag_doc_counts(index: &Index, vocab: &Vocabulary<'_>) -> Vec<usize> {
    let mut spellings: HashMap<String, Vec<usize>> = HashMap::new();
    for (i, e) in vocab.entries().iter().enumerate() {
        for n in std::iter::once(&e.name).chain(&e.aliases) {
            let list = spellings.entry(norm(n)).or_default();
            if !list.contains(&i) {
                list.push(i);
            }
        }
    }
    let mut counts = vec![0usize; vocab.entries().len()];
    for d in &index.docs {
        let set: HashSet<usize> =
            d.tags.iter().filter_map(|t| spellings.get(&norm(&t.name))).flatten().copied().collect();
        for e in set {
            counts[e] += 1;
        }
    }
    counts
}
