//! Where the node's own requests may go: the one rule every request the node
//! makes meets (a person's reminder webhook, a butler's webhook, an OAuth
//! client's metadata document), when its address is set and again just before
//! each request, so an address stored before the rule, or under a looser one,
//! is refused all the same. The bindings take only a `Destination`, and only
//! `Destination::check` makes one, so no request leaves without the rule.
//!
//! An address is `https://` with a host that is a public DNS name or a public
//! IP address, written so that it reads one way only: no credentials
//! (`user@`), no backslash, whitespace or control character, no
//! percent-encoded or non-ASCII host. An IP address is read as the URL
//! standard (WHATWG) reads it, which the runtime's `fetch` follows, so what is
//! checked is what is fetched: `2130706433`, `0177.0.0.1`, `0x7f.1` and
//! `127.1` are all 127.0.0.1 there, and here. Refused, with the range named:
//! IPv4 and IPv6 addresses that are not on the internet (`IPV4_RANGES`,
//! `IPV6_RANGES`: loopback, private, link-local, shared, unique-local,
//! unspecified, broadcast, multicast, documentation, benchmarking and reserved),
//! IPv6 forms that carry such an IPv4 address (IPv4-mapped, IPv4-compatible,
//! NAT64 `64:ff9b::/96`, 6to4 `2002::/16`), names of this machine or a local
//! network (`localhost` and names under it, `.local`, `.internal`, …, with or
//! without a trailing dot), a name without a dot (which a resolver completes
//! inside its own network), and the node's own host.
//!
//! Loopback, and plain http to it, is allowed only when the node itself answers
//! on a loopback origin (`OutboundPolicy::for_origin`, the one place that says so):
//! local development and the tests, whose receivers listen on 127.0.0.1.
//!
//! How requests are made is here too: at most `REQUESTS_AT_ONCE` open at once
//! (`each_at_once`), each within its time by the platform's timer (`within`).
//!
//! What this cannot see: the address a name resolves to. A Worker has no DNS of
//! its own to ask, so a public name whose answer is private (DNS rebinding)
//! passes here; README's security section says what the runtime does then.

use std::future::Future;
use std::net::{Ipv4Addr, Ipv6Addr};

use futures_util::future::{Either, select};
use futures_util::stream::{self, StreamExt};

use crate::core::platform::Platform;

/// Whether the node may reach loopback, and its own host, which it never posts
/// to: from the origin the node answers at, in this one place
/// (`Config::outbound_policy` hands it `PUBLIC_ORIGIN`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutboundPolicy {
    /// Whether loopback addresses (and http to them) are allowed: only when
    /// the node itself answers on a loopback origin.
    loopback_allowed: bool,
    /// The host of the node's own origin, when `PUBLIC_ORIGIN` names it.
    own_host: Option<Host>,
}

impl OutboundPolicy {
    /// The policy of a node answering at `public_origin`: loopback is allowed
    /// when, and only when, that is a loopback origin (`http://127.0.0.1:8787`,
    /// `http://localhost:8787`, `http://[::1]:8787`), as in local development
    /// and the tests. A node that names no origin is treated as deployed.
    pub fn for_origin(public_origin: Option<&str>) -> OutboundPolicy {
        let own_host = public_origin.and_then(|origin| parse(origin).ok()).map(|url| url.host);
        OutboundPolicy { loopback_allowed: own_host.as_ref().is_some_and(Host::is_loopback), own_host }
    }

    /// A deployed node's policy: loopback refused like any inward address.
    pub fn deployed() -> OutboundPolicy {
        OutboundPolicy { loopback_allowed: false, own_host: None }
    }

    /// Whether loopback addresses are allowed.
    pub fn allows_loopback(&self) -> bool {
        self.loopback_allowed
    }
}

/// A URL's host, as the URL standard reads it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Host {
    /// A DNS name, lowercased, without a trailing dot.
    Name(String),
    Ipv4(Ipv4Addr),
    Ipv6(Ipv6Addr),
}

impl Host {
    /// The host as a domain is written: a name as it is (lowercased), an
    /// address in its usual text.
    pub fn text(&self) -> String {
        match self {
            Host::Name(name) => name.clone(),
            Host::Ipv4(address) => address.to_string(),
            Host::Ipv6(address) => address.to_string(),
        }
    }

