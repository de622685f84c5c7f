//! Image assets and downloads (`docs/reference/original-server.md` §11): formats and signatures,
//! the naming rules of `kb_save_image`, the Markdown snippet, the `kb_list_images` cursor, the GIF
//! preview and the SSRF-safe HTTPS downloader ([`download`]).
//!
//! Everything here is pure except [`download`] (network) and [`gif_first_frame_png`] (CPU); file
//! access belongs to `workspace` and the orchestration of the tools to `engine::assets`.
//!
//! Invariants:
//!
//! - Supported formats are PNG, JPEG, WebP and GIF, recognised by extension
//!   (case-insensitive) and by the signature of their first bytes; the signature is the
//!   authority and a declared MIME type can only refuse, never override it.
//! - No asset larger than [`MAX_ASSET_BYTES`] is downloaded, loaded, moved or served.
//! - No URL, query string or temp path ever appears in an error message or a log line.

mod checks;
pub mod download;

#[cfg(test)]
mod tests;

use base64::Engine as _;
pub use checks::{
    check_signature, hash_capped, image_missing, random_hex12, resource_uri, supported_format, timestamp,
    too_large,
};

use crate::error::{Error, ErrorCode, Result};

/// The size limit of downloads, loads, moves and `kb_download_file`: 25 MiB.
pub const MAX_ASSET_BYTES: u64 = 26_214_400;

/// Most pixels the GIF preview decodes (4096 × 4096).
pub const MAX_GIF_PIXELS: u64 = 16_777_216;

/// Bytes of a file's start that signature detection reads.
pub const SIGNATURE_BYTES: usize = 16;

/// A supported image format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ImageFormat {
    /// `image/png`, `.png`.
    Png,
    /// `image/jpeg`, `.jpg` / `.jpeg`.
    Jpeg,
    /// `image/webp`, `.webp`.
    Webp,
    /// `image/gif`, `.gif`.
    Gif,
}

impl ImageFormat {
    /// The MIME type, e.g. `image/png`.
    pub fn mime(self) -> &'static str {
        match self {
            ImageFormat::Png => "image/png",
            ImageFormat::Jpeg => "image/jpeg",
            ImageFormat::Webp => "image/webp",
            ImageFormat::Gif => "image/gif",
        }
    }

    /// The extension generated names get, with its dot.
    pub fn canonical_extension(self) -> &'static str {
        match self {
            ImageFormat::Png => ".png",
            ImageFormat::Jpeg => ".jpg",
            ImageFormat::Webp => ".webp",
            ImageFormat::Gif => ".gif",
        }
    }

    /// The format a file name's extension names (case-insensitive), if supported.
    pub fn from_file_name(name: &str) -> Option<ImageFormat> {
        let (_, ext) = name.rsplit_once('.')?;
        match ext.to_ascii_lowercase().as_str() {
            "png" => Some(ImageFormat::Png),
            "jpg" | "jpeg" => Some(ImageFormat::Jpeg),
            "webp" => Some(ImageFormat::Webp),
            "gif" => Some(ImageFormat::Gif),
            _ => None,
        }
    }

    /// The format the first bytes of a file announce, if supported.
    pub fn detect(prefix: &[u8]) -> Option<ImageFormat> {
        if prefix.starts_with(&[0x89, b'P', b'N', b'G', 0x0D, 0x0A, 0x1A, 0x0A]) {
            Some(ImageFormat::Png)
        } else if prefix.starts_with(&[0xFF, 0xD8, 0xFF]) {
            Some(ImageFormat::Jpeg)
        } else if prefix.len() >= 12 && &prefix[..4] == b"RIFF" && &prefix[8..12] == b"WEBP" {
            Some(ImageFormat::Webp)
        } else if prefix.starts_with(b"GIF87a") || prefix.starts_with(b"GIF89a") {
            Some(ImageFormat::Gif)
        } else {
            None
        }
    }

    /// The format a recognised image MIME type names (`image/jpg` included), case-insensitive.
    fn from_mime(mime: &str) -> Option<ImageFormat> {
        match mime.trim().to_ascii_lowercase().as_str() {
            "image/png" => Some(ImageFormat::Png),
            "image/jpeg" | "image/jpg" => Some(ImageFormat::Jpeg),
            "image/webp" => Some(ImageFormat::Webp),
            "image/gif" => Some(ImageFormat::Gif),
            _ => None,
        }
    }
}

