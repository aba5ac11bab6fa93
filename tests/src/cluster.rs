//! A cluster on one machine, for the scale-out and fault tests (and the benchmarks):
//! an [`EtcdCluster`] of several members on loopback ports and several `kapi serve`
//! replicas over it, each with its own data directory (certificates, kubeconfig).
//! Dropping it stops the replicas, then etcd.

use crate::{Backend, EtcdCluster, Kapi};

/// Leader-election timings short enough for tests: a replica that dies is replaced
/// within about three seconds.
pub const FAST_LEADER_ELECTION: [&str; 6] = [
    "--leader-elect-lease-duration",
    "3s",
    "--leader-elect-renew-deadline",
    "2s",
    "--leader-elect-retry-period",
    "500ms",
];

/// etcd members and kapi replicas.
pub struct Cluster {
    /// The replicas (declared first: they stop before etcd does).
    pub replicas: Vec<Kapi>,
    /// The etcd members.
    pub etcd: EtcdCluster,
    args: Vec<String>,
}

impl Cluster {
    /// Starts `members` etcd members, then `replicas` replicas over all of them with
    /// `args` added to `kapi serve`, and waits until every one is ready.
    pub fn start(members: usize, replicas: usize, args: &[&str]) -> Self {
        let etcd = EtcdCluster::start(members);
        let replicas = (0..replicas)
            .map(|_| Kapi::start_with(Backend::SharedEtcd(etcd.endpoints()), args))
            .collect();
        Self {
            replicas,
            etcd,
            args: args.iter().map(|a| a.to_string()).collect(),
        }
    }

    /// Replica `i`.
    pub fn replica(&self, i: usize) -> &Kapi {
        &self.replicas[i]
    }

    /// Kills replica `i` with SIGKILL.
    pub fn kill_replica(&mut self, i: usize) {
        self.replicas[i].kill();
    }

    /// Starts replica `i` again (after [`Cluster::kill_replica`]) on its data directory.
    pub fn restart_replica(&mut self, i: usize) {
        let args: Vec<&str> = self.args.iter().map(String::as_str).collect();
        self.replicas[i].restart(&args);
    }

    /// Every replica's log, for failure messages.
    pub fn logs(&self) -> String {
        self.replicas
            .iter()
            .enumerate()
            .map(|(i, r)| format!("--- replica {i} ---\n{}", r.log_text()))
            .collect::<Vec<_>>()
            .join("\n")
    }
}
