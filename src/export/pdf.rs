//! Pages of drawing operations to PDF bytes.
//!
//! printpdf writes the text (CID fonts subset from the TrueType files, with ToUnicode maps so
//! text can be copied and searched) and the document skeleton; the rest is added to its lopdf
//! document directly: rules, boxes and fills (raw operators placed before the text of each
//! page, so backgrounds never cover text), images (one XObject per image, shared by every
//! use), link annotations, the nested outline of the headings, and stream compression.

use std::collections::HashMap;
use std::fmt::Write as _;

use lopdf::{Dictionary, Object, ObjectId, Stream, StringFormat};
use printpdf::{
    Color, Mm, Op, PdfDocument, PdfFontHandle, PdfPage, PdfSaveOptions, Pt, TextItem, TextMatrix,
    TextRenderingMode,
};

use super::book::{Front, InternalLink};
use super::fonts::Fonts;
use super::images::{Encoded, ImageStore};
use super::layout::{Draw, Face, Laid, OutlineEntry};
use super::style::{PT_PER_MM, Rgb};
use crate::error::{Error, Result};

/// Synthesised oblique: horizontal shear of the text matrix.
const SKEW: f32 = 0.2;

/// What the document says about itself.
pub struct Meta {
    /// The title.
    pub title: String,
    /// The source's date as `YYYYMMDD`, if it gives one.
    pub date: Option<String>,
    /// The 目次 pages in front.
    pub front: Front,
}

/// Writes the laid-out pages as a PDF.
pub fn write(
    laid: &Laid,
    page: (f32, f32),
    meta: &Meta,
    fonts: &Fonts,
    images: &ImageStore,
) -> Result<Vec<u8>> {
    let mut doc = PdfDocument::new(&meta.title);
    let sans = PdfFontHandle::External(doc.add_font(&fonts.sans.font));
    let serif = fonts.serif.as_ref().map(|f| PdfFontHandle::External(doc.add_font(&f.font)));
    let mono = PdfFontHandle::External(doc.add_font(&fonts.mono.font));
    let handle = |face: Face| match face {
        Face::Sans => sans.clone(),
        Face::Serif => serif.clone().unwrap_or_else(|| sans.clone()),
        Face::Mono => mono.clone(),
    };
    let pages: Vec<PdfPage> = laid
        .pages
        .iter()
        .map(|draws| PdfPage::new(Mm(page.0 / PT_PER_MM), Mm(page.1 / PT_PER_MM), text_ops(draws, &handle)))
        .collect();
    doc.with_pages(pages);
    let mut warnings = Vec::new();
    let mut lo = doc.to_lopdf_document(&PdfSaveOptions::default(), &mut warnings);
    let page_ids: Vec<ObjectId> = lo.get_pages().values().copied().collect();
    if page_ids.len() != laid.pages.len() {
        return Err(Error::internal("the PDF writer lost pages"));
    }
    let image_names = add_images(&mut lo, laid, images)?;
    for (draws, id) in laid.pages.iter().zip(&page_ids) {
        add_graphics(&mut lo, *id, draws, &image_names)?;
        add_links(&mut lo, *id, draws, &laid.outline, &page_ids)?;
    }
    add_internal_links(&mut lo, &meta.front.links, &page_ids)?;
    add_outline(&mut lo, &laid.outline, &page_ids)?;
    add_document_info(&mut lo, meta)?;
    lo.compress();
    let mut bytes = Vec::new();
    lo.save_to(&mut bytes).map_err(|e| Error::internal(format!("could not write the PDF: {e}")))?;
    Ok(bytes)
}

fn color(c: Rgb) -> Color {
    Color::Rgb(printpdf::Rgb { r: c.0, g: c.1, b: c.2, icc_profile: None })
}

