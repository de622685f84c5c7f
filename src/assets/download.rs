//! The SSRF-safe HTTPS downloader of `kb_save_image` (`docs/reference/original-server.md` §11.7).
//!
//! Every hop (the first URL and each redirect target) is validated the same way: absolute
//! `https`, no user-info, host not `localhost` / `*.localhost`; the host is resolved here and
//! **all** its addresses must be public ([`is_public`]). The request then goes through a client
//! whose resolver is pinned to exactly those vetted addresses (`resolve_to_addrs`; every other
//! name fails to resolve), so a second DNS answer (rebinding) cannot send the connection
//! elsewhere. Proxies and automatic redirects are off; redirects (301, 302, 303, 307, 308) are
//! followed by hand, at most [`MAX_REDIRECTS`]. The body is streamed with a byte cap (checked on
//! `Content-Length` first and while reading) and hashed as it goes.
//!
//! Only [`Downloader::new`] exists for the product: the system resolver, the platform's trust
//! store, 30 s, 25 MiB. [`Downloader::for_tests`] swaps the resolver and trust store and may
//! exempt listed addresses from the address check so tests can use a local HTTPS server; no
//! configuration key or environment variable reaches it.
//!
//! Error messages are fixed sentences: they never contain the URL, its query string or a
//! transport error's text (which would carry the URL).

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, ToSocketAddrs};
use std::sync::Arc;
use std::time::{Duration, Instant};

use reqwest::Url;
use reqwest::blocking::Client;
use reqwest::dns::{Name, Resolve, Resolving};

use super::{MAX_ASSET_BYTES, SIGNATURE_BYTES};
use crate::error::{Error, Result};
use crate::text::Sha256Stream;

/// Most redirects followed.
pub const MAX_REDIRECTS: usize = 5;

/// The whole download's time limit.
pub const TIMEOUT: Duration = Duration::from_secs(30);

/// `download_url must be an absolute HTTPS URL.`
pub const MSG_NOT_HTTPS: &str = "download_url must be an absolute HTTPS URL.";
/// `download_url must not contain user-info.`
pub const MSG_USER_INFO: &str = "download_url must not contain user-info.";
/// `download_url resolves to a local or private destination.`
pub const MSG_PRIVATE: &str = "download_url resolves to a local or private destination.";
/// `The image download host could not be resolved.`
pub const MSG_UNRESOLVED: &str = "The image download host could not be resolved.";
/// `The image download exceeded the redirect limit.`
pub const MSG_REDIRECTS: &str = "The image download exceeded the redirect limit.";
/// `Downloading the supplied image timed out.`
pub const MSG_TIMEOUT: &str = "Downloading the supplied image timed out.";
/// `Downloading the supplied image failed due to a network error.`
pub const MSG_NETWORK: &str = "Downloading the supplied image failed due to a network error.";
/// A redirect without a `Location` header.
pub const MSG_NO_LOCATION: &str = "The image download was redirected without a Location header.";

/// Resolves a host name to its addresses.
pub type Lookup = dyn Fn(&str, u16) -> std::io::Result<Vec<IpAddr>> + Send + Sync;

/// What a finished download produced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Downloaded {
    /// Bytes written.
    pub bytes: u64,
    /// SHA-256 of the bytes, 64 lowercase hex digits.
    pub sha256: String,
    /// The first (up to) [`SIGNATURE_BYTES`] bytes, for signature detection.
    pub prefix: Vec<u8>,
}

/// The downloader: how hosts are resolved, which certificates are trusted, the limits.
pub struct Downloader {
    lookup: Arc<Lookup>,
    /// Addresses the address check lets through (tests only; empty in the product).
    exempt: Vec<IpAddr>,
    /// DER certificates to trust instead of the platform's (tests only).
    roots: Option<Vec<Vec<u8>>>,
    timeout: Duration,
    max_bytes: u64,
}

