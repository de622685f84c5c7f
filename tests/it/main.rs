//! The single integration-test binary (one link step for the whole suite).

mod corpus;
mod support;
