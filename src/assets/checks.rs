//! The checks and names every image tool shares: the format by extension and by signature,
//! hashing with the size cap, the messages for a missing or oversized image, generated names
//! (`yyyyMMdd-HHmmss`, random hex) and the `kb:///` resource URI.

use std::io::Read;

use super::{ImageFormat, MAX_ASSET_BYTES, SIGNATURE_BYTES};
use crate::error::{Error, ErrorCode, Result};
use crate::text::{Sha256Stream, rfc3339_utc};
use crate::workspace::RelPath;

/// The format of a path's extension, or `UNSUPPORTED_FORMAT`.
pub fn supported_format(path: &RelPath) -> Result<ImageFormat> {
    ImageFormat::from_file_name(path.file_name()).ok_or_else(|| {
        Error::new(
            ErrorCode::UnsupportedFormat,
            format!("'{path}' is not a supported image type; use .png, .jpg, .jpeg, .webp or .gif."),
        )
    })
}

/// `UNSUPPORTED_FORMAT` unless the signature of `bytes` is one of `formats`.
pub fn check_signature(path: &RelPath, bytes: &[u8], formats: &[ImageFormat]) -> Result<()> {
    let prefix = &bytes[..bytes.len().min(SIGNATURE_BYTES)];
    match ImageFormat::detect(prefix) {
        Some(detected) if formats.iter().all(|f| *f == detected) => Ok(()),
        Some(detected) => Err(Error::new(
            ErrorCode::UnsupportedFormat,
            format!("Image '{path}' extension does not match its detected {} format.", detected.mime()),
        )),
        None => {
            Err(Error::new(ErrorCode::UnsupportedFormat, format!("Image '{path}' is not a supported image.")))
        }
    }
}

/// Hashes an open file, refusing more than [`MAX_ASSET_BYTES`].
pub fn hash_capped(file: std::fs::File, path: &RelPath, what: &str) -> Result<(u64, String)> {
    let mut reader = file.take(MAX_ASSET_BYTES + 1);
    let mut hasher = Sha256Stream::default();
    let mut buf = vec![0u8; 64 * 1024];
    let mut total = 0u64;
    loop {
        let n = reader.read(&mut buf).map_err(|e| Error::io(&format!("'{path}'"), &e))?;
        if n == 0 {
            break;
        }
        total += n as u64;
        if total > MAX_ASSET_BYTES {
            return Err(too_large(path, what));
        }
        hasher.update(&buf[..n]);
    }
    Ok((total, hasher.finish_hex()))
}

pub fn too_large(path: &RelPath, what: &str) -> Error {
    Error::invalid_argument(format!(
        "{what} '{path}' is larger than the {MAX_ASSET_BYTES}-byte (25 MiB) limit."
    ))
}

/// A `NOT_FOUND` from the workspace, reworded for images.
pub fn image_missing(path: &RelPath, e: Error) -> Error {
    if e.code == ErrorCode::NotFound {
        Error::not_found(format!("Image '{path}' does not exist."))
    } else {
        e
    }
}

/// `yyyyMMdd-HHmmss` (UTC) for generated names.
pub fn timestamp() -> String {
    let t = rfc3339_utc(std::time::SystemTime::now()); // 2026-11-29T23:43:04.123Z
    let digits: String = t.chars().take(19).filter(char::is_ascii_digit).collect();
    format!("{}-{}", &digits[..8], &digits[8..14])
}

/// 12 random lowercase hex digits for generated names.
pub fn random_hex12() -> String {
    use std::hash::BuildHasher;
    let seed = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    let n = std::collections::hash_map::RandomState::new().hash_one(seed);
    format!("{:012x}", n & 0xFFFF_FFFF_FFFF)
}

/// The URI of an embedded resource: `kb:///` and the percent-encoded root-relative path (never
/// an absolute path).
pub fn resource_uri(path: &RelPath) -> String {
    let mut out = String::from("kb:///");
    for b in path.as_str().bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'/' | b'-' | b'_' | b'.' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}
