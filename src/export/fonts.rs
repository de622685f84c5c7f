//! The fonts of the PDF: a Japanese gothic face (required), a mincho face (optional) and the
//! core font Courier for ASCII code, with the advance widths the layout measures with.
//!
//! The TrueType files are read at run time, once per process: from `LVS_PDF_FONT` /
//! `LVS_PDF_SERIF_FONT` when set, else from the places Debian, Homebrew-style installs and
//! Windows put IPAexGothic / IPAexMincho. The decision (run time, not `include_bytes!`) is in
//! `docs/design/pdf.md`.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Mutex, OnceLock};

use printpdf::ParsedFont;

use super::layout::{Face, Metrics};
use crate::error::{Error, ErrorCode, Result};

/// Environment variable naming the gothic (body) font file, a `.ttf` or `.otf`.
pub const FONT_ENV: &str = "LVS_PDF_FONT";
/// Environment variable naming the optional mincho font file of the classic and academic styles.
pub const SERIF_FONT_ENV: &str = "LVS_PDF_SERIF_FONT";

const SANS_PATHS: &[&str] = &[
    "/usr/share/fonts/opentype/ipaexfont-gothic/ipaexg.ttf",
    "/usr/share/fonts/truetype/ipaexfont-gothic/ipaexg.ttf",
    "/usr/share/fonts/ipaexfont-gothic/ipaexg.ttf",
    "/usr/share/fonts/ipa-gothic/ipaexg.ttf",
    "/usr/local/share/fonts/ipaexg.ttf",
    "/opt/homebrew/share/fonts/ipaexg.ttf",
    "/Library/Fonts/ipaexg.ttf",
    "C:\\Windows\\Fonts\\ipaexg.ttf",
];

const SERIF_PATHS: &[&str] = &[
    "/usr/share/fonts/opentype/ipaexfont-mincho/ipaexm.ttf",
    "/usr/share/fonts/truetype/ipaexfont-mincho/ipaexm.ttf",
    "/usr/share/fonts/ipaexfont-mincho/ipaexm.ttf",
    "/usr/local/share/fonts/ipaexm.ttf",
    "/opt/homebrew/share/fonts/ipaexm.ttf",
    "/Library/Fonts/ipaexm.ttf",
    "C:\\Windows\\Fonts\\ipaexm.ttf",
];

/// One parsed TrueType face and its advance widths by character (cached).
pub struct LoadedFace {
    /// The face, for embedding.
    pub font: ParsedFont,
    units_per_em: f32,
    advances: Mutex<HashMap<char, Option<f32>>>,
}

impl LoadedFace {
    fn load(bytes: &[u8]) -> Option<LoadedFace> {
        let mut warnings = Vec::new();
        let font = ParsedFont::from_bytes(bytes, 0, &mut warnings)?;
        let units_per_em = f32::from(font.pdf_font_metrics.units_per_em).max(1.0);
        Some(LoadedFace { font, units_per_em, advances: Mutex::new(HashMap::new()) })
    }

    fn advance(&self, ch: char) -> Option<f32> {
        if let Ok(cache) = self.advances.lock()
            && let Some(hit) = cache.get(&ch)
        {
            return *hit;
        }
        let value = self
            .font
            .lookup_glyph_index(ch as u32)
            .filter(|gid| *gid != 0)
            .map(|gid| f32::from(self.font.get_horizontal_advance(gid)) / self.units_per_em);
        if let Ok(mut cache) = self.advances.lock() {
            cache.insert(ch, value);
        }
        value
    }
}

/// The faces of the book.
pub struct Fonts {
    /// The gothic face: headings, body of most styles, every character the others lack.
    pub sans: LoadedFace,
    /// The mincho face, if one is installed.
    pub serif: Option<LoadedFace>,
}

static FONTS: OnceLock<Result<Fonts>> = OnceLock::new();

impl Fonts {
    /// The fonts, loaded on first use.
    pub fn get() -> Result<&'static Fonts> {
        FONTS.get_or_init(Fonts::load).as_ref().map_err(Clone::clone)
    }

    fn load() -> Result<Fonts> {
        if std::env::var_os(FONT_ENV).is_some_and(|p| !p.is_empty()) && read_font(FONT_ENV, &[]).is_none() {
            return Err(Error::new(
                ErrorCode::NotFound,
                format!(
                    "{FONT_ENV} names a font file that cannot be read; point it at a TrueType (.ttf) file or unset it."
                ),
            ));
        }
        let (bytes, shown) = read_font(FONT_ENV, SANS_PATHS).ok_or_else(|| {
            Error::new(
                ErrorCode::NotFound,
                format!(
                    "No Japanese font for the PDF was found; install IPAexGothic (Debian/Ubuntu: apt-get install fonts-ipaexfont-gothic) or set {FONT_ENV} to a TrueType (.ttf) font file."
                ),
            )
        })?;
        let sans = LoadedFace::load(&bytes).ok_or_else(|| {
            Error::new(
                ErrorCode::UnsupportedFormat,
                format!("The PDF font {shown} could not be read as a TrueType or OpenType font; point {FONT_ENV} at a .ttf file."),
            )
        })?;
        let serif = read_font(SERIF_FONT_ENV, SERIF_PATHS).and_then(|(b, _)| LoadedFace::load(&b));
        Ok(Fonts { sans, serif })
    }

    /// Whether a mincho face is available.
    pub fn has_serif(&self) -> bool {
        self.serif.is_some()
    }
}

/// The bytes of the first font found: the file named by `env`, else the first of `paths`.
/// The second value names it for messages without an absolute path.
fn read_font(env: &str, paths: &[&str]) -> Option<(Vec<u8>, String)> {
    if let Some(path) = std::env::var_os(env).filter(|p| !p.is_empty()) {
        let path = PathBuf::from(path);
        return std::fs::read(&path).ok().map(|b| (b, format!("named by {env}")));
    }
    paths.iter().find_map(|p| {
        let path = PathBuf::from(p);
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        std::fs::read(&path).ok().map(|b| (b, name))
    })
}

impl Metrics for Fonts {
    fn advance(&self, face: Face, ch: char) -> Option<f32> {
        match face {
            // Courier: every printable ASCII character is 600/1000 em.
            Face::Mono => (' '..='~').contains(&ch).then_some(0.6),
            Face::Serif => self.serif.as_ref().unwrap_or(&self.sans).advance(ch),
            Face::Sans => self.sans.advance(ch),
        }
    }
}
