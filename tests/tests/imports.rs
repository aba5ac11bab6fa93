//! No import circles between modules, in any crate of the workspace.
//!
//! Modules form a tree; a module may use its ancestors and its descendants (a parent
//! declares its children, a child is part of its parent). Any other use of module `a`
//! by module `b` is an edge between the two siblings under their nearest common
//! ancestor that contain them (`endpoints::negotiation` using `table` is the edge
//! `endpoints → table` at the crate root). Each level of siblings must be acyclic, so
//! the modules of a crate can be read, and later split, bottom-up.
//!
//! A use is any `crate::`, `super::` or `self::` path in code (doc comments and unit
//! tests aside), in `use` declarations or inline, followed through `pub use`
//! re-exports to the module that defines the item.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The crates whose `src/` is checked.
const CRATES: &[&str] = &[
    "validation",
    "core",
    "auth",
    "macros",
    "codegen",
    "storage",
    "apiserver",
    "apiextensions",
    "kube",
    "kapi",
];

type Module = Vec<String>;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The modules of a crate's `src/`, each with its file.
fn modules(src: &Path) -> BTreeMap<Module, PathBuf> {
    let mut out = BTreeMap::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("read a source folder") {
            let path = entry.expect("a folder entry").path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let Ok(rel) = path.strip_prefix(src) else {
                continue;
            };
            let rel = rel.to_string_lossy().replace('\\', "/");
            let Some(stem) = rel.strip_suffix(".rs") else {
                continue;
            };
            let mut module: Module = stem.split('/').map(str::to_string).collect();
            if module[0] == "bin" {
                continue;
            }
            if matches!(
                module.last().map(String::as_str),
                Some("lib" | "main" | "mod")
            ) {
                module.pop();
            }
            out.insert(module, path);
        }
    }
    out
}

/// The paths a `use` tree names: `a::{b, c::{d, e}}` is `a::b`, `a::c::d`, `a::c::e`;
/// `a::b as c` is `a::b@c`.
fn expand_use(tree: &str) -> Vec<String> {
    let tree: String = tree
        .split_whitespace()
        .map(|t| if t == "as" { "@" } else { t })
        .collect();
    let mut out = Vec::new();
    let mut depth = 0;
    let mut start = 0;
    let mut parts = Vec::new();
    for (i, c) in tree.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&tree[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&tree[start..]);
    for part in parts.into_iter().filter(|p| !p.is_empty()) {
        match (part.find('{'), part.rfind('}')) {
            (Some(open), Some(close)) => {
                let prefix = &part[..open];
                for inner in expand_use(&part[open + 1..close]) {
                    out.push(format!("{prefix}{inner}"));
                }
            }
            _ => out.push(part.to_string()),
        }
    }
    out
}

/// The `use` declarations of `code` (`pub` ones too), as (is `pub`, tree).
fn use_declarations(code: &str) -> Vec<(bool, &str)> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(at) = code[from..].find("use ") {
        let start = from + at;
        from = start + 4;
        if start > 0 && kapi_tests::source::is_ident(code.as_bytes()[start - 1]) {
            continue;
        }
        let Some(end) = code[start..].find(';') else {
            break;
        };
        let before = code[..start].trim_end();
        let public = before.ends_with("pub") || before.ends_with(')') && before.contains("pub(");
        out.push((public, &code[start + 4..start + end]));
        from = start + end;
    }
    out
}

/// Every `crate::`, `super::` or `self::` path in `code`, `use` trees expanded.
fn paths(code: &str) -> Vec<String> {
    let mut out: Vec<String> = use_declarations(code)
        .into_iter()
        .flat_map(|(_, tree)| expand_use(tree))
        .map(|path| path.split('@').next().unwrap_or("").to_string())
        .collect();
    let b = code.as_bytes();
    for root in ["crate", "super", "self"] {
        let mut from = 0;
        while let Some(at) = code[from..].find(root) {
            let start = from + at;
            from = start + root.len();
            if start > 0 && (kapi_tests::source::is_ident(b[start - 1]) || b[start - 1] == b':') {
                continue;
            }
            let mut path = root.to_string();
            let mut i = from;
            loop {
                let rest = code[i..].trim_start();
                let Some(after) = rest.strip_prefix("::") else {
                    break;
                };
                let after = after.trim_start();
                let len = after
                    .bytes()
                    .take_while(|c| kapi_tests::source::is_ident(*c))
                    .count();
                if len == 0 {
                    break;
                }
                path.push_str("::");
                path.push_str(&after[..len]);
                i = code.len() - after.len() + len;
            }
            if path != root {
                out.push(path);
            }
        }
    }
    out
}

