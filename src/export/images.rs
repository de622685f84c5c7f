//! Images of the book: loaded once per URL, checked, and encoded for the PDF at the size they
//! are shown, following the profile (`docs/reference/product.md` §5, the seed's "PDF ブックのエクスポート").
//!
//! - A JPEG is embedded as it is (its original bytes, DCTDecode) unless it has more pixels than
//!   the profile's DPI needs at its shown size; then it is scaled down and re-encoded at the
//!   profile's JPEG quality.
//! - A JPEG with EXIF, ICC or Adobe metadata and a PNG with explicit colour information (iCCP,
//!   sRGB, gAMA, cHRM) are never resampled, so orientation and colour cannot change.
//! - PNG, GIF (first frame) and WebP are embedded losslessly (FlateDecode), scaled down like
//!   JPEGs when they have far more pixels than needed; transparency becomes a soft mask.
//! - SVG is drawn with `resvg` (its text in the book's own fonts) at the pixels the profile's
//!   DPI needs for the size it is shown at, and embedded losslessly like a PNG.
//! - The same URL used twice is one image resource in the PDF.

use std::collections::HashMap;
use std::io::Cursor;

use image::{DynamicImage, GenericImageView, ImageFormat, RgbaImage, imageops::FilterType};
use resvg::{tiny_skia, usvg};

use super::layout::ImageAnswer;
use super::style::Profile;

/// An image as the Markdown referenced it, checked and decodable.
pub struct Source {
    /// The file's bytes.
    pub bytes: Vec<u8>,
    /// JPEG, PNG, GIF or WebP.
    pub format: ImageFormat,
    /// Pixels.
    pub width: u32,
    /// Pixels.
    pub height: u32,
    /// Carries metadata that makes resampling risky: keep its pixels as they are.
    pub keep: bool,
    /// The parsed drawing, for an SVG file (then `format` is meaningless).
    pub svg: Option<usvg::Tree>,
}

/// The encoded form for the PDF.
pub enum Encoded {
    /// JPEG data for DCTDecode, with the number of colour components and whether it is an
    /// Adobe (inverted CMYK) file.
    Jpeg { data: Vec<u8>, width: u32, height: u32, components: u8, adobe: bool },
    /// 8-bit RGB or grey pixels (to be Flate-compressed), with an optional alpha channel.
    Raw { pixels: Vec<u8>, alpha: Option<Vec<u8>>, width: u32, height: u32, gray: bool },
}

/// The images of one export.
pub struct ImageStore {
    profile: Profile,
    /// The checked images, by id.
    pub sources: Vec<Source>,
    by_url: HashMap<String, ImageAnswer>,
}

impl ImageStore {
    /// An empty store for `profile`.
    pub fn new(profile: Profile) -> ImageStore {
        ImageStore { profile, sources: Vec::new(), by_url: HashMap::new() }
    }

    /// Loads and checks the image at `src` (once per URL): its id and pixel size, or why it
    /// cannot be shown.
    pub fn add(&mut self, src: &str, load: &mut super::ImageLoader<'_>) -> ImageAnswer {
        if let Some(answer) = self.by_url.get(src) {
            return answer.clone();
        }
        let answer = load(src)
            .and_then(|bytes| if looks_like_svg(&bytes) { check_svg(&bytes) } else { check(bytes) })
            .map(|source| {
                let size = (source.width, source.height);
                self.sources.push(source);
                (self.sources.len() - 1, size.0, size.1)
            });
        self.by_url.insert(src.to_owned(), answer.clone());
        answer
    }