    /// Whether the host is `domain` or a name beneath it.
    pub fn is_within(&self, domain: &str) -> bool {
        let text = self.text();
        text == domain || text.strip_suffix(domain).is_some_and(|above| above.ends_with('.'))
    }

    /// The host of `url` as the URL standard reads it, whatever the node may
    /// send to: for naming, never for sending (which takes a `Destination`).
    pub fn of_url(url: &str) -> Option<Host> {
        parse(url).ok().map(|parsed| parsed.host)
    }

    /// Whether the host is this machine: a loopback address (IPv4 directly or
    /// inside IPv6) or `localhost` and the names under it.
    fn is_loopback(&self) -> bool {
        match self {
            Host::Name(name) => name == "localhost" || name.ends_with(".localhost"),
            Host::Ipv4(address) => address.is_loopback(),
            Host::Ipv6(address) => {
                address.is_loopback() || embedded_ipv4(address).is_some_and(|(_, address)| address.is_loopback())
            }
        }
    }
}

/// An address the node may send a request to, checked against the rule just
/// now. Made only by `check`, never stored: a stored address is text, checked
/// again before every request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Destination {
    url: String,
    host: Host,
    port: Option<u16>,
}

impl Destination {
    /// `url` as a destination under `policy`, or why the node will not send
    /// a request there. At most `maximum_bytes` long.
    pub fn check(url: &str, maximum_bytes: usize, policy: &OutboundPolicy) -> Result<Destination, Refused> {
        if url.len() > maximum_bytes {
            return Err(Refused::TooLong { maximum: maximum_bytes });
        }
        let parsed = parse(url)?;
        let loopback = parsed.host.is_loopback();
        // Local development: a receiver on this machine, over http or https.
        let on_this_machine = loopback && policy.loopback_allowed;
        if !on_this_machine && !parsed.https {
            return Err(Refused::NotHttps);
        }
        if !on_this_machine {
            judge(&parsed.host, &parsed.written_host)?;
        }
        if policy.own_host.as_ref() == Some(&parsed.host) && !loopback {
            return Err(Refused::ItsOwnHost { host: parsed.written_host });
        }
        Ok(Destination { url: url.to_string(), host: parsed.host, port: parsed.port })
    }

    /// The URL, exactly as given: what the runtime fetches.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Its host, as the URL standard reads it.
    pub fn host(&self) -> &Host {
        &self.host
    }

    /// Its port, when it names one.
    pub fn port(&self) -> Option<u16> {
        self.port
    }
}

/// Why the node will not send a request to an address. `why` says it in
/// words each domain puts in its own refusal, naming its own field.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refused {
    TooLong {
        maximum: usize,
    },
    /// A space, a control character or a backslash: URL readers disagree
    /// about where such an address goes.
    Unwritable,
    NotHttps,
    /// Credentials before an `@`, which hide the host behind a name.
    Credentials,
    NoHost,
    /// A percent-encoded, non-ASCII or otherwise unusual host, which the URL
    /// standard would rewrite before it is fetched.
    HostNotPlain,
    BadPort,
    /// A host that reads as an IP address but is not a valid one.
    NotAnAddress {
        host: String,
    },
    /// An address inside a network rather than on the internet: the host as
    /// written, the address it reads as when that is written otherwise
    /// (`0x7f.1`), its range, and the IPv6 form that carries an IPv4 one.
    Inward {
        host: String,
        read_as: Option<String>,
        what: &'static str,
        carried_as: Option<&'static str>,
    },
    /// A name of this machine or of a local network.
    LocalName {
        host: String,
        what: &'static str,
    },
    ItsOwnHost {
        host: String,
    },
}

