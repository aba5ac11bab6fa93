//! What the server keeps on disk is its owner's alone, as etcd keeps its data
//! directory: the data directory and `pki/` are `0700`, the embedded database, the
//! kubeconfig and every key `0600`. Without encryption at rest the database holds
//! every Secret in the clear, and the kubeconfig and keys are cluster-admin.
//!
//! Made so when they are made; tightened at start, with a warning, when an earlier
//! run (or another tool) left them wider. Nothing is ever made wider.

use std::path::Path;

/// The mode of the data directory and `pki/`.
pub const PRIVATE_DIR_MODE: u32 = 0o700;
/// The mode of the database, the kubeconfig and the keys.
pub const PRIVATE_FILE_MODE: u32 = 0o600;

/// Creates `dir` (and missing parents) readable by its owner only, or tightens an
/// existing one to [`PRIVATE_DIR_MODE`].
pub fn ensure_dir(dir: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        if !dir.exists() {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(PRIVATE_DIR_MODE)
                .create(dir)?;
        }
        tighten(dir, PRIVATE_DIR_MODE)
    }
    #[cfg(not(unix))]
    std::fs::create_dir_all(dir)
}

/// Takes group and other permissions off `path` beyond `mode` if it exists and has
/// them, with a warning naming the old and new modes. A missing path is fine.
pub fn tighten(path: &Path, mode: u32) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let meta = match std::fs::metadata(path) {
            Ok(meta) => meta,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(e),
        };
        let current = meta.permissions().mode() & 0o777;
        let wanted = current & mode;
        if wanted != current {
            tracing::warn!(
                path = %path.display(),
                mode = format_args!("{current:04o}"),
                now = format_args!("{wanted:04o}"),
                "was readable by others: tightened"
            );
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(wanted))?;
        }
    }
    #[cfg(not(unix))]
    let _ = (path, mode);
    Ok(())
}

#[cfg(all(test, unix))]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn made_private_and_tightened_never_widened() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("a/b");
        ensure_dir(&dir).unwrap();
        assert_eq!(mode(&dir), 0o700);
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        ensure_dir(&dir).unwrap();
        assert_eq!(mode(&dir), 0o700);
        let file = dir.join("f");
        std::fs::write(&file, "x").unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
        tighten(&file, PRIVATE_FILE_MODE).unwrap();
        assert_eq!(mode(&file), 0o600);
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o400)).unwrap();
        tighten(&file, PRIVATE_FILE_MODE).unwrap();
        assert_eq!(mode(&file), 0o400);
        tighten(&dir.join("missing"), PRIVATE_FILE_MODE).unwrap();
    }
}
