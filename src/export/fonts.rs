//! The fonts of the PDF: a Japanese gothic face (body and headings), a mincho face (optional,
//! classic and academic styles) and a monospaced face for code that covers Japanese, with the
//! advance widths the layout measures with.
//!
//! Every face is embedded in the PDF (subset). Each one is chosen once per process, in this
//! order (`docs/design/pdf.md`, "Fonts"):
//!
//! 1. the environment variable (`LVS_PDF_FONT`, `LVS_PDF_SERIF_FONT`, `LVS_PDF_MONO_FONT`): a
//!    font file (`.ttf`, `.otf`, `.ttc`: its first face) or a family name;
//! 2. the first installed family of a fixed list (IPAex, then the fonts macOS, Windows and
//!    Linux distributions ship: Hiragino, Yu Gothic, Meiryo, MS Gothic, Noto CJK, Source Han),
//!    found with `fontdb` in the system font folders (fontconfig's folders included);
//! 3. the faces built into the binary: IPAexGothic for text and IPAGothic (fixed pitch) for
//!    code, so a PDF can be made on a machine without any Japanese font. There is no built-in
//!    mincho: without one the classic and academic styles set their body in the gothic face.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock};

use fontdb::{Database, Source};
use printpdf::ParsedFont;

use super::layout::{Face, Metrics};
use crate::error::{Error, ErrorCode, Result};

/// Environment variable naming the gothic (body) font: a file or a family name.
pub const FONT_ENV: &str = "LVS_PDF_FONT";
/// Environment variable naming the mincho font of the classic and academic styles.
pub const SERIF_FONT_ENV: &str = "LVS_PDF_SERIF_FONT";
/// Environment variable naming the monospaced font of code.
pub const MONO_FONT_ENV: &str = "LVS_PDF_MONO_FONT";

/// IPAexGothic 00401 (IPA Font License v1.0, `LICENSE-IPAFONT`), copied in by `build.rs`.
static BUILTIN_SANS: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/fonts/ipaexg.ttf"));
/// IPAGothic 00303, fixed pitch (same licence).
static BUILTIN_MONO: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/fonts/ipag.ttf"));

/// Gothic families in the order they are preferred.
pub const SANS_FAMILIES: &[&str] = &[
    "IPAexGothic",
    "Hiragino Sans",
    "Hiragino Kaku Gothic ProN",
    "Hiragino Kaku Gothic Pro",
    "Yu Gothic",
    "Meiryo",
    "MS PGothic",
    "MS Gothic",
    "Noto Sans CJK JP",
    "Noto Sans JP",
    "Source Han Sans JP",
    "Source Han Sans",
    "IPAPGothic",
    "IPAGothic",
];

/// Mincho families in the order they are preferred.
pub const SERIF_FAMILIES: &[&str] = &[
    "IPAexMincho",
    "Hiragino Mincho ProN",
    "Hiragino Mincho Pro",
    "Yu Mincho",
    "MS PMincho",
    "MS Mincho",
    "Noto Serif CJK JP",
    "Noto Serif JP",
    "Source Han Serif JP",
    "Source Han Serif",
    "IPAPMincho",
    "IPAMincho",
];

/// Monospaced families with Japanese glyphs (half-width Latin, full-width kana and kanji).
pub const MONO_FAMILIES: &[&str] =
    &["IPAGothic", "MS Gothic", "Osaka-Mono", "Noto Sans Mono CJK JP", "Source Han Code JP"];

/// One parsed face and its advance widths by character (cached).
pub struct LoadedFace {
    /// The face, for embedding.
    pub font: ParsedFont,
    /// The font file (shared with the SVG renderer).
    pub data: Arc<Vec<u8>>,
    /// Which face of a collection.
    pub index: u32,
    /// Where it came from, for messages: a family name, "named by LVS_PDF_FONT", "built-in …".
    pub origin: String,
    units_per_em: f32,
    advances: Mutex<HashMap<char, Option<f32>>>,
}

impl LoadedFace {
    fn load(data: Arc<Vec<u8>>, index: u32, origin: String) -> Option<LoadedFace> {
        let mut warnings = Vec::new();
        let font = ParsedFont::from_bytes(&data, index as usize, &mut warnings)?;
        let units_per_em = f32::from(font.pdf_font_metrics.units_per_em).max(1.0);
        let face =
            LoadedFace { font, data, index, origin, units_per_em, advances: Mutex::new(HashMap::new()) };
        // A Japanese face must have kana and common kanji.
        ['あ', '漢', '。'].iter().all(|c| face.advance(*c).is_some()).then_some(face)
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
    /// The monospaced face of code.
    pub mono: LoadedFace,
    svg: OnceLock<Arc<Database>>,
}

static FONTS: OnceLock<Result<Fonts>> = OnceLock::new();

impl Fonts {
    /// The fonts, loaded on first use.
    pub fn get() -> Result<&'static Fonts> {
        FONTS.get_or_init(Fonts::load).as_ref().map_err(Clone::clone)
    }

    fn load() -> Result<Fonts> {
        let mut system = SystemFonts::default();
        let sans = match named(FONT_ENV, &mut system)? {
            Some(face) => face,
            None => system
                .first_of(SANS_FAMILIES)
                .or_else(|| builtin(BUILTIN_SANS, "built-in IPAexGothic"))
                .ok_or_else(|| Error::internal("the built-in PDF font could not be read"))?,
        };
        let serif = match named(SERIF_FONT_ENV, &mut system)? {
            Some(face) => Some(face),
            None => system.first_of(SERIF_FAMILIES),
        };
        let mono = match named(MONO_FONT_ENV, &mut system)? {
            Some(face) => face,
            None => system
                .first_of(MONO_FAMILIES)
                .or_else(|| builtin(BUILTIN_MONO, "built-in IPAGothic"))
                .ok_or_else(|| Error::internal("the built-in PDF code font could not be read"))?,
        };
        tracing::debug!(
            sans = %sans.origin,
            serif = serif.as_ref().map_or("none (the gothic face)", |f| f.origin.as_str()),
            mono = %mono.origin,
            "PDF fonts chosen"
        );
        Ok(Fonts { sans, serif, mono, svg: OnceLock::new() })
    }

