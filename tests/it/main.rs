//! The single integration-test binary (one link step for the whole suite).

mod assets;
mod autoindex;
mod bounded;
mod catalog;
mod chunks;
mod cli;
mod corpus;
mod edits;
#[path = "../fake_embed/mod.rs"]
mod fake_embed;
mod format;
mod fullfs;
mod hostile;
mod html;
mod ignored;
#[path = "../common/images.rs"]
mod images;
mod kills;
mod links;
mod lists;
mod logscan;
mod mcp;
mod metadata;
mod names;
mod pdf;
mod perfile;
mod pipes;
mod rpc;
mod schema;
#[path = "../common/shared_dir.rs"]
mod shared_dir;
mod support;
mod textruns;
mod threads;
mod tidy;
mod vectors;
mod watchrace;
