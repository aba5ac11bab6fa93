//! Which CPUs each process of a benchmark may run on. `kapi-bench aggregation` runs its
//! cells twice: with every process free to use every CPU (what one machine gives), and
//! with the aggregator on CPUs of its own while the served server and the load
//! generator share the rest in both the direct and the proxied cells (what a cluster
//! gives, where kube-apiserver and an extension server run in pods of their own).

use std::process::{Child, Command};

use rustix::process::Pid;
use rustix::thread::{CpuSet, sched_getaffinity, sched_setaffinity};

/// A set of CPUs, by number.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cpus(Vec<usize>);

impl Cpus {
    /// The CPUs this process may run on now.
    pub fn allowed() -> Result<Self, String> {
        let set = sched_getaffinity(None).map_err(|e| format!("sched_getaffinity: {e}"))?;
        Ok(Cpus(
            (0..CpuSet::MAX_CPU).filter(|&c| set.is_set(c)).collect(),
        ))
    }

    /// The upper half (at least one CPU) and the rest, or `None` with fewer than two.
    pub fn split(&self) -> Option<(Cpus, Cpus)> {
        if self.0.len() < 2 {
            return None;
        }
        let (rest, upper) = self.0.split_at(self.0.len() / 2);
        Some((Cpus(upper.to_vec()), Cpus(rest.to_vec())))
    }

    fn set(&self) -> CpuSet {
        let mut set = CpuSet::new();
        for &c in &self.0 {
            set.set(c);
        }
        set
    }

    /// Starts `command` on these CPUs: the calling thread moves onto them while the
    /// child is forked (a child inherits its parent thread's set, and its runtime sizes
    /// itself by the set it starts with), and then moves back.
    pub fn spawn(&self, command: &mut Command) -> Result<Child, String> {
        let before = sched_getaffinity(None).map_err(|e| format!("sched_getaffinity: {e}"))?;
        sched_setaffinity(None, &self.set()).map_err(|e| format!("sched_setaffinity: {e}"))?;
        let child = command.spawn();
        sched_setaffinity(None, &before).map_err(|e| format!("sched_setaffinity: {e}"))?;
        child.map_err(|e| format!("starting {:?}: {e}", command.get_program()))
    }

    /// Moves every thread of process `pid` (this process when `None`) onto these CPUs.
    /// Threads it starts later inherit the set from the thread that starts them.
    pub fn pin(&self, pid: Option<u32>) -> Result<(), String> {
        let dir = match pid {
            Some(pid) => format!("/proc/{pid}/task"),
            None => "/proc/self/task".to_string(),
        };
        let set = self.set();
        let tasks = std::fs::read_dir(&dir).map_err(|e| format!("{dir}: {e}"))?;
        for task in tasks.flatten() {
            let Some(tid) = task
                .file_name()
                .to_str()
                .and_then(|t| t.parse::<i32>().ok())
                .and_then(Pid::from_raw)
            else {
                continue;
            };
            // A thread that ended since the listing is no error.
            match sched_setaffinity(Some(tid), &set) {
                Ok(()) | Err(rustix::io::Errno::SRCH) => {}
                Err(e) => return Err(format!("sched_setaffinity of {dir}/{tid:?}: {e}")),
            }
        }
        Ok(())
    }
}

impl std::fmt::Display for Cpus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let numbers: Vec<String> = self.0.iter().map(ToString::to_string).collect();
        write!(f, "CPU {}", numbers.join(","))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_gives_the_upper_half_to_the_first() {
        assert_eq!(Cpus(vec![0]).split(), None);
        assert_eq!(
            Cpus(vec![0, 1]).split(),
            Some((Cpus(vec![1]), Cpus(vec![0])))
        );
        assert_eq!(
            Cpus(vec![0, 1, 2, 3, 5]).split(),
            Some((Cpus(vec![2, 3, 5]), Cpus(vec![0, 1])))
        );
    }

    #[test]
    fn pinning_a_process_moves_its_threads() {
        let all = Cpus::allowed().unwrap();
        let one = Cpus(vec![*all.0.last().unwrap()]);
        let mut child = all.spawn(Command::new("sleep").arg("10")).unwrap();
        let allowed = |pid: u32| {
            let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
            status
                .lines()
                .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
                .unwrap()
                .trim()
                .to_string()
        };
        one.pin(Some(child.id())).unwrap();
        let pinned = allowed(child.id());
        child.kill().unwrap();
        child.wait().unwrap();
        assert_eq!(pinned, one.0[0].to_string());
        let mut child = one.spawn(Command::new("sleep").arg("10")).unwrap();
        let started = allowed(child.id());
        child.kill().unwrap();
        child.wait().unwrap();
        assert_eq!(started, one.0[0].to_string());
        assert_eq!(
            Cpus::allowed().unwrap(),
            all,
            "the caller's set is restored"
        );
    }
}