struct Crate {
    modules: BTreeMap<Module, PathBuf>,
    /// (module, name) → the path it re-exports.
    reexports: BTreeMap<(Module, String), String>,
}

impl Crate {
    fn read(src: &Path) -> (Self, BTreeMap<Module, String>) {
        let modules = modules(src);
        let mut code = BTreeMap::new();
        let mut reexports = BTreeMap::new();
        for (module, file) in &modules {
            let text =
                kapi_tests::source::code_of(&std::fs::read_to_string(file).expect("read a source"));
            for (public, tree) in use_declarations(&text) {
                for used in expand_use(tree).into_iter().filter(|_| public) {
                    let (path, alias) = used.split_once('@').unwrap_or((&used, ""));
                    let name = match alias {
                        "" => path.rsplit("::").next().unwrap_or(""),
                        alias => alias,
                    };
                    reexports.insert((module.clone(), name.to_string()), path.to_string());
                }
            }
            code.insert(module.clone(), text);
        }
        (Self { modules, reexports }, code)
    }

    /// The module that defines what `path`, written in `from`, names; `None` for a
    /// path into another crate.
    fn resolve(&self, from: &Module, path: &str, depth: usize) -> Option<Module> {
        let mut segments = path.split("::").peekable();
        let mut module = match *segments.peek()? {
            "crate" => {
                segments.next();
                Vec::new()
            }
            "super" | "self" => {
                let mut module = from.clone();
                while let Some(s) = segments.next_if(|s| matches!(*s, "super" | "self")) {
                    if s == "super" {
                        module.pop();
                    }
                }
                module
            }
            _ => return None,
        };
        while let Some(s) = segments.peek() {
            let mut child = module.clone();
            child.push(s.to_string());
            if !self.modules.contains_key(&child) {
                break;
            }
            module = child;
            segments.next();
        }
        if let Some(name) = segments.next() {
            let key = (module.clone(), name.to_string());
            if let Some(target) = self.reexports.get(&key).filter(|_| depth < 8) {
                let first = target.split("::").next().unwrap_or("");
                let mut child = module.clone();
                child.push(first.to_string());
                let relative = if matches!(first, "crate" | "super" | "self") {
                    Some(target.clone())
                } else if self.modules.contains_key(&child) {
                    Some(format!("self::{target}"))
                } else {
                    None
                };
                if let Some(found) = relative.and_then(|t| self.resolve(&module, &t, depth + 1)) {
                    return Some(found);
                }
            }
        }
        Some(module)
    }
}

/// The sibling edges of a crate: parent → (from child, to child) → why.
type Levels = BTreeMap<Module, BTreeMap<(String, String), BTreeSet<String>>>;

fn levels(src: &Path) -> Levels {
    let (krate, code) = Crate::read(src);
    let mut levels = Levels::new();
    for (module, text) in &code {
        for path in paths(text) {
            let Some(target) = krate.resolve(module, &path, 0) else {
                continue;
            };
            let common = module
                .iter()
                .zip(&target)
                .take_while(|(a, b)| a == b)
                .count();
            if common == module.len() || common == target.len() {
                continue; // an ancestor or a descendant
            }
            levels
                .entry(module[..common].to_vec())
                .or_default()
                .entry((module[common].clone(), target[common].clone()))
                .or_default()
                .insert(format!("{} → {}", module.join("::"), target.join("::")));
        }
    }
    levels
}