/// The declared-MIME check of `kb_save_image` (`docs/reference/original-server.md` §11.1): empty,
/// `application/octet-stream` and unknown types are ignored; a recognised image type that
/// disagrees with the signature is refused.
pub fn check_declared_mime(declared: Option<&str>, detected: ImageFormat) -> Result<()> {
    let Some(declared) = declared else { return Ok(()) };
    match ImageFormat::from_mime(declared) {
        Some(format) if format != detected => Err(Error::invalid_argument(format!(
            "Declared MIME type '{}' does not match the detected {} image.",
            declared.trim(),
            detected.mime()
        ))),
        _ => Ok(()),
    }
}

/// Windows device names, compared on the part before the first dot.
const DEVICE_NAMES: [&str; 22] = [
    "CON", "PRN", "AUX", "NUL", "COM1", "COM2", "COM3", "COM4", "COM5", "COM6", "COM7", "COM8", "COM9",
    "LPT1", "LPT2", "LPT3", "LPT4", "LPT5", "LPT6", "LPT7", "LPT8", "LPT9",
];

/// Whether `name` is a portable basename (`docs/reference/original-server.md` §11.2 step 7):
/// non-blank, not `.`/`..`, no trailing space or dot, no control character, none of
/// `< > : " / \ | ? *`, not a Windows device name.
pub fn is_portable_basename(name: &str) -> bool {
    if name.trim().is_empty() || name == "." || name == ".." || name.ends_with([' ', '.']) {
        return false;
    }
    if name
        .chars()
        .any(|c| c.is_control() || matches!(c, '<' | '>' | ':' | '"' | '/' | '\\' | '|' | '?' | '*'))
    {
        return false;
    }
    let stem = name.split('.').next().unwrap_or(name).trim_end();
    !DEVICE_NAMES.iter().any(|d| d.eq_ignore_ascii_case(stem))
}

/// The file name `kb_save_image` saves under when no `targetPath` is given
/// (`docs/reference/original-server.md` §11.2 step 7). `stamp` is `yyyyMMdd-HHmmss` (UTC) and
/// `random` 12 hex digits, used for generated names.
pub fn choose_file_name(
    explicit: Option<&str>,
    hint: Option<&str>,
    format: ImageFormat,
    stamp: &str,
    random: &str,
) -> Result<String> {
    if let Some(name) = explicit {
        if !is_portable_basename(name) {
            return Err(Error::invalid_argument(format!(
                "fileName '{}' is not a portable file name; use a plain name such as 'cover.png' without folders, \
reserved characters or a trailing dot.",
                name.chars().filter(|c| !c.is_control()).collect::<String>()
            )));
        }
        let has_extension = name.rfind('.').is_some_and(|i| i > 0);
        if !has_extension {
            return Ok(format!("{name}{}", format.canonical_extension()));
        }
        return match ImageFormat::from_file_name(name) {
            Some(f) if f == format => Ok(name.to_owned()),
            _ => Err(Error::new(
                ErrorCode::UnsupportedFormat,
                format!(
                    "fileName extension does not match the image signature ({}); use '{}' or leave the extension out.",
                    format.mime(),
                    format.canonical_extension()
                ),
            )),
        };
    }
    if let Some(hint) = hint {
        let base = hint.rsplit(['/', '\\']).next().unwrap_or(hint);
        let stem = match base.rfind('.') {
            Some(i) if i > 0 => &base[..i],
            _ => base,
        };
        if is_portable_basename(stem) {
            return Ok(format!("{stem}{}", format.canonical_extension()));
        }
    }
    Ok(format!("image-{stamp}-{random}{}", format.canonical_extension()))
}

/// `cover.png` → `cover-2.png` for `n = 2` (the collision suffix of
/// `docs/reference/original-server.md` §11.2 step 8).
pub fn with_suffix(name: &str, n: u32) -> String {
    match name.rfind('.') {
        Some(i) if i > 0 => format!("{}-{n}{}", &name[..i], &name[i..]),
        _ => format!("{name}-{n}"),
    }
}

/// The Markdown image snippet (`docs/reference/original-server.md` §11.2 step 9): alt text with
/// CR/LF as spaces and `\ [ ]` escaped; the destination in `<…>` when it holds whitespace or
/// parentheses.
pub fn markdown_snippet(alt: Option<&str>, path: &str) -> String {
    let mut escaped = String::new();
    for c in alt.unwrap_or("").chars() {
        match c {
            '\r' | '\n' => escaped.push(' '),
            '\\' => escaped.push_str("\\\\"),
            '[' => escaped.push_str("\\["),
            ']' => escaped.push_str("\\]"),
            c => escaped.push(c),
        }
    }
    let destination = if path.chars().any(|c| c.is_whitespace() || c == '(' || c == ')') {
        format!("<{path}>")
    } else {
        path.to_owned()
    };
    format!("![{escaped}]({destination})")
}

/// The version tag of `kb_list_images` cursors.
const CURSOR_VERSION: &str = "v2";

