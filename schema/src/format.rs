//! `format` values as patterns over the string's characters (read as ECMA-262 patterns).
//!
//! Each pattern accepts only valid strings of its format; where the exact set is not regular or
//! too large for a lexer, it accepts fewer: leap seconds are not taken; hostnames (and email
//! domains) have up to 4 labels of up to 63 characters, the last of up to 61, so that the
//! 253-character limit always holds; email local parts are dot-atoms (no quoted strings) and
//! their domains hostnames (no address literals); URIs take no IP-literal `[...]` hosts. A leap
//! second is valid only at 23:59:60 UTC, so its validity depends on the offset: telling them
//! apart would take about 9,000 lexer states in every `date-time` and `time`. Other formats
//! (`int64`, `password`, ...) are annotations, as validators treat formats they do not know.

/// The formats munch compiles.
pub const FORMATS: &[&str] = &[
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uuid",
    "uri",
    "uri-reference",
];

const DATE: &str = concat!(
    "(?:[0-9]{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12][0-9]|3[01])",
    "|(?:0[469]|11)-(?:0[1-9]|[12][0-9]|30)|02-(?:0[1-9]|1[0-9]|2[0-8]))",
    "|(?:[0-9]{2}(?:0[48]|[2468][048]|[13579][26])|(?:[02468][048]|[13579][26])00)-02-29)"
);
const TIME: &str = concat!(
    "(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](?:\\.[0-9]+)?",
    "(?:[Zz]|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])"
);
const DURATION: &str = concat!(
    "P(?:(?:[0-9]+Y(?:[0-9]+M)?(?:[0-9]+D)?|[0-9]+M(?:[0-9]+D)?|[0-9]+D)",
    "(?:T(?:[0-9]+H(?:[0-9]+M)?(?:[0-9]+S)?|[0-9]+M(?:[0-9]+S)?|[0-9]+S))?",
    "|T(?:[0-9]+H(?:[0-9]+M)?(?:[0-9]+S)?|[0-9]+M(?:[0-9]+S)?|[0-9]+S)|[0-9]+W)"
);
const IPV4: &str = "(?:(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])\\.){3}(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])";
const UUID: &str = "[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}";

fn label(max: usize) -> String {
    format!("[A-Za-z0-9](?:[A-Za-z0-9-]{{0,{}}}[A-Za-z0-9])?", max - 2)
}

fn hostname() -> String {
    // At most 4 labels, the last of at most 61 characters: never more than 253 in all, with
    // one counter per label (two alternatives in parallel would multiply the lexer's states).
    let (l63, l61) = (label(63), label(61));
    format!("(?:{l63}\\.){{0,3}}{l61}")
}

fn ipv6() -> String {
    let h = "[0-9a-fA-F]{1,4}";
    // The last 32 bits: two groups or an IPv4 address.
    let ls32 = format!("(?:{h}:{h}|{IPV4})");
    let alts = [
        format!("(?:{h}:){{6}}{ls32}"),
        format!("::(?:{h}:){{5}}{ls32}"),
        format!("(?:{h})?::(?:{h}:){{4}}{ls32}"),
        format!("(?:(?:{h}:){{0,1}}{h})?::(?:{h}:){{3}}{ls32}"),
        format!("(?:(?:{h}:){{0,2}}{h})?::(?:{h}:){{2}}{ls32}"),
        format!("(?:(?:{h}:){{0,3}}{h})?::{h}:{ls32}"),
        format!("(?:(?:{h}:){{0,4}}{h})?::{ls32}"),
        format!("(?:(?:{h}:){{0,5}}{h})?::{h}"),
        format!("(?:(?:{h}:){{0,6}}{h})?::"),
    ];
    format!("(?:{})", alts.join("|"))
}

// RFC 3986 pieces.
const UNRESERVED: &str = "A-Za-z0-9\\-._~";
const SUB_DELIMS: &str = "!$&'()*+,;=";
fn pct() -> &'static str {
    "%[0-9A-Fa-f]{2}"
}
fn pchar() -> String {
    format!("(?:[{UNRESERVED}{SUB_DELIMS}:@]|{})", pct())
}

fn authority() -> String {
    let userinfo = format!("(?:[{UNRESERVED}{SUB_DELIMS}:]|{})*", pct());
    let reg_name = format!("(?:[{UNRESERVED}{SUB_DELIMS}]|{})*", pct());
    format!("(?:{userinfo}@)?(?:{IPV4}|{reg_name})(?::[0-9]*)?")
}

