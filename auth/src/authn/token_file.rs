//! Static bearer tokens from a `--token-auth-file`, in kube-apiserver's CSV format:
//! `token,user,uid,"group1,group2"` (groups optional; more columns ignored).

use std::collections::HashMap;
use std::path::Path;

use crate::user::UserInfo;

/// The tokens of a token file, by token.
#[derive(Clone, Debug, Default)]
pub struct TokenFile {
    users: HashMap<String, UserInfo>,
}

/// A token file that could not be read.
#[derive(Debug, thiserror::Error)]
#[error("{file}:{line}: {message}")]
pub struct TokenFileError {
    /// The file.
    pub file: String,
    /// The 1-based line (0 when the file could not be read at all).
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

impl TokenFile {
    /// Reads a token file.
    pub fn load(path: &Path) -> Result<Self, TokenFileError> {
        let text = std::fs::read_to_string(path).map_err(|e| TokenFileError {
            file: path.display().to_string(),
            line: 0,
            message: e.to_string(),
        })?;
        Self::parse(&text).map_err(|(line, message)| TokenFileError {
            file: path.display().to_string(),
            line,
            message,
        })
    }

    /// Parses a token file's text; an error gives the 1-based line and the problem.
    pub fn parse(text: &str) -> Result<Self, (usize, String)> {
        let mut users = HashMap::new();
        for (i, line) in text.lines().enumerate() {
            let line_no = i + 1;
            if line.trim().is_empty() || line.trim_start().starts_with('#') {
                continue;
            }
            let fields = split_csv(line).map_err(|m| (line_no, m))?;
            if fields.len() < 3 {
                return Err((
                    line_no,
                    format!(
                        "expected at least 3 columns (token,user,uid), found {}",
                        fields.len()
                    ),
                ));
            }
            let token = fields[0].trim();
            if token.is_empty() {
                return Err((line_no, "the token is empty".into()));
            }
            let groups = fields
                .get(3)
                .map(|g| {
                    g.split(',')
                        .map(str::trim)
                        .filter(|g| !g.is_empty())
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default();
            let user = UserInfo {
                name: fields[1].trim().to_string(),
                uid: fields[2].trim().to_string(),
                groups,
                extra: Default::default(),
            };
            if users.insert(token.to_string(), user).is_some() {
                return Err((line_no, "duplicate token".into()));
            }
        }
        Ok(Self { users })
    }

    /// The user a token belongs to.
    pub fn authenticate(&self, token: &str) -> Option<UserInfo> {
        self.users.get(token).cloned()
    }

    /// How many tokens the file holds.
    pub fn len(&self) -> usize {
        self.users.len()
    }

    /// Whether the file holds no token.
    pub fn is_empty(&self) -> bool {
        self.users.is_empty()
    }
}

/// Splits one CSV line (RFC 4180 quoting: `"a,b"` and `""` inside quotes).
fn split_csv(line: &str) -> Result<Vec<String>, String> {
    let mut fields = Vec::new();
    let mut field = String::new();
    let mut chars = line.chars().peekable();
    let mut quoted = false;
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                chars.next();
                field.push('"');
            }
            (true, '"') => quoted = false,
            (false, '"') if field.trim().is_empty() => {
                field.clear();
                quoted = true;
            }
            (false, ',') => fields.push(std::mem::take(&mut field)),
            (_, c) => field.push(c),
        }
    }
    if quoted {
        return Err("a quoted field is not closed".into());
    }
    fields.push(field);
    Ok(fields)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_kube_apiserver_s_format() {
        let file = TokenFile::parse(
            "# admins\nt1,alice,u-1,\"dev,ops\"\nt2,bob,u-2\n\nt3,carol,u-3,solo,extra\n",
        )
        .unwrap();
        assert_eq!(file.len(), 3);
        let alice = file.authenticate("t1").unwrap();
        assert_eq!(alice.name, "alice");
        assert_eq!(alice.uid, "u-1");
        assert_eq!(alice.groups, ["dev", "ops"]);
        assert!(file.authenticate("t2").unwrap().groups.is_empty());
        assert_eq!(file.authenticate("t3").unwrap().groups, ["solo"]);
        assert!(file.authenticate("nope").is_none());
    }

    #[test]
    fn names_the_line_of_a_bad_row() {
        assert_eq!(TokenFile::parse("t1,alice,u1\nt2,bob\n").unwrap_err().0, 2);
        assert!(
            TokenFile::parse("t1,a,u,\"g1,g2\nt2,b,u")
                .unwrap_err()
                .1
                .contains("not closed")
        );
        assert!(
            TokenFile::parse("t1,a,u\nt1,b,u")
                .unwrap_err()
                .1
                .contains("duplicate")
        );
    }
}
