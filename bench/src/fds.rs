//! The open-file limit: a watch fan-out holds one socket per watcher on each side, so
//! 10,000 watchers need more descriptors than the usual soft limit of 1,024. The
//! harness raises its soft limit to the hard one at start; the `kapi` and etcd it
//! spawns inherit it (a spawned process keeps its parent's limits).

use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};

/// Raises the soft `RLIMIT_NOFILE` to the hard limit; the soft limit now in force
/// (`None` when unlimited).
pub fn raise_open_file_limit() -> Result<Option<u64>, String> {
    let limit = getrlimit(Resource::Nofile);
    if limit.current == limit.maximum {
        return Ok(limit.current);
    }
    setrlimit(
        Resource::Nofile,
        Rlimit {
            current: limit.maximum,
            maximum: limit.maximum,
        },
    )
    .map_err(|e| format!("raising the open-file limit to {:?}: {e}", limit.maximum))?;
    Ok(limit.maximum)
}

/// The soft open-file limit in force (`None` when unlimited).
pub fn open_file_limit() -> Option<u64> {
    getrlimit(Resource::Nofile).current
}
