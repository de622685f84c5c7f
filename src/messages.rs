//! The message catalogue of the catalog tools and the HTML export: every sentence, fragment and
//! label they show, by [`Msg`], in English and Japanese (`docs/design/catalog.md`, "Messages").
//! It sits below both (`docs/architecture.md`), so the catalog and `html` render from one table.
//!
//! Texts are templates: `{name}` is an argument, `{{` and `}}` are literal braces. Call sites
//! render one with `msg!`: `msg!(lang, IndexMissing, path = p)`.
//!
//! Invariants:
//!
//! - Every [`Msg`] has exactly one entry, at the position of its discriminant, with a non-empty
//!   English and Japanese text (checked when the crate compiles).
//! - Both texts of an entry use the same arguments (a unit test); the entries that carry an
//!   error number or an issue kind are the specification's sentences (a unit test reads them).

use std::fmt::{Display, Write as _};

use crate::text::Language;

/// A message. Entries that the catalog specification numbers (`E1`…) or names after a `kb_check`
/// issue kind say so in [`CATALOGUE`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[allow(missing_docs)] // Each variant's texts sit next to it in `CATALOGUE`.
pub enum Msg {
    // Settings (`config.rs`).
    NoConfiguration,
    ConfigFileMissing,
    ConfigNotYaml,
    ConfigTooLarge,
    SettingProblem,
    NoIndexSetting,
    NoBuildSection,
    SectionNotMapping,
    MustBe,
    WriteExample,
    ResolvesOutside,
    UsePathInside,
    UsePatternInside,
    RefusedByGuard,
    UsePlainPath,
    NotAGlobSetting,
    FixThePattern,
    IsUnknown,
    RemoveOrRespell,
    NotALanguage,
    UseEnOrJa,
    NotAnIssueKind,
    UseIssueKinds,
    NotALanguageTag,
    UseLanguageTag,
    NotTocDepth,
    UseTocDepth,
    MissingOrEmpty,
    ListDocsToCombine,
    NotHtmlName,
    UseHtmlName,
    // Kinds of YAML values.
    KindNull,
    KindBool,
    KindNumber,
    KindString,
    KindList,
    KindMapping,
    KindTagged,
    KindStrings,
    // Reading the index (`docs.rs`).
    IndexMissing,
    IndexTooLarge,
    IndexNotYaml,
    IndexNotUtf8,
    IndexSchemaFind,
    AndMore,
    // The schema (`index.rs`).
    IndexNotMapping,
    VersionUnsupported,
    UnknownKey,
    MissingKey,
    WrongType,
    ExpectString,
    FixString,
    ExpectList,
    FixList,
    ExpectMapping,
    FixMapping,
    ExpectBool,
    FixBool,
    ExpectRelation,
    FixRelation,
    ExpectTagRef,
    FixTagRef,
    EmptyValue,
    IdWhitespace,
    IdTooLong,
    NotMarkdownPath,
    StoredOutside,
    StoredReserved,
    NotAGlob,
    NotARelationType,
    NoneClose,
    // `kb_find_docs` and `kb_list_tags` (`find.rs`).
    TagUnknownClose,
    TagUnknownNoClose,
    TagDeprecatedMatched,
    CursorDamaged,
    CursorOtherFilter,
    UnknownRelatedTo,
    MoreDocuments,
    CountOnlySummary,
    PageSummary,
    OmittedField,
    OmittedLine,
    TagCountsLine,
    MainTag,
    TypedRelation,
    DocsPageCut,
    TagCountsCut,
    TagsPageCut,
    CheckPageCut,
    TagsCursorBad,
    MaxBytesTooSmall,
    ColId,
    ColTitle,
    ColDescription,
    ColTags,
    ColChars,
    ColPath,
    ColAliases,
    ColRelated,
    ColReferencedBy,
    ColRelations,
    ColName,
    ColGroup,
    ColReplacedBy,
    ColDocs,
    ColTagDescription,
    // Arguments (`args.rs`).
    LimitRange,
    ArgumentType,
    ExpectInteger,
    EmptyTag,
    NotAValue,
    AlwaysReturned,
    CountOnlyCursor,
    WritesDisabled,
    ItemNotObject,
    // `kb_update_index` (`update.rs`, `editor.rs`).
    BadKind,
    BadId,
    IndexSchemaUpdate,
    ItemIdDiffers,
    RelatedNotObject,
    NotRootRelative,
    DuplicateTarget,
    NearDuplicateTag,
    NothingToRemove,
    ConcurrentChange,
    Unexpected,
    NotEditable,
    FeatureManyDocuments,
    FeatureTopNotMapping,
    TopLevel,
    FeatureAnchorAliasTag,
    FeatureNotBlockList,
    FeatureAnchorAlias,
    FeatureEntryNotMapping,
    // `kb_check` (`check.rs`, `git.rs`).
    NoMarkdownMatch,
    FixScan,
    FixBuild,
    InvalidDocPath,
    RuleSymlink,
    RuleNotRegular,
    MissingDoc,
    DuplicateId,
    DuplicateAlias,
    UnknownTag,
    DeprecatedTag,
    InvalidDeprecation,
    DeprecationUnknown,
    DeprecationItself,
    DeprecationDeprecated,
    UnknownRelationTarget,
    SelfRelation,
    DuplicateRelation,
    Untyped,
    AsymmetricChangeTogether,
    UnindexedDoc,
    BrokenLink,
    MissingAnchor,
    MissedChangeTogether,
    NoCondition,
    BadBase,
    NotARepository,
    UnknownRef,
    GitMissing,
    // `init` (`init.rs`).
    InitIndexOutside,
    InitHasSection,
    InitFileExists,
    // `kb_read_guide` (the engine's guide registry).
    GuideNamesEmpty,
    GuideUnknownOne,
    GuideUnknownMany,
    GuideClose,
    GuideNoClose,
    GuidesTooLong,
    // The HTML export (`engine/html.rs`, `html/text.rs`).
    ExportSourceMissing,
    NotOfKind,
    BuildMatchesNothing,
    ExtMarkdown,
    ExtHtml,
    OutputNotAFile,
    OutputNotWritable,
    ReasonPermissionDenied,
    LinkMissingFile,
    LinkMissingAnchor,
    LinkOutsideBuild,
    ImageNotEmbedded,
    ImageMissing,
    ImageOutside,
    ImageUnsupported,
    ImageTooLarge,
    ImageUnreadable,
    RemoteImageLinked,
    RawHtmlRemoved,
    LabelContents,
    LabelDocuments,
    LabelFootnotes,
    LabelBack,
    AlertNote,
    AlertTip,
    AlertImportant,
    AlertWarning,
    AlertCaution,
    // An argument the tool does not take (the MCP layer's schema check).
    UnknownArgument,
}

