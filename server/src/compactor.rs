//! Compaction on a schedule, for every backend alike (kube-apiserver's
//! `--etcd-compaction-interval`): each tick compacts the history up to the revision seen
//! at the previous tick, so at least one interval of history stays for watches to
//! resume from, and older resourceVersions answer 410 Gone.

use std::sync::Arc;
use std::time::Duration;

use kapi_storage::Storage;
use tokio::sync::watch;

/// Runs until `shutdown` turns true.
pub async fn run(
    storage: Arc<dyn Storage>,
    interval: Duration,
    mut shutdown: watch::Receiver<bool>,
) {
    let mut previous = None;
    let mut tick = tokio::time::interval(interval);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            () = crate::controllers::stopped(&mut shutdown) => return,
            _ = tick.tick() => {}
        }
        let current = match storage.current_revision().await {
            Ok(rev) => rev,
            Err(e) => {
                tracing::warn!(error = %e, "compactor: reading the current revision");
                continue;
            }
        };
        if let Some(rev) = previous.filter(|r| *r > 0) {
            match storage.compact(rev).await {
                Ok(()) => tracing::debug!(revision = rev, "compacted"),
                Err(e) => tracing::warn!(revision = rev, error = %e, "compactor"),
            }
        }
        previous = Some(current);
    }
}

/// Parses a duration written as kube-apiserver's flags take it: `300s`, `5m`, `1h`,
/// `1m30s`, or a bare number of seconds. `0` turns compaction off.
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
}
