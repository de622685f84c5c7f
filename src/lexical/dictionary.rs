//! The IPADIC dictionary, built by `build.rs` and embedded into the binary.
#![allow(missing_docs)]

lindera_dictionary::embedded_dictionary!("/lindera-ipadic", EmbeddedIpadic);
