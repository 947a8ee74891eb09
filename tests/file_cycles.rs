//! No two files of one crate import each other, directly or round a longer loop, except a
//! trait and its implementations (`docs/ARCHITECTURE.md`, "Layout"): a cycle says code sits
//! in the wrong file. Imports are read as the compiler resolves them (with `syn`): `use`
//! trees, re-exports and groups included, paths in code, and a parent naming a child it
//! declares (`use child::X`, `pub use child::*`, `child::f()`), outside `#[cfg(test)]`
//! modules.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use syn::visit::{self, Visit};

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
            // The binary's main.rs is a crate of its own beside the library's lib.rs.
            if path.ends_with("main.rs") && src.join("lib.rs").exists() {
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

/// Every path a file names, each as written, with the module it is written in (the file's,
/// or an inline module's inside it): `use` trees flattened (groups, renames, globs,
/// `self`), paths in types and expressions, and in macro bodies the paths that start at
/// `crate`, `super` or `self`. An inline `#[cfg(test)]` module is left out: tests may
/// reach anywhere.
struct Named {
    at: Module,
    /// The modules a file or inline module declares, by the module they are declared in.
    children: BTreeMap<Module, BTreeSet<String>>,
    paths: Vec<(Module, Vec<String>)>,
}

impl<'ast> Visit<'ast> for Named {
    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        let is_test = m.attrs.iter().any(|a| {
            a.path().is_ident("cfg") && a.parse_args::<syn::Ident>().is_ok_and(|i| i == "test")
        });
        if is_test {
            return;
        }
        let name = m.ident.to_string();
        self.children
            .entry(self.at.clone())
            .or_default()
            .insert(name.clone());
        if m.content.is_some() {
            self.at.push(name);
            visit::visit_item_mod(self, m);
            self.at.pop();
        }
    }

    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        let mut out = Vec::new();
        flatten(&u.tree, &mut Vec::new(), &mut out);
        self.paths
            .extend(out.into_iter().map(|p| (self.at.clone(), p)));
    }

    fn visit_path(&mut self, p: &'ast syn::Path) {
        let segs = p.segments.iter().map(|s| s.ident.to_string()).collect();
        self.paths.push((self.at.clone(), segs));
        visit::visit_path(self, p);
    }

    /// `pub(super)` and `pub(in crate::x)` name who may see an item, not what it uses.
    fn visit_visibility(&mut self, _: &'ast syn::Visibility) {}

    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        // A macro's body is tokens, not syntax: its `crate::`, `super::` and `self::`
        // paths are read from the text.
        let text = m
            .tokens
            .to_string()
            .replace(" :: ", "::")
            .replace(":: ", "::");
        for p in anchored_paths(&text) {
            self.paths.push((self.at.clone(), p));
        }
        visit::visit_macro(self, m);
    }
}

/// A `use` tree as whole paths: `a::{b, c::d as e, f::*, self}` is `a::b`, `a::c::d`,
/// `a::f` and `a`.
fn flatten(tree: &syn::UseTree, prefix: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    match tree {
        syn::UseTree::Path(p) => {
            prefix.push(p.ident.to_string());
            flatten(&p.tree, prefix, out);
            prefix.pop();
        }
        syn::UseTree::Name(n) if n.ident == "self" => out.push(prefix.clone()),
        syn::UseTree::Name(n) => out.push([&prefix[..], &[n.ident.to_string()]].concat()),
        syn::UseTree::Rename(r) => out.push([&prefix[..], &[r.ident.to_string()]].concat()),
        syn::UseTree::Glob(_) => out.push(prefix.clone()),
        syn::UseTree::Group(g) => g.items.iter().for_each(|t| flatten(t, prefix, out)),
    }
}

/// The paths in `text` that start at `crate`, `super` or `self`.
fn anchored_paths(text: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let is_word = |c: char| c.is_alphanumeric() || c == '_';
    for (i, _) in text.match_indices("::") {
        let head_start = text[..i].rfind(|c: char| !is_word(c)).map_or(0, |s| s + 1);
        if text[..head_start].ends_with("::") {
            continue;
        }
        let head = &text[head_start..i];
        if !matches!(head, "crate" | "super" | "self") {
            continue;
        }
        let end = text[head_start..]
            .find(|c: char| !(is_word(c) || c == ':'))
            .map_or(text.len(), |e| head_start + e);
        let p = text[head_start..end].split("::").filter(|s| !s.is_empty());
        out.push(p.map(String::from).collect());
    }
    out
}

