//! No two files of one crate import each other, directly or round a longer loop, except a
//! trait and its implementations (`docs/ARCHITECTURE.md`, "Layout"): a cycle says code sits
//! in the wrong file. Imports are read from the sources (`crate::`, `super::`, `self::`
//! paths outside comments and the `tests` module), the way a reader follows them.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

type Module = Vec<String>;

/// Cycles that are a trait and its implementations (the factory that opens them sits with
/// the trait); any other cycle fails.
const ALLOWED: &[&[&str]] = &[
    &["pg", "sqlite", "store"],
    &["capture::af_packet", "capture::backend", "capture::libpcap"],
];

fn modules(src: &Path) -> BTreeMap<Module, PathBuf> {
    let mut out = BTreeMap::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let rel = path.strip_prefix(src).unwrap().with_extension("");
            let mut m: Module = rel.iter().map(|c| c.to_string_lossy().into()).collect();
            if matches!(m.last().map(String::as_str), Some("mod" | "lib" | "main")) {
                m.pop();
            }
            out.insert(m, path);
        }
    }
    out
}

/// The source without comments and without its `tests` module.
fn code(text: &str) -> String {
    let text = match text.find("#[cfg(test)]\nmod tests") {
        Some(i) => &text[..i],
        None => text,
    };
    text.lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every path that starts at `crate`, `super` or `self`, braces expanded one level.
fn paths(code: &str) -> Vec<Vec<String>> {
    let bytes: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let starts_word = i == 0 || !(bytes[i - 1].is_alphanumeric() || bytes[i - 1] == '_');
        let rest: String = bytes[i..bytes.len().min(i + 7)].iter().collect();
        let head = ["crate::", "super::", "self::"]
            .into_iter()
            .find(|h| rest.starts_with(h));
        let Some(h) = head.filter(|_| starts_word) else {
            i += 1;
            continue;
        };
        let mut j = i;
        while j < bytes.len() && (bytes[j].is_alphanumeric() || bytes[j] == '_' || bytes[j] == ':')
        {
            j += 1;
        }
        let base: Vec<String> = bytes[i..j]
            .iter()
            .collect::<String>()
            .split("::")
            .filter(|s| !s.is_empty())
            .map(String::from)
            .collect();
        if j < bytes.len() && bytes[j] == '{' {
            let end = bytes[j..]
                .iter()
                .position(|&c| c == '}')
                .map_or(j, |e| j + e);
            let inner: String = bytes[j + 1..end].iter().collect();
            for item in inner.split(',') {
                let first: String = item
                    .trim()
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
                    .collect();
                let mut p = base.clone();
                p.extend(
                    first
                        .split("::")
                        .filter(|s| !s.is_empty())
                        .map(String::from),
                );
                out.push(p);
            }
        } else {
            out.push(base);
        }
        i = j.max(i + h.len());
    }
    out
}

fn edges(me: &Module, code: &str, mods: &BTreeMap<Module, PathBuf>) -> BTreeSet<Module> {
    let mut out = BTreeSet::new();
    for p in paths(code) {
        let (mut base, mut rest): (Module, &[String]) = match p[0].as_str() {
            "crate" => (Vec::new(), &p[1..]),
            "self" => (me.clone(), &p[1..]),
            _ => (me[..me.len().saturating_sub(1)].to_vec(), &p[1..]),
        };
        while rest.first().is_some_and(|s| s == "super") {
            base.pop();
            rest = &rest[1..];
        }
        base.extend(rest.iter().cloned());
        if let Some(k) = (1..=base.len())
            .rev()
            .find(|&k| mods.contains_key(&base[..k]) && base[..k] != me[..])
        {
            out.insert(base[..k].to_vec());
        }
    }
    out
}

/// Strongly connected components of more than one file (Tarjan).
fn cycles(g: &BTreeMap<Module, BTreeSet<Module>>) -> Vec<BTreeSet<String>> {
    struct T<'a> {
        g: &'a BTreeMap<Module, BTreeSet<Module>>,
        index: BTreeMap<&'a Module, usize>,
        low: BTreeMap<&'a Module, usize>,
        stack: Vec<&'a Module>,
        out: Vec<BTreeSet<String>>,
    }
    fn visit<'a>(t: &mut T<'a>, n: &'a Module) {
        let i = t.index.len();
        t.index.insert(n, i);
        t.low.insert(n, i);
        t.stack.push(n);
        for w in &t.g[n] {
            if !t.index.contains_key(w) {
                visit(t, w);
                let lw = t.low[w];
                let ln = t.low.get_mut(n).unwrap();
                *ln = (*ln).min(lw);
            } else if t.stack.contains(&w) {
                let iw = t.index[w];
                let ln = t.low.get_mut(n).unwrap();
                *ln = (*ln).min(iw);
            }
        }
        if t.low[n] == t.index[n] {
            let mut comp = BTreeSet::new();
            while let Some(w) = t.stack.pop() {
                comp.insert(w.join("::"));
                if w == n {
                    break;
                }
            }
            if comp.len() > 1 {
                t.out.push(comp);
            }
        }
    }
    let mut t = T {
        g,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        out: Vec::new(),
    };
    for n in g.keys() {
        if !t.index.contains_key(n) {
            visit(&mut t, n);
        }
    }
    t.out
}

#[test]
fn no_two_files_of_a_crate_import_each_other() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut srcs = vec![root.join("src")];
    for c in std::fs::read_dir(root.join("crates")).unwrap() {
        srcs.push(c.unwrap().path().join("src"));
    }
    let allowed: Vec<BTreeSet<String>> = ALLOWED
        .iter()
        .map(|c| c.iter().map(|s| s.to_string()).collect())
        .collect();
    let mut found = Vec::new();
    for src in srcs.iter().filter(|s| s.is_dir()) {
        let mods = modules(src);
        let g: BTreeMap<Module, BTreeSet<Module>> = mods
            .iter()
            .map(|(m, p)| {
                let text = std::fs::read_to_string(p).unwrap();
                (m.clone(), edges(m, &code(&text), &mods))
            })
            .collect();
        for c in cycles(&g) {
            if !allowed.contains(&c) {
                found.push(format!("{}: {c:?}", src.display()));
            }
        }
    }
    assert!(found.is_empty(), "file cycles:\n{}", found.join("\n"));
}

#[test]
fn a_cycle_is_found() {
    let mods: BTreeMap<Module, PathBuf> = [vec!["a".to_string()], vec!["b".to_string()]]
        .into_iter()
        .map(|m| (m, PathBuf::new()))
        .collect();
    let a = edges(&vec!["a".into()], "use crate::{b::X, c};", &mods);
    let b = edges(&vec!["b".into()], "fn f() { super::a::g() }", &mods);
    let g = BTreeMap::from([(vec!["a".into()], a), (vec!["b".into()], b)]);
    let names: BTreeSet<String> = ["a", "b"].into_iter().map(String::from).collect();
    assert_eq!(cycles(&g), vec![names]);
}