    /// Encodes image `id` for a box of `w` × `h` points.
    pub fn encode(&self, id: usize, w: f32, h: f32) -> Result<Encoded, String> {
        let source = self.sources.get(id).ok_or("unknown image")?;
        let dpi = self.profile.dpi();
        // Pixels the profile wants for the shown size; resample only when the image has clearly
        // more (25 % slack keeps already-efficient files as they are).
        let want_w = (w / 72.0 * dpi).ceil().max(1.0) as u32;
        let want_h = (h / 72.0 * dpi).ceil().max(1.0) as u32;
        let too_big =
            source.width as f32 > want_w as f32 * 1.25 && source.height as f32 > want_h as f32 * 1.25;
        let resample = too_big && !source.keep;
        if let Some(tree) = &source.svg {
            return render_svg(tree, want_w, want_h);
        }
        if source.format == ImageFormat::Jpeg && !resample {
            let (components, adobe) =
                jpeg_components(&source.bytes).ok_or("not a baseline or progressive JPEG")?;
            return Ok(Encoded::Jpeg {
                data: source.bytes.clone(),
                width: source.width,
                height: source.height,
                components,
                adobe,
            });
        }
        let mut img =
            image::load_from_memory_with_format(&source.bytes, source.format).map_err(|e| e.to_string())?;
        if resample {
            img = img.resize(want_w, want_h, FilterType::Triangle);
        }
        if source.format == ImageFormat::Jpeg {
            let rgb = img.to_rgb8();
            let mut data = Vec::new();
            let encoder = image::codecs::jpeg::JpegEncoder::new_with_quality(
                Cursor::new(&mut data),
                self.profile.jpeg_quality(),
            );
            rgb.write_with_encoder(encoder).map_err(|e| e.to_string())?;
            return Ok(Encoded::Jpeg {
                data,
                width: rgb.width(),
                height: rgb.height(),
                components: 3,
                adobe: false,
            });
        }
        Ok(raw(&img))
    }
}

/// Decodes `bytes` once to make sure the image can be shown.
fn check(bytes: Vec<u8>) -> Result<Source, String> {
    let format =
        image::guess_format(&bytes).map_err(|_| "not a PNG, JPEG, GIF, WebP or SVG image".to_owned())?;
    if !matches!(format, ImageFormat::Png | ImageFormat::Jpeg | ImageFormat::Gif | ImageFormat::WebP) {
        return Err(format!("{format:?} images are not supported (PNG, JPEG, GIF, WebP and SVG are)"));
    }
    let img = image::load_from_memory_with_format(&bytes, format)
        .map_err(|e| format!("the image could not be decoded ({e})"))?;
    let (width, height) = img.dimensions();
    let keep = match format {
        ImageFormat::Jpeg => jpeg_has_metadata(&bytes),
        ImageFormat::Png => png_has_color_info(&bytes),
        _ => false,
    };
    Ok(Source { bytes, format, width, height, keep, svg: None })
}

/// The largest side, in pixels, an SVG is rasterised at (a full A4 page at 300 DPI is 3508).
const MAX_SVG_SIDE: u32 = 4096;

/// Whether `bytes` is an SVG document (plain or gzip-compressed), by its first tag.
fn looks_like_svg(bytes: &[u8]) -> bool {
    if bytes.starts_with(&[0x1f, 0x8b]) {
        return true;
    }
    let head = &bytes[..bytes.len().min(4096)];
    let text = String::from_utf8_lossy(head);
    let text = text.trim_start_matches('\u{feff}').trim_start();
    (text.starts_with("<?xml") || text.starts_with("<svg") || text.starts_with("<!")) && text.contains("<svg")
}

/// Parses an SVG with the book's fonts; its size is its CSS pixel size (96 per inch).
fn check_svg(bytes: &[u8]) -> Result<Source, String> {
    let fonts = super::fonts::Fonts::get().map_err(|e| e.message)?;
    let options = usvg::Options {
        fontdb: fonts.svg_database(),
        font_family: fonts.svg_default_family(),
        ..usvg::Options::default()
    };
    let tree =
        usvg::Tree::from_data(bytes, &options).map_err(|e| format!("the SVG could not be read ({e})"))?;
    let size = tree.size();
    let (width, height) = (size.width().ceil().max(1.0) as u32, size.height().ceil().max(1.0) as u32);
    Ok(Source { bytes: Vec::new(), format: ImageFormat::Png, width, height, keep: false, svg: Some(tree) })
}