/// The files `file` (module `me`) imports from: each path resolved from the module it is
/// written in (`crate`, `self`, `super`, or a child module it declares, which is how a
/// parent names its child), to the longest prefix that is a file of the crate.
fn edges(me: &Module, file: &syn::File, mods: &BTreeMap<Module, PathBuf>) -> BTreeSet<Module> {
    let mut named = Named {
        at: me.clone(),
        children: BTreeMap::new(),
        paths: Vec::new(),
    };
    named.visit_file(file);
    let mut out = BTreeSet::new();
    for (at, p) in &named.paths {
        let declared = |name: &str| named.children.get(at).is_some_and(|c| c.contains(name));
        let (mut base, mut rest): (Module, &[String]) = match p.first().map(String::as_str) {
            Some("crate") => (Vec::new(), &p[1..]),
            Some("self") => (at.clone(), &p[1..]),
            Some("super") => (at[..at.len().saturating_sub(1)].to_vec(), &p[1..]),
            Some(first) if declared(first) => (at.clone(), &p[..]),
            _ => continue,
        };
        while rest.first().is_some_and(|s| s == "super") {
            base.pop();
            rest = &rest[1..];
        }
        base.extend(rest.iter().cloned());
        // The file the path lands in: its longest prefix that is one; a path into the file
        // itself is no import. The crate root is left out as a target: its names are the
        // crate's re-exports, which the compiler resolves to the file that defines them.
        if let Some(k) = (1..=base.len())
            .rev()
            .find(|&k| mods.contains_key(&base[..k]))
        {
            if base[..k] != me[..] {
                out.insert(base[..k].to_vec());
            }
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
                comp.insert(if w.is_empty() {
                    "lib".into()
                } else {
                    w.join("::")
                });
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
                let file =
                    syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
                (m.clone(), edges(m, &file, &mods))
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

fn graph(files: &[(&str, &str)]) -> BTreeMap<Module, BTreeSet<Module>> {
    let module = |name: &str| -> Module {
        name.split("::")
            .filter(|s| !s.is_empty())
            .map(String::from)
            .collect()
    };
    let mods: BTreeMap<Module, PathBuf> = files
        .iter()
        .map(|(m, _)| (module(m), PathBuf::new()))
        .collect();
    files
        .iter()
        .map(|(m, code)| {
            let file = syn::parse_file(code).unwrap();
            (module(m), edges(&module(m), &file, &mods))
        })
        .collect()
}

fn names(c: &[&str]) -> BTreeSet<String> {
    c.iter().map(|s| s.to_string()).collect()
}

#[test]
fn a_cycle_is_found() {
    let g = graph(&[
        ("a", "use crate::{b::X, c};"),
        ("b", "fn f() { super::a::g() }"),
    ]);
    assert_eq!(cycles(&g), vec![names(&["a", "b"])]);
}

/// A parent naming the child it declares is an import too (re-exports, nested groups,
/// calls through the module's name): the two cycles the text-matching reader missed had
/// that shape (`cli/mod.rs` with `completions.rs`, `html/mod.rs` with `html/gestures.rs`).
#[test]
fn a_parent_naming_its_child_is_an_import() {
    let child_uses_parent = ("html::gestures", "use super::{cell, Row};");
    for parent in [
        "mod gestures; pub use gestures::section;",
        "mod gestures; use self::{gestures::{section, Tally}};",
        "mod gestures; fn f() { gestures::section() }",
        "mod gestures; fn f() -> String { format!(\"{}\", self::gestures::TITLE) }",
    ] {
        let g = graph(&[("html", parent), child_uses_parent]);
        assert_eq!(
            cycles(&g),
            vec![names(&["html", "html::gestures"])],
            "{parent}"
        );
    }
    // Not an import: a test module's reach, a name that is not a child, a string.
    for parent in [
        "mod gestures; #[cfg(test)] mod tests { use super::gestures::section; }",
        "mod gestures; use serde::Serialize; fn f() { other::section() }",
        "mod gestures; const S: &str = \"gestures::section\";",
    ] {
        let g = graph(&[("html", parent), child_uses_parent]);
        assert!(cycles(&g).is_empty(), "{parent}");
    }
}

/// `pub(super)` names who may see an item, not what the item uses.
#[test]
fn a_visibility_is_not_an_import() {
    let g = graph(&[
        ("html", "mod gestures; pub use gestures::section;"),
        ("html::gestures", "pub(super) fn section() {}"),
    ]);
    assert!(cycles(&g).is_empty());
}