/// What [`Downloader::for_tests`] replaces.
pub struct TestNetwork {
    /// Host name → addresses (names not listed do not resolve).
    pub hosts: HashMap<String, Vec<IpAddr>>,
    /// Addresses the address check accepts although they are local (e.g. `127.0.0.1`).
    pub exempt: Vec<IpAddr>,
    /// DER certificate(s) to trust; the platform's trust store is not used.
    pub roots: Vec<Vec<u8>>,
    /// The time limit.
    pub timeout: Duration,
    /// The byte limit.
    pub max_bytes: u64,
}

impl Default for Downloader {
    fn default() -> Self {
        Self::new()
    }
}

impl Downloader {
    /// The product's downloader: system DNS, platform trust store, 30 s, 25 MiB.
    pub fn new() -> Downloader {
        Downloader {
            lookup: Arc::new(|host, port| Ok((host, port).to_socket_addrs()?.map(|a| a.ip()).collect())),
            exempt: Vec::new(),
            roots: None,
            timeout: TIMEOUT,
            max_bytes: MAX_ASSET_BYTES,
        }
    }

    /// A downloader for tests against a local HTTPS server: the resolver, trust store, exempted
    /// addresses and limits are given. Not reachable from configuration.
    pub fn for_tests(network: TestNetwork) -> Downloader {
        let hosts = network.hosts;
        Downloader {
            lookup: Arc::new(move |host, _| {
                hosts.get(host).cloned().ok_or_else(|| std::io::Error::other("unknown test host"))
            }),
            exempt: network.exempt,
            roots: Some(network.roots),
            timeout: network.timeout,
            max_bytes: network.max_bytes,
        }
    }

    /// Downloads `url` into `out`, following up to [`MAX_REDIRECTS`] redirects, and returns the
    /// size, SHA-256 and signature prefix of what was written.
    pub fn download(&self, url: &str, out: &mut dyn Write) -> Result<Downloaded> {
        let deadline = Instant::now() + self.timeout;
        let mut current = parse_url(url)?;
        let mut redirects = 0;
        loop {
            let client = self.client_for(&current, deadline)?;
            let response = client.get(current.clone()).send().map_err(|e| transport_error(&e))?;
            let status = response.status();
            if matches!(status.as_u16(), 301 | 302 | 303 | 307 | 308) {
                if redirects == MAX_REDIRECTS {
                    return Err(Error::invalid_argument(MSG_REDIRECTS));
                }
                redirects += 1;
                let location = response
                    .headers()
                    .get(reqwest::header::LOCATION)
                    .and_then(|v| v.to_str().ok())
                    .ok_or_else(|| Error::invalid_argument(MSG_NO_LOCATION))?;
                current = current.join(location).map_err(|_| Error::invalid_argument(MSG_NOT_HTTPS))?;
                check_url(&current)?;
                continue;
            }
            if !status.is_success() {
                return Err(Error::invalid_argument(format!(
                    "Downloading the supplied image failed with HTTP {} ({}).",
                    status.as_u16(),
                    status.canonical_reason().unwrap_or("Unknown")
                )));
            }
            if response.content_length().is_some_and(|n| n > self.max_bytes) {
                return Err(self.too_large());
            }
            return self.stream(response, out, deadline);
        }
    }

    /// A client for one hop: the host resolved and vetted here, the resolver pinned to those
    /// addresses.
    fn client_for(&self, url: &Url, deadline: Instant) -> Result<Client> {
        let remaining = deadline.saturating_duration_since(Instant::now());
        if remaining.is_zero() {
            return Err(Error::invalid_argument(MSG_TIMEOUT));
        }
        let port = url.port_or_known_default().unwrap_or(443);
        let mut builder = Client::builder()
            .no_proxy()
            .redirect(reqwest::redirect::Policy::none())
            .https_only(true)
            .timeout(remaining)
            .dns_resolver(Arc::new(RefuseAll));
        if let Some(roots) = &self.roots {
            let certs = roots
                .iter()
                .map(|der| reqwest::Certificate::from_der(der))
                .collect::<std::result::Result<Vec<_>, _>>()
                .map_err(|_| Error::internal("The test trust store could not be loaded."))?;
            builder = builder.tls_certs_only(certs);
        }
        let addresses = match host_of(url)? {
            Host::Ip(ip) => vec![ip],
            Host::Domain(host) => {
                let ips = (self.lookup)(host, port).map_err(|_| Error::invalid_argument(MSG_UNRESOLVED))?;
                if ips.is_empty() {
                    return Err(Error::invalid_argument(MSG_UNRESOLVED));
                }
                // Pinned: the connection can only go to the addresses vetted below.
                let pinned: Vec<SocketAddr> = ips.iter().map(|ip| SocketAddr::new(*ip, port)).collect();
                builder = builder.resolve_to_addrs(host, &pinned);
                ips
            }
        };
        if addresses.iter().any(|ip| !is_public(*ip) && !self.exempt.contains(ip)) {
            return Err(Error::invalid_argument(MSG_PRIVATE));
        }
        builder.build().map_err(|_| Error::internal("The HTTPS client could not be created."))
    }

