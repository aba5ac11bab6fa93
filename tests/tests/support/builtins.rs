//! What the built-in suites share (`builtins_core.rs`, `builtins_cluster.rs`,
//! `builtins_classes.rs`): requests that expect kube's answers, and the Table of a list
//! from the server and from kubectl. Each suite uses its own subset.
#![allow(dead_code)]

use kapi_tests::Kapi;
use serde_json::Value;

pub const JSON: &str = "application/json";
pub const TABLE: &str = "application/json;as=Table;v=v1;g=meta.k8s.io";
/// POSTs `body` to `path`, expecting 201; returns the stored object.
pub fn create(kapi: &Kapi, path: &str, body: Value) -> Value {
    let (code, obj) = kapi.request("POST", path, JSON, Some(&body));
    assert_eq!(code, 201, "POST {path}: {obj}");
    obj
}

/// PUTs `body` to `path`, expecting 200; returns the stored object.
pub fn update(kapi: &Kapi, path: &str, body: &Value) -> Value {
    let (code, obj) = kapi.request("PUT", path, JSON, Some(body));
    assert_eq!(code, 200, "PUT {path}: {obj}");
    obj
}

/// Sends `body` expecting 422 Invalid; returns the Status message.
pub fn invalid(kapi: &Kapi, method: &str, path: &str, body: &Value) -> String {
    let (code, status) = kapi.request(method, path, JSON, Some(body));
    assert_eq!(code, 422, "{method} {path} should be invalid: {status}");
    assert_eq!(status["reason"], "Invalid", "{status}");
    status["message"].as_str().unwrap_or("").to_string()
}

/// The Table of `path` (a list), as `name → cells by column name`, from the server's
/// Table conversion.
pub fn table(kapi: &Kapi, path: &str) -> Vec<(String, serde_json::Map<String, Value>)> {
    let mut res = kapi
        .agent()
        .get(&format!("{}{path}", kapi.url()))
        .header("Accept", TABLE)
        .call()
        .expect("a Table");
    let t: Value = res.body_mut().read_json().expect("Table JSON");
    let names: Vec<String> = t["columnDefinitions"]
        .as_array()
        .expect("columns")
        .iter()
        .map(|c| c["name"].as_str().unwrap_or("").to_string())
        .collect();
    t["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .map(|r| {
            let cells = r["cells"].as_array().expect("cells");
            let map = names.iter().cloned().zip(cells.iter().cloned()).collect();
            (cells[0].as_str().unwrap_or("").to_string(), map)
        })
        .collect()
}

/// The cells of `name`'s row for `columns`.
pub fn row(kapi: &Kapi, path: &str, name: &str, columns: &[&str]) -> Vec<Value> {
    let rows = table(kapi, path);
    let (_, cells) = rows
        .iter()
        .find(|(n, _)| n == name)
        .unwrap_or_else(|| panic!("no row {name} in {path}: {rows:?}"));
    columns
        .iter()
        .map(|c| {
            cells
                .get(*c)
                .cloned()
                .unwrap_or_else(|| panic!("no column {c}"))
        })
        .collect()
}

/// `kubectl get` output as rows of cells, cut at the header's column starts (so empty
/// cells stay in place), without the AGE column.
pub fn kubectl_rows(kapi: &Kapi, args: &[&str]) -> Vec<Vec<String>> {
    let out = kapi.kubectl(args);
    let mut lines = out.lines();
    let header = lines.next().expect("a header");
    let mut starts = Vec::new();
    let mut prev_space = true;
    let mut spaces = 0;
    for (i, c) in header.char_indices() {
        if c != ' ' && (i == 0 || (prev_space && spaces >= 2)) {
            starts.push(i);
        }
        if c == ' ' {
            spaces += 1;
        } else {
            spaces = 0;
        }
        prev_space = c == ' ';
    }
    let cut = |line: &str| -> Vec<String> {
        starts
            .iter()
            .enumerate()
            .map(|(k, &s)| {
                let e = starts
                    .get(k + 1)
                    .copied()
                    .unwrap_or(line.len())
                    .min(line.len());
                line.get(s.min(line.len())..e)
                    .unwrap_or("")
                    .trim()
                    .to_string()
            })
            .collect()
    };
    let names = cut(header);
    let age = names.iter().position(|n| n == "AGE" || n == "CREATED AT");
    std::iter::once(header)
        .chain(lines)
        .map(|l| {
            let mut cells = cut(l);
            if let Some(a) = age {
                cells.remove(a);
            }
            cells
        })
        .collect()
}

/// Column values as strings for comparison.
pub fn strs(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}