impl Refused {
    /// Why, as a clause: "its host `10.0.0.1` is a private address (10.0.0.0/8)".
    pub fn why(&self) -> String {
        match self {
            Refused::TooLong { maximum } => format!("it is longer than {maximum} bytes"),
            Refused::Unwritable => {
                "it holds a space, a control character or a backslash, which URL readers take differently".into()
            }
            Refused::NotHttps => {
                "it is not an https address (plain http reaches only this machine, in local development)".into()
            }
            Refused::Credentials => "it carries credentials before an `@`, which hide where it really goes".into(),
            Refused::NoHost => "it names no host".into(),
            Refused::HostNotPlain => {
                "its host is percent-encoded, not ASCII or holds unusual characters (write an international name in its `xn--` form)".into()
            }
            Refused::BadPort => "its port is not a number from 1 to 65535".into(),
            Refused::NotAnAddress { host } => format!("its host `{host}` reads as an IP address but is not one"),
            Refused::Inward { host, read_as, what, carried_as } => {
                let read_as = read_as.as_ref().map(|address| format!(" (read as `{address}`)")).unwrap_or_default();
                let form = carried_as.map(|form| format!("the {form} form of ")).unwrap_or_default();
                format!("its host `{host}`{read_as} is {form}{what}, inside a network rather than on the internet")
            }
            Refused::LocalName { host, what } => format!("its host `{host}` is {what}"),
            Refused::ItsOwnHost { host } => format!("its host `{host}` is the node's own"),
        }
    }
}

/// A URL taken apart as far as the rule needs.
struct Parsed {
    https: bool,
    host: Host,
    /// The host as written, for the refusal's words.
    written_host: String,
    port: Option<u16>,
}

/// Takes `url` apart: scheme, host and port, refusing anything two URL
/// readers could read differently.
fn parse(url: &str) -> Result<Parsed, Refused> {
    if url.chars().any(|c| c.is_whitespace() || c.is_control() || c == '\\') {
        return Err(Refused::Unwritable);
    }
    let (scheme, rest) = url.split_once("://").ok_or(Refused::NotHttps)?;
    let https = match scheme.to_ascii_lowercase().as_str() {
        "https" => true,
        "http" => false,
        _ => return Err(Refused::NotHttps),
    };
    // The authority ends where the URL standard ends it (a backslash was refused).
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    if authority.contains('@') {
        return Err(Refused::Credentials);
    }
    let (written_host, port) = if let Some(bracketed) = authority.strip_prefix('[') {
        let (inside, after) = bracketed.split_once(']').ok_or(Refused::HostNotPlain)?;
        let port = match after {
            "" => None,
            _ => Some(after.strip_prefix(':').ok_or(Refused::BadPort)?),
        };
        (&authority[..inside.len() + 2], port)
    } else {
        match authority.split_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (authority, None),
        }
    };
    let port = match port {
        None => None,
        Some(port) => {
            let number: u16 = port.parse().map_err(|_| Refused::BadPort)?;
            if number == 0 || !port.bytes().all(|byte| byte.is_ascii_digit()) {
                return Err(Refused::BadPort);
            }
            Some(number)
        }
    };
    if written_host.is_empty() {
        return Err(Refused::NoHost);
    }
    Ok(Parsed { https, host: read_host(written_host)?, written_host: written_host.to_string(), port })
}

/// The host `written` names, as the URL standard reads it: an IPv6 address in
/// brackets, an IPv4 address in any of its spellings when the last label is a
/// number, or a name.
fn read_host(written: &str) -> Result<Host, Refused> {
    if !written.is_ascii() || written.contains('%') {
        return Err(Refused::HostNotPlain);
    }
    if let Some(inside) = written.strip_prefix('[').and_then(|host| host.strip_suffix(']')) {
        return inside
            .parse::<Ipv6Addr>()
            .map(Host::Ipv6)
            .map_err(|_| Refused::NotAnAddress { host: written.to_string() });
    }
    let lowered = written.to_ascii_lowercase();
    if ends_in_a_number(&lowered) {
        return ipv4_as_the_url_standard_reads_it(&lowered)
            .map(Host::Ipv4)
            .ok_or_else(|| Refused::NotAnAddress { host: written.to_string() });
    }
    let name = lowered.strip_suffix('.').unwrap_or(&lowered);
    let plain_label = |label: &str| {
        (1..=63).contains(&label.len())
            && label.bytes().all(|byte| byte.is_ascii_alphanumeric() || byte == b'-' || byte == b'_')
    };
    if name.len() > 253 || !name.split('.').all(plain_label) {
        return Err(Refused::HostNotPlain);
    }
    Ok(Host::Name(name.to_string()))
}

