//! The machine a run measured on, as the report states it: cores and CPU model
//! (`/proc/cpuinfo`), memory (`/proc/meminfo`), kernel (`/proc/sys/kernel/osrelease`),
//! the date (UTC) and the git commit of the working tree.

use std::fmt;
use std::process::Command;
use std::time::{SystemTime, UNIX_EPOCH};

/// What the report says about the machine and the source measured.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Machine {
    /// Logical CPUs.
    pub cores: usize,
    /// The CPU's model name.
    pub model: String,
    /// Total memory, in MiB.
    pub memory_mib: u64,
    /// The kernel release.
    pub kernel: String,
    /// When the run started, `YYYY-MM-DD HH:MM UTC`.
    pub date: String,
    /// The git commit (`unknown` outside a repository), `+dirty` when the tree has
    /// uncommitted changes.
    pub commit: String,
    /// The 1/5/15-minute load averages at the start.
    pub load: String,
}

impl Machine {
    /// Reads everything now; what cannot be read says `unknown`.
    pub fn describe() -> Self {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let cores = cpuinfo
            .lines()
            .filter(|l| l.starts_with("processor"))
            .count()
            .max(std::thread::available_parallelism().map_or(1, |n| n.get()));
        let model = field(&cpuinfo, "model name").unwrap_or_else(|| "unknown".to_string());
        let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
        let memory_mib = field(&meminfo, "MemTotal")
            .and_then(|v| v.trim_end_matches("kB").trim().parse::<u64>().ok())
            .map_or(0, |kib| kib / 1024);
        let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
            .map(|s| s.trim().to_string())
            .unwrap_or_else(|_| "unknown".to_string());
        let load = std::fs::read_to_string("/proc/loadavg")
            .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
            .unwrap_or_else(|_| "unknown".to_string());
        let seconds = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        Self {
            cores,
            model,
            memory_mib,
            kernel,
            date: utc_date(seconds),
            commit: git_commit(),
            load,
        }
    }
}

impl fmt::Display for Machine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} cores ({}), {:.1} GiB, Linux {}; {}, commit {}; load average {} at the start",
            self.cores,
            self.model,
            self.memory_mib as f64 / 1024.0,
            self.kernel,
            self.date,
            self.commit,
            self.load,
        )
    }
}

/// The value of the first `name: value` line of a `/proc` file.
fn field(text: &str, name: &str) -> Option<String> {
    text.lines().find_map(|line| {
        let (key, value) = line.split_once(':')?;
        (key.trim() == name).then(|| value.trim().to_string())
    })
}

fn git_commit() -> String {
    let git = |args: &[&str]| {
        Command::new("git")
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    match git(&["rev-parse", "--short=12", "HEAD"]) {
        Some(commit) => {
            let dirty = git(&["status", "--porcelain", "--untracked-files=no"])
                .is_some_and(|s| !s.is_empty());
            if dirty {
                format!("{commit}+dirty")
            } else {
                commit
            }
        }
        None => "unknown".to_string(),
    }
}

/// `YYYY-MM-DD HH:MM UTC` of a Unix time (days to civil date as in Howard Hinnant's
/// `civil_from_days`).
fn utc_date(unix_seconds: u64) -> String {
    let days = (unix_seconds / 86_400) as i64;
    let minute_of_day = (unix_seconds % 86_400) / 60;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02} UTC",
        minute_of_day / 60,
        minute_of_day % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_civil() {
        assert_eq!(utc_date(0), "1970-01-01 00:00 UTC");
        assert_eq!(utc_date(951_782_400 + 3_660), "2000-02-29 01:01 UTC");
        assert_eq!(utc_date(1_798_675_200), "2026-12-31 00:00 UTC");
    }

    #[test]
    fn proc_fields_are_found() {
        let text = "processor\t: 0\nmodel name\t: AMD EPYC\nMemTotal:  1024 kB\n";
        assert_eq!(field(text, "model name").as_deref(), Some("AMD EPYC"));
        assert_eq!(field(text, "MemTotal").as_deref(), Some("1024 kB"));
        assert_eq!(field(text, "flags"), None);
    }
}
