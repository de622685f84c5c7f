//! The single integration-test binary (one link step for the whole suite).

mod cli;
mod corpus;
mod mcp;
mod schema;
mod support;
