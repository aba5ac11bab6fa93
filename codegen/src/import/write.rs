//! Writing an import's files into a folder: only what changed, and the stale
//! generated files removed.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::{HEADER_MARK, Import, ImportError, WriteSummary};

impl Import {
    /// Writes every file under `out`, rewriting only files whose content changed, and
    /// removes the generated files (those starting with [`HEADER`]'s mark) under `out`
    /// that this import did not produce.
    pub fn write(&self, out: &Path) -> Result<WriteSummary, ImportError> {
        let mut summary = WriteSummary::default();
        let mut existing = BTreeSet::new();
        if out.exists() {
            list_files(out, "yaml", &mut existing)?;
        }
        for (rel, file) in &self.files {
            let path = out.join(rel);
            existing.remove(&path);
            if std::fs::read_to_string(&path).ok().as_deref() == Some(file.content.as_str()) {
                summary.unchanged.push(path);
                continue;
            }
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent).map_err(|source| ImportError::Io {
                    path: parent.to_path_buf(),
                    source,
                })?;
            }
            std::fs::write(&path, &file.content).map_err(|source| ImportError::Io {
                path: path.clone(),
                source,
            })?;
            summary.written.push(path);
        }
        for path in existing {
            let generated = std::fs::read_to_string(&path)
                .map(|text| text.starts_with(HEADER_MARK))
                .unwrap_or(false);
            if generated {
                std::fs::remove_file(&path).map_err(|source| ImportError::Io {
                    path: path.clone(),
                    source,
                })?;
                summary.removed.push(path);
            }
        }
        Ok(summary)
    }
}

/// Every file under `dir` (recursively) whose extension is `extension`.
pub(super) fn list_files(
    dir: &Path,
    extension: &str,
    out: &mut BTreeSet<PathBuf>,
) -> Result<(), ImportError> {
    let io = |source| ImportError::Io {
        path: dir.to_path_buf(),
        source,
    };
    for entry in std::fs::read_dir(dir).map_err(io)? {
        let path = entry.map_err(io)?.path();
        if path.is_dir() {
            list_files(&path, extension, out)?;
        } else if path.extension().is_some_and(|e| e == extension) {
            out.insert(path);
        }
    }
    Ok(())
}
