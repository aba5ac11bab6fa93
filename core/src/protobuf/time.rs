//! Kubernetes' JSON forms of `Time`, `MicroTime` and `Duration`.

use chrono::{DateTime, Datelike, SecondsFormat, Utc};

/// A time JSON can hold: Go's `Time.MarshalJSON` refuses years outside 0–9999.
fn in_range(t: DateTime<Utc>) -> Option<DateTime<Utc>> {
    (0..=9999).contains(&t.year()).then_some(t)
}

/// `seconds`/`nanos` of an RFC 3339 timestamp.
pub fn parse_timestamp(s: &str) -> Option<(i64, i32)> {
    let t = DateTime::parse_from_rfc3339(s).ok()?;
    Some((t.timestamp(), t.timestamp_subsec_nanos() as i32))
}

/// `seconds`/`nanos` as `Time` writes them: RFC 3339 in UTC, whole seconds.
pub fn format_time(seconds: i64) -> Option<String> {
    let t = in_range(DateTime::<Utc>::from_timestamp(seconds, 0)?)?;
    Some(t.to_rfc3339_opts(SecondsFormat::Secs, true))
}

/// `seconds`/`nanos` as `MicroTime` writes them: RFC 3339 in UTC with six fraction digits.
pub fn format_micro_time(seconds: i64, nanos: i32) -> Option<String> {
    let nanos = u32::try_from(nanos).ok()?;
    let t = in_range(DateTime::<Utc>::from_timestamp(
        seconds,
        nanos - nanos % 1000,
    )?)?;
    Some(t.to_rfc3339_opts(SecondsFormat::Micros, true))
}

/// A duration in nanoseconds as Go's `time.Duration.String` writes it (`1h2m3.5s`,
/// `500ms`, `0s`).
pub fn format_duration(nanos: i64) -> String {
    if nanos == 0 {
        return "0s".into();
    }
    let sign = if nanos < 0 { "-" } else { "" };
    let n = nanos.unsigned_abs();
    if n < 1_000_000_000 {
        // Below a second Go picks the largest unit that keeps an integer part.
        let (unit, scale) = if n < 1_000 {
            ("ns", 1)
        } else if n < 1_000_000 {
            ("µs", 1_000)
        } else {
            ("ms", 1_000_000)
        };
        return format!("{sign}{}{unit}", fraction(n, scale));
    }
    let hours = n / 3_600_000_000_000;
    let minutes = n / 60_000_000_000 % 60;
    let seconds = n % 60_000_000_000;
    let mut out = String::from(sign);
    if hours > 0 {
        out.push_str(&format!("{hours}h"));
    }
    if hours > 0 || minutes > 0 {
        out.push_str(&format!("{minutes}m"));
    }
    out.push_str(&format!("{}s", fraction(seconds, 1_000_000_000)));
    out
}

/// `n / scale` with its fraction's significant digits.
fn fraction(n: u64, scale: u64) -> String {
    let whole = n / scale;
    let rest = n % scale;
    if rest == 0 {
        return whole.to_string();
    }
    let digits = scale.ilog10() as usize;
    let frac = format!("{rest:0digits$}");
    format!("{whole}.{}", frac.trim_end_matches('0'))
}

/// Nanoseconds of a Go duration string (`1h2m3.5s`, `-1.5ms`, `0`).
pub fn parse_duration(s: &str) -> Option<i64> {
    let (negative, mut rest) = match s.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    if rest == "0" {
        return Some(0);
    }
    if rest.is_empty() {
        return None;
    }
    let mut total: f64 = 0.0;
    while !rest.is_empty() {
        let num_end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let number: f64 = rest[..num_end].parse().ok()?;
        rest = &rest[num_end..];
        let unit_end = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let scale = match &rest[..unit_end] {
            "ns" => 1.0,
            "us" | "µs" | "μs" => 1e3,
            "ms" => 1e6,
            "s" => 1e9,
            "m" => 60e9,
            "h" => 3600e9,
            _ => return None,
        };
        rest = &rest[unit_end..];
        total += number * scale;
    }
    if total > i64::MAX as f64 {
        return None;
    }
    let n = total.round() as i64;
    Some(if negative { -n } else { n })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_and_write_as_go_does() {
        for (nanos, text) in [
            (0, "0s"),
            (1, "1ns"),
            (1_500, "1.5µs"),
            (2_000_000, "2ms"),
            (1_500_000_000, "1.5s"),
            (60_000_000_000, "1m0s"),
            (3_723_000_000_000, "1h2m3s"),
            (-90_000_000_000, "-1m30s"),
        ] {
            assert_eq!(format_duration(nanos), text);
            assert_eq!(parse_duration(text), Some(nanos), "{text}");
        }
        assert_eq!(parse_duration("5x"), None);
        assert_eq!(parse_duration(""), None);
    }

    #[test]
    fn times_are_rfc3339_in_utc() {
        assert_eq!(
            parse_timestamp("2024-05-06T07:08:09Z"),
            Some((1_714_979_289, 0))
        );
        assert_eq!(format_time(1_714_979_289).unwrap(), "2024-05-06T07:08:09Z");
        assert_eq!(
            format_micro_time(1_714_979_289, 123_456_789).unwrap(),
            "2024-05-06T07:08:09.123456Z"
        );
        // Years JSON cannot write are refused, not written unreadably (`+47700-…`).
        assert_eq!(format_time(1_443_000_000_000), None);
        assert_eq!(format_micro_time(-62_200_000_000, 0), None);
        assert_eq!(
            parse_timestamp("2024-05-06T09:08:09.5+02:00"),
            Some((1_714_979_289, 500_000_000))
        );
    }
}