/// One entry: the message, the specification's number or issue kind (`""` for none), English,
/// Japanese.
pub type Entry = (Msg, &'static str, &'static str, &'static str);

/// Every message, in the order of [`Msg`].
pub const CATALOGUE: [Entry; Msg::UnknownArgument as usize + 1] = [
    // Settings.
    (
        Msg::NoConfiguration,
        "E1",
        "No catalog configuration was found (searched the `catalog` section of the server configuration and `mdmark.config.yaml` in {folders}); run `local-vector-search-mcp init` to create one.",
        "カタログの設定が見つかりません（サーバーの設定の `catalog` と、{folders} の `mdmark.config.yaml` を探しました）。`local-vector-search-mcp init` で作ってください。",
    ),
    (
        Msg::ConfigFileMissing,
        "E2",
        "Configuration file `{path}` was not found; pass an existing root-relative path or omit config.",
        "設定ファイル `{path}` がありません。あるファイルのパスを渡すか、config を省いてください。",
    ),
    (
        Msg::ConfigNotYaml,
        "E3",
        "Configuration file `{path}` is not valid YAML at line {line} ({detail}); fix the syntax.",
        "設定ファイル `{path}` の {line} 行目を YAML として読めません（{detail}）。書き方を直してください。",
    ),
    (
        Msg::ConfigTooLarge,
        "",
        "Configuration file `{path}` is larger than 1 MiB; keep only the catalog settings in it.",
        "設定ファイル `{path}` が 1 MiB を超えています。カタログの設定だけを残してください。",
    ),
    (Msg::SettingProblem, "E4", "Setting `{key}` {problem}; {fix}.", "設定の `{key}` が{problem}。{fix}。"),
    (
        Msg::NoIndexSetting,
        "E5",
        "The catalog configuration `{path}` has no `index`; set index to the path of the index file.",
        "設定 `{path}` に index がありません。index に索引のファイルを書いてください。",
    ),
    (
        Msg::NoBuildSection,
        "E28",
        "The catalog configuration has no `build` section; add build.include (and optionally out and title).",
        "設定に build がありません。build.include（と必要なら out・title）を書いてください。",
    ),
    (
        Msg::SectionNotMapping,
        "",
        "Setting `{key}` must be a mapping of catalog settings, not {found}; write keys such as index: index.yaml.",
        "設定の `{key}` がキーと値の組ではありません（{found}です）。index: index.yaml のように書いてください。",
    ),
    (Msg::MustBe, "", "must be {expected}, not {found}", "{expected}ではありません（{found}です）"),
    (Msg::WriteExample, "", "write {example}", "{example} のように書いてください"),
    (
        Msg::ResolvesOutside,
        "",
        "(`{path}`) resolves outside the root",
        "（`{path}`）はルートの外を指しています",
    ),
    (Msg::UsePathInside, "", "use a path inside the knowledge-base root", "ルートの中のパスにしてください"),
    (
        Msg::UsePatternInside,
        "",
        "use a pattern inside the knowledge-base root",
        "ルートの中のパターンにしてください",
    ),
    (
        Msg::RefusedByGuard,
        "",
        "(`{path}`) is refused by the path guard",
        "（`{path}`）はパスの決まりに合いません",
    ),
    (
        Msg::UsePlainPath,
        "",
        "use a plain path that is not inside .git or the index folder and passes no symbolic link",
        ".git や索引のフォルダの外の、リンクを通らないパスにしてください",
    ),
    (
        Msg::NotAGlobSetting,
        "",
        "has `{pattern}`, which is not a valid glob",
        "`{pattern}` はグロブとして読めません",
    ),
    (Msg::FixThePattern, "", "fix the pattern", "パターンを直してください"),
    (Msg::IsUnknown, "", "is unknown", "は知らない設定です"),
    (Msg::RemoveOrRespell, "", "remove it or fix its spelling", "消すか、綴りを直してください"),
    (
        Msg::NotALanguage,
        "",
        "is `{value}`, which is not a supported language",
        "`{value}` で、使えない言語です",
    ),
    (Msg::UseEnOrJa, "", "use en or ja", "en か ja にしてください"),
    (
        Msg::NotAnIssueKind,
        "",
        "names `{kind}`, which is not an issue kind",
        "`{kind}` を挙げていますが、これは点検の種類にありません",
    ),
    (
        Msg::UseIssueKinds,
        "",
        "use kinds that kb_check reports, such as unindexed_doc",
        "unindexed_doc など、kb_check が報告する種類にしてください",
    ),
    (
        Msg::NotALanguageTag,
        "",
        "is `{value}`, which is not auto or a BCP 47 language tag",
        "`{value}` で、auto でも BCP 47 の言語タグでもありません",
    ),
    (Msg::UseLanguageTag, "", "use auto, ja, en or another language tag", "auto・ja・en などにしてください"),
    (
        Msg::NotTocDepth,
        "",
        "is `{value}`, not an integer from 2 to 6",
        "`{value}` で、2 から 6 の整数ではありません",
    ),
    (Msg::UseTocDepth, "", "write a heading level from 2 to 6", "2 から 6 の見出しの深さにしてください"),
    (Msg::MissingOrEmpty, "", "is missing or empty", "がないか空です"),
    (
        Msg::ListDocsToCombine,
        "",
        "list the documents to combine, such as [\"docs/**/*.md\"]",
        "[\"docs/**/*.md\"] のように、まとめる文書を書いてください",
    ),
    (
        Msg::NotHtmlName,
        "",
        "(`{path}`) does not end in .html or .htm",
        "（`{path}`）が .html でも .htm でも終わりません",
    ),
    (
        Msg::UseHtmlName,
        "",
        "name an .html file such as dist/docs.html",
        "dist/docs.html のような .html のファイルにしてください",
    ),
    // Kinds of YAML values.
    (Msg::KindNull, "", "null", "null"),
    (Msg::KindBool, "", "a boolean", "真偽値"),
    (Msg::KindNumber, "", "a number", "数"),
    (Msg::KindString, "", "a string", "文字列"),
    (Msg::KindList, "", "a list", "並び"),
    (Msg::KindMapping, "", "a mapping", "キーと値の組"),
    (Msg::KindTagged, "", "a tagged value", "タグ付きの値"),
    (Msg::KindStrings, "", "a list of strings", "文字列の並び"),
    // Reading the index.
    (
        Msg::IndexMissing,
        "E6",
        "Index file `{path}` was not found; create it (for example with `local-vector-search-mcp init`) or fix the index setting.",
        "索引のファイル `{path}` がありません。`local-vector-search-mcp init` などで作るか、設定の index を直してください。",
    ),
    (
        Msg::IndexTooLarge,
        "",
        "Index file `{path}` is larger than 16 MiB; split the catalog or remove entries.",
        "索引のファイル `{path}` が 16 MiB を超えています。索引を分けるか、項目を減らしてください。",
    ),
    (
        Msg::IndexNotYaml,
        "E7",
        "Index file `{path}` is not valid YAML at line {line} ({detail}); fix the syntax.",
        "索引のファイル `{path}` の {line} 行目を YAML として読めません（{detail}）。書き方を直してください。",
    ),
    (
        Msg::IndexNotUtf8,
        "",
        "Index file `{path}` is not valid UTF-8; save it as UTF-8.",
        "索引のファイル `{path}` が UTF-8 ではありません。UTF-8 で保存してください。",
    ),
    (
        Msg::IndexSchemaFind,
        "E8",
        "The index does not match its schema; fix these entries or run kb_check:",
        "索引がスキーマに合いません。次の箇所を直すか、kb_check で確かめてください:",
    ),
    (Msg::AndMore, "", "… and {n} more", "… ほか {n} 件"),
    // The schema.
    (
        Msg::IndexNotMapping,
        "",
        "the index must be a mapping with a docs list; start the file with docs: []",
        "索引は docs の並びを持つキーと値の組にしてください。docs: [] から書き始めてください",
    ),
    (
        Msg::VersionUnsupported,
        "",
        "index version {version} is not supported; this server reads version 1",
        "索引の版 {version} には対応していません。このサーバーは版 1 を読みます",
    ),
    (
        Msg::UnknownKey,
        "",
        "unknown key `{key}`; remove it, fix its spelling, or prefix it with `x-`",
        "知らないキー `{key}` です。消すか、綴りを直すか、先頭に `x-` を付けてください",
    ),
    (
        Msg::MissingKey,
        "",
        "required key `{key}` is missing; add it",
        "必須のキー `{key}` がありません。書き足してください",
    ),
    (
        Msg::WrongType,
        "",
        "must be {expected}, not {found}; {fix}",
        "{expected}にしてください（今は{found}です）。{fix}",
    ),
    (Msg::ExpectString, "", "a string", "文字列"),
    (Msg::FixString, "", "write a single string", "1 つの文字列を書いてください"),
    (Msg::ExpectList, "", "a list", "並び"),
    (Msg::FixList, "", "write a list such as [a, b]", "[a, b] のような並びを書いてください"),
    (Msg::ExpectMapping, "", "a mapping", "キーと値の組"),
    (Msg::FixMapping, "", "write key: value lines", "キー: 値 の形で書いてください"),
    (Msg::ExpectBool, "", "true or false", "true か false"),
    (Msg::FixBool, "", "write true or false", "true か false を書いてください"),
    (
        Msg::ExpectRelation,
        "",
        "a mapping with to, type and when, or a document ID",
        "to・type・when を持つ組か文書の ID",
    ),
    (
        Msg::FixRelation,
        "",
        "write {{to: …, type: …, when: …}}",
        "{{to: …, type: …, when: …}} の形で書いてください",
    ),
    (Msg::ExpectTagRef, "", "a tag name or {{name: …, main: true}}", "タグの名前か {{name: …, main: true}}"),
    (Msg::FixTagRef, "", "write the tag name", "タグの名前を書いてください"),
    (
        Msg::EmptyValue,
        "",
        "must not be empty; write a value or remove the key",
        "空にはできません。値を書くか、キーを消してください",
    ),
    (
        Msg::IdWhitespace,
        "",
        "ID `{id}` contains whitespace; use an ID without spaces or control characters",
        "ID `{id}` に空白か制御文字があります。空白のない ID にしてください",
    ),
    (
        Msg::IdTooLong,
        "",
        "the ID is longer than 200 characters; use a shorter ID",
        "ID が 200 文字を超えています。短い ID にしてください",
    ),
    (
        Msg::NotMarkdownPath,
        "",
        "`{path}` is not a Markdown file; point path to a .md file",
        "`{path}` は Markdown のファイルではありません。path を .md のファイルにしてください",
    ),
    (
        Msg::StoredOutside,
        "",
        "`{path}` resolves outside the root; use a relative path inside the root",
        "`{path}` はルートの外を指しています。ルートの中の相対パスにしてください",
    ),
    (
        Msg::StoredReserved,
        "",
        "`{path}` is inside {dir}; point path to a document of the project",
        "`{path}` は {dir} の中です。プロジェクトの文書を指してください",
    ),
    (
        Msg::NotAGlob,
        "",
        "`{pattern}` is not a valid glob; fix the pattern",
        "`{pattern}` はグロブとして読めません。パターンを直してください",
    ),
    (
        Msg::NotARelationType,
        "",
        "`{type}` is not a relation type; use requires, references, replaces, part_of or change_together",
        "`{type}` は関連の種類にありません。requires・references・replaces・part_of・change_together のどれかにしてください",
    ),
    (Msg::NoneClose, "", "none", "なし"),
    // `kb_find_docs` and `kb_list_tags`.
    (
        Msg::TagUnknownClose,
        "",
        "Tag `{tag}` is not in the tag vocabulary; close tags: {close} (the tag was still matched as given).",
        "タグ `{tag}` は語彙にありません。近いタグ: {close}（渡したタグのまま引きました）。",
    ),
    (
        Msg::TagUnknownNoClose,
        "",
        "Tag `{tag}` is not in the tag vocabulary and no tag is close to it; see kb_list_tags (the tag was still matched as given).",
        "タグ `{tag}` は語彙になく、近いタグもありません。kb_list_tags で語彙を確かめてください（渡したタグのまま引きました）。",
    ),
    (
        Msg::TagDeprecatedMatched,
        "",
        "Tag `{tag}` is deprecated in favour of `{new}`; documents with either tag were matched — use `{new}` from now on.",
        "タグ `{tag}` はやめたタグで、振り替え先は `{new}` です。両方のタグの文書を引きました。今後は `{new}` を使ってください。",
    ),
    (
        Msg::CursorDamaged,
        "E13",
        "The cursor was not returned by kb_find_docs or is damaged; omit cursor to start again from the first page.",
        "cursor を読めません。cursor を省いて先頭から引き直してください。",
    ),
    (
        Msg::CursorOtherFilter,
        "E14",
        "The cursor belongs to a call with different text, tags, any_tags or related_to; omit cursor to start again from the first page.",
        "絞り込みの条件が next_cursor を返した呼び出しと違います。cursor を省いて先頭から引き直してください。",
    ),
    (
        Msg::UnknownRelatedTo,
        "E18",
        "Document ID `{id}` is not in the index; close IDs: {close} — call kb_find_docs without related_to to list IDs.",
        "文書の ID `{id}` は索引にありません。近い ID: {close}。related_to を省いた kb_find_docs で ID を確かめてください。",
    ),
    (
        Msg::MoreDocuments,
        "",
        "More documents match; narrow the results with tags, any_tags or text, or pass count_only to get just the counts.",
        "続きがあります。tags・any_tags・text で絞るか、count_only で件数だけを確かめてください。",
    ),
    (
        Msg::CountOnlySummary,
        "",
        "Total {total} · total chars {chars}",
        "総件数 {total} 件・合計文字数 {chars}",
    ),
    (
        Msg::PageSummary,
        "",
        "Total {total} · returned {returned} · total chars {chars} · next_cursor: {cursor}",
        "総件数 {total} 件・返した件数 {returned} 件・合計文字数 {chars}・next_cursor: {cursor}",
    ),
    (Msg::OmittedField, "", "{field} ({how})", "{field}（{how}）"),
    (Msg::OmittedLine, "", "Omitted: {items}", "省いた項目: {items}"),
    (Msg::TagCountsLine, "", "Tag counts: {items}", "タグごとの件数: {items}"),
    (Msg::MainTag, "", "{name} (main)", "{name}（主題）"),
    (Msg::TypedRelation, "", "{to} ({type})", "{to}（{type}）"),
    (
        Msg::DocsPageCut,
        "",
        "The answer budget of {budget} bytes cut this page after documents {first} to {last} of {total}; pass next_cursor as cursor for the rest, or a larger max_bytes.",
        "回答の上限 {budget} バイトのため、このページは {total} 件中 {first}〜{last} 件目で切りました。続きは next_cursor を cursor に渡すか、max_bytes を大きくしてください。",
    ),
    (
        Msg::TagCountsCut,
        "",
        "Tag counts shows the {shown} most frequent of {total} tags; narrow the search with tags or text to count the rest.",
        "タグごとの件数は {total} 個のタグのうち多い順に {shown} 個だけを示しました。残りは tags や text で絞って数えてください。",
    ),
    (
        Msg::TagsPageCut,
        "",
        "This page holds tags {first} to {last} of {total}; pass next_cursor as cursor for the next page.",
        "このページはタグ {total} 個中 {first}〜{last} 個目です。次のページは next_cursor を cursor に渡してください。",
    ),
    (
        Msg::CheckPageCut,
        "",
        "This page holds issues {first} to {last} of {total}; pass next_cursor as cursor for the next page.",
        "このページは問題 {total} 件中 {first}〜{last} 件目です。次のページは next_cursor を cursor に渡してください。",
    ),
    (
        Msg::TagsCursorBad,
        "",
        "The cursor was not returned by kb_list_tags for this query and format; omit cursor to start again from the first page.",
        "この cursor は同じ query と format の kb_list_tags が返したものではありません。cursor を省いて先頭から引き直してください。",
    ),
    (
        Msg::MaxBytesTooSmall,
        "",
        "max_bytes must be at least {min}; omit it for the default of {default}.",
        "max_bytes は {min} 以上にしてください。省くと既定の {default} になります。",
    ),
    (Msg::ColId, "", "ID", "ID"),
    (Msg::ColTitle, "", "Title", "題"),
    (Msg::ColDescription, "", "Description", "概要"),
    (Msg::ColTags, "", "Tags", "タグ"),
    (Msg::ColChars, "", "Chars", "文字数"),
    (Msg::ColPath, "", "Path", "パス"),
    (Msg::ColAliases, "", "Aliases", "別名"),
    (Msg::ColRelated, "", "Related", "関連"),
    (Msg::ColReferencedBy, "", "Referenced by", "被参照"),
    (Msg::ColRelations, "", "Relations", "関係"),
    (Msg::ColName, "", "Name", "名前"),
    (Msg::ColGroup, "", "Group", "グループ"),
    (Msg::ColReplacedBy, "", "Replaced by", "振り替え先"),
    (Msg::ColDocs, "", "Docs", "文書数"),
    (Msg::ColTagDescription, "", "Description", "説明"),
    // Arguments.
    (
        Msg::LimitRange,
        "E12",
        "limit must be an integer from 1 to 100; pass a smaller limit and page with cursor.",
        "limit は 1 以上 100 以下の整数にしてください。続きは cursor で引いてください。",
    ),
    (
        Msg::ArgumentType,
        "E11",
        "Argument `{name}` must be {expected}; pass {example}.",
        "引数 `{name}` は{expected}にしてください（例: {example}）。",
    ),
    (Msg::ExpectInteger, "", "an integer", "整数"),
    (
        Msg::EmptyTag,
        "",
        "{name} must not hold an empty string; remove it.",
        "{name} に空の文字列は渡せません。外してください。",
    ),
    (
        Msg::NotAValue,
        "E17",
        "`{value}` is not a valid {argument}; use one of {list}.",
        "`{value}` は {argument} に使えません。{list} のどれかにしてください。",
    ),
    (
        Msg::AlwaysReturned,
        "E16",
        "`{field}` is always returned and cannot be excluded; remove it from exclude.",
        "`{field}` は必ず返す項目で、除けません。exclude から外してください。",
    ),
    (
        Msg::CountOnlyCursor,
        "E15",
        "count_only returns totals for all matches; omit cursor.",
        "count_only は当たった全ての文書を数えます。cursor を省いてください。",
    ),
    (
        Msg::WritesDisabled,
        "E19",
        "Workspace writes are disabled; set knowledgeBase.allowWrites: true in the server configuration to let {tool} write files.",
        "書き込みが許されていません。{tool} で書くには、サーバーの設定で knowledgeBase.allowWrites: true にしてください。",
    ),
    (
        Msg::ItemNotObject,
        "",
        "Argument `item` must be an object or null; pass {{\"path\": …, \"title\": …}} or null to remove the entry.",
        "引数 `item` はオブジェクトか null にしてください（例: {{\"path\": …, \"title\": …}}）。",
    ),
    // `kb_update_index`.
    (
        Msg::BadKind,
        "",
        "`{kind}` is not a valid kind; use one of doc, term, tag.",
        "`{kind}` は kind に使えません。doc・term・tag のどれかにしてください。",
    ),
    (
        Msg::BadId,
        "",
        "id must not be empty or start or end with whitespace; pass the exact ID.",
        "id は空にも、前後に空白のある文字列にもできません。ID をそのまま渡してください。",
    ),
    (
        Msg::IndexSchemaUpdate,
        "E9",
        "The index would not match its schema, so it was not changed:",
        "書き換えた後の索引がスキーマに合わないため、書き換えませんでした:",
    ),
    (
        Msg::ItemIdDiffers,
        "E20",
        "item.{key} differs from id; pass the new ID in id, or remove and add the entry to rename it.",
        "item の {key} が id と違います。新しい ID は id に渡すか、項目を消して足し直してください。",
    ),
    (
        Msg::RelatedNotObject,
        "",
        "must be an object with to, type and when",
        "to・type・when を持つオブジェクトにしてください",
    ),
    (
        Msg::NotRootRelative,
        "",
        "`{path}` is not a root-relative path inside the project; use a root-relative path inside the project.",
        "`{path}` はプロジェクトの中の相対パスではありません。プロジェクトの中の相対パスにしてください。",
    ),
    (
        Msg::DuplicateTarget,
        "E22",
        "ID `{id}` appears {n} times in {list}; remove the duplicates first (kb_check lists them).",
        "ID `{id}` が {list} に {n} 個あります。先に重なりを消してください（kb_check で確かめられます）。",
    ),
    (
        Msg::NearDuplicateTag,
        "E40",
        "Tag `{name}` would duplicate the existing tag `{existing}`; pass `{existing}` as id to replace it.",
        "タグ `{name}` は既にあるタグ `{existing}` と重なります。置き換えるなら id に `{existing}` を渡してください。",
    ),
    (
        Msg::NothingToRemove,
        "E21",
        "`{id}` is not in {list}; nothing was removed.",
        "`{id}` は {list} にありません。何も消していません。",
    ),
    (
        Msg::ConcurrentChange,
        "E23",
        "The index changed while it was being updated; call kb_update_index again.",
        "書き換えの間に索引が変わりました。kb_update_index をもう一度呼んでください。",
    ),
    (
        Msg::Unexpected,
        "E39",
        "The operation failed unexpectedly; see the server log on stderr and retry.",
        "思わぬ理由で失敗しました。サーバーのログ（標準エラー）を確かめて、もう一度試してください。",
    ),
    (
        Msg::NotEditable,
        "E24",
        "The index uses {feature} at `{where}`, which cannot be edited without losing content; rewrite that part in plain block style.",
        "索引の `{where}` は {feature} を使っていて、内容を失わずに書き換えられません。その部分を通常のブロック形式に書き直してください。",
    ),
    (Msg::FeatureManyDocuments, "", "more than one YAML document", "複数の YAML 文書"),
    (
        Msg::FeatureTopNotMapping,
        "",
        "a top level that is not a block mapping",
        "ブロックのマッピングでない最上位",
    ),
    (Msg::TopLevel, "", "(top level)", "（最上位）"),
    (Msg::FeatureAnchorAliasTag, "", "an anchor, alias or tag", "アンカー・エイリアス・タグ"),
    (Msg::FeatureNotBlockList, "", "a list that is not a block sequence", "ブロックの並びでないリスト"),
    (Msg::FeatureAnchorAlias, "", "an anchor or alias", "アンカーかエイリアス"),
    (Msg::FeatureEntryNotMapping, "", "an entry that is not a mapping", "マッピングでない項目"),
    // `kb_check`.
    (
        Msg::NoMarkdownMatch,
        "",
        "Setting `{key}` matches no Markdown file; {fix}.",
        "設定の `{key}` に当たる文書が 0 件です。{fix}。",
    ),
    (Msg::FixScan, "", "fix the patterns or remove scan", "パターンを直すか、scan を消してください"),
    (Msg::FixBuild, "", "fix the patterns or remove build", "パターンを直すか、build を消してください"),
    (
        Msg::InvalidDocPath,
        "invalid_path",
        "`{path}` {rule}; point docs[{i}].path to a Markdown file inside the root.",
        "`{path}` は{rule}。docs[{i}].path をルートの中の Markdown のファイルにしてください。",
    ),
    (Msg::RuleSymlink, "", "passes through a symbolic link", "シンボリックリンクを通っています"),
    (Msg::RuleNotRegular, "", "is not a regular file", "通常のファイルではありません"),
    (
        Msg::MissingDoc,
        "missing_doc",
        "`{path}` was not found; restore the document or remove `docs[{i}]` from the index.",
        "`{path}` が見つかりません。文書を戻すか、索引の `docs[{i}]` を消してください。",
    ),
    (
        Msg::DuplicateId,
        "duplicate_id",
        "ID `{id}` is already used by `{list}[{j}]`; give this entry a unique ID.",
        "ID `{id}` は `{list}[{j}]` と重なっています。この項目に別の ID を付けてください。",
    ),
    (
        Msg::DuplicateAlias,
        "duplicate_alias",
        "Alias `{alias}` is also used by `{list}[{j}]`; keep it on one entry only.",
        "別名 `{alias}` は `{list}[{j}]` でも使われています。どちらか 1 つにだけ残してください。",
    ),
    (
        Msg::UnknownTag,
        "unknown_tag",
        "Tag `{tag}` is not in the tag vocabulary; use a vocabulary tag (close: {close}) or add it to tags.",
        "タグ `{tag}` は語彙にありません。語彙のタグ（近いもの: {close}）を使うか、tags に足してください。",
    ),
    (
        Msg::DeprecatedTag,
        "deprecated_tag",
        "Tag `{tag}` is deprecated; replace it with `{new}`.",
        "タグ `{tag}` はやめたタグです。`{new}` に付け替えてください。",
    ),
    (
        Msg::InvalidDeprecation,
        "invalid_deprecation",
        "Tag `{name}` is deprecated in favour of `{new}`, which is {problem}; point deprecated to a current tag of the vocabulary.",
        "タグ `{name}` の振り替え先 `{new}` は{problem}。語彙の、やめていないタグにしてください。",
    ),
    (Msg::DeprecationUnknown, "", "not in the vocabulary", "語彙にありません"),
    (Msg::DeprecationItself, "", "the tag itself", "自分自身です"),
    (Msg::DeprecationDeprecated, "", "deprecated as well", "それ自体がやめたタグです"),
    (
        Msg::UnknownRelationTarget,
        "unknown_relation_target",
        "`{to}` is not a document ID in the index; fix the ID or add the document.",
        "`{to}` は索引の文書の ID にありません。ID を直すか、文書を索引に足してください。",
    ),
    (
        Msg::SelfRelation,
        "self_relation",
        "`{id}` is related to itself; remove this relation.",
        "`{id}` が自分自身に関連しています。この関連を消してください。",
    ),
    (
        Msg::DuplicateRelation,
        "duplicate_relation",
        "This repeats the {type} relation to `{to}` of `related[{k}]`; remove one of them.",
        "`related[{k}]` と同じ `{to}` への {type} の関連です。どちらかを消してください。",
    ),
    (Msg::Untyped, "", "untyped", "種類なし"),
    (
        Msg::AsymmetricChangeTogether,
        "asymmetric_change_together",
        "`{a}` lists `{b}` as change_together but `{b}` does not list `{a}`; add the same relation to `{b}`.",
        "`{a}` は `{b}` を change_together にしていますが、`{b}` には `{a}` がありません。`{b}` にも書いてください。",
    ),
    (
        Msg::UnindexedDoc,
        "unindexed_doc",
        "`{path}` is not in the index; add it with kb_update_index or leave it out of scan.",
        "`{path}` は索引にありません。kb_update_index で足すか、scan から外してください。",
    ),
    (
        Msg::BrokenLink,
        "broken_link",
        "Link target `{target}` does not exist; fix the link or restore the file.",
        "リンク先 `{target}` がありません。リンクを直すか、ファイルを戻してください。",
    ),
    (
        Msg::MissingAnchor,
        "missing_anchor",
        "`{target}` has no heading or anchor `#{fragment}`; fix the link or the heading.",
        "`{target}` に見出しかアンカー `#{fragment}` がありません。リンクか見出しを直してください。",
    ),
    (
        Msg::MissedChangeTogether,
        "missed_change_together",
        "`{changed}` changed since `{base}` but `{unchanged}`, which must change together with it ({when}), did not; update `{unchanged}` or undo the change.",
        "`{base}` から `{changed}` は変わりましたが、一緒に直す `{unchanged}`（{when}）は変わっていません。`{unchanged}` も直すか、変更を戻してください。",
    ),
    (Msg::NoCondition, "", "no condition recorded", "条件の記載なし"),
    (
        Msg::BadBase,
        "E31",
        "base must be a git ref such as main, a tag or a commit, not `{base}`; pass a ref name that does not start with -.",
        "base には main・タグ・コミットなどの git の ref を渡してください（`{base}` は使えません）。",
    ),
    (
        Msg::NotARepository,
        "E32",
        "The root is not inside a git repository; omit base or run the check in a repository.",
        "ルートが git のリポジトリの中にありません。base を省くか、リポジトリの中で点検してください。",
    ),
    (
        Msg::UnknownRef,
        "E33",
        "Git ref `{base}` could not be resolved; fetch it or pass an existing branch, tag or commit.",
        "git の ref `{base}` を引けません。fetch するか、あるブランチ・タグ・コミットを渡してください。",
    ),
    (
        Msg::GitMissing,
        "E34",
        "git was not found on PATH; install git or omit base.",
        "git が PATH にありません。git を入れるか、base を省いてください。",
    ),
    // `init`.
    (
        Msg::InitIndexOutside,
        "",
        "The index path is outside the root; pass --index with a path inside the knowledge-base root.",
        "索引のパスがルートの外です。--index にはルートの中のパスを渡してください。",
    ),
    (
        Msg::InitHasSection,
        "",
        "`{path}` already has a catalog section; edit it instead.",
        "`{path}` には catalog の設定がもうあります。そちらを直してください。",
    ),
    (
        Msg::InitFileExists,
        "",
        "`{path}` already exists; edit it instead.",
        "`{path}` はもうあります。そちらを直してください。",
    ),
    // `kb_read_guide`.
    (
        Msg::GuideNamesEmpty,
        "E35",
        "names must list at least one guide name; see the server instructions for the names.",
        "names に使い方集の名前を 1 つ以上渡してください。名前はサーバーの instructions にあります。",
    ),
    (
        Msg::GuideUnknownOne,
        "",
        "Unknown guide name {entry} — use the names in the server instructions; no guide was returned.",
        "使い方集に {entry} はありません。instructions にある名前を使ってください。本文は返していません。",
    ),
    (
        Msg::GuideUnknownMany,
        "",
        "Unknown guide names {entries} — use the names in the server instructions; no guide was returned.",
        "使い方集に {entries} はありません。instructions にある名前を使ってください。本文は返していません。",
    ),
    (Msg::GuideClose, "", "`{name}` (close: {close})", "`{name}`（近い名前: {close}）"),
    (Msg::GuideNoClose, "", "`{name}` (no close names)", "`{name}`（近い名前なし）"),
    (
        Msg::GuidesTooLong,
        "E37",
        "The requested guides total {n} characters, over the 50,000-character limit; call kb_read_guide several times with fewer names:",
        "渡した名前の本文が合計 {n} 文字で、50,000 文字を超えます。名前を分けて呼んでください:",
    ),
    // The HTML export.
    (
        Msg::ExportSourceMissing,
        "E25",
        "`{path}` was not found; pass an existing root-relative Markdown path.",
        "`{path}` が見つかりません。ある Markdown のパスを渡してください。",
    ),
    (
        Msg::NotOfKind,
        "E26",
        "`{path}` is not a {expected} file; pass a path ending in {ext}.",
        "`{path}` は {expected} のファイルではありません。{ext} で終わるパスを渡してください。",
    ),
    (
        Msg::BuildMatchesNothing,
        "E29",
        "build.include matches no Markdown file; fix the patterns.",
        "build.include に当たる文書が 0 件です。パターンを直してください。",
    ),
    (Msg::ExtMarkdown, "", ".md", ".md"),
    (Msg::ExtHtml, "", ".html or .htm", ".html か .htm"),
    (
        Msg::OutputNotAFile,
        "",
        "`{path}` is a folder or a special file; pass the path of an HTML file to write.",
        "`{path}` はフォルダーか特別なファイルです。書き出す HTML のパスを渡してください。",
    ),
    (
        Msg::OutputNotWritable,
        "E30",
        "`{path}` could not be written ({reason}); check the folder's permissions.",
        "`{path}` を書き出せません（{reason}）。フォルダの権限を確かめてください。",
    ),
    (Msg::ReasonPermissionDenied, "", "permission denied", "権限がありません"),
    (
        Msg::LinkMissingFile,
        "",
        "link target `{target}` does not exist; fix the link or restore the file",
        "リンク先 `{target}` がありません。リンクを直すか、ファイルを戻してください",
    ),
    (
        Msg::LinkMissingAnchor,
        "",
        "link `{link}` points to a heading that does not exist; fix the anchor or the heading",
        "リンク `{link}` の見出しがありません。アンカーか見出しを直してください",
    ),
    (
        Msg::LinkOutsideBuild,
        "",
        "link target `{target}` is not part of the build; add it to build.include or link elsewhere",
        "リンク先 `{target}` はまとめる文書に入っていません。build.include に足すか、リンクを変えてください",
    ),
    (
        Msg::ImageNotEmbedded,
        "",
        "image `{src}` was not embedded ({reason}); fix the path or the file",
        "画像 `{src}` を埋め込めませんでした（{reason}）。パスかファイルを直してください",
    ),
    (Msg::ImageMissing, "", "the file does not exist", "ファイルがありません"),
    (
        Msg::ImageOutside,
        "",
        "the path is outside the project or not allowed",
        "プロジェクトの外か、使えないパスです",
    ),
    (
        Msg::ImageUnsupported,
        "",
        "not a PNG, JPEG, WebP, GIF, SVG or AVIF file",
        "PNG・JPEG・WebP・GIF・SVG・AVIF のどれでもありません",
    ),
    (Msg::ImageTooLarge, "", "larger than 25 MiB", "25 MiB を超えています"),
    (Msg::ImageUnreadable, "", "the file could not be read", "ファイルを読めません"),
    (
        Msg::RemoteImageLinked,
        "",
        "remote image `{src}` was not fetched and is shown as a link; save it into the project to embed it",
        "外の画像 `{src}` は取りに行かず、リンクにしました。埋め込むにはプロジェクトに保存してください",
    ),
    (
        Msg::RawHtmlRemoved,
        "",
        "raw HTML `{tag}` was removed; exported HTML does not run scripts or load external resources",
        "HTML の `{tag}` を外しました。書き出す HTML はスクリプトも外の資源も使いません",
    ),
    // Page labels, in the page's language (`html.lang`).
    (Msg::LabelContents, "", "Contents", "目次"),
    (Msg::LabelDocuments, "", "Documents", "文書"),
    (Msg::LabelFootnotes, "", "Footnotes", "脚注"),
    (Msg::LabelBack, "", "Back to the text", "本文に戻る"),
    (Msg::AlertNote, "", "Note", "注記"),
    (Msg::AlertTip, "", "Tip", "ヒント"),
    (Msg::AlertImportant, "", "Important", "重要"),
    (Msg::AlertWarning, "", "Warning", "警告"),
    (Msg::AlertCaution, "", "Caution", "注意"),
    (
        Msg::UnknownArgument,
        "E10",
        "Unknown argument `{name}`; remove it (accepted: {list}).",
        "知らない引数 `{name}` です。外してください（受け付ける引数: {list}）。",
    ),
];

// Every message has its entry at its own position, with both texts.
const _: () = {
    let mut i = 0;
    while i < CATALOGUE.len() {
        assert!(CATALOGUE[i].0 as usize == i, "CATALOGUE is not in the order of Msg");
        assert!(!CATALOGUE[i].2.is_empty() && !CATALOGUE[i].3.is_empty(), "a message without a text");
        i += 1;
    }
};

impl Msg {
    /// The template in `lang`.
    pub fn template(self, lang: Language) -> &'static str {
        let (_, _, en, ja) = CATALOGUE[self as usize];
        lang.pick(en, ja)
    }

    /// The text in `lang` with the arguments filled in.
    pub fn render(self, lang: Language, args: &[(&str, &dyn Display)]) -> String {
        fill(self.template(lang), args)
    }

    /// The text in `lang` of a message without arguments.
    pub fn text(self, lang: Language) -> String {
        self.render(lang, &[])
    }
}