/// The text of one page as printpdf operations: one text object per run.
fn text_ops(draws: &[Draw], handle: &dyn Fn(Face) -> PdfFontHandle) -> Vec<Op> {
    let mut ops = Vec::new();
    for draw in draws {
        let Draw::Text { x, y, face, size, color: c, bold, italic, text, spacing } = draw else { continue };
        ops.push(Op::StartTextSection);
        ops.push(Op::SetFont { font: handle(*face), size: Pt(*size) });
        ops.push(Op::SetFillColor { col: color(*c) });
        if *bold {
            ops.push(Op::SetTextRenderingMode { mode: TextRenderingMode::FillStroke });
            ops.push(Op::SetOutlineColor { col: color(*c) });
            ops.push(Op::SetOutlineThickness { pt: Pt(size * 0.035) });
        } else {
            ops.push(Op::SetTextRenderingMode { mode: TextRenderingMode::Fill });
        }
        let shear = if *italic { SKEW } else { 0.0 };
        ops.push(Op::SetTextMatrix { matrix: TextMatrix::Raw([1.0, 0.0, shear, 1.0, *x, *y]) });
        if *spacing != 0.0 {
            // Justified CJK run (layout.rs); character spacing outlives the text object.
            ops.push(Op::SetCharacterSpacing { multiplier: *spacing });
        }
        ops.push(Op::ShowText { items: vec![TextItem::Text(text.clone())] });
        if *spacing != 0.0 {
            ops.push(Op::SetCharacterSpacing { multiplier: 0.0 });
        }
        ops.push(Op::EndTextSection);
    }
    ops
}

fn num(out: &mut String, v: f32) {
    let _ = write!(out, "{:.2} ", v);
}

fn rgb(out: &mut String, c: Rgb, op: &str) {
    let _ = write!(out, "{:.3} {:.3} {:.3} {op} ", c.0, c.1, c.2);
}

/// Boxes, rules and images of one page, drawn before its text.
fn add_graphics(
    lo: &mut lopdf::Document,
    page: ObjectId,
    draws: &[Draw],
    names: &HashMap<usize, String>,
) -> Result<()> {
    let mut g = String::new();
    for draw in draws {
        match draw {
            Draw::Rect { x, y, w, h, fill, stroke } => {
                g.push_str("q ");
                if let Some(f) = fill {
                    rgb(&mut g, *f, "rg");
                }
                if let Some((c, width)) = stroke {
                    rgb(&mut g, *c, "RG");
                    num(&mut g, *width);
                    g.push_str("w ");
                }
                for v in [x, y, w, h] {
                    num(&mut g, *v);
                }
                g.push_str(match (fill.is_some(), stroke.is_some()) {
                    (true, true) => "re B Q\n",
                    (true, false) => "re f Q\n",
                    _ => "re S Q\n",
                });
            }
            Draw::Line { x1, y1, x2, y2, color, width } => {
                g.push_str("q ");
                rgb(&mut g, *color, "RG");
                num(&mut g, *width);
                g.push_str("w ");
                num(&mut g, *x1);
                num(&mut g, *y1);
                g.push_str("m ");
                num(&mut g, *x2);
                num(&mut g, *y2);
                g.push_str("l S Q\n");
            }
            Draw::Image { id, x, y, w, h } => {
                if let Some(name) = names.get(id) {
                    g.push_str("q ");
                    num(&mut g, *w);
                    g.push_str("0 0 ");
                    num(&mut g, *h);
                    num(&mut g, *x);
                    num(&mut g, *y);
                    let _ = writeln!(g, "cm /{name} Do Q");
                }
            }
            Draw::Text { .. } | Draw::Link { .. } => {}
        }
    }
    if g.is_empty() {
        return Ok(());
    }
    let contents = lo
        .get_object(page)
        .and_then(Object::as_dict)
        .and_then(|d| d.get(b"Contents"))
        .and_then(Object::as_reference)
        .map_err(|e| Error::internal(format!("the PDF page has no content stream: {e}")))?;
    let stream = lo
        .get_object_mut(contents)
        .and_then(Object::as_stream_mut)
        .map_err(|e| Error::internal(format!("the PDF page content is not a stream: {e}")))?;
    let mut content = g.into_bytes();
    content.extend_from_slice(&stream.content);
    stream.set_content(content);
    Ok(())
}