fn uri_tail() -> String {
    let p = pchar();
    format!("(?:\\?(?:{p}|[/?])*)?(?:#(?:{p}|[/?])*)?")
}

fn uri() -> String {
    let p = pchar();
    let seg = format!("(?:{p})*");
    let seg_nz = format!("(?:{p})+");
    let hier = format!(
        "(?://{}(?:/{seg})*|/(?:{seg_nz}(?:/{seg})*)?|{seg_nz}(?:/{seg})*|)",
        authority()
    );
    format!("[A-Za-z][A-Za-z0-9+.\\-]*:{hier}{}", uri_tail())
}

fn relative_ref() -> String {
    let p = pchar();
    let seg = format!("(?:{p})*");
    let seg_nz = format!("(?:{p})+");
    let seg_nz_nc = format!("(?:[{UNRESERVED}{SUB_DELIMS}@]|{})+", pct());
    let part = format!(
        "(?://{}(?:/{seg})*|/(?:{seg_nz}(?:/{seg})*)?|{seg_nz_nc}(?:/{seg})*|)",
        authority()
    );
    format!("{part}{}", uri_tail())
}

fn email() -> String {
    let atext = "[A-Za-z0-9!#$%&'*+/=?^_`{|}~\\-]";
    format!("{atext}+(?:\\.{atext}+)*@{}", hostname())
}

/// The pattern of `format` (anchored at both ends), `None` for an unknown format.
pub(crate) fn pattern(format: &str) -> Option<String> {
    let body = match format {
        "date-time" => format!("{DATE}[Tt]{TIME}"),
        "date" => DATE.to_string(),
        "time" => TIME.to_string(),
        "duration" => DURATION.to_string(),
        "email" => email(),
        "hostname" => hostname(),
        "ipv4" => IPV4.to_string(),
        "ipv6" => ipv6(),
        "uuid" => UUID.to_string(),
        "uri" => uri(),
        "uri-reference" => format!("(?:{}|{})", uri(), relative_ref()),
        _ => return None,
    };
    Some(format!("^(?:{body})$"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(format: &str, s: &str) -> bool {
        let hir = crate::ecma::parse(&pattern(format).unwrap()).unwrap();
        regex_automata::meta::Regex::builder()
            .build_from_hir(&hir)
            .unwrap()
            .is_match(s)
    }

    #[test]
    fn formats_accept_and_reject() {
        let cases: &[(&str, &str, bool)] = &[
            ("date", "2024-02-29", true),
            ("date", "2023-02-29", false),
            ("date", "1900-02-29", false),
            ("date", "2000-02-29", true),
            ("date", "2024-04-31", false),
            ("date-time", "1963-06-19T08:30:06.283185Z", true),
            ("date-time", "1963-06-19T08:30:06+25:00", false),
            ("time", "08:30:06-08:00", true),
            ("time", "08:30:06", false),
            ("duration", "P4DT12H30M5S", true),
            ("duration", "PT", false),
            ("duration", "P", false),
            ("duration", "P2W", true),
            ("email", "joe.bloggs@example.com", true),
            ("email", "2962", false),
            ("email", ".test@example.com", false),
            ("hostname", "www.example.com", true),
            ("hostname", "-a-host-name-that-starts-with--", false),
            ("hostname", &"a".repeat(64), false),
            ("ipv4", "192.168.0.1", true),
            ("ipv4", "087.10.0.1", false),
            ("ipv4", "256.1.1.1", false),
            ("ipv6", "::1", true),
            ("ipv6", "1:d6::42", true),
            ("ipv6", "::ffff:192.168.0.1", true),
            ("ipv6", "12345::", false),
            ("ipv6", "1:1:1:1:1:1:1:1:1", false),
            ("uuid", "2EB8AA08-AA98-11EA-B4AA-73B441D16380", true),
            ("uuid", "2eb8aa08-aa98-11ea-b4aa-73b441d1638", false),
            ("uri", "http://foo.bar/?baz=qux#quux", true),
            ("uri", "mailto:John.Doe@example.com", true),
            ("uri", "//foo.bar/?baz=qux#quux", false),
            ("uri", "http://a:b", false),
            ("uri", "http:// shouldfail.com", false),
            ("uri-reference", "//foo.bar/?baz=qux#quux", true),
            ("uri-reference", "#fragment", true),
            ("uri-reference", "\\\\WINDOWS\\fileshare", false),
        ];
        for &(f, s, want) in cases {
            assert_eq!(ok(f, s), want, "{f} {s:?}");
        }
    }
}
