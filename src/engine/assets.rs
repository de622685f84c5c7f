//! Image and file assets: `kb_save_image`, `kb_list_images`, `kb_load_image`,
//! `kb_delete_image`, `kb_move_image` (`docs/reference/original-server.md` §11) and
//! `kb_download_file`.
//!
//! Images are plain files: they are never indexed, and these tools never read, change or
//! reindex Markdown. Mutations need `knowledgeBase.allowWrites` (else `PERMISSION_DENIED`) and
//! hold the mutation lock only for the final rename or delete, never during a download.

use std::io::Read;

use super::Engine;
use crate::assets::download::Downloader;
use crate::assets::{
    ImageFormat, MAX_ASSET_BYTES, check_declared_mime, check_signature, choose_file_name, decode_cursor,
    encode_cursor, gif_first_frame_png, hash_capped, image_missing, markdown_snippet, mime_for_file_name,
    random_hex12, resource_uri, supported_format, timestamp, too_large, with_suffix,
};
use crate::error::{Error, ErrorCode, Result};
use crate::text::{Sha256Stream, rfc3339_utc};
use crate::wire::{
    AssetFileInfo, AssetPathRequest, BinaryKind, BinaryReply, DeleteImageResponse, ImageItem,
    ListImagesRequest, ListImagesResponse, MoveImageRequest, MoveImageResponse, SaveImageRequest,
    SaveImageResponse,
};
use crate::workspace::{PathContext, RelPath, compare_paths};

/// The folder `kb_save_image` saves to without a `targetPath`.
pub const DEFAULT_IMAGE_DIR: &str = "images";

const WRITES_DISABLED: &str =
    "Workspace writes are disabled. Set knowledgeBase.allowWrites to true to enable mutation tools.";

/// Most `-N` suffixes tried before giving up on a free name.
const MAX_SUFFIX: u32 = 10_000;

impl Engine {
    /// `PERMISSION_DENIED` unless `knowledgeBase.allowWrites` is on.
    fn require_asset_writes(&self) -> Result<()> {
        if self.config.knowledge_base.allow_writes {
            Ok(())
        } else {
            Err(Error::new(ErrorCode::PermissionDenied, WRITES_DISABLED))
        }
    }

    /// `kb_save_image` with the product's downloader.
    pub fn save_image(&self, req: &SaveImageRequest) -> Result<SaveImageResponse> {
        self.save_image_with(req, &Downloader::new())
    }

    /// `kb_save_image` with a given downloader (tests use a local HTTPS server).
    pub fn save_image_with(
        &self,
        req: &SaveImageRequest,
        downloader: &Downloader,
    ) -> Result<SaveImageResponse> {
        self.require_asset_writes()?;
        let url =
            req.file.download_url.as_deref().filter(|u| !u.trim().is_empty()).ok_or_else(|| {
                Error::invalid_argument("The file parameter does not contain download_url.")
            })?;
        if req.file.file_id.as_deref().is_none_or(|id| id.trim().is_empty()) {
            return Err(Error::invalid_argument("The file parameter does not contain file_id."));
        }
        let file_name = req.file_name.as_deref().filter(|n| !n.is_empty());
        let target_input = req.target_path.as_deref().filter(|t| !t.trim().is_empty());
        if file_name.is_some() && target_input.is_some() {
            return Err(Error::invalid_argument("fileName and targetPath cannot be supplied together."));
        }
        let ws = self.workspace();
        let target = target_input.map(|t| ws.rel_path(t, PathContext::Image)).transpose()?;
        if let Some(t) = &target
            && ws.file_metadata(t)?.is_some()
        {
            return Err(Error::new(ErrorCode::AlreadyExists, "Destination already exists."));
        }
        let dir = match &target {
            Some(t) => t.parent(),
            None => Some(ws.rel_path(DEFAULT_IMAGE_DIR, PathContext::Image)?),
        };

        let mut staged = ws.stage_file(dir.as_ref())?;
        let downloaded = downloader.download(url, staged.file())?;
        let format = ImageFormat::detect(&downloaded.prefix).ok_or_else(|| {
            Error::new(ErrorCode::UnsupportedFormat, "The supplied file is not a supported image.")
        })?;
        check_declared_mime(req.file.mime_type.as_deref(), format)?;

        let path = match &target {
            Some(t) => {
                if ImageFormat::from_file_name(t.file_name()) != Some(format) {
                    return Err(Error::new(
                        ErrorCode::UnsupportedFormat,
                        "targetPath extension does not match the image signature.",
                    ));
                }
                let _lock = self.mutation_lock()?;
                ws.publish_new(&mut staged, t)?;
                t.clone()
            }
            None => {
                let name = choose_file_name(
                    file_name,
                    req.file.file_name.as_deref(),
                    format,
                    &timestamp(),
                    &random_hex12(),
                )?;
                let _lock = self.mutation_lock()?;
                self.publish_with_suffix(&mut staged, dir.as_ref(), &name)?
            }
        };
        Ok(SaveImageResponse {
            path: path.as_str().to_owned(),
            mime_type: format.mime().to_owned(),
            bytes: downloaded.bytes,
            sha256: downloaded.sha256,
            markdown: markdown_snippet(req.alt_text.as_deref(), path.as_str()),
        })
    }