    /// Reads the body into `out` with the byte cap, hashing it and keeping the prefix.
    fn stream(
        &self,
        mut response: reqwest::blocking::Response,
        out: &mut dyn Write,
        deadline: Instant,
    ) -> Result<Downloaded> {
        let mut buf = vec![0u8; 64 * 1024];
        let mut hasher = Sha256Stream::default();
        let mut prefix = Vec::with_capacity(SIGNATURE_BYTES);
        let mut total: u64 = 0;
        loop {
            let n = match response.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(read_error(&e)),
            };
            total += n as u64;
            if total > self.max_bytes {
                return Err(self.too_large());
            }
            if Instant::now() > deadline {
                return Err(Error::invalid_argument(MSG_TIMEOUT));
            }
            let chunk = &buf[..n];
            hasher.update(chunk);
            if prefix.len() < SIGNATURE_BYTES {
                let take = (SIGNATURE_BYTES - prefix.len()).min(n);
                prefix.extend_from_slice(&chunk[..take]);
            }
            out.write_all(chunk).map_err(Error::temp_image)?;
        }
        out.flush().map_err(Error::temp_image)?;
        Ok(Downloaded { bytes: total, sha256: hasher.finish_hex(), prefix })
    }

    fn too_large(&self) -> Error {
        Error::invalid_argument(format!(
            "The supplied image is larger than the {} byte limit; upload a smaller image.",
            self.max_bytes
        ))
    }
}

/// A resolver that resolves nothing: every host a hop may reach is pinned with
/// `resolve_to_addrs`, so any other lookup is a bug and fails.
struct RefuseAll;

impl Resolve for RefuseAll {
    fn resolve(&self, _name: Name) -> Resolving {
        let refused: Box<dyn std::error::Error + Send + Sync> = "host not vetted".into();
        Box::pin(async move { Err(refused) })
    }
}

/// Parses and validates the first URL.
fn parse_url(url: &str) -> Result<Url> {
    let parsed = Url::parse(url.trim()).map_err(|_| Error::invalid_argument(MSG_NOT_HTTPS))?;
    check_url(&parsed)?;
    Ok(parsed)
}

/// The checks every hop's URL passes before any network access.
pub fn check_url(url: &Url) -> Result<()> {
    if url.scheme() != "https" || url.cannot_be_a_base() {
        return Err(Error::invalid_argument(MSG_NOT_HTTPS));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(Error::invalid_argument(MSG_USER_INFO));
    }
    if let Host::Domain(host) = host_of(url)? {
        let host = host.trim_end_matches('.').to_ascii_lowercase();
        if host == "localhost" || host.ends_with(".localhost") {
            return Err(Error::invalid_argument(MSG_PRIVATE));
        }
    }
    Ok(())
}

/// A URL's host: an address literal or a name.
enum Host<'a> {
    Ip(IpAddr),
    Domain(&'a str),
}

fn host_of(url: &Url) -> Result<Host<'_>> {
    let host =
        url.host_str().filter(|h| !h.is_empty()).ok_or_else(|| Error::invalid_argument(MSG_NOT_HTTPS))?;
    let literal = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')).unwrap_or(host);
    Ok(match literal.parse::<IpAddr>() {
        Ok(ip) => Host::Ip(ip),
        Err(_) => Host::Domain(host),
    })
}