/// Adds every image used as an XObject to the shared XObject dictionary; returns the names.
fn add_images(lo: &mut lopdf::Document, laid: &Laid, store: &ImageStore) -> Result<HashMap<usize, String>> {
    // The largest box each image is shown in decides its resolution.
    let mut boxes: HashMap<usize, (f32, f32)> = HashMap::new();
    for draw in laid.pages.iter().flatten() {
        if let Draw::Image { id, w, h, .. } = draw {
            let e = boxes.entry(*id).or_insert((0.0, 0.0));
            *e = (e.0.max(*w), e.1.max(*h));
        }
    }
    let mut names = HashMap::new();
    if boxes.is_empty() {
        return Ok(names);
    }
    let mut ids: Vec<usize> = boxes.keys().copied().collect();
    ids.sort_unstable();
    let mut entries = Vec::new();
    for id in ids {
        let (w, h) = boxes[&id];
        let Ok(encoded) = store.encode(id, w, h) else { continue };
        let stream = image_stream(lo, encoded);
        let object = lo.add_object(stream);
        let name = format!("LvsIm{id}");
        entries.push((name.clone(), object));
        names.insert(id, name);
    }
    // printpdf gives every page the same XObject dictionary (by reference).
    let first = *lo.get_pages().values().next().ok_or_else(|| Error::internal("the PDF has no page"))?;
    let resources = lo
        .get_object(first)
        .and_then(Object::as_dict)
        .and_then(|d| d.get(b"Resources"))
        .and_then(Object::as_reference)
        .map_err(|e| Error::internal(format!("the PDF page has no resources: {e}")))?;
    let xobjects = lo
        .get_object(resources)
        .and_then(Object::as_dict)
        .and_then(|d| d.get(b"XObject"))
        .and_then(Object::as_reference)
        .map_err(|e| Error::internal(format!("the PDF page has no XObject dictionary: {e}")))?;
    let dict = lo
        .get_object_mut(xobjects)
        .and_then(Object::as_dict_mut)
        .map_err(|e| Error::internal(format!("the PDF XObject dictionary is not a dictionary: {e}")))?;
    for (name, object) in entries {
        dict.set(name, Object::Reference(object));
    }
    Ok(names)
}

fn image_stream(lo: &mut lopdf::Document, encoded: Encoded) -> Stream {
    let mut dict = Dictionary::new();
    dict.set("Type", Object::Name(b"XObject".to_vec()));
    dict.set("Subtype", Object::Name(b"Image".to_vec()));
    dict.set("BitsPerComponent", Object::Integer(8));
    match encoded {
        Encoded::Jpeg { data, width, height, components, adobe } => {
            dict.set("Width", Object::Integer(i64::from(width)));
            dict.set("Height", Object::Integer(i64::from(height)));
            let space: &[u8] = match components {
                1 => b"DeviceGray",
                4 => b"DeviceCMYK",
                _ => b"DeviceRGB",
            };
            dict.set("ColorSpace", Object::Name(space.to_vec()));
            if components == 4 && adobe {
                dict.set("Decode", Object::Array([1, 0, 1, 0, 1, 0, 1, 0].map(Object::Integer).to_vec()));
            }
            dict.set("Filter", Object::Name(b"DCTDecode".to_vec()));
            Stream::new(dict, data).with_compression(false)
        }
        Encoded::Raw { pixels, alpha, width, height, gray } => {
            dict.set("Width", Object::Integer(i64::from(width)));
            dict.set("Height", Object::Integer(i64::from(height)));
            let space: &[u8] = if gray { b"DeviceGray" } else { b"DeviceRGB" };
            dict.set("ColorSpace", Object::Name(space.to_vec()));
            if let Some(alpha) = alpha {
                let mut mask = Dictionary::new();
                mask.set("Type", Object::Name(b"XObject".to_vec()));
                mask.set("Subtype", Object::Name(b"Image".to_vec()));
                mask.set("Width", Object::Integer(i64::from(width)));
                mask.set("Height", Object::Integer(i64::from(height)));
                mask.set("ColorSpace", Object::Name(b"DeviceGray".to_vec()));
                mask.set("BitsPerComponent", Object::Integer(8));
                let mask_id = lo.add_object(Stream::new(mask, alpha));
                dict.set("SMask", Object::Reference(mask_id));
            }
            Stream::new(dict, pixels)
        }
    }
}