/// Whether the URL standard reads `host` as an IPv4 address: its last label
/// (a trailing dot aside) is decimal digits, or `0x` and hex digits.
fn ends_in_a_number(host: &str) -> bool {
    let host = host.strip_suffix('.').unwrap_or(host);
    let last = host.rsplit('.').next().unwrap_or_default();
    if !last.is_empty() && last.bytes().all(|byte| byte.is_ascii_digit()) {
        return true;
    }
    last.strip_prefix("0x").is_some_and(|hex| hex.bytes().all(|byte| byte.is_ascii_hexdigit()))
}

/// The IPv4 address the URL standard's IPv4 parser reads from `host`: one to
/// four parts, each decimal, octal (a leading `0`) or hexadecimal (`0x`), the
/// last filling the bytes the others leave; `None` where it fails.
fn ipv4_as_the_url_standard_reads_it(host: &str) -> Option<Ipv4Addr> {
    let host = host.strip_suffix('.').unwrap_or(host);
    let parts: Vec<&str> = host.split('.').collect();
    if parts.len() > 4 {
        return None;
    }
    let numbers = parts.iter().map(|part| ipv4_number(part)).collect::<Option<Vec<u64>>>()?;
    let (last, leading) = numbers.split_last()?;
    if leading.iter().any(|number| *number > 255) || *last >= 256u64.pow(5 - numbers.len() as u32) {
        return None;
    }
    let value =
        leading.iter().enumerate().fold(*last, |value, (index, number)| value + number * 256u64.pow(3 - index as u32));
    u32::try_from(value).ok().map(Ipv4Addr::from)
}

/// One part of an IPv4 address as the URL standard reads it.
fn ipv4_number(part: &str) -> Option<u64> {
    if part.is_empty() {
        return None;
    }
    let (digits, radix) = if let Some(hex) = part.strip_prefix("0x") {
        (hex, 16)
    } else if part.len() > 1 && part.starts_with('0') {
        (&part[1..], 8)
    } else {
        (part, 10)
    };
    if digits.is_empty() {
        return Some(0);
    }
    u64::from_str_radix(digits, radix).ok()
}

/// The IPv4 ranges that are not on the internet, with what each is (IANA's
/// special-purpose registry, RFC 6890 and after).
const IPV4_RANGES: &[([u8; 4], u8, &str)] = &[
    ([0, 0, 0, 0], 8, "“this network” (0.0.0.0/8), which reaches the machine itself"),
    ([10, 0, 0, 0], 8, "a private address (10.0.0.0/8)"),
    ([100, 64, 0, 0], 10, "a shared address (100.64.0.0/10, carrier-grade NAT)"),
    ([127, 0, 0, 0], 8, "a loopback address (127.0.0.0/8)"),
    ([169, 254, 0, 0], 16, "a link-local address (169.254.0.0/16, where cloud metadata services answer)"),
    ([172, 16, 0, 0], 12, "a private address (172.16.0.0/12)"),
    ([192, 0, 0, 0], 24, "reserved for protocol assignments (192.0.0.0/24)"),
    ([192, 0, 2, 0], 24, "a documentation address (192.0.2.0/24)"),
    ([192, 88, 99, 0], 24, "the 6to4 relay anycast (192.88.99.0/24)"),
    ([192, 168, 0, 0], 16, "a private address (192.168.0.0/16)"),
    ([198, 18, 0, 0], 15, "a benchmarking address (198.18.0.0/15)"),
    ([198, 51, 100, 0], 24, "a documentation address (198.51.100.0/24)"),
    ([203, 0, 113, 0], 24, "a documentation address (203.0.113.0/24)"),
    ([224, 0, 0, 0], 4, "a multicast address (224.0.0.0/4)"),
    ([240, 0, 0, 0], 4, "reserved or broadcast (240.0.0.0/4, 255.255.255.255)"),
];

