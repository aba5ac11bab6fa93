//! Diagnostics: what is wrong, and where in which schema file.

use std::fmt;
use std::path::PathBuf;

/// One problem in a schema file, printed as `file:line:column: path: message`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    /// The schema file.
    pub file: PathBuf,
    /// 1-based line (0 when unknown).
    pub line: usize,
    /// 1-based column (0 when unknown).
    pub column: usize,
    /// The YAML path of the offending node (`spec.versions[0].schema...`), empty for the
    /// whole document.
    pub path: String,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}: ", self.file.display(), self.line, self.column)?;
        if !self.path.is_empty() {
            write!(f, "{}: ", self.path)?;
        }
        f.write_str(&self.message)
    }
}