/// The strongly connected components of more than one node (Tarjan's algorithm).
fn circles(edges: &BTreeMap<(String, String), BTreeSet<String>>) -> Vec<Vec<String>> {
    let mut graph: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (a, b) in edges.keys() {
        graph.entry(a).or_default().push(b);
        graph.entry(b).or_default();
    }
    struct Walk<'a> {
        graph: &'a BTreeMap<&'a str, Vec<&'a str>>,
        index: BTreeMap<&'a str, (usize, usize)>,
        stack: Vec<&'a str>,
        out: Vec<Vec<String>>,
    }
    fn visit<'a>(w: &mut Walk<'a>, v: &'a str) {
        let n = w.index.len();
        w.index.insert(v, (n, n));
        w.stack.push(v);
        for &next in &w.graph[v] {
            if !w.index.contains_key(next) {
                visit(w, next);
                let low = w.index[next].1.min(w.index[v].1);
                w.index.get_mut(v).expect("visited").1 = low;
            } else if w.stack.contains(&next) {
                let low = w.index[next].0.min(w.index[v].1);
                w.index.get_mut(v).expect("visited").1 = low;
            }
        }
        if w.index[v].0 == w.index[v].1 {
            let at = w.stack.iter().rposition(|x| *x == v).expect("on the stack");
            let component: Vec<String> = w.stack.drain(at..).map(str::to_string).collect();
            if component.len() > 1 {
                w.out.push(component);
            }
        }
    }
    let mut w = Walk {
        graph: &graph,
        index: BTreeMap::new(),
        stack: Vec::new(),
        out: Vec::new(),
    };
    for &v in graph.keys() {
        if !w.index.contains_key(v) {
            visit(&mut w, v);
        }
    }
    w.out
}

fn report(krate: &str, levels: &Levels) -> Vec<String> {
    let mut problems = Vec::new();
    for (parent, edges) in levels {
        for mut circle in circles(edges) {
            circle.sort();
            let level = if parent.is_empty() {
                format!("{krate}'s root")
            } else {
                format!("{krate}::{}", parent.join("::"))
            };
            let mut text = format!("a circle under {level}: {}", circle.join(", "));
            for ((a, b), why) in edges {
                if circle.contains(a) && circle.contains(b) {
                    let why: Vec<&str> = why.iter().map(String::as_str).take(3).collect();
                    text.push_str(&format!("\n    {a} → {b}: {}", why.join("; ")));
                }
            }
            problems.push(text);
        }
    }
    problems
}

#[test]
fn no_module_imports_in_a_circle() {
    let root = workspace();
    let mut problems = Vec::new();
    let mut edges = 0;
    for krate in CRATES {
        let levels = levels(&root.join(krate).join("src"));
        edges += levels.values().map(BTreeMap::len).sum::<usize>();
        problems.extend(report(krate, &levels));
    }
    assert!(edges > 100, "the walk found the crates' imports ({edges})");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_measure_sees_circles_through_reexports_and_inline_paths() {
    let dir = std::env::temp_dir().join(format!("kapi-imports-{}", std::process::id()));
    let write = |rel: &str, text: &str| {
        let path = dir.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write("lib.rs", "mod a;\nmod b;\nmod c;\npub use c::Thing;\n");
    write(
        "a/mod.rs",
        "mod inner;\nuse super::b::{self, X};\n// crate::c::Y in a comment\n",
    );
    write(
        "a/inner.rs",
        "fn f() { let s = \"crate::c\"; super::super::c::g(); }\n",
    );
    write("b.rs", "use crate::Thing;\nuse super::a::{inner::Z};\n");
    write(
        "c.rs",
        "pub struct Thing;\nfn f() { crate :: a::inner::h(); }\n#[cfg(test)]\nmod tests { use crate::b; }\n",
    );
    let levels = levels(&dir);
    let _ = std::fs::remove_dir_all(&dir);
    let root = &levels[&Vec::new()];
    let edges: Vec<(&str, &str)> = root.keys().map(|(a, b)| (a.as_str(), b.as_str())).collect();
    // a → b (use), a → c (inline, from a::inner), b → c (through lib's re-export),
    // b → a, c → a (inline, spaced); not c → b (a unit test), nor comments or strings.
    assert_eq!(
        edges,
        [("a", "b"), ("a", "c"), ("b", "a"), ("b", "c"), ("c", "a")]
    );
    let found = circles(root);
    assert_eq!(found.len(), 1);
    let mut circle = found[0].clone();
    circle.sort();
    assert_eq!(circle, ["a", "b", "c"]);
}
