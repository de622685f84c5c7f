//! The single integration-test binary (one link step for the whole suite).

mod cli;
mod corpus;
#[path = "../fake_embed/mod.rs"]
mod fake_embed;
mod mcp;
mod pdf;
mod rpc;
mod schema;
mod support;
mod tidy;
mod vectors;
