//! Structural edits to Markdown documents (`kb_patch` planning, `contract.md` §9).