/// The IPv6 ranges that are not on the internet, with what each is. Those
/// that carry an IPv4 address are judged by it instead (`embedded_ipv4`); an
/// address outside global unicast (`2000::/3`) is refused as reserved.
const IPV6_RANGES: &[([u16; 8], u8, &str)] = &[
    ([0, 0, 0, 0, 0, 0, 0, 0], 128, "the unspecified address (::)"),
    ([0, 0, 0, 0, 0, 0, 0, 1], 128, "the loopback address (::1)"),
    ([0x64, 0xff9b, 1, 0, 0, 0, 0, 0], 48, "a local-use NAT64 address (64:ff9b:1::/48)"),
    ([0x100, 0, 0, 0, 0, 0, 0, 0], 64, "a discard-only address (100::/64)"),
    ([0x2001, 0, 0, 0, 0, 0, 0, 0], 23, "reserved for protocol assignments (2001::/23, Teredo among them)"),
    ([0x2001, 0xdb8, 0, 0, 0, 0, 0, 0], 32, "a documentation address (2001:db8::/32)"),
    ([0x3fff, 0, 0, 0, 0, 0, 0, 0], 20, "a documentation address (3fff::/20)"),
    ([0xfc00, 0, 0, 0, 0, 0, 0, 0], 7, "a unique-local address (fc00::/7)"),
    ([0xfe80, 0, 0, 0, 0, 0, 0, 0], 10, "a link-local address (fe80::/10)"),
    ([0xfec0, 0, 0, 0, 0, 0, 0, 0], 10, "a site-local address (fec0::/10)"),
    ([0xff00, 0, 0, 0, 0, 0, 0, 0], 8, "a multicast address (ff00::/8)"),
];

/// Names of this machine or of a local network, by their last labels: they
/// resolve, if at all, inside the network the request leaves from.
const LOCAL_NAMES: &[(&str, &str)] = &[
    ("localhost", "a name of this machine (localhost)"),
    ("localdomain", "a name of this machine or its network (.localdomain)"),
    ("local", "a name on the local network (.local, multicast DNS)"),
    ("internal", "a name reserved for private networks (.internal)"),
    ("home.arpa", "a name reserved for home networks (.home.arpa)"),
    ("intranet", "a name of a private network (.intranet)"),
    ("lan", "a name of a private network (.lan)"),
    ("home", "a name of a private network (.home)"),
    ("corp", "a name of a private network (.corp)"),
];

/// Whether `address` lies in the range of `prefix_bits` bits from `network`.
fn in_range(address: u128, network: u128, prefix_bits: u8, width: u8) -> bool {
    prefix_bits == 0 || (address ^ network) >> (width - prefix_bits) == 0
}

fn ipv4_range(address: Ipv4Addr) -> Option<&'static str> {
    let bits = u128::from(u32::from(address));
    IPV4_RANGES
        .iter()
        .find(|(network, prefix, _)| in_range(bits, u128::from(u32::from_be_bytes(*network)), *prefix, 32))
        .map(|(_, _, what)| *what)
}

/// The IPv4 address an IPv6 address carries, and the form it carries it in:
/// IPv4-mapped (`::ffff:a.b.c.d`), IPv4-compatible (`::a.b.c.d`), NAT64
/// (`64:ff9b::a.b.c.d`) or 6to4 (`2002:aabb:ccdd::`).
fn embedded_ipv4(address: &Ipv6Addr) -> Option<(&'static str, Ipv4Addr)> {
    let segments = address.segments();
    let low = Ipv4Addr::new((segments[6] >> 8) as u8, segments[6] as u8, (segments[7] >> 8) as u8, segments[7] as u8);
    match segments {
        [0, 0, 0, 0, 0, 0xffff, _, _] => Some(("IPv4-mapped", low)),
        // `::` and `::1` are their own, not IPv4 addresses.
        [0, 0, 0, 0, 0, 0, high, rest] if high != 0 || rest > 1 => Some(("IPv4-compatible", low)),
        [0x64, 0xff9b, 0, 0, 0, 0, _, _] => Some(("NAT64", low)),
        [0x2002, high, rest, ..] => {
            Some(("6to4", Ipv4Addr::new((high >> 8) as u8, high as u8, (rest >> 8) as u8, rest as u8)))
        }
        _ => None,
    }
}

fn ipv6_range(address: &Ipv6Addr) -> Option<&'static str> {
    let bits = u128::from(*address);
    let listed = IPV6_RANGES
        .iter()
        .find(|(network, prefix, _)| in_range(bits, u128::from(Ipv6Addr::from(*network)), *prefix, 128))
        .map(|(_, _, what)| *what);
    let global_unicast = in_range(bits, u128::from(Ipv6Addr::new(0x2000, 0, 0, 0, 0, 0, 0, 0)), 3, 128);
    listed.or((!global_unicast).then_some("a reserved address (outside 2000::/3)"))
}