/// Whether a download may connect to `ip`: not loopback, unspecified, private, shared (CGNAT),
/// link-local, benchmarking, documentation, multicast, broadcast or reserved; IPv6 forms that
/// embed an IPv4 address (mapped, compatible, NAT64, 6to4) are judged by that address.
pub fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_public_v4(v4),
        IpAddr::V6(v6) => is_public_v6(v6),
    }
}

fn is_public_v4(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    let refused = a == 0 // 0.0.0.0/8 ("this network", unspecified)
        || a == 10 // 10/8 private
        || a == 127 // loopback
        || (a == 100 && (64..128).contains(&b)) // 100.64/10 shared address space (CGNAT)
        || (a == 169 && b == 254) // link-local
        || (a == 172 && (16..32).contains(&b)) // 172.16/12 private
        || (a == 192 && b == 168) // 192.168/16 private
        || (a == 192 && b == 0 && c == 0) // 192.0.0/24 IETF protocol assignments
        || (a == 192 && b == 0 && c == 2) // TEST-NET-1
        || (a == 198 && (b == 18 || b == 19)) // 198.18/15 benchmarking
        || (a == 198 && b == 51 && c == 100) // TEST-NET-2
        || (a == 203 && b == 0 && c == 113) // TEST-NET-3
        || a >= 224; // multicast, reserved, broadcast
    !refused
}

fn is_public_v6(ip: Ipv6Addr) -> bool {
    if let Some(v4) = ip.to_ipv4_mapped() {
        return is_public_v4(v4);
    }
    let s = ip.segments();
    let embedded = |hi: u16, lo: u16| Ipv4Addr::new((hi >> 8) as u8, hi as u8, (lo >> 8) as u8, lo as u8);
    if s[..6] == [0, 0, 0, 0, 0, 0] {
        // `::`, `::1` and the deprecated IPv4-compatible `::a.b.c.d`: never a public target.
        return false;
    }
    if s[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        return is_public_v4(embedded(s[6], s[7])); // NAT64 64:ff9b::/96
    }
    if s[0] == 0x2002 {
        return is_public_v4(embedded(s[1], s[2])); // 6to4 2002::/16
    }
    let refused = (s[0] & 0xffc0) == 0xfe80 // link-local fe80::/10
        || (s[0] & 0xffc0) == 0xfec0 // site-local fec0::/10
        || (s[0] & 0xfe00) == 0xfc00 // unique local fc00::/7
        || (s[0] & 0xff00) == 0xff00 // multicast ff00::/8
        || (s[0] == 0x2001 && s[1] == 0x0db8) // documentation 2001:db8::/32
        || (s[0] == 0x0100 && s[1..4] == [0, 0, 0]); // discard-only 100::/64
    !refused
}

/// Maps a send error to a fixed message (the error's own text would carry the URL).
fn transport_error(err: &reqwest::Error) -> Error {
    if err.is_timeout() || chain_has_timeout(err) {
        Error::invalid_argument(MSG_TIMEOUT)
    } else {
        Error::invalid_argument(MSG_NETWORK)
    }
}

/// Maps a body read error to a fixed message.
fn read_error(err: &std::io::Error) -> Error {
    // `io::Error::source` skips the wrapped error itself: start the walk at `get_ref`.
    let wrapped = err.get_ref().is_some_and(|inner| chain_has_timeout(inner));
    if err.kind() == std::io::ErrorKind::TimedOut || wrapped {
        Error::invalid_argument(MSG_TIMEOUT)
    } else {
        Error::invalid_argument(MSG_NETWORK)
    }
}

/// Whether any error in the `source` chain is a timeout.
fn chain_has_timeout(err: &(dyn std::error::Error + 'static)) -> bool {
    let mut current: Option<&(dyn std::error::Error + 'static)> = Some(err);
    while let Some(e) = current {
        if let Some(r) = e.downcast_ref::<reqwest::Error>()
            && r.is_timeout()
        {
            return true;
        }
        if let Some(io) = e.downcast_ref::<std::io::Error>()
            && io.kind() == std::io::ErrorKind::TimedOut
        {
            return true;
        }
        current = e.source();
    }
    false
}