/// Link annotations of one page: URLs with a scheme, and `#id` links to a heading with that
/// explicit `{#id}` (other relative links have no target in a single PDF).
fn add_links(
    lo: &mut lopdf::Document,
    page: ObjectId,
    draws: &[Draw],
    outline: &[OutlineEntry],
    pages: &[ObjectId],
) -> Result<()> {
    let mut annots = Vec::new();
    for draw in draws {
        let Draw::Link { x, y, w, h, target } = draw else { continue };
        let lower = target.to_ascii_lowercase();
        let mut annot = Dictionary::new();
        if let Some(fragment) = target.strip_prefix('#') {
            let Some(heading) = outline.iter().find(|e| e.id.as_deref() == Some(fragment)) else { continue };
            let Some(&to) = pages.get(heading.page) else { continue };
            annot.set("Dest", destination(to, heading.y));
        } else if lower.starts_with("http://")
            || lower.starts_with("https://")
            || lower.starts_with("mailto:")
        {
            let mut action = Dictionary::new();
            action.set("S", Object::Name(b"URI".to_vec()));
            action.set("URI", Object::String(target.as_bytes().to_vec(), StringFormat::Literal));
            annot.set("A", Object::Dictionary(action));
        } else {
            continue;
        }
        annot.set("Type", Object::Name(b"Annot".to_vec()));
        annot.set("Subtype", Object::Name(b"Link".to_vec()));
        annot.set("Rect", Object::Array([*x, *y, x + w, y + h].map(Object::Real).to_vec()));
        annot.set("Border", Object::Array(vec![Object::Integer(0), Object::Integer(0), Object::Integer(0)]));
        annots.push(Object::Reference(lo.add_object(annot)));
    }
    if annots.is_empty() {
        return Ok(());
    }
    let dict = lo
        .get_object_mut(page)
        .and_then(Object::as_dict_mut)
        .map_err(|e| Error::internal(format!("the PDF page is not a dictionary: {e}")))?;
    match dict.get_mut(b"Annots") {
        Ok(Object::Array(existing)) => existing.extend(annots),
        _ => dict.set("Annots", Object::Array(annots)),
    }
    Ok(())
}

/// A link destination: `page` scrolled to `y` (PDF points), the zoom left as it is.
fn destination(page: ObjectId, y: f32) -> Object {
    Object::Array(vec![
        Object::Reference(page),
        Object::Name(b"XYZ".to_vec()),
        Object::Null,
        Object::Real(y),
        Object::Null,
    ])
}

/// Links from the 目次 entries to their headings.
fn add_internal_links(lo: &mut lopdf::Document, links: &[InternalLink], pages: &[ObjectId]) -> Result<()> {
    for link in links {
        let (Some(&on), Some(&target)) = (pages.get(link.page), pages.get(link.target_page)) else {
            continue;
        };
        let mut annot = Dictionary::new();
        annot.set("Type", Object::Name(b"Annot".to_vec()));
        annot.set("Subtype", Object::Name(b"Link".to_vec()));
        annot.set(
            "Rect",
            Object::Array([link.x, link.y, link.x + link.w, link.y + link.h].map(Object::Real).to_vec()),
        );
        annot.set("Border", Object::Array(vec![Object::Integer(0), Object::Integer(0), Object::Integer(0)]));
        annot.set("Dest", destination(target, link.target_y));
        let id = lo.add_object(annot);
        let dict = lo
            .get_object_mut(on)
            .and_then(Object::as_dict_mut)
            .map_err(|e| Error::internal(format!("the PDF page is not a dictionary: {e}")))?;
        match dict.get_mut(b"Annots") {
            Ok(Object::Array(existing)) => existing.push(Object::Reference(id)),
            _ => dict.set("Annots", Object::Array(vec![Object::Reference(id)])),
        }
    }
    Ok(())
}

/// The document information (title, producer, the source's date), the language and the page
/// labels (i, ii, … for the 目次 pages, then 1, 2, … for the body).
fn add_document_info(lo: &mut lopdf::Document, meta: &Meta) -> Result<()> {
    let mut info = Dictionary::new();
    info.set("Title", text_string(&meta.title));
    info.set("Producer", Object::String(b"local-vector-search-mcp".to_vec(), StringFormat::Literal));
    if let Some(date) = &meta.date {
        let stamp = format!("D:{date}000000Z");
        info.set("CreationDate", Object::String(stamp.clone().into_bytes(), StringFormat::Literal));
        info.set("ModDate", Object::String(stamp.into_bytes(), StringFormat::Literal));
    }
    // Replace printpdf's information dictionary (it carries 1970 dates) in place.
    match lo.trailer.get(b"Info").and_then(Object::as_reference) {
        Ok(id) => {
            lo.objects.insert(id, Object::Dictionary(info));
        }
        Err(_) => {
            let id = lo.add_object(info);
            lo.trailer.set("Info", Object::Reference(id));
        }
    }
    let front = meta.front.pages;
    let catalog = lo.catalog_mut().map_err(|e| Error::internal(format!("the PDF has no catalog: {e}")))?;
    catalog.set("Lang", Object::String(b"ja".to_vec(), StringFormat::Literal));
    catalog.remove(b"Metadata");
    let mut prefs = Dictionary::new();
    prefs.set("DisplayDocTitle", Object::Boolean(true));
    catalog.set("ViewerPreferences", Object::Dictionary(prefs));
    if front > 0 {
        let mut roman = Dictionary::new();
        roman.set("S", Object::Name(b"r".to_vec()));
        let mut decimal = Dictionary::new();
        decimal.set("S", Object::Name(b"D".to_vec()));
        let mut labels = Dictionary::new();
        labels.set(
            "Nums",
            Object::Array(vec![
                Object::Integer(0),
                Object::Dictionary(roman),
                Object::Integer(front as i64),
                Object::Dictionary(decimal),
            ]),
        );
        catalog.set("PageLabels", Object::Dictionary(labels));
    }
    Ok(())
}

