//! The guides compiled into the binary, `kb_read_guide`'s rules and the server instructions.

use std::collections::BTreeSet;

use super::*;
use crate::config::ToolsConfig;
use crate::engine::{GUIDE_PAGE_LIMIT, GUIDES, Guide, read_guides};
use crate::text::Language;

/// `kb_xxx` tool names mentioned in `text`.
fn tool_mentions(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut rest = text;
    while let Some(i) = rest.find("kb_") {
        let before = rest[..i].chars().next_back();
        let name: String = rest[i..].chars().take_while(|c| c.is_ascii_lowercase() || *c == '_').collect();
        if !before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') && name.len() > 3 {
            out.insert(name.trim_end_matches('_').to_owned());
        }
        rest = &rest[i + 3..];
    }
    out
}

/// Lines outside fenced code blocks.
fn prose_lines(text: &str) -> Vec<&str> {
    let mut fenced = false;
    text.lines()
        .filter(|l| {
            if l.trim_start().starts_with("```") {
                fenced = !fenced;
                return false;
            }
            !fenced
        })
        .collect()
}

#[test]
fn every_guide_page_keeps_the_rules() {
    let existing: BTreeSet<&str> = tool_names(&ToolsConfig::default()).into_iter().collect();
    assert_eq!(GUIDES.len(), 11);
    for g in GUIDES {
        let chars = g.body.chars().count();
        assert!(chars > 500 && chars <= GUIDE_PAGE_LIMIT, "{}: {chars} characters", g.name);
        assert!(g.body.starts_with("Read this "), "{}: must open with when to read it", g.name);
        let first = g.body.split("\n\n").next().unwrap_or("");
        assert!(!first.contains("\n#"), "{}: the opening is one paragraph", g.name);
        for line in prose_lines(g.body) {
            assert!(!line.starts_with("# "), "{}: no H1 (the tool adds `# name`): {line}", g.name);
        }
        for name in tool_mentions(g.body) {
            let planned = g.body.contains(&format!("`{name}` (planned)"));
            if existing.contains(name.as_str()) {
                assert!(!planned, "{}: `{name}` exists; drop its (planned) mark", g.name);
            } else {
                assert!(
                    planned,
                    "{}: `{name}` is not a tool; mark it `{name}` (planned) or remove it",
                    g.name
                );
            }
        }
    }
    // The check can fail: an unknown tool name is found.
    assert!(tool_mentions("use `kb_frobnicate` or kb_read.").contains("kb_frobnicate"));
}

#[test]
fn guide_descriptions_are_the_specification_table() {
    let Some(spec) = crate::testdata::shared_or_skip("spec/catalog.md") else { return };
    let text = std::fs::read_to_string(spec).unwrap();
    let section = &text[text.find("#### 6.7.4").unwrap()..text.find("#### 6.7.5").unwrap()];
    let table: Vec<(String, String)> = section
        .lines()
        .filter_map(|l| {
            let cells: Vec<&str> = l.split(" | ").collect();
            let name = cells.first()?.strip_prefix("| `")?.strip_suffix('`')?;
            Some((name.to_owned(), cells.get(1)?.trim_end_matches(" |").to_owned()))
        })
        .collect();
    let ours: Vec<(String, String)> =
        GUIDES.iter().map(|g| (g.name.to_owned(), g.description.to_owned())).collect();
    assert_eq!(ours, table);
}

#[test]
fn instructions_end_with_the_guide_list() {
    let text = instructions();
    assert!(text.contains("kb_search") && text.contains("kb_read") && text.contains("kb_patch"));
    let tail: Vec<&str> =
        text.trim_end().lines().rev().take(12).collect::<Vec<_>>().into_iter().rev().collect();
    assert_eq!(tail[0], "Guides (read with kb_read_guide, e.g. {\"names\": [\"pointers\", \"patching\"]}):");
    for (line, g) in tail[1..].iter().zip(GUIDES) {
        assert_eq!(*line, format!("- {}: {}", g.name, g.description));
    }
}

fn names(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| (*s).to_owned()).collect()
}

#[test]
fn guides_are_read_in_order_once_each() {
    let blocks =
        read_guides(GUIDES, &names(&["tables", "pointers", "ＴＡＢＬＥＳ ", "Pointers"]), Language::En)
            .unwrap()
            .blocks;
    assert_eq!(blocks.len(), 2);
    assert!(blocks[0].starts_with("# tables\n\nRead this "));
    assert!(blocks[1].starts_with("# pointers\n\n"));
    let e = read_guides(GUIDES, &[], Language::En).unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidArgument);
    assert_eq!(
        e.message,
        "names must list at least one guide name; see the server instructions for the names."
    );
    assert_eq!(
        read_guides(GUIDES, &names(&[" "]), Language::En).unwrap_err().code,
        ErrorCode::InvalidArgument
    );
}

