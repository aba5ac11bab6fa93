//! String `format`s as checked by kube-openapi's `strfmt` registry (the formats
//! apiextensions-apiserver keeps), and Go-compatible number and string rendering for
//! messages.
//!
//! Numeric formats (`int32`, `int64`, `float`, `double`) and `int-or-string` are not
//! range-checked by Kubernetes, and unknown formats are ignored, so both pass here.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::sync::LazyLock;

use base64::Engine;
use regex::Regex;

fn re(src: &str) -> Regex {
    // Only called with the constant patterns below, which are covered by tests.
    Regex::new(src).unwrap_or_else(|e| panic!("built-in format regex {src:?}: {e}"))
}

static HOSTNAME: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^([a-zA-Z0-9\p{S}\p{L}]((-?[a-zA-Z0-9\p{S}\p{L}]{0,62})?)|([a-zA-Z0-9\p{S}\p{L}](([a-zA-Z0-9\-\p{S}\p{L}]{0,61}[a-zA-Z0-9\p{S}\p{L}])?)(\.)){1,}([a-zA-Z\p{L}]){2,63})$",
    )
});
static UUID: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$"));
static UUID3: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$")
});
static UUID4: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$")
});
static UUID5: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$")
});
static EMAIL: LazyLock<Regex> = LazyLock::new(|| re(r"^[^@\s<>()\[\],;:]+@[^@\s<>()\[\],;:]+$"));
static HEXCOLOR: LazyLock<Regex> = LazyLock::new(|| re(r"^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$"));
static RGBCOLOR: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^rgb\(\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*,\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*,\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*\)$",
    )
});
static SSN: LazyLock<Regex> = LazyLock::new(|| re(r"^\d{3}[- ]?\d{2}[- ]?\d{4}$"));
static BSON_OBJECT_ID: LazyLock<Regex> = LazyLock::new(|| re(r"^[0-9a-fA-F]{24}$"));
static GO_DURATION: LazyLock<Regex> =
    LazyLock::new(|| re(r"^[-+]?(0|(([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$"));
static STRFMT_DURATION: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^(\s*[0-9]+\s*(ns|us|ms|s|m|h|d|w|nanoseconds?|microseconds?|milliseconds?|seconds?|minutes?|hours?|days?|weeks?)\s*)+$",
    )
});

/// Whether `value` is valid for `format`. Unknown formats are accepted, as in Kubernetes.
pub fn check(format: &str, value: &str) -> bool {
    match format {
        "hostname" => value.len() <= 255 && HOSTNAME.is_match(value),
        "email" => EMAIL.is_match(value),
        "uri" => is_absolute_uri_or_path(value),
        "ipv4" => value.contains('.') && value.parse::<Ipv4Addr>().is_ok(),
        "ipv6" => value.contains(':') && value.parse::<Ipv6Addr>().is_ok(),
        "cidr" => is_cidr(value),
        "mac" => is_mac(value),
        "uuid" => UUID.is_match(value),
        "uuid3" => UUID3.is_match(value),
        "uuid4" => UUID4.is_match(value),
        "uuid5" => UUID5.is_match(value),
        "byte" => base64::engine::general_purpose::STANDARD
            .decode(value)
            .is_ok(),
        "date" => chrono::NaiveDate::parse_from_str(value, "%Y-%m-%d").is_ok(),
        "date-time" | "datetime" => is_date_time(value),
        "duration" => GO_DURATION.is_match(value) || STRFMT_DURATION.is_match(value),
        "hexcolor" => HEXCOLOR.is_match(value),
        "rgbcolor" => RGBCOLOR.is_match(value),
        "ssn" => SSN.is_match(value),
        "bsonobjectid" => BSON_OBJECT_ID.is_match(value),
        _ => true,
    }
}

fn is_date_time(v: &str) -> bool {
    chrono::DateTime::parse_from_rfc3339(v).is_ok()
        || chrono::NaiveDateTime::parse_from_str(v, "%Y-%m-%dT%H:%M:%S%.f").is_ok()
        || chrono::DateTime::parse_from_str(v, "%Y-%m-%dT%H:%M:%S%.f%z").is_ok()
}