/// Whether the node may reach `host` (written `written`): refused with its
/// range or kind when it lies inside a network.
fn judge(host: &Host, written: &str) -> Result<(), Refused> {
    // The address as written, and as read when that differs (`0x7f.1` is 127.0.0.1).
    let inward = |address: String, what, carried_as| Refused::Inward {
        host: written.to_string(),
        read_as: (!written.eq_ignore_ascii_case(&address)).then_some(address),
        what,
        carried_as,
    };
    match host {
        Host::Ipv4(address) => match ipv4_range(*address) {
            Some(what) => Err(inward(address.to_string(), what, None)),
            None => Ok(()),
        },
        Host::Ipv6(address) => {
            if let Some((form, carried)) = embedded_ipv4(address) {
                return match ipv4_range(carried) {
                    Some(what) => Err(inward(format!("[{address}]"), what, Some(form))),
                    None => Ok(()),
                };
            }
            match ipv6_range(address) {
                Some(what) => Err(inward(format!("[{address}]"), what, None)),
                None => Ok(()),
            }
        }
        Host::Name(name) => {
            if let Some((_, what)) =
                LOCAL_NAMES.iter().find(|(suffix, _)| name == suffix || name.ends_with(&format!(".{suffix}")))
            {
                return Err(Refused::LocalName { host: name.clone(), what });
            }
            if !name.contains('.') {
                return Err(Refused::LocalName {
                    host: name.clone(),
                    what: "a name without a dot, which a resolver completes inside its own network",
                });
            }
            Ok(())
        }
    }
}

/// The most requests the node has open at once in one invocation: the Workers
/// runtime's own limit on open connections. More would wait in the runtime's
/// queue, where their time would run out before they were sent.
pub const REQUESTS_AT_ONCE: usize = 6;

/// How long a webhook's receiver has to answer, from when its request starts.
pub const POST_TIMEOUT_MS: u32 = 10_000;

/// How long a document the node reads (an OAuth client's metadata) has to arrive.
pub const DOCUMENT_TIMEOUT_MS: u32 = 5_000;

/// `request`'s outcome, or `None` if it has not finished `milliseconds` after
/// it started, by the platform's timer. The adapter aborts its fetches on the
/// same deadlines; this holds the core to them whatever a binding does, so a
/// receiver that never answers costs its deadline and nothing more.
pub async fn within<T>(platform: &dyn Platform, milliseconds: u32, request: impl Future<Output = T>) -> Option<T> {
    let request = std::pin::pin!(request);
    match select(request, platform.sleep(milliseconds)).await {
        Either::Left((outcome, _)) => Some(outcome),
        Either::Right(((), _)) => None,
    }
}