/// Draws `tree` into a `w` × `h` pixel image (at most [`MAX_SVG_SIDE`] on a side).
fn render_svg(tree: &usvg::Tree, w: u32, h: u32) -> Result<Encoded, String> {
    let scale = (MAX_SVG_SIDE as f32 / w.max(h) as f32).min(1.0);
    let (w, h) = (((w as f32) * scale).max(1.0) as u32, ((h as f32) * scale).max(1.0) as u32);
    let mut pixmap = tiny_skia::Pixmap::new(w, h).ok_or("the SVG has no area")?;
    let size = tree.size();
    let transform = tiny_skia::Transform::from_scale(w as f32 / size.width(), h as f32 / size.height());
    resvg::render(tree, transform, &mut pixmap.as_mut());
    let mut rgba = Vec::with_capacity(pixmap.data().len());
    for p in pixmap.pixels() {
        let c = p.demultiply();
        rgba.extend_from_slice(&[c.red(), c.green(), c.blue(), c.alpha()]);
    }
    let img = RgbaImage::from_raw(w, h, rgba).ok_or("the SVG could not be drawn")?;
    Ok(raw(&DynamicImage::ImageRgba8(img)))
}

fn raw(img: &DynamicImage) -> Encoded {
    let (width, height) = img.dimensions();
    let has_alpha = img.color().has_alpha();
    let gray = !img.color().has_color();
    let alpha = has_alpha.then(|| img.to_rgba8().pixels().map(|p| p.0[3]).collect::<Vec<u8>>());
    let alpha = alpha.filter(|a| a.iter().any(|&v| v != 255));
    let pixels = if gray { img.to_luma8().into_raw() } else { img.to_rgb8().into_raw() };
    Encoded::Raw { pixels, alpha, width, height, gray }
}

/// JPEG segments before the scan: `(marker, payload)`.
fn jpeg_segments(bytes: &[u8]) -> Vec<(u8, &[u8])> {
    let mut out = Vec::new();
    let mut i = 2;
    while i + 4 <= bytes.len() && bytes[i] == 0xFF {
        let marker = bytes[i + 1];
        if marker == 0xD9 || marker == 0xDA {
            break;
        }
        let len = usize::from(u16::from_be_bytes([bytes[i + 2], bytes[i + 3]]));
        let end = (i + 2 + len).min(bytes.len());
        out.push((marker, &bytes[(i + 4).min(end)..end]));
        i += 2 + len;
    }
    out
}

/// EXIF (APP1 `Exif`), ICC (APP2 `ICC_PROFILE`) or Adobe (APP14) metadata.
fn jpeg_has_metadata(bytes: &[u8]) -> bool {
    jpeg_segments(bytes).iter().any(|(m, p)| {
        (*m == 0xE1 && p.starts_with(b"Exif"))
            || (*m == 0xE2 && p.starts_with(b"ICC_PROFILE"))
            || (*m == 0xEE && p.starts_with(b"Adobe"))
    })
}

/// The number of components in the frame header and whether an Adobe segment is present.
fn jpeg_components(bytes: &[u8]) -> Option<(u8, bool)> {
    let segments = jpeg_segments(bytes);
    let adobe = segments.iter().any(|(m, p)| *m == 0xEE && p.starts_with(b"Adobe"));
    segments
        .iter()
        .find(|(m, _)| matches!(m, 0xC0..=0xC3 | 0xC5..=0xC7 | 0xC9..=0xCB | 0xCD..=0xCF))
        .and_then(|(_, p)| p.get(5).copied())
        .filter(|c| matches!(c, 1 | 3 | 4))
        .map(|c| (c, adobe))
}

/// A PNG `iCCP`, `sRGB`, `gAMA` or `cHRM` chunk.
fn png_has_color_info(bytes: &[u8]) -> bool {
    let mut i = 8;
    while i + 8 <= bytes.len() {
        let len = u32::from_be_bytes([bytes[i], bytes[i + 1], bytes[i + 2], bytes[i + 3]]) as usize;
        let kind = &bytes[i + 4..i + 8];
        if matches!(kind, b"iCCP" | b"sRGB" | b"gAMA" | b"cHRM") {
            return true;
        }
        if kind == b"IDAT" || kind == b"IEND" {
            return false;
        }
        i += 12 + len;
    }
    false
}