    /// Publishes under `name`, then `stem-2.ext`, `stem-3.ext`, … until a name is free.
    fn publish_with_suffix(
        &self,
        staged: &mut crate::workspace::Staged,
        dir: Option<&RelPath>,
        name: &str,
    ) -> Result<RelPath> {
        let ws = self.workspace();
        for n in 1..=MAX_SUFFIX {
            let candidate = if n == 1 { name.to_owned() } else { with_suffix(name, n) };
            let full = match dir {
                Some(d) => format!("{d}/{candidate}"),
                None => candidate,
            };
            let dest = ws.rel_path(&full, PathContext::Image)?;
            match ws.publish_new(staged, &dest) {
                Ok(()) => return Ok(dest),
                Err(e) if e.code == ErrorCode::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
        Err(Error::new(
            ErrorCode::AlreadyExists,
            format!("No free name like '{name}' was found; give another fileName or a targetPath."),
        ))
    }

    /// `kb_list_images`.
    pub fn list_images(&self, req: &ListImagesRequest) -> Result<ListImagesResponse> {
        let page_size = req.page_size.unwrap_or(50);
        if !(1..=200).contains(&page_size) {
            return Err(Error::invalid_argument("pageSize must be between 1 and 200."));
        }
        let budget = super::paging::budget(req.max_bytes, self.config.tools.max_answer_bytes)?;
        let after = req.cursor.as_deref().filter(|c| !c.trim().is_empty()).map(decode_cursor).transpose()?;
        let files = match crate::assets::list_image_files(self.workspace()) {
            Ok(files) => files,
            Err(e) if e.code == ErrorCode::NotFound => Vec::new(),
            Err(e) if e.code == ErrorCode::PermissionDenied => {
                return Err(Error::new(
                    ErrorCode::PermissionDenied,
                    "Image directory could not be enumerated.",
                ));
            }
            Err(e) => return Err(e),
        };
        let mut images = files
            .into_iter()
            .filter_map(|f| ImageFormat::from_file_name(f.path.file_name()).map(|format| (f, format)))
            .filter(|(f, _)| {
                after
                    .as_deref()
                    .is_none_or(|a| compare_paths(f.path.as_str(), a) == std::cmp::Ordering::Greater)
            })
            .peekable();
        let mut page = Vec::new();
        while page.len() < page_size as usize {
            let Some((f, format)) = images.next() else { break };
            page.push(ImageItem {
                path: f.path.as_str().to_owned(),
                mime_type: format.mime().to_owned(),
                bytes: f.size,
                last_write_time_utc: rfc3339_utc(f.last_write_time),
            });
        }
        // The answer budget cuts a page of long paths short (`docs/tools.md`, "Bounded answers").
        let whole = page.len();
        page.truncate(super::paging::fitting(&page, budget));
        let more = page.len() < whole || images.peek().is_some();
        let next_cursor = page.last().filter(|_| more).map(|last| encode_cursor(&last.path));
        let notice = next_cursor.as_ref().map(|_| {
            format!(
                "This page holds {} images; more follow: pass nextCursor as cursor for the next page.",
                page.len()
            )
        });
        Ok(ListImagesResponse {
            images: page,
            truncated: next_cursor.as_ref().map(|_| true),
            next_cursor,
            notice,
        })
    }

    /// `kb_load_image`: the image (a GIF as a PNG of its first frame) and its metadata.
    pub fn load_image(&self, req: &AssetPathRequest) -> Result<BinaryReply> {
        let (path, format) = self.image_path(&req.path)?;
        let (bytes, sha256) = self.read_asset(&path, "Image")?;
        check_signature(&path, &bytes, &[format])?;
        let info = AssetFileInfo {
            path: path.as_str().to_owned(),
            mime_type: format.mime().to_owned(),
            bytes: bytes.len() as u64,
            sha256,
        };
        let (data, mime_type) = match format {
            ImageFormat::Gif => (gif_first_frame_png(&bytes)?, ImageFormat::Png.mime().to_owned()),
            _ => (bytes, format.mime().to_owned()),
        };
        Ok(BinaryReply { kind: BinaryKind::Image, mime_type, data, info })
    }

    /// `kb_delete_image`: removes exactly one image file (Markdown referring to it is not
    /// touched; folders stay).
    pub fn delete_image(&self, req: &AssetPathRequest) -> Result<DeleteImageResponse> {
        self.require_asset_writes()?;
        let (path, _) = self.image_path(&req.path)?;
        self.existing_image(&path)?;
        {
            let _lock = self.mutation_lock()?;
            self.workspace().remove_file(&path).map_err(|e| image_missing(&path, e))?;
        }
        Ok(DeleteImageResponse { path: path.as_str().to_owned(), deleted: true })
    }

    /// `kb_move_image` (`docs/reference/original-server.md` §11.6).
    pub fn move_image(&self, req: &MoveImageRequest) -> Result<MoveImageResponse> {
        self.require_asset_writes()?;
        let expected = req.expected_sha256.as_deref().map(str::trim).filter(|e| !e.is_empty());
        if let Some(e) = expected
            && (e.len() != 64 || !e.chars().all(|c| c.is_ascii_hexdigit()))
        {
            return Err(Error::invalid_argument("expectedSha256 must be 64 hexadecimal characters."));
        }
        let ws = self.workspace();
        let from = ws.rel_path(&req.source_path, PathContext::Image)?;
        let to = ws.rel_path(&req.target_path, PathContext::Image)?;
        if from == to {
            return Err(Error::invalid_argument(
                "sourcePath and targetPath name the same file; choose another targetPath.",
            ));
        }
        self.existing_image(&from)?;
        if ws.file_metadata(&to)?.is_some() {
            return Err(Error::new(ErrorCode::AlreadyExists, "Destination already exists."));
        }
        let from_format = supported_format(&from)?;
        let to_format = supported_format(&to)?;
        let (bytes, sha256) = self.read_asset(&from, "Image")?;
        check_signature(&from, &bytes, &[from_format, to_format])?;
        if let Some(e) = expected
            && !e.eq_ignore_ascii_case(&sha256)
        {
            return Err(Error::new(
                ErrorCode::Conflict,
                "Image has changed since expectedSha256 was computed; load it again and retry with the new hash.",
            ));
        }
        {
            let _lock = self.mutation_lock()?;
            ws.rename_new(&from, &to, |file| {
                let (_, again) = hash_capped(file, &from, "Image")?;
                if again == sha256 {
                    Ok(())
                } else {
                    Err(Error::new(ErrorCode::Conflict, "Image changed during move."))
                }
            })?;
        }
        Ok(MoveImageResponse {
            previous_path: from.as_str().to_owned(),
            path: to.as_str().to_owned(),
            sha256,
        })
    }

    /// `kb_download_file`: any regular file under the root up to 25 MiB, as an embedded binary
    /// resource plus `{path, mimeType, bytes, sha256}`. Needs no write permission.
    pub fn download_file(&self, req: &AssetPathRequest) -> Result<BinaryReply> {
        let path = self.workspace().rel_path(&req.path, PathContext::Any)?;
        let (data, sha256) = self.read_asset(&path, "File")?;
        let mime_type = mime_for_file_name(path.file_name()).to_owned();
        let info = AssetFileInfo {
            path: path.as_str().to_owned(),
            mime_type: mime_type.clone(),
            bytes: data.len() as u64,
            sha256,
        };
        Ok(BinaryReply { kind: BinaryKind::Resource { uri: resource_uri(&path) }, mime_type, data, info })
    }

    /// Validates an image path and its extension.
    fn image_path(&self, input: &str) -> Result<(RelPath, ImageFormat)> {
        let path = self.workspace().rel_path(input, PathContext::Image)?;
        let format = supported_format(&path)?;
        Ok((path, format))
    }

    /// `NOT_FOUND` unless `path` is an existing file.
    fn existing_image(&self, path: &RelPath) -> Result<()> {
        match self.workspace().file_metadata(path)? {
            None => Err(Error::not_found(format!("Image '{path}' does not exist."))),
            Some(m) if m.is_dir() => Err(Error::new(
                ErrorCode::UnsupportedFormat,
                format!("'{path}' is a directory, not an image; give the path of an image file."),
            )),
            Some(_) => Ok(()),
        }
    }

    /// The bytes (at most [`MAX_ASSET_BYTES`], by length and while reading) and SHA-256 of a
    /// file; `what` is `Image` or `File` for messages.
    fn read_asset(&self, path: &RelPath, what: &str) -> Result<(Vec<u8>, String)> {
        let (file, meta) = self.workspace().open_file(path).map_err(|e| match e.code {
            ErrorCode::NotFound => Error::not_found(format!("{what} '{path}' does not exist.")),
            _ => e,
        })?;
        if meta.len() > MAX_ASSET_BYTES {
            return Err(too_large(path, what));
        }
        let mut bytes = Vec::with_capacity(meta.len() as usize);
        file.take(MAX_ASSET_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| Error::io(&format!("'{path}'"), &e))?;
        if bytes.len() as u64 > MAX_ASSET_BYTES {
            return Err(too_large(path, what));
        }
        let mut hasher = Sha256Stream::default();
        hasher.update(&bytes);
        Ok((bytes, hasher.finish_hex()))
    }
}