#[test]
fn unknown_names_list_close_names_and_return_nothing() {
    let e = read_guides(GUIDES, &names(&["pointers", "pointer"]), Language::En).unwrap_err();
    assert_eq!(e.code, ErrorCode::NotFound);
    assert_eq!(
        e.message,
        "Unknown guide name `pointer` (close: `pointers`) — use the names in the server instructions; no guide was returned."
    );
    let e = read_guides(GUIDES, &names(&["catalog-indx", "zzzzzz"]), Language::En).unwrap_err();
    assert_eq!(
        e.message,
        "Unknown guide names `catalog-indx` (close: `catalog-index`, `catalog`), `zzzzzz` (no close names) — use the names in the server instructions; no guide was returned."
    );
}

#[test]
fn the_size_limit_counts_characters_of_the_bodies() {
    let big = "あ".repeat(30_000);
    let mid = "x".repeat(25_000);
    let registry = [
        Guide { name: "big", description: "", body: big.leak() },
        Guide { name: "mid", description: "", body: mid.leak() },
    ];
    assert!(read_guides(&registry, &names(&["big"]), Language::En).is_ok());
    assert!(read_guides(&registry, &names(&["mid"]), Language::En).is_ok());
    let e = read_guides(&registry, &names(&["big", "mid"]), Language::En).unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidArgument);
    assert_eq!(
        e.message,
        "The requested guides total 55,000 characters, over the 50,000-character limit; call kb_read_guide several times with fewer names:\nbig: 30,000\nmid: 25,000"
    );
    // Unknown names are checked before the size.
    assert_eq!(
        read_guides(&registry, &names(&["big", "mid", "nope"]), Language::En).unwrap_err().code,
        ErrorCode::NotFound
    );
}

// --- `serve --http`: address, token and allow-list decisions (`docs/design/http.md`) -----------

mod http_plan {
    use axum::http::{HeaderMap, HeaderValue, StatusCode, header};

    use crate::config::HttpServe;
    use crate::mcp::http::{Guard, host_name, normalize_origin, plan};

    fn opts(addr: Option<&str>, token: Option<&str>) -> HttpServe {
        HttpServe { addr: addr.map(str::to_owned), token: token.map(str::to_owned), ..HttpServe::default() }
    }

    fn no_env(_: &str) -> Option<String> {
        None
    }

    #[test]
    fn the_default_is_loopback_on_8782_or_mdmark_port() {
        let p = plan(&opts(None, None), &no_env, None).unwrap();
        assert_eq!(p.addr.to_string(), "127.0.0.1:8782");
        assert!(!p.explicit && p.token.is_none());
        let env = |k: &str| (k == "MDMARK_PORT").then(|| "9100".to_owned());
        assert_eq!(plan(&opts(None, None), &env, None).unwrap().addr.to_string(), "127.0.0.1:9100");
        let bad = |k: &str| (k == "MDMARK_PORT").then(|| "http".to_owned());
        let e = plan(&opts(None, None), &bad, None).unwrap_err();
        assert!(e.message.contains("MDMARK_PORT must be a port number"), "{}", e.message);
    }

    #[test]
    fn address_forms() {
        for (given, addr, explicit) in [
            ("127.0.0.1:9000", "127.0.0.1:9000", false),
            ("localhost:9000", "127.0.0.1:9000", false),
            ("localhost", "127.0.0.1:8782", false),
            ("9000", "127.0.0.1:9000", false),
            (":9000", "127.0.0.1:9000", false),
            ("[::1]:9000", "[::1]:9000", false),
            ("::1", "[::1]:8782", false),
            ("127.0.0.2:9000", "127.0.0.2:9000", true),
            ("0.0.0.0", "0.0.0.0:8782", true),
        ] {
            let p = plan(&opts(Some(given), Some("t")), &no_env, None).unwrap();
            assert_eq!((p.addr.to_string().as_str(), p.explicit), (addr, explicit), "{given}");
        }
        for bad in ["example.com:80", "127.0.0.1:http", "localhost:99999"] {
            let e = plan(&opts(Some(bad), Some("t")), &no_env, None).unwrap_err();
            assert!(e.message.contains("is not an address"), "{bad}: {}", e.message);
        }
    }