/// Every image below the root (a file whose extension [`ImageFormat::from_file_name`] knows),
/// sorted with [`crate::workspace::compare_paths`]: the listing `kb_list_images` pages through.
/// It comes from the workspace's cached listing, so a page costs an `lstat` per image and per
/// folder, not a walk of the root (`docs/design/assets.md`).
pub fn list_image_files(ws: &crate::workspace::Workspace) -> Result<Vec<crate::workspace::ListedFile>> {
    ws.list_files_cached("images", |name| ImageFormat::from_file_name(name).is_some())
}

/// The cursor after `last_path`: `base64url_nopad("v2\n" + path)`.
pub fn encode_cursor(last_path: &str) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(format!("{CURSOR_VERSION}\n{last_path}"))
}

/// The path a cursor continues after (`docs/reference/original-server.md` §11.3).
pub fn decode_cursor(cursor: &str) -> Result<String> {
    let malformed = || Error::invalid_argument("Image list cursor is malformed.");
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(cursor.trim().trim_end_matches('='))
        .map_err(|_| malformed())?;
    let text = String::from_utf8(bytes).map_err(|_| malformed())?;
    let (version, path) = text.split_once('\n').ok_or_else(malformed)?;
    if version != CURSOR_VERSION {
        if version.is_empty() || version.len() > 16 || version.chars().any(char::is_control) {
            return Err(malformed());
        }
        return Err(Error::invalid_argument(format!(
            "Image list cursor version '{version}' is not supported. Start listing again."
        )));
    }
    if path.is_empty() {
        return Err(malformed());
    }
    Ok(path.to_owned())
}

/// The MIME type `kb_download_file` reports for a file name (by extension; unknown →
/// `application/octet-stream`).
pub fn mime_for_file_name(name: &str) -> &'static str {
    if let Some(format) = ImageFormat::from_file_name(name) {
        return format.mime();
    }
    let ext = name.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase()).unwrap_or_default();
    match ext.as_str() {
        "md" => "text/markdown",
        "txt" | "log" => "text/plain",
        "csv" => "text/csv",
        "html" | "htm" => "text/html",
        "css" => "text/css",
        "js" | "mjs" => "text/javascript",
        "json" => "application/json",
        "yaml" | "yml" => "application/yaml",
        "xml" => "application/xml",
        "pdf" => "application/pdf",
        "zip" => "application/zip",
        "svg" => "image/svg+xml",
        "bmp" => "image/bmp",
        "ico" => "image/vnd.microsoft.icon",
        "tif" | "tiff" => "image/tiff",
        "avif" => "image/avif",
        "mp3" => "audio/mpeg",
        "wav" => "audio/wav",
        "mp4" => "video/mp4",
        "webm" => "video/webm",
        _ => "application/octet-stream",
    }
}

/// The first frame of a GIF as PNG bytes (`docs/reference/original-server.md` §11.4): the size from
/// the GIF header is checked against [`MAX_GIF_PIXELS`] before decoding; a frame whose size differs
/// from the header's, or any decode failure, is `UNSUPPORTED_FORMAT`.
pub fn gif_first_frame_png(gif: &[u8]) -> Result<Vec<u8>> {
    use image::AnimationDecoder as _;
    let unsupported = |why: &str| {
        Error::new(ErrorCode::UnsupportedFormat, format!("The GIF could not be previewed: {why}."))
    };
    if gif.len() < 10 {
        return Err(unsupported("the file is truncated"));
    }
    let width = u64::from(u16::from_le_bytes([gif[6], gif[7]]));
    let height = u64::from(u16::from_le_bytes([gif[8], gif[9]]));
    if width == 0 || height == 0 || width * height > MAX_GIF_PIXELS {
        return Err(unsupported(&format!(
            "its {width}×{height} canvas is empty or larger than {MAX_GIF_PIXELS} pixels"
        )));
    }
    let decoder = image::codecs::gif::GifDecoder::new(std::io::Cursor::new(gif))
        .map_err(|_| unsupported("it is not a valid GIF"))?;
    let frame = decoder
        .into_frames()
        .next()
        .ok_or_else(|| unsupported("it has no frames"))?
        .map_err(|_| unsupported("its first frame could not be decoded"))?;
    let buffer = frame.into_buffer();
    if u64::from(buffer.width()) != width || u64::from(buffer.height()) != height {
        return Err(unsupported("its first frame does not match the canvas size"));
    }
    let mut out = std::io::Cursor::new(Vec::new());
    image::DynamicImage::ImageRgba8(buffer)
        .write_to(&mut out, image::ImageFormat::Png)
        .map_err(|_| Error::internal("The GIF preview could not be encoded as PNG."))?;
    Ok(out.into_inner())
}
