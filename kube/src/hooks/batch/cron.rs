//! Cron schedules as kube-apiserver checks them: `cron.ParseStandard` of robfig/cron
//! v3 (five fields, or a `@` descriptor, after an optional `TZ=`/`CRON_TZ=` prefix),
//! with its error messages.

/// A field's bounds and names.
struct Bounds {
    min: u64,
    max: u64,
    names: &'static [(&'static str, u64)],
}

const MONTHS: &[(&str, u64)] = &[
    ("jan", 1),
    ("feb", 2),
    ("mar", 3),
    ("apr", 4),
    ("may", 5),
    ("jun", 6),
    ("jul", 7),
    ("aug", 8),
    ("sep", 9),
    ("oct", 10),
    ("nov", 11),
    ("dec", 12),
];
const DAYS: &[(&str, u64)] = &[
    ("sun", 0),
    ("mon", 1),
    ("tue", 2),
    ("wed", 3),
    ("thu", 4),
    ("fri", 5),
    ("sat", 6),
];
const FIELDS: [Bounds; 5] = [
    Bounds {
        min: 0,
        max: 59,
        names: &[],
    },
    Bounds {
        min: 0,
        max: 23,
        names: &[],
    },
    Bounds {
        min: 1,
        max: 31,
        names: &[],
    },
    Bounds {
        min: 1,
        max: 12,
        names: MONTHS,
    },
    Bounds {
        min: 0,
        max: 6,
        names: DAYS,
    },
];

/// Parses `spec`; the error is robfig/cron's message. `zone_ok` says whether the
/// zone of a `TZ=` prefix is known.
pub(super) fn parse(spec: &str, zone_ok: impl Fn(&str) -> bool) -> Result<(), String> {
    if spec.is_empty() {
        return Err("empty spec string".into());
    }
    let mut spec = spec;
    if spec.starts_with("TZ=") || spec.starts_with("CRON_TZ=") {
        let eq = spec.find('=').unwrap_or(0);
        let end = spec.find(' ').unwrap_or(spec.len());
        let zone = &spec[eq + 1..end];
        if !zone_ok(zone) {
            return Err(format!(
                "provided bad location {zone}: unknown time zone {zone}"
            ));
        }
        spec = spec[end..].trim();
    }
    if spec.starts_with('@') {
        return descriptor(spec);
    }
    let fields: Vec<&str> = spec.split_whitespace().collect();
    if fields.len() != 5 {
        return Err(format!(
            "expected exactly 5 fields, found {}: [{}]",
            fields.len(),
            fields.join(" ")
        ));
    }
    for (field, bounds) in fields.iter().zip(FIELDS.iter()) {
        for range in field.split(',').filter(|r| !r.is_empty()) {
            check_range(range, bounds)?;
        }
    }
    Ok(())
}

fn descriptor(spec: &str) -> Result<(), String> {
    match spec {
        "@yearly" | "@annually" | "@monthly" | "@weekly" | "@daily" | "@midnight" | "@hourly" => {
            Ok(())
        }
        _ => match spec.strip_prefix("@every ") {
            Some(d) => go_duration(d).map_err(|e| format!("failed to parse duration {spec}: {e}")),
            None => Err(format!("unrecognized descriptor: {spec}")),
        },
    }
}

/// Go's `time.ParseDuration`, for its verdict only.
fn go_duration(s: &str) -> Result<(), String> {
    let invalid = || format!("time: invalid duration {s:?}");
    let mut rest = s.strip_prefix(['+', '-']).unwrap_or(s);
    if rest == "0" {
        return Ok(());
    }
    if rest.is_empty() {
        return Err(invalid());
    }
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let number = &rest[..digits];
        if number.is_empty() || number == "." {
            return Err(invalid());
        }
        rest = &rest[digits..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let unit = &rest[..unit_len];
        if unit.is_empty() {
            return Err(format!("time: missing unit in duration {s:?}"));
        }
        if !["ns", "us", "µs", "μs", "ms", "s", "m", "h"].contains(&unit) {
            return Err(format!("time: unknown unit {unit:?} in duration {s:?}"));
        }
        rest = &rest[unit_len..];
    }
    Ok(())
}

