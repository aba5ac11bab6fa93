//! Durations as kube-apiserver reads them, in its flags and in the `timeout` query
//! parameter (Go's `time.ParseDuration` units, or a bare number of seconds), and as it
//! shows them in Tables (`5m3s`, `2d3h`).

use std::time::Duration;

/// Parses a duration written as kube-apiserver's flags take it: `300s`, `5m`, `1h`,
/// `1m30s`, or a bare number of seconds.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    if let Ok(secs) = text.parse::<u64>() {
        return Ok(Duration::from_secs(secs));
    }
    let mut total = 0f64;
    let mut number = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_ascii_digit() || c == '.' {
            number.push(c);
            continue;
        }
        let mut unit = c.to_string();
        if c == 'm' && chars.peek() == Some(&'s') {
            unit.push(chars.next().unwrap_or('s'));
        }
        let value: f64 = number
            .parse()
            .map_err(|_| format!("invalid duration {text:?}"))?;
        number.clear();
        total += value
            * match unit.as_str() {
                "ms" => 0.001,
                "s" => 1.0,
                "m" => 60.0,
                "h" => 3600.0,
                _ => return Err(format!("invalid duration {text:?}: unknown unit {unit:?}")),
            };
    }
    if !number.is_empty() {
        return Err(format!("invalid duration {text:?}: missing unit"));
    }
    Ok(Duration::from_secs_f64(total))
}

/// apimachinery's `duration.HumanDuration`: two or three significant figures, e.g.
/// `45s`, `5m3s`, `3h20m`, `2d3h`, `400d`, `3y20d`.
pub fn human_duration(d: chrono::Duration) -> String {
    let seconds = d.num_seconds();
    if seconds < -1 {
        return "<invalid>".into();
    } else if seconds < 0 {
        return "0s".into();
    } else if seconds < 60 * 2 {
        return format!("{seconds}s");
    }
    let minutes = seconds / 60;
    if minutes < 10 {
        let s = seconds % 60;
        return if s == 0 {
            format!("{minutes}m")
        } else {
            format!("{minutes}m{s}s")
        };
    } else if minutes < 60 * 3 {
        return format!("{minutes}m");
    }
    let hours = minutes / 60;
    if hours < 8 {
        let m = minutes % 60;
        if m == 0 {
            format!("{hours}h")
        } else {
            format!("{hours}h{m}m")
        }
    } else if hours < 48 {
        format!("{hours}h")
    } else if hours < 24 * 8 {
        let h = hours % 24;
        if h == 0 {
            format!("{}d", hours / 24)
        } else {
            format!("{}d{h}h", hours / 24)
        }
    } else if hours < 24 * 365 * 2 {
        format!("{}d", hours / 24)
    } else if hours < 24 * 365 * 8 {
        let dy = (hours / 24) % 365;
        if dy == 0 {
            format!("{}y", hours / 24 / 365)
        } else {
            format!("{}y{dy}d", hours / 24 / 365)
        }
    } else {
        format!("{}y", hours / 24 / 365)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_parse_like_kube_apiserver_flags() {
        assert_eq!(parse_duration("300").unwrap(), Duration::from_secs(300));
        assert_eq!(parse_duration("5m").unwrap(), Duration::from_secs(300));
        assert_eq!(parse_duration("1m30s").unwrap(), Duration::from_secs(90));
        assert_eq!(parse_duration("500ms").unwrap(), Duration::from_millis(500));
        assert!(parse_duration("5x").is_err());
        assert!(parse_duration("5m3").is_err());
    }

    #[test]
    fn human_durations() {
        let cases = [
            (-5, "<invalid>"),
            (-1, "0s"),
            (0, "0s"),
            (119, "119s"),
            (120, "2m"),
            (5 * 60 + 3, "5m3s"),
            (10 * 60 + 3, "10m"),
            (179 * 60, "179m"),
            (3 * 3600, "3h"),
            (3 * 3600 + 20 * 60, "3h20m"),
            (8 * 3600 + 59 * 60, "8h"),
            (47 * 3600, "47h"),
            (2 * 86400 + 3 * 3600, "2d3h"),
            (5 * 86400, "5d"),
            (400 * 86400, "400d"),
            (3 * 365 * 86400 + 20 * 86400, "3y20d"),
            (2 * 365 * 86400, "2y"),
            (9 * 365 * 86400 + 20 * 86400, "9y"),
        ];
        for (secs, want) in cases {
            assert_eq!(
                human_duration(chrono::Duration::seconds(secs)),
                want,
                "{secs}s"
            );
        }
    }
}
