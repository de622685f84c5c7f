//! Page formats, the five styles and the three image profiles of `kb_create_pdf_book`.
//!
//! A style is a table of numbers and choices (sizes, margins, colours, heading and code-block
//! treatment); the layout reads it and never branches on the style's name.

use crate::error::{Error, Result};

/// A colour, 0.0–1.0 per channel.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rgb(pub f32, pub f32, pub f32);

impl Rgb {
    /// Black.
    pub const BLACK: Rgb = Rgb(0.0, 0.0, 0.0);
    /// White.
    pub const WHITE: Rgb = Rgb(1.0, 1.0, 1.0);

    /// From `0xRRGGBB`.
    pub const fn hex(v: u32) -> Rgb {
        Rgb(((v >> 16) & 0xFF) as f32 / 255.0, ((v >> 8) & 0xFF) as f32 / 255.0, (v & 0xFF) as f32 / 255.0)
    }
}

/// Points per millimetre.
pub const PT_PER_MM: f32 = 72.0 / 25.4;

/// The paper size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PageFormat {
    /// ISO A4, 210 × 297 mm.
    A4,
    /// ISO A5, 148 × 210 mm (the default).
    A5,
    /// ISO A6, 105 × 148 mm.
    A6,
    /// JIS B5, 182 × 257 mm (the B5 of Japanese stationery).
    B5,
    /// US Letter, 8.5 × 11 in.
    Letter,
}

impl PageFormat {
    /// Every format, in documentation order.
    pub const ALL: [PageFormat; 5] =
        [PageFormat::A4, PageFormat::A5, PageFormat::A6, PageFormat::B5, PageFormat::Letter];

    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            PageFormat::A4 => "a4",
            PageFormat::A5 => "a5",
            PageFormat::A6 => "a6",
            PageFormat::B5 => "b5",
            PageFormat::Letter => "letter",
        }
    }

    /// Width and height in millimetres.
    pub fn size_mm(self) -> (f32, f32) {
        match self {
            PageFormat::A4 => (210.0, 297.0),
            PageFormat::A5 => (148.0, 210.0),
            PageFormat::A6 => (105.0, 148.0),
            PageFormat::B5 => (182.0, 257.0),
            PageFormat::Letter => (215.9, 279.4),
        }
    }

    /// How much the type grows or shrinks on this paper (A5 = 1).
    fn type_scale(self) -> f32 {
        match self {
            PageFormat::A4 | PageFormat::Letter => 1.2,
            PageFormat::B5 => 1.1,
            PageFormat::A5 => 1.0,
            PageFormat::A6 => 0.85,
        }
    }

    /// Parses a wire value (`None` = the default, A5).
    pub fn parse(value: Option<&str>) -> Result<PageFormat> {
        parse_choice(value, "pageFormat", &PageFormat::ALL, PageFormat::as_str, PageFormat::A5)
    }
}

/// The look of the book.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StyleName {
    /// Small type, narrow margins, grey code boxes (the default).
    Compact,
    /// Book-like: wide margins, indented paragraphs, centred ruled chapter titles.
    Classic,
    /// Airy, with a blue accent: coloured heading bars, tinted table headers.
    Modern,
    /// Numbered headings, running header, code with line numbers in a frame.
    Technical,
    /// Paper-like: numbered headings, indented paragraphs, rules-only tables.
    Academic,
}

impl StyleName {
    /// Every style, in documentation order.
    pub const ALL: [StyleName; 5] = [
        StyleName::Compact,
        StyleName::Classic,
        StyleName::Modern,
        StyleName::Technical,
        StyleName::Academic,
    ];

    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            StyleName::Compact => "compact",
            StyleName::Classic => "classic",
            StyleName::Modern => "modern",
            StyleName::Technical => "technical",
            StyleName::Academic => "academic",
        }
    }

    /// Parses a wire value (`None` = the default, compact).
    pub fn parse(value: Option<&str>) -> Result<StyleName> {
        parse_choice(value, "style", &StyleName::ALL, StyleName::as_str, StyleName::Compact)
    }
}

/// Image downsampling and JPEG quality.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Profile {
    /// 96 DPI, JPEG quality 65.
    Screen,
    /// 150 DPI, JPEG quality 82 (the default).
    Standard,
    /// 300 DPI, JPEG quality 95.
    Print,
}