/// A PDF text string: UTF-16BE with a byte order mark.
fn text_string(s: &str) -> Object {
    let mut bytes = vec![0xFE, 0xFF];
    for unit in s.encode_utf16() {
        bytes.extend_from_slice(&unit.to_be_bytes());
    }
    Object::String(bytes, StringFormat::Hexadecimal)
}

/// The nested outline (bookmarks) of the headings.
fn add_outline(lo: &mut lopdf::Document, entries: &[OutlineEntry], pages: &[ObjectId]) -> Result<()> {
    if entries.is_empty() {
        return Ok(());
    }
    let root = lo.new_object_id();
    let ids: Vec<ObjectId> = entries.iter().map(|_| lo.new_object_id()).collect();
    // Parent of each entry: the nearest earlier entry with a smaller level.
    let mut parent: Vec<Option<usize>> = Vec::with_capacity(entries.len());
    let mut stack: Vec<usize> = Vec::new();
    for (i, e) in entries.iter().enumerate() {
        while stack.last().is_some_and(|&j| entries[j].level >= e.level) {
            stack.pop();
        }
        parent.push(stack.last().copied());
        stack.push(i);
    }
    let children =
        |p: Option<usize>| -> Vec<usize> { (0..entries.len()).filter(|&i| parent[i] == p).collect() };
    let mut dicts: Vec<Dictionary> = Vec::with_capacity(entries.len());
    for (i, e) in entries.iter().enumerate() {
        let mut d = Dictionary::new();
        d.set("Title", text_string(&e.title));
        d.set("Parent", Object::Reference(parent[i].map_or(root, |p| ids[p])));
        let page = pages.get(e.page).copied().unwrap_or(pages[0]);
        d.set(
            "Dest",
            Object::Array(vec![
                Object::Reference(page),
                Object::Name(b"XYZ".to_vec()),
                Object::Null,
                Object::Real(e.y),
                Object::Null,
            ]),
        );
        dicts.push(d);
    }
    let link = |kids: &[usize], dicts: &mut Vec<Dictionary>| {
        for (k, &i) in kids.iter().enumerate() {
            if k > 0 {
                dicts[i].set("Prev", Object::Reference(ids[kids[k - 1]]));
            }
            if let Some(&next) = kids.get(k + 1) {
                dicts[i].set("Next", Object::Reference(ids[next]));
            }
        }
    };
    for i in 0..entries.len() {
        let kids = children(Some(i));
        if let (Some(&first), Some(&last)) = (kids.first(), kids.last()) {
            dicts[i].set("First", Object::Reference(ids[first]));
            dicts[i].set("Last", Object::Reference(ids[last]));
            // Open the top two levels.
            let count = kids.len() as i64;
            dicts[i].set("Count", Object::Integer(if entries[i].level <= 1 { count } else { -count }));
        }
        link(&kids, &mut dicts);
    }
    let top = children(None);
    link(&top, &mut dicts);
    for (id, d) in ids.iter().zip(dicts) {
        lo.objects.insert(*id, Object::Dictionary(d));
    }
    let mut outlines = Dictionary::new();
    outlines.set("Type", Object::Name(b"Outlines".to_vec()));
    outlines.set("First", Object::Reference(ids[top[0]]));
    outlines.set("Last", Object::Reference(ids[*top.last().unwrap_or(&top[0])]));
    outlines.set("Count", Object::Integer(top.len() as i64));
    lo.objects.insert(root, Object::Dictionary(outlines));
    let catalog = lo.catalog_mut().map_err(|e| Error::internal(format!("the PDF has no catalog: {e}")))?;
    catalog.set("Outlines", Object::Reference(root));
    catalog.set("PageMode", Object::Name(b"UseOutlines".to_vec()));
    Ok(())
}