fn is_cidr(v: &str) -> bool {
    let Some((ip, bits)) = v.split_once('/') else {
        return false;
    };
    let Ok(bits) = bits.parse::<u8>() else {
        return false;
    };
    if bits.to_string().len() != v.len() - ip.len() - 1 {
        return false;
    }
    match ip.parse::<IpAddr>() {
        Ok(IpAddr::V4(_)) => bits <= 32,
        Ok(IpAddr::V6(_)) => bits <= 128,
        Err(_) => false,
    }
}

/// Go's `net.ParseMAC`: 6, 8 or 20 octets, `:`/`-` separated pairs or `.` separated quads.
fn is_mac(v: &str) -> bool {
    let hex = |s: &str, n: usize| s.len() == n && s.chars().all(|c| c.is_ascii_hexdigit());
    let ok_len = |n: usize| n == 6 || n == 8 || n == 20;
    if v.contains(':') || v.contains('-') {
        let sep = if v.contains(':') { ':' } else { '-' };
        let parts: Vec<&str> = v.split(sep).collect();
        ok_len(parts.len()) && parts.iter().all(|p| hex(p, 2))
    } else if v.contains('.') {
        let parts: Vec<&str> = v.split('.').collect();
        ok_len(parts.len() * 2) && parts.iter().all(|p| hex(p, 4))
    } else {
        false
    }
}

/// Go's `url.ParseRequestURI`: an absolute URI (`scheme:...`) or an absolute path.
pub fn is_absolute_uri_or_path(v: &str) -> bool {
    if v.is_empty() || v.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return false;
    }
    if v.starts_with('/') {
        return true;
    }
    match v.split_once(':') {
        Some((scheme, rest)) => {
            let mut chars = scheme.chars();
            chars.next().is_some_and(|c| c.is_ascii_alphabetic())
                && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
                && !rest.is_empty()
        }
        None => false,
    }
}

/// A float as Go's `%v` prints it (`strconv.FormatFloat(f, 'g', -1, 64)`: shortest
/// digits, exponent form below 1e-4 and from 1e+06 on): `0`, `1.5`, `1e+06`, `1e-05`.
pub fn go_float(f: f64) -> String {
    if f.is_nan() {
        return "NaN".to_string();
    }
    if f.is_infinite() {
        return if f > 0.0 {
            "+Inf".to_string()
        } else {
            "-Inf".to_string()
        };
    }
    if f == 0.0 {
        return if f.is_sign_negative() {
            "-0".to_string()
        } else {
            "0".to_string()
        };
    }
    // Shortest round-trip digits and exponent, from Rust's `{:e}`.
    let sci = format!("{f:e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if (-4..6).contains(&exp) {
        let s = format!("{f}");
        return s;
    }
    let sign = if exp < 0 { '-' } else { '+' };
    format!("{mantissa}e{sign}{:02}", exp.abs())
}

/// A string as Go's `%q` prints it (`strconv.Quote`).
pub use kapi_validation::go::quote as go_quote;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        for (f, ok, bad) in [
            ("ipv4", "10.0.0.1", "10.0.0"),
            ("ipv6", "::1", "1.2.3.4"),
            ("cidr", "10.0.0.0/8", "10.0.0.0/33"),
            ("mac", "01:23:45:67:89:ab", "01:23:45"),
            ("uuid", "123e4567-e89b-12d3-a456-426614174000", "xyz"),
            ("byte", "aGVsbG8=", "***"),
            ("date", "2024-02-29", "2023-02-29"),
            ("date-time", "2024-01-01T00:00:00Z", "yesterday"),
            ("duration", "1h30m", "soon"),
            ("hostname", "example.com", "-bad-"),
            ("email", "a@b.c", "nope"),
            ("uri", "https://x.y/z", "relative/path"),
        ] {
            assert!(check(f, ok), "{f} {ok}");
            assert!(!check(f, bad), "{f} {bad}");
        }
        assert!(check("unknown-format", "anything"));
    }

    #[test]
    fn go_floats() {
        assert_eq!(go_float(0.0), "0");
        assert_eq!(go_float(1.5), "1.5");
        assert_eq!(go_float(-3.0), "-3");
        assert_eq!(go_float(1e21), "1e+21");
        assert_eq!(go_float(1000000.0), "1e+06");
        assert_eq!(go_float(65535.0), "65535");
        assert_eq!(go_float(123456789.0), "1.23456789e+08");
        assert_eq!(go_float(0.00001), "1e-05");
    }
}