impl Profile {
    /// Every profile, in documentation order.
    pub const ALL: [Profile; 3] = [Profile::Screen, Profile::Standard, Profile::Print];

    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Profile::Screen => "screen",
            Profile::Standard => "standard",
            Profile::Print => "print",
        }
    }

    /// Most image pixels per inch of paper.
    pub fn dpi(self) -> f32 {
        match self {
            Profile::Screen => 96.0,
            Profile::Standard => 150.0,
            Profile::Print => 300.0,
        }
    }

    /// Quality of re-encoded JPEGs (1–100).
    pub fn jpeg_quality(self) -> u8 {
        match self {
            Profile::Screen => 65,
            Profile::Standard => 82,
            Profile::Print => 95,
        }
    }

    /// Parses a wire value (`None` = the default, standard).
    pub fn parse(value: Option<&str>) -> Result<Profile> {
        parse_choice(value, "profile", &Profile::ALL, Profile::as_str, Profile::Standard)
    }
}

fn parse_choice<T: Copy>(
    value: Option<&str>,
    field: &str,
    all: &[T],
    name: fn(T) -> &'static str,
    default: T,
) -> Result<T> {
    let Some(value) = value.map(str::trim).filter(|v| !v.is_empty()) else {
        return Ok(default);
    };
    all.iter().copied().find(|v| name(*v).eq_ignore_ascii_case(value)).ok_or_else(|| {
        let names: Vec<&str> = all.iter().map(|v| name(*v)).collect();
        Error::invalid_argument(format!("{field} '{value}' is not valid; use one of {}.", names.join(", ")))
    })
}

/// How headings look.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HeadingLook {
    /// Bold text, a thin rule under level 1.
    Plain,
    /// Level 1 centred between two rules.
    Ruled,
    /// An accent bar left of levels 1–2, level 1 underlined in the accent colour.
    Bar,
    /// A thick rule under level 1, a thin one under level 2.
    Underlined,
}

/// How code blocks look.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CodeLook {
    /// A tinted box.
    Filled,
    /// A thin frame, no fill.
    Framed,
    /// A tinted box with an accent bar on the left.
    Accent,
    /// A frame with line numbers in a gutter.
    Numbered,
    /// Rules above and below only.
    Rules,
}

/// How tables look.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TableLook {
    /// Every cell framed, a grey header.
    Grid,
    /// Horizontal lines, an accent-coloured header with white text.
    Banded,
    /// Three rules (top, under the header, bottom), no vertical lines.
    Booktabs,
}

/// Where the page number goes and how it looks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Folio {
    /// `3`, centred.
    Centered,
    /// `— 3 —`, centred.
    Dashed,
    /// `3 / 12`, right.
    OfTotal,
    /// The title left and the number right above a rule, at the foot.
    Running,
}

/// Everything the layout needs to know about a style, in points and colours.
#[derive(Clone, Debug, PartialEq)]
pub struct Style {
    /// Body type size.
    pub body: f32,
    /// Line height as a multiple of the size.
    pub leading: f32,
    /// Margins: top, right, bottom, left (points).
    pub margins: [f32; 4],
    /// Heading sizes as multiples of the body size, levels 1–6.
    pub heading_scale: [f32; 6],
    /// Number headings `1.`, `1.1`…
    pub numbered: bool,
    /// Indent the first line of paragraphs by one full-width space (字下げ).
    pub indent: bool,
    /// Use the serif (Mincho) face for body text when one is installed.
    pub serif: bool,
    /// Text colour.
    pub text: Rgb,
    /// Accent colour (headings, bars, links).
    pub accent: Rgb,
    /// Light fill (code, header rows).
    pub tint: Rgb,
    /// Rule colour.
    pub rule: Rgb,
    /// Space between blocks, as a multiple of the line height.
    pub gap: f32,
    /// Headings.
    pub heading: HeadingLook,
    /// Code blocks.
    pub code: CodeLook,
    /// Tables.
    pub table: TableLook,
    /// Page numbers.
    pub folio: Folio,
    /// Code type size as a multiple of the body size.
    pub code_scale: f32,
    /// The chapter title at the head of each page (book styles).
    pub running_header: bool,
}