/// `attempt` for each of `items`, at most `REQUESTS_AT_ONCE` at a time, each
/// started when a place frees: the outcomes, in `items`' order. So one slow
/// receiver holds one place, never everyone else's turn.
pub async fn each_at_once<'a, T, O, F>(items: &'a [T], attempt: impl Fn(&'a T) -> F) -> Vec<O>
where
    F: Future<Output = O> + 'a,
{
    let attempt = &attempt;
    let mut outcomes: Vec<(usize, O)> = stream::iter(items.iter().enumerate())
        .map(|(index, item)| async move { (index, attempt(item).await) })
        .buffer_unordered(REQUESTS_AT_ONCE)
        .collect()
        .await;
    outcomes.sort_by_key(|(index, _)| *index);
    outcomes.into_iter().map(|(_, outcome)| outcome).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn deployed(url: &str) -> Result<Destination, Refused> {
        Destination::check(url, 2000, &OutboundPolicy::deployed())
    }

    fn loopback_node() -> OutboundPolicy {
        OutboundPolicy::for_origin(Some("http://127.0.0.1:8787"))
    }

    #[test]
    fn every_spelling_of_an_ipv4_address_reads_as_the_url_standard_reads_it() {
        let check = |host: &str, expected: Option<[u8; 4]>| {
            assert_eq!(ipv4_as_the_url_standard_reads_it(host), expected.map(Ipv4Addr::from), "{host}");
        };
        check("127.0.0.1", Some([127, 0, 0, 1]));
        check("2130706433", Some([127, 0, 0, 1]));
        check("0177.0.0.1", Some([127, 0, 0, 1]));
        check("0x7f.1", Some([127, 0, 0, 1]));
        check("0x7f000001", Some([127, 0, 0, 1]));
        check("127.1", Some([127, 0, 0, 1]));
        check("127.0.1", Some([127, 0, 0, 1]));
        check("0", Some([0, 0, 0, 0]));
        check("0x", Some([0, 0, 0, 0]));
        check("10.0.0.1.", Some([10, 0, 0, 1]));
        check("0xa9.0376.43518", Some([169, 254, 169, 254]));
        check("017700000001", Some([127, 0, 0, 1]));
        check("256.0.0.1", None);
        check("1.2.3.4.5", None);
        check("08.0.0.1", None);
        check("1..1", None);
        check("4294967296", None);
    }

    #[test]
    fn an_inward_address_is_refused_in_every_form_and_its_range_named() {
        for url in [
            "https://127.0.0.1/hook",
            "https://2130706433/hook",
            "https://0177.0.0.1/hook",
            "https://0x7f.1/hook",
            "https://127.1/hook",
            "https://0X7F.0.0.1/hook",
            "https://10.0.0.1/hook",
            "https://10.0.0.1./hook",
            "https://172.16.5.4/hook",
            "https://192.168.1.1:8443/hook",
            "https://169.254.169.254/latest/meta-data/",
            "https://0xa9fea9fe/latest",
            "https://100.64.0.1/hook",
            "https://0.0.0.0/hook",
            "https://0/hook",
            "https://255.255.255.255/hook",
            "https://224.0.0.1/hook",
            "https://192.0.2.10/hook",
            "https://198.18.0.1/hook",
            "https://[::1]/hook",
            "https://[::]/hook",
            "https://[0:0:0:0:0:0:0:1]/hook",
            "https://[::ffff:127.0.0.1]/hook",
            "https://[::ffff:7f00:1]/hook",
            "https://[::ffff:10.0.0.1]/hook",
            "https://[::ffff:a9fe:a9fe]/hook",
            "https://[::127.0.0.1]/hook",
            "https://[::10.0.0.1]/hook",
            "https://[64:ff9b::10.0.0.1]/hook",
            "https://[64:ff9b::7f00:1]/hook",
            "https://[2002:a00:1::]/hook",
            "https://[2002:7f00:1::1]/hook",
            "https://[fd00::1]/hook",
            "https://[fc00::1]/hook",
            "https://[fe80::1]/hook",
            "https://[FE80::1]/hook",
            "https://[fec0::1]/hook",
            "https://[ff02::1]/hook",
            "https://[2001:db8::1]/hook",
            "https://[2001::1]/hook",
            "https://[64:ff9b:1::1]/hook",
        ] {
            assert!(matches!(deployed(url), Err(Refused::Inward { .. })), "{url}: {:?}", deployed(url));
        }
        let refused = deployed("https://0xa9fea9fe/latest").unwrap_err();
        assert_eq!(
            refused.why(),
            "its host `0xa9fea9fe` (read as `169.254.169.254`) is a link-local address (169.254.0.0/16, where cloud metadata services answer), inside a network rather than on the internet"
        );
        assert!(
            deployed("https://[::ffff:10.0.0.1]/")
                .unwrap_err()
                .why()
                .contains("the IPv4-mapped form of a private address (10.0.0.0/8)")
        );
    }

    #[test]
    fn names_of_this_machine_or_a_local_network_are_refused_with_or_without_a_trailing_dot() {
        for url in [
            "https://localhost/hook",
            "https://LOCALHOST/hook",
            "https://localhost./hook",
            "https://api.localhost/hook",
            "https://api.localhost./hook",
            "https://printer.local/hook",
            "https://metadata.google.internal/computeMetadata/v1/",
            "https://metadata.google.internal./computeMetadata/v1/",
            "https://router.home.arpa/hook",
            "https://localhost.localdomain/hook",
            "https://intranet/hook",
            "https://metadata/hook",
            "https://wiki.corp/hook",
        ] {
            assert!(matches!(deployed(url), Err(Refused::LocalName { .. })), "{url}: {:?}", deployed(url));
        }
    }

    #[test]
    fn an_address_that_reads_two_ways_is_refused() {
        let check = |url: &str, expected: Refused| assert_eq!(deployed(url), Err(expected), "{url}");
        check("https://hooks.example.org@127.0.0.1/", Refused::Credentials);
        check("https://user:pass@hooks.example.org/", Refused::Credentials);
        check("https://hooks.example.org\\@127.0.0.1/", Refused::Unwritable);
        check("https://127.0.0\t.1/", Refused::Unwritable);
        check("https://hooks.example.org/a b", Refused::Unwritable);
        check("https://%31%32%37.0.0.1/", Refused::HostNotPlain);
        check("https://１２７.0.0.1/", Refused::HostNotPlain);
        check("https://hooks.exa*mple.org/", Refused::HostNotPlain);
        check("https://[::1/", Refused::HostNotPlain);
        check("https://[fe80::1%25eth0]/", Refused::HostNotPlain);
        check("https:///10.0.0.1/", Refused::NoHost);
        check("https://:443/", Refused::NoHost);
        check("https://hooks.example.org:0/", Refused::BadPort);
        check("https://hooks.example.org:65536/", Refused::BadPort);
        check("https://hooks.example.org:+443/", Refused::BadPort);
        check("https://256.1.1.1/", Refused::NotAnAddress { host: "256.1.1.1".into() });
        check("https://[1:2:3]/", Refused::NotAnAddress { host: "[1:2:3]".into() });
        check("http://hooks.example.org/", Refused::NotHttps);
        check("ftp://hooks.example.org/", Refused::NotHttps);
        check("hooks.example.org/", Refused::NotHttps);
        check("javascript:alert(1)", Refused::NotHttps);
        assert_eq!(
            Destination::check("https://hooks.example.org/long", 20, &OutboundPolicy::deployed()),
            Err(Refused::TooLong { maximum: 20 })
        );
    }

    #[test]
    fn a_public_address_passes_whatever_its_form() {
        for url in [
            "https://hooks.example.org/mailroom",
            "HTTPS://Hooks.Example.ORG/mailroom",
            "https://hooks.example.org./mailroom",
            "https://hooks.example.org:8443/mailroom?x=1#y",
            "https://8.8.8.8/hook",
            "https://134744072/hook",
            "https://[2606:4700:4700::1111]/hook",
            "https://[::ffff:8.8.8.8]/hook",
            "https://[64:ff9b::8.8.8.8]/hook",
            "https://xn--bcher-kva.example/hook",
            "https://my_service.example.org/hook",
        ] {
            let destination = deployed(url).unwrap_or_else(|refused| panic!("{url}: {}", refused.why()));
            assert_eq!(destination.url(), url, "fetched exactly as written");
        }
        assert_eq!(deployed("https://134744072/").unwrap().host(), &Host::Ipv4(Ipv4Addr::new(8, 8, 8, 8)));
    }

    #[test]
    fn loopback_is_allowed_only_to_a_node_on_a_loopback_origin() {
        let local = loopback_node();
        assert!(local.allows_loopback());
        for url in
            ["http://127.0.0.1:4567/hook", "http://localhost:4567/hook", "https://[::1]/hook", "http://0x7f.1:9/"]
        {
            assert!(Destination::check(url, 2000, &local).is_ok(), "{url}");
            assert!(deployed(url).is_err(), "{url}");
        }
        // Still refused on a loopback node: whatever is not loopback.
        for url in ["http://hooks.example.org/", "https://10.0.0.1/", "https://169.254.169.254/"] {
            assert!(Destination::check(url, 2000, &local).is_err(), "{url}");
        }
        assert!(!OutboundPolicy::for_origin(None).allows_loopback(), "no PUBLIC_ORIGIN: treated as deployed");
        let deployed_node = OutboundPolicy::for_origin(Some("https://mail.example.org"));
        assert!(!deployed_node.allows_loopback());
        assert_eq!(
            Destination::check("https://MAIL.example.org./hook", 2000, &deployed_node),
            Err(Refused::ItsOwnHost { host: "MAIL.example.org.".into() })
        );
        for origin in ["http://localhost:8787", "http://[::1]:8787", "http://127.0.0.1:8787"] {
            assert!(OutboundPolicy::for_origin(Some(origin)).allows_loopback(), "{origin}");
        }
    }
}
