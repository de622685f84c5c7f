//! Builds the IPADIC dictionary that the Japanese analyzer embeds.
//!
//! lindera's own `embed-ipadic` feature downloads a tarball at build time, which fails on machines
//! that reach only package registries. Instead we build lindera's binary dictionary from the
//! MeCab IPADIC *sources* (the `.csv`/`.def` files, EUC-JP) with lindera's own builder. They come
//! from Debian/Ubuntu's `mecab-ipadic` package (`/usr/share/mecab/dic/ipadic`) or from any folder
//! named by `LVS_IPADIC_SRC` (e.g. an unpacked `mecab-ipadic-2.7.0-20070801.tar.gz`).
//! The result lands in `OUT_DIR` and `src/lexical/dictionary.rs` includes it into the binary.
//!
//! It also copies the two fonts the PDF export carries for machines without Japanese fonts
//! (`src/export/fonts.rs`): IPAexGothic (`ipaexg.ttf`) and IPAGothic (`ipag.ttf`), from Debian's
//! `fonts-ipaexfont-gothic` and `fonts-ipafont-gothic` or from a folder named by `LVS_FONT_SRC`.

use std::path::{Path, PathBuf};

const DEFAULT_SRC: &str = "/usr/share/mecab/dic/ipadic";

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=src/lexical/ipadic-metadata.json");
    println!("cargo:rerun-if-env-changed=LVS_IPADIC_SRC");

    let src = std::env::var_os("LVS_IPADIC_SRC").map_or_else(|| PathBuf::from(DEFAULT_SRC), PathBuf::from);
    if !src.join("matrix.def").is_file() || !src.join("char.def").is_file() {
        panic!(
            "\n\nIPADIC dictionary sources not found at {}.\n\
             Install them with `sudo apt-get install mecab-ipadic` (Debian/Ubuntu), or unpack \
             mecab-ipadic-2.7.0-20070801.tar.gz anywhere and set LVS_IPADIC_SRC to that folder.\n\n",
            src.display()
        );
    }
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let dict_dir = out.join("lindera-ipadic");
    let stamp = dict_dir.join("metadata.json");
    if !stamp.is_file() {
        build(&src, &dict_dir);
    }
    println!("cargo:rustc-env=LINDERA_WORKDIR={}", out.display());
    copy_fonts(&out);
}

/// The built-in PDF fonts: file name, Debian package, where distributions put it.
const FONTS: &[(&str, &str, &[&str])] = &[
    (
        "ipaexg.ttf",
        "fonts-ipaexfont-gothic",
        &[
            "/usr/share/fonts/opentype/ipaexfont-gothic/ipaexg.ttf",
            "/usr/share/fonts/truetype/ipaexfont-gothic/ipaexg.ttf",
            "/usr/share/fonts/ipa-ex-gothic/ipaexg.ttf",
        ],
    ),
    (
        "ipag.ttf",
        "fonts-ipafont-gothic",
        &[
            "/usr/share/fonts/opentype/ipafont-gothic/ipag.ttf",
            "/usr/share/fonts/truetype/ipafont-gothic/ipag.ttf",
            "/usr/share/fonts/ipa-gothic/ipag.ttf",
        ],
    ),
];

fn copy_fonts(out: &Path) {
    println!("cargo:rerun-if-env-changed=LVS_FONT_SRC");
    let dir = out.join("fonts");
    std::fs::create_dir_all(&dir).expect("create font output folder");
    let named = std::env::var_os("LVS_FONT_SRC").map(PathBuf::from);
    for (name, package, paths) in FONTS {
        let found = match &named {
            Some(folder) => Some(folder.join(name)).filter(|p| p.is_file()),
            None => paths.iter().map(PathBuf::from).find(|p| p.is_file()),
        };
        let Some(src) = found else {
            panic!(
                "\n\nThe PDF font {name} was not found{}.\n\
                 Install it with `sudo apt-get install {package}` (Debian/Ubuntu), or put {name} \
                 (IPA fonts, https://moji.or.jp/ipafont/) in a folder and set LVS_FONT_SRC to it.\n\n",
                named.as_ref().map(|f| format!(" in LVS_FONT_SRC ({})", f.display())).unwrap_or_default()
            );
        };
        println!("cargo:rerun-if-changed={}", src.display());
        let dst = dir.join(name);
        let same =
            std::fs::metadata(&dst).ok().map(|m| m.len()) == std::fs::metadata(&src).ok().map(|m| m.len());
        if !same {
            std::fs::copy(&src, &dst).unwrap_or_else(|e| panic!("copying {} failed: {e}", src.display()));
        }
    }
}

fn build(src: &Path, dict_dir: &Path) {
    let metadata_bytes =
        std::fs::read("src/lexical/ipadic-metadata.json").expect("metadata.json is in the repository");
    let metadata = lindera_dictionary::dictionary::metadata::Metadata::load(&metadata_bytes)
        .expect("ipadic metadata parses");
    let tmp = dict_dir.with_extension("partial");
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).expect("create dictionary output folder");
    lindera_dictionary::builder::DictionaryBuilder::new(metadata)
        .build_dictionary(src, &tmp)
        .unwrap_or_else(|e| panic!("building IPADIC from {} failed: {e}", src.display()));
    let _ = std::fs::remove_dir_all(dict_dir);
    std::fs::rename(&tmp, dict_dir).expect("move built dictionary into place");
}