impl Style {
    /// The numbers of `name` on `format`.
    pub fn new(name: StyleName, format: PageFormat) -> Style {
        let (w, _) = format.size_mm();
        let k = format.type_scale();
        // Margins grow with the paper.
        let m = |mm: f32| mm * PT_PER_MM * (w / 148.0).sqrt();
        match name {
            StyleName::Compact => Style {
                body: 8.5 * k,
                leading: 1.6,
                margins: [m(12.0), m(11.0), m(13.0), m(11.0)],
                heading_scale: [1.6, 1.35, 1.15, 1.05, 1.0, 1.0],
                numbered: false,
                indent: false,
                serif: false,
                text: Rgb::hex(0x1A1A1A),
                accent: Rgb::hex(0x333333),
                tint: Rgb::hex(0xF0F0F0),
                rule: Rgb::hex(0x999999),
                gap: 0.5,
                heading: HeadingLook::Plain,
                code: CodeLook::Filled,
                table: TableLook::Grid,
                folio: Folio::Centered,
                code_scale: 0.9,
                running_header: false,
            },
            StyleName::Classic => Style {
                body: 9.5 * k,
                leading: 1.8,
                margins: [m(18.0), m(17.0), m(20.0), m(19.0)],
                heading_scale: [1.7, 1.35, 1.15, 1.05, 1.0, 1.0],
                numbered: false,
                indent: true,
                serif: true,
                text: Rgb::hex(0x111111),
                accent: Rgb::hex(0x5A3A1A),
                tint: Rgb::hex(0xF6F1E7),
                rule: Rgb::hex(0x7A6A55),
                gap: 0.6,
                heading: HeadingLook::Ruled,
                code: CodeLook::Framed,
                table: TableLook::Grid,
                folio: Folio::Dashed,
                code_scale: 0.85,
                running_header: true,
            },
            StyleName::Modern => Style {
                body: 9.0 * k,
                leading: 1.75,
                margins: [m(15.0), m(14.0), m(16.0), m(14.0)],
                heading_scale: [1.9, 1.45, 1.2, 1.05, 1.0, 1.0],
                numbered: false,
                indent: false,
                serif: false,
                text: Rgb::hex(0x24292F),
                accent: Rgb::hex(0x0969DA),
                tint: Rgb::hex(0xEEF4FB),
                rule: Rgb::hex(0xB6C8DD),
                gap: 0.7,
                heading: HeadingLook::Bar,
                code: CodeLook::Accent,
                table: TableLook::Banded,
                folio: Folio::OfTotal,
                code_scale: 0.9,
                running_header: false,
            },
            StyleName::Technical => Style {
                body: 8.5 * k,
                leading: 1.55,
                margins: [m(13.0), m(12.0), m(16.0), m(12.0)],
                heading_scale: [1.5, 1.3, 1.12, 1.0, 1.0, 1.0],
                numbered: true,
                indent: false,
                serif: false,
                text: Rgb::hex(0x101418),
                accent: Rgb::hex(0x00695C),
                tint: Rgb::hex(0xF4F7F6),
                rule: Rgb::hex(0x5F7F7A),
                gap: 0.45,
                heading: HeadingLook::Underlined,
                code: CodeLook::Numbered,
                table: TableLook::Grid,
                folio: Folio::Running,
                code_scale: 0.88,
                running_header: false,
            },
            StyleName::Academic => Style {
                body: 9.5 * k,
                leading: 1.85,
                margins: [m(20.0), m(20.0), m(20.0), m(20.0)],
                heading_scale: [1.45, 1.2, 1.08, 1.0, 1.0, 1.0],
                numbered: true,
                indent: true,
                serif: true,
                text: Rgb::BLACK,
                accent: Rgb::BLACK,
                tint: Rgb::hex(0xF7F7F7),
                rule: Rgb::BLACK,
                gap: 0.5,
                heading: HeadingLook::Plain,
                code: CodeLook::Rules,
                table: TableLook::Booktabs,
                folio: Folio::Centered,
                code_scale: 0.85,
                running_header: true,
            },
        }
    }

    /// The line height of body text.
    pub fn line(&self) -> f32 {
        self.body * self.leading
    }
}