    #[test]
    fn an_explicit_address_needs_a_token_from_the_flag_the_environment_or_the_config() {
        let e = plan(&opts(Some("127.0.0.2:9000"), None), &no_env, None).unwrap_err();
        assert!(
            e.message.contains("needs a bearer token") && e.message.contains("LVS_HTTP_TOKEN"),
            "{}",
            e.message
        );
        let env = |k: &str| (k == "LVS_HTTP_TOKEN").then(|| "from-env".to_owned());
        let given = opts(Some("127.0.0.2:9000"), None);
        assert_eq!(plan(&given, &env, Some("from-config")).unwrap().token.as_deref(), Some("from-env"));
        assert_eq!(plan(&given, &no_env, Some("from-config")).unwrap().token.as_deref(), Some("from-config"));
        let flag = opts(Some("127.0.0.2:9000"), Some("from-flag"));
        let p = plan(&flag, &env, Some("from-config")).unwrap();
        assert_eq!(p.token.as_deref(), Some("from-flag"));
        assert!(!format!("{p:?}").contains("from-flag"), "Debug never shows the token");
        // The explicit address is an allowed Host; the unspecified one is not.
        assert!(p.hosts.contains(&"127.0.0.2".to_owned()));
        let any = plan(&opts(Some("0.0.0.0:9000"), Some("t")), &no_env, None).unwrap();
        assert!(!any.hosts.contains(&"0.0.0.0".to_owned()));
        // A token on loopback is required too.
        assert_eq!(plan(&opts(None, Some("t")), &no_env, None).unwrap().token.as_deref(), Some("t"));
    }

    #[test]
    fn hosts_and_origins_are_normalised() {
        assert_eq!(host_name("LocalHost:8782"), "localhost");
        assert_eq!(host_name("[::1]:8782"), "::1");
        assert_eq!(host_name("::1"), "::1");
        assert_eq!(host_name("127.0.0.1"), "127.0.0.1");
        assert_eq!(normalize_origin("http://LOCALHOST:8782/").as_deref(), Some("http://localhost:8782"));
        assert_eq!(normalize_origin("https://example.com").as_deref(), Some("https://example.com:443"));
        assert_eq!(normalize_origin("http://[::1]:9").as_deref(), Some("http://[::1]:9"));
        for bad in ["null", "file://x", "http://", "http://a/b", "localhost:80", "http://a:port"] {
            assert_eq!(normalize_origin(bad), None, "{bad}");
        }
    }

    fn headers(pairs: &[(header::HeaderName, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(k.clone(), HeaderValue::from_str(v).unwrap());
        }
        h
    }

    #[test]
    fn the_guard_checks_host_then_origin_then_token() {
        let mut given = opts(Some("127.0.0.2:9000"), Some("s3cret"));
        given.allow_origins = vec!["http://localhost:6274".into()];
        let guard = Guard::new(&plan(&given, &no_env, None).unwrap(), 9000);
        let status =
            |pairs: &[(header::HeaderName, &str)]| guard.check_headers(&headers(pairs)).map(|r| r.status());
        let auth = (header::AUTHORIZATION, "Bearer s3cret");
        assert_eq!(status(&[(header::HOST, "127.0.0.2:9000"), auth.clone()]), None);
        assert_eq!(status(&[(header::HOST, "localhost:9000"), auth.clone()]), None);
        assert_eq!(status(std::slice::from_ref(&auth)), Some(StatusCode::BAD_REQUEST));
        assert_eq!(status(&[(header::HOST, "evil.example:9000"), auth.clone()]), Some(StatusCode::FORBIDDEN));
        for origin in ["http://127.0.0.2:9000", "http://localhost:9000", "http://localhost:6274"] {
            assert_eq!(
                status(&[(header::HOST, "127.0.0.2"), (header::ORIGIN, origin), auth.clone()]),
                None,
                "{origin}"
            );
        }
        for origin in ["http://evil.example", "http://localhost:9001", "https://localhost:9000", "null"] {
            let s = status(&[(header::HOST, "127.0.0.2"), (header::ORIGIN, origin), auth.clone()]);
            assert_eq!(s, Some(StatusCode::FORBIDDEN), "{origin}");
        }
        for bad in ["Bearer s3cre", "Bearer s3cretx", "Basic s3cret", "s3cret", ""] {
            let s = status(&[(header::HOST, "127.0.0.2"), (header::AUTHORIZATION, bad)]);
            assert_eq!(s, Some(StatusCode::UNAUTHORIZED), "{bad}");
        }
        assert_eq!(status(&[(header::HOST, "127.0.0.2")]), Some(StatusCode::UNAUTHORIZED));
        assert_eq!(status(&[(header::HOST, "127.0.0.2"), (header::AUTHORIZATION, "bearer s3cret")]), None);
    }
}

#[test]
fn guide_refusals_speak_the_catalog_language() {
    let e = read_guides(GUIDES, &[], Language::Ja).unwrap_err();
    assert!(e.message.starts_with("names に使い方集の名前を 1 つ以上渡してください。"), "{}", e.message);
    let e = read_guides(GUIDES, &names(&["pointer"]), Language::Ja).unwrap_err();
    assert!(
        e.message.starts_with("使い方集に `pointer`") && e.message.contains("近い名前: `pointers`"),
        "{}",
        e.message
    );
}