fn check_range(expr: &str, b: &Bounds) -> Result<(), String> {
    let range_and_step: Vec<&str> = expr.split('/').collect();
    let low_and_high: Vec<&str> = range_and_step[0].split('-').collect();
    let (start, mut end) = if low_and_high[0] == "*" || low_and_high[0] == "?" {
        (b.min, b.max)
    } else {
        let start = int_or_name(low_and_high[0], b.names)?;
        match low_and_high.len() {
            1 => (start, start),
            2 => (start, int_or_name(low_and_high[1], b.names)?),
            _ => return Err(format!("too many hyphens: {expr}")),
        }
    };
    let step = match range_and_step.len() {
        1 => 1,
        2 => {
            let step = int(range_and_step[1])?;
            if low_and_high.len() == 1 {
                end = b.max;
            }
            step
        }
        _ => return Err(format!("too many slashes: {expr}")),
    };
    if start < b.min {
        return Err(format!(
            "beginning of range ({start}) below minimum ({}): {expr}",
            b.min
        ));
    }
    if end > b.max {
        return Err(format!(
            "end of range ({end}) above maximum ({}): {expr}",
            b.max
        ));
    }
    if start > end {
        return Err(format!(
            "beginning of range ({start}) beyond end of range ({end}): {expr}"
        ));
    }
    if step == 0 {
        return Err(format!("step of range should be a positive number: {expr}"));
    }
    Ok(())
}

fn int_or_name(expr: &str, names: &[(&str, u64)]) -> Result<u64, String> {
    let lower = expr.to_ascii_lowercase();
    match names.iter().find(|(n, _)| *n == lower) {
        Some((_, v)) => Ok(*v),
        None => int(expr),
    }
}

/// robfig/cron's `mustParseInt`: Go's `strconv.Atoi`, then no negatives.
fn int(expr: &str) -> Result<u64, String> {
    let digits = expr.strip_prefix(['+', '-']).unwrap_or(expr);
    if digits.is_empty() || !digits.bytes().all(|c| c.is_ascii_digit()) {
        return Err(format!(
            "failed to parse int from {expr}: strconv.Atoi: parsing {expr:?}: invalid syntax"
        ));
    }
    let n: i64 = expr.parse().map_err(|_| {
        format!(
            "failed to parse int from {expr}: strconv.Atoi: parsing {expr:?}: value out of range"
        )
    })?;
    u64::try_from(n).map_err(|_| format!("negative number ({n}) not allowed: {expr}"))
}

#[cfg(test)]
mod tests {
    use super::parse;

    fn check(s: &str) -> Result<(), String> {
        parse(s, |z| z == "UTC")
    }

    #[test]
    fn valid_schedules() {
        for s in [
            "*/5 * * * *",
            "0 0 1,15 * mon-fri",
            "30 2 * JAN-jun SUN",
            "@hourly",
            "@every 1h30m",
            "TZ=UTC 0 * * * *",
            "0-59/15 0 * * ?",
        ] {
            assert_eq!(check(s), Ok(()), "{s}");
        }
    }

    #[test]
    fn invalid_schedules() {
        for (s, msg) in [
            ("bad", "expected exactly 5 fields, found 1: [bad]"),
            ("60 * * * *", "end of range (60) above maximum (59): 60"),
            ("* * 0 * *", "beginning of range (0) below minimum (1): 0"),
            (
                "5-1 * * * *",
                "beginning of range (5) beyond end of range (1): 5-1",
            ),
            (
                "*/0 * * * *",
                "step of range should be a positive number: */0",
            ),
            ("1-2-3 * * * *", "too many hyphens: 1-2-3"),
            (
                "-1 * * * *",
                "failed to parse int from : strconv.Atoi: parsing \"\": invalid syntax",
            ),
            (
                "x * * * *",
                "failed to parse int from x: strconv.Atoi: parsing \"x\": invalid syntax",
            ),
            ("@fortnightly", "unrecognized descriptor: @fortnightly"),
            (
                "TZ=Mars/Base 0 * * * *",
                "provided bad location Mars/Base: unknown time zone Mars/Base",
            ),
        ] {
            assert_eq!(check(s), Err(msg.to_string()), "{s}");
        }
    }
}