/// `template` with each `{name}` replaced by its argument and `{{`/`}}` by a brace. A missing
/// argument is a bug: debug builds panic, release builds leave the placeholder.
pub fn fill(template: &str, args: &[(&str, &dyn Display)]) -> String {
    let mut out = String::with_capacity(template.len() + 32);
    let mut rest = template;
    while let Some(i) = rest.find(['{', '}']) {
        out.push_str(&rest[..i]);
        let tail = &rest[i..];
        if tail.starts_with("{{") || tail.starts_with("}}") {
            out.push_str(&tail[..1]);
            rest = &tail[2..];
            continue;
        }
        match tail.find('}').filter(|_| tail.starts_with('{')) {
            Some(end) => {
                let name = &tail[1..end];
                match args.iter().find(|(k, _)| *k == name) {
                    Some((_, v)) => {
                        let _ = write!(out, "{v}");
                    }
                    None => {
                        debug_assert!(false, "message argument `{name}` is missing in {template:?}");
                        out.push_str(&tail[..=end]);
                    }
                }
                rest = &tail[end + 1..];
            }
            None => {
                out.push_str(&tail[..1]);
                rest = &tail[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// The argument names of a template, sorted, each once.
pub fn placeholders(template: &str) -> Vec<&str> {
    let mut names = Vec::new();
    let mut rest = template;
    while let Some(i) = rest.find(['{', '}']) {
        let tail = &rest[i..];
        if tail.starts_with("{{") || tail.starts_with("}}") {
            rest = &tail[2..];
            continue;
        }
        match tail.find('}').filter(|_| tail.starts_with('{')) {
            Some(end) => {
                names.push(&tail[1..end]);
                rest = &tail[end + 1..];
            }
            None => rest = &tail[1..],
        }
    }
    names.sort_unstable();
    names.dedup();
    names
}

/// Renders a [`Msg`]: `msg!(lang, IndexMissing, path = p)`; `name` alone passes the variable of
/// that name (`msg!(lang, IndexMissing, path)`).
macro_rules! msg {
    (@value $k:ident) => { $k };
    (@value $k:ident = $v:expr) => { $v };
    ($lang:expr, $m:ident $(, $k:ident $(= $v:expr)?)* $(,)?) => {
        $crate::messages::Msg::$m.render(
            $lang,
            &[$((
                stringify!($k),
                &$crate::messages::msg!(@value $k $(= $v)?) as &dyn ::std::fmt::Display,
            )),*],
        )
    };
}
pub(crate) use msg;