    /// Whether a mincho face is available.
    pub fn has_serif(&self) -> bool {
        self.serif.is_some()
    }

    /// The same faces as a font database for SVG text, with the generic families mapped to
    /// them (`sans-serif` and anything unknown → gothic, `serif` → mincho, `monospace` → code).
    pub fn svg_database(&self) -> Arc<Database> {
        self.svg
            .get_or_init(|| {
                let mut db = Database::new();
                let mut add = |face: &LoadedFace| -> Option<String> {
                    let data: Arc<dyn AsRef<[u8]> + Send + Sync> = face.data.clone();
                    let ids = db.load_font_source(Source::Binary(data));
                    let id = ids.get(face.index as usize).or(ids.first())?;
                    db.face(*id).and_then(|f| f.families.first().map(|(name, _)| name.clone()))
                };
                let sans = add(&self.sans);
                let serif = self.serif.as_ref().and_then(&mut add).or_else(|| sans.clone());
                let mono = add(&self.mono);
                if let Some(name) = &sans {
                    db.set_sans_serif_family(name.clone());
                    db.set_cursive_family(name.clone());
                    db.set_fantasy_family(name.clone());
                }
                if let Some(name) = serif {
                    db.set_serif_family(name);
                }
                if let Some(name) = mono {
                    db.set_monospace_family(name);
                }
                Arc::new(db)
            })
            .clone()
    }

    /// The family SVG text without an installed match falls back to.
    pub fn svg_default_family(&self) -> String {
        let db = self.svg_database();
        db.faces()
            .next()
            .and_then(|f| f.families.first().map(|(n, _)| n.clone()))
            .unwrap_or_else(|| "sans-serif".to_owned())
    }
}

fn builtin(bytes: &'static [u8], origin: &str) -> Option<LoadedFace> {
    LoadedFace::load(Arc::new(bytes.to_vec()), 0, origin.to_owned())
}

/// The face named by `env`, if it is set: a font file, else a family name.
fn named(env: &str, system: &mut SystemFonts) -> Result<Option<LoadedFace>> {
    let Some(value) = std::env::var_os(env).filter(|v| !v.is_empty()) else { return Ok(None) };
    let value = value.to_string_lossy().into_owned();
    let path = Path::new(&value);
    let looks_like_file = path.is_file()
        || value.contains(['/', '\\'])
        || [".ttf", ".otf", ".ttc", ".otc"].iter().any(|e| value.to_ascii_lowercase().ends_with(e));
    if looks_like_file {
        let data = std::fs::read(path).map_err(|_| {
            Error::new(
                ErrorCode::NotFound,
                format!(
                    "{env} names a font file that cannot be read; point it at a TrueType or OpenType (.ttf, .otf, .ttc) file or unset it."
                ),
            )
        })?;
        return LoadedFace::load(Arc::new(data), 0, format!("named by {env}")).map(Some).ok_or_else(|| {
            Error::new(
                ErrorCode::UnsupportedFormat,
                format!(
                    "The font named by {env} could not be read as a Japanese TrueType or OpenType font; point {env} at a font with Japanese glyphs or unset it."
                ),
            )
        });
    }
    system.first_of(&[value.as_str()]).map(Some).ok_or_else(|| {
        Error::new(
            ErrorCode::NotFound,
            format!(
                "{env} names the font family '{value}', which is not installed (or has no Japanese glyphs); give an installed family or a font file, or unset it."
            ),
        )
    })
}

/// The system's fonts, scanned on first use.
#[derive(Default)]
struct SystemFonts {
    db: Option<Database>,
}

impl SystemFonts {
    fn db(&mut self) -> &Database {
        self.db.get_or_insert_with(|| {
            let mut db = Database::new();
            db.load_system_fonts();
            db
        })
    }

    /// The regular face of the first family of `families` that is installed and usable.
    fn first_of(&mut self, families: &[&str]) -> Option<LoadedFace> {
        let db = self.db();
        for family in families {
            let mut faces: Vec<&fontdb::FaceInfo> = db
                .faces()
                .filter(|f| f.families.iter().any(|(n, _)| n.eq_ignore_ascii_case(family)))
                .filter(|f| f.style == fontdb::Style::Normal)
                .collect();
            // The weight nearest to regular (Hiragino Sans W3, Yu Gothic Regular, …).
            faces.sort_by_key(|f| (i32::from(f.weight.0) - 400).abs());
            for face in faces {
                let loaded = db.with_face_data(face.id, |data, index| {
                    LoadedFace::load(Arc::new(data.to_vec()), index, (*family).to_owned())
                });
                if let Some(Some(loaded)) = loaded {
                    return Some(loaded);
                }
            }
        }
        None
    }
}

impl Metrics for Fonts {
    fn advance(&self, face: Face, ch: char) -> Option<f32> {
        match face {
            Face::Mono => self.mono.advance(ch),
            Face::Serif => self.serif.as_ref().unwrap_or(&self.sans).advance(ch),
            Face::Sans => self.sans.advance(ch),
        }
    }
}
