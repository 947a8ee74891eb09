//! `logs profile`: collapsed stacks (`frame;frame;frame count`, async-profiler's `_[j]`
//! style annotations and `[thread tid=N]` roots allowed), reduced to shares by bucket (JIT,
//! GC, class load/link/verify, interpreter, application) and top leaves.
//!
//! Buckets come from ordered rules: the first rule with a matching frame wins, so a
//! compiler thread's stack is JIT even when it also resolves a class. The defaults know
//! JDK 17's thread shapes (GC work under `GangWorker`, which async-profiler's own JFR
//! classifier files under "vm"); a TOML file adds rules in front of them.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};
use arena_report::{fmt_count, toml_input, Cell, Column, Exit, Table};
use serde::Deserialize;

use crate::gc::short_name;
use crate::scan::{scan_path_parallel, threads_for, Fold, LineParser, Parsed, ScanReport};

/// One collapsed stack line.
#[derive(Debug, Clone, PartialEq)]
pub struct Stack<'a> {
    /// Frames, root first, joined by `;`.
    pub frames: &'a [u8],
    pub count: u64,
}

impl<'a> Stack<'a> {
    /// The `[name tid=N]` root frame, if the profile was taken per thread.
    pub fn thread(&self) -> Option<&'a [u8]> {
        let end = memchr::memchr(b';', self.frames).unwrap_or(self.frames.len());
        let first = &self.frames[..end];
        (first.starts_with(b"[") && first.ends_with(b"]")).then_some(first)
    }

    /// The innermost frame.
    pub fn leaf(&self) -> &'a [u8] {
        match memchr::memrchr(b';', self.frames) {
            Some(i) => &self.frames[i + 1..],
            None => self.frames,
        }
    }
}

/// `foo_[j]` -> `foo`: async-profiler's annotation suffixes.
pub fn strip_annotation(frame: &[u8]) -> &[u8] {
    match frame {
        [rest @ .., b'_', b'[', b'j' | b'i' | b'0' | b'1' | b'k', b']'] => rest,
        _ => frame,
    }
}

#[derive(Debug, Default)]
pub struct CollapsedParser;

impl LineParser for CollapsedParser {
    type Record<'a> = Stack<'a>;
    const KIND: &'static str = "collapsed stacks (frame;frame count)";

    fn parse<'a>(&mut self, line: &'a [u8]) -> Parsed<Stack<'a>> {
        let line = crate::unified::trim(line);
        if line.is_empty() {
            return Parsed::Known;
        }
        let Some(sp) = memchr::memrchr(b' ', line) else {
            return Parsed::Unknown;
        };
        let digits = &line[sp + 1..];
        if digits.is_empty() || digits.len() > 19 || !digits.iter().all(u8::is_ascii_digit) {
            return Parsed::Unknown;
        }
        let count = digits.iter().fold(0u64, |n, &c| n * 10 + (c - b'0') as u64);
        let frames = crate::unified::trim(&line[..sp]);
        if !looks_like_frames(frames) {
            return Parsed::Unknown;
        }
        Parsed::Record(Stack { frames, count })
    }

    fn time_of(_: &Stack<'_>) -> Option<f64> {
        None
    }
}

/// Whether `f` is `frame;frame;...;frame`, so that any line of text that merely ends in a
/// number ("see section 3", a string in a binary) is not taken for a stack: no empty frame
/// (`;;`, a leading or trailing `;`), no control bytes (symbol names have none; binary
/// junk does), valid UTF-8, and a lone frame holds no spaces unless it is a bracketed
/// root such as `[main tid=1]` or one of HotSpot's code blobs ([`is_code_blob`]). Spaces
/// inside frames of a longer stack stay allowed: C++ signatures and Rust types (`[u8; 8]`)
/// have them.
fn looks_like_frames(f: &[u8]) -> bool {
    static EMPTY_FRAME: LazyLock<memchr::memmem::Finder<'static>> =
        LazyLock::new(|| memchr::memmem::Finder::new(b";;"));
    let (Some(&first), Some(&last)) = (f.first(), f.last()) else {
        return false;
    };
    if first == b';' || last == b';' {
        return false;
    }
    // Printable ASCII, the usual case, is one branch-free pass the compiler vectorises
    // (this runs on every line of files of gigabytes); anything else must be UTF-8 text.
    let plain = f
        .iter()
        .fold(0u8, |acc, &b| acc | (b.wrapping_sub(0x20) > 0x5e) as u8)
        == 0;
    if !plain && !std::str::from_utf8(f).is_ok_and(|s| !s.chars().any(char::is_control)) {
        return false;
    }
    if EMPTY_FRAME.find(f).is_some() {
        return false;
    }
    memchr::memchr(b';', f).is_some()
        || memchr::memchr(b' ', f).is_none()
        || (first == b'[' && last == b']')
        || is_code_blob(f)
}

/// The names of HotSpot's generated code (stubs, adapters) that hold a space. When a sample
/// lands in such code and the stack cannot be walked past it, async-profiler writes the
/// blob's name alone on a line: `StubRoutines (1) 3`. By its shape such a line cannot be
/// told from prose: `vtable stubs 1` is two words and a number like `see page 12`, and
/// `StubRoutines (1)` a word and a parenthesis like `Copyright (C) 2021`. The names are a
/// short fixed set, so a lone frame with spaces is taken for a stack only when it is one of
/// them, and prose ending in a number still is not. A name missing here costs its lone
/// lines, reported as not understood; a longer stack ending in it is read either way.
const CODE_BLOBS: [&[u8]; 9] = [
    b"StubRoutines",
    b"I2C/C2I adapters",
    b"MethodHandles adapters",
    b"vtable stub",
    b"vtable stubs",
    b"vtable chunks",
    b"itable stub",
    b"itable stubs",
    b"native signature handlers",
];

/// Whether a lone frame is a name of [`CODE_BLOBS`], bare or with the one qualifier the JVM
/// appends in parentheses, after a space or not: the `(2)` of `StubRoutines (2)`, the
/// signature fingerprint of `I2C/C2I adapters(0xba)`.
fn is_code_blob(f: &[u8]) -> bool {
    CODE_BLOBS.iter().any(|name| match f.strip_prefix(*name) {
        Some([]) => true,
        Some(rest) => {
            let rest = rest.strip_prefix(b" ").unwrap_or(rest);
            match rest {
                [b'(', inner @ .., b')'] => !inner.iter().any(|&b| b == b'(' || b == b')'),
                _ => false,
            }
        }
        None => false,
    })
}

/// A collapsed file is nothing but stacks: when fewer than half of its lines that are not
/// blank are stacks, it is some other text with a few lines of the right shape.
pub const MIN_STACK_SHARE: f64 = 0.5;

/// One bucket rule; a stack matches when any listed substring is found where it says.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Rule {
    pub bucket: String,
    /// Substrings of any frame.
    #[serde(default)]
    pub any: Vec<String>,
    /// Substrings of the `[thread tid=N]` root frame.
    #[serde(default)]
    pub thread: Vec<String>,
    /// Substrings of the innermost frame.
    #[serde(default)]
    pub leaf: Vec<String>,
}

/// A rules file: `[[rule]]` tables, checked before the defaults unless
/// `replace_defaults = true`.
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct RulesFile {
    #[serde(default)]
    pub replace_defaults: bool,
    #[serde(default)]
    pub rule: Vec<Rule>,
    /// Name of the bucket for stacks no rule matches (default "application").
    pub fallback: Option<String>,
}

fn rule(bucket: &str, any: &[&str], thread: &[&str], leaf: &[&str]) -> Rule {
    let v = |x: &[&str]| x.iter().map(|s| s.to_string()).collect();
    Rule {
        bucket: bucket.into(),
        any: v(any),
        thread: v(thread),
        leaf: v(leaf),
    }
}

pub const JIT: &str = "JIT";
pub const GC: &str = "GC";
pub const CLASS: &str = "class load, link, verify";
pub const INTERPRETER: &str = "interpreter";
pub const APPLICATION: &str = "application";

/// HotSpot's default buckets, most specific first.
pub fn default_rules() -> Vec<Rule> {
    vec![
        rule(
            JIT,
            &[
                "CompileBroker::",
                "C2Compiler::",
                "Compiler::compile_method",
                "Compilation::Compilation",
                "C2Compiler",
                "JVMCICompiler::",
            ],
            &["C2 CompilerThre", "C1 CompilerThre", "JVMCI CompilerT"],
            &[],
        ),
        rule(
            GC,
            &[
                "GangWorker::",
                "WorkerThread::run",
                "ConcurrentGCThread::",
                "VM_G1",
                "VM_ParallelGC",
                "VM_CollectForAllocation",
                "VM_GC_Operation",
                "VM_GenCollect",
                "VM_ZOperation",
                "VM_ShenandoahOperation",
                "G1ConcurrentRefineThread::",
                "G1ServiceThread::",
                "G1YoungRemSetSamplingThread::",
                "ZDriver::",
                "ZWorkers::",
                "ParallelScavengeHeap::",
                "PSScavenge::",
                "G1CollectedHeap::do_collection",
                "CollectedHeap::collect",
            ],
            &[
                "GC Thread#",
                "G1 Conc#",
                "G1 Refine#",
                "G1 Main Marker",
                "G1 Service",
                "G1 Young RemSet",
                "ZWorker",
                "ZDriver",
                "ZDirector",
            ],
            &[],
        ),
        rule(
            CLASS,
            &[
                "ClassLoader::load_class",
                "SystemDictionary::",
                "ClassFileParser::",
                "Verifier::",
                "ClassVerifier::",
                "LinkResolver::",
                "InterpreterRuntime::resolve_",
                "InstanceKlass::link_class",
                "Rewriter::",
                "java/lang/ClassLoader.loadClass",
                "java/lang/ClassLoader.defineClass",
                "jdk/internal/loader/BuiltinClassLoader.loadClass",
            ],
            &[],
            &[],
        ),
        rule(INTERPRETER, &[], &[], &["Interpreter", "_[0]"]),
    ]
}

/// Compiled rules: one automaton per place, each pattern mapped back to its rule.
pub struct Classifier {
    buckets: Vec<String>,
    /// Rule index -> bucket index.
    rule_bucket: Vec<usize>,
    fallback: usize,
    any: Option<(AhoCorasick, Vec<usize>)>,
    thread: Option<(AhoCorasick, Vec<usize>)>,
    leaf: Option<(AhoCorasick, Vec<usize>)>,
}

impl Classifier {
    pub fn new(rules: &[Rule], fallback: &str) -> anyhow::Result<Self> {
        let mut buckets: Vec<String> = Vec::new();
        let mut rule_bucket = Vec::new();
        let bucket_of =
            |name: &str, buckets: &mut Vec<String>| match buckets.iter().position(|b| b == name) {
                Some(i) => i,
                None => {
                    buckets.push(name.to_string());
                    buckets.len() - 1
                }
            };
        for r in rules {
            rule_bucket.push(bucket_of(&r.bucket, &mut buckets));
        }
        let fallback = bucket_of(fallback, &mut buckets);
        let build = |pick: &dyn Fn(&Rule) -> &Vec<String>| -> anyhow::Result<Option<(AhoCorasick, Vec<usize>)>> {
            let mut pats = Vec::new();
            let mut owner = Vec::new();
            for (i, r) in rules.iter().enumerate() {
                for p in pick(r) {
                    if !p.is_empty() {
                        pats.push(p.as_bytes().to_vec());
                        owner.push(i);
                    }
                }
            }
            if pats.is_empty() {
                return Ok(None);
            }
            // Leftmost-first lets aho-corasick use its SIMD prefilter (Teddy); patterns are in
            // rule order, so at one position the earlier rule's pattern wins.
            let ac = AhoCorasickBuilder::new()
                .match_kind(MatchKind::LeftmostFirst)
                .build(&pats)
                .map_err(|e| Exit::bad_input(format!("profile rules: {e}")))?;
            Ok(Some((ac, owner)))
        };
        Ok(Classifier {
            any: build(&|r| &r.any)?,
            thread: build(&|r| &r.thread)?,
            leaf: build(&|r| &r.leaf)?,
            buckets,
            rule_bucket,
            fallback,
        })
    }

    pub fn buckets(&self) -> &[String] {
        &self.buckets
    }

    /// The bucket index of a stack: the first rule (in order) with a match anywhere.
    pub fn classify(&self, s: &Stack<'_>) -> usize {
        let mut best = usize::MAX;
        let scan = |auto: &Option<(AhoCorasick, Vec<usize>)>, hay: &[u8], best: &mut usize| {
            if let Some((ac, owner)) = auto {
                // Restart one byte past each match's start, not at its end, so a pattern
                // that begins inside another match is still seen.
                let mut at = 0;
                while at < hay.len() {
                    let Some(m) = ac.find(aho_corasick::Input::new(hay).span(at..hay.len())) else {
                        return;
                    };
                    let r = owner[m.pattern().as_usize()];
                    if r < *best {
                        *best = r;
                        if r == 0 {
                            return;
                        }
                    }
                    at = m.start() + 1;
                }
            }
        };
        if let Some(t) = s.thread() {
            scan(&self.thread, t, &mut best);
        }
        if best != 0 {
            scan(&self.leaf, s.leaf(), &mut best);
        }
        if best != 0 {
            scan(&self.any, s.frames, &mut best);
        }
        if best == usize::MAX {
            self.fallback
        } else {
            self.rule_bucket[best]
        }
    }
}

/// Options of `logs profile`.
#[derive(Debug, Clone)]
pub struct ProfileOptions {
    pub files: Vec<PathBuf>,
    pub rules: Option<PathBuf>,
    pub top: usize,
    /// Buckets whose leaves are left out of the top-leaves table (e.g. JIT).
    pub skip_leaves_of: Vec<String>,
    pub flamegraph: Option<PathBuf>,
}

impl Default for ProfileOptions {
    fn default() -> Self {
        ProfileOptions {
            files: Vec::new(),
            rules: None,
            top: 15,
            skip_leaves_of: Vec::new(),
            flamegraph: None,
        }
    }
}

/// One file's reduction.
#[derive(Debug, Clone, Default)]
pub struct ProfileSummary {
    pub scan: ScanReport,
    pub samples: u64,
    /// Samples per bucket, indexed like [`Classifier::buckets`].
    pub by_bucket: Vec<u64>,
    /// Leaf frame (annotation stripped) -> (samples, bucket of the first stack seen).
    pub leaves: HashMap<Vec<u8>, (u64, usize)>,
    /// Every distinct stack with its samples, kept only for a flame graph (memory grows with
    /// the number of distinct stacks, not with the file).
    pub stacks: Option<HashMap<Vec<u8>, u64>>,
}

pub fn load_rules(path: Option<&Path>) -> anyhow::Result<Classifier> {
    let mut rules = Vec::new();
    let mut fallback = APPLICATION.to_string();
    let mut defaults = true;
    if let Some(p) = path {
        let text = arena_sys::fifo::read_to_string_announced(p, "rules file")
            .map_err(|e| Exit::bad_input(format!("{}: cannot read rules: {e}", p.display())))?;
        let file: RulesFile = toml_input::parse(&p.display().to_string(), &text)?;
        defaults = !file.replace_defaults;
        rules.extend(file.rule);
        if let Some(f) = file.fallback {
            fallback = f;
        }
    }
    if defaults {
        rules.extend(default_rules());
    }
    Classifier::new(&rules, &fallback)
}

/// The running reduction of one chunk of a collapsed file.
struct ProfileFold<'c> {
    classifier: &'c Classifier,
    s: ProfileSummary,
}

impl Fold<CollapsedParser> for ProfileFold<'_> {
    fn add(&mut self, st: Stack<'_>) {
        let b = self.classifier.classify(&st);
        self.s.samples += st.count;
        self.s.by_bucket[b] += st.count;
        let leaf = strip_annotation(st.leaf());
        match self.s.leaves.get_mut(leaf) {
            Some(e) => e.0 += st.count,
            None => {
                self.s.leaves.insert(leaf.to_vec(), (st.count, b));
            }
        }
        if let Some(stacks) = self.s.stacks.as_mut() {
            match stacks.get_mut(st.frames) {
                Some(n) => *n += st.count,
                None => {
                    stacks.insert(st.frames.to_vec(), st.count);
                }
            }
        }
    }

    fn merge(&mut self, later: Self) {
        self.s.samples += later.s.samples;
        for (mine, theirs) in self.s.by_bucket.iter_mut().zip(later.s.by_bucket) {
            *mine += theirs;
        }
        for (leaf, (n, b)) in later.s.leaves {
            self.s.leaves.entry(leaf).or_insert((0, b)).0 += n;
        }
        if let (Some(mine), Some(theirs)) = (self.s.stacks.as_mut(), later.s.stacks) {
            for (stack, n) in theirs {
                *mine.entry(stack).or_insert(0) += n;
            }
        }
    }
}

/// Reduces one collapsed file; large files are read in parallel chunks.
pub fn summarize(path: &Path, classifier: &Classifier) -> anyhow::Result<ProfileSummary> {
    summarize_with(path, classifier, threads_for(path))
}

/// [`summarize`] with an explicit thread count.
pub fn summarize_with(
    path: &Path,
    classifier: &Classifier,
    threads: usize,
) -> anyhow::Result<ProfileSummary> {
    reduce(path, classifier, threads, false)
}

/// One pass over a collapsed file; `keep_stacks` also keeps every distinct stack, so a
/// flame graph needs no second read (a pipe or stdin cannot be read twice).
fn reduce(
    path: &Path,
    classifier: &Classifier,
    threads: usize,
    keep_stacks: bool,
) -> anyhow::Result<ProfileSummary> {
    let fresh = || ProfileFold {
        classifier,
        s: ProfileSummary {
            by_bucket: vec![0; classifier.buckets().len()],
            stacks: keep_stacks.then(HashMap::new),
            ..ProfileSummary::default()
        },
    };
    let (scan, fold, _) = scan_path_parallel(path, threads, || CollapsedParser, fresh)?;
    let mut s = fold.s;
    s.scan = scan;
    s.scan
        .require(CollapsedParser::KIND, s.scan.records, MIN_STACK_SHARE)?;
    Ok(s)
}

pub fn run(opts: &ProfileOptions) -> anyhow::Result<Vec<Table>> {
    let (sums, classifier) = summarize_all(opts)?;
    let mut tables = vec![shares_table(&sums, &classifier)];
    for s in &sums {
        tables.push(leaves_table(s, &classifier, opts));
    }
    Ok(tables)
}

/// `logs profile --format json`: per file its samples, each bucket's samples and share
/// (percent of the file's samples), and the top leaf frames.
pub fn run_json(opts: &ProfileOptions) -> anyhow::Result<serde_json::Value> {
    use serde_json::{json, Map};
    let (sums, c) = summarize_all(opts)?;
    let files: Vec<_> = sums
        .iter()
        .map(|s| {
            let mut buckets = Map::new();
            for (bi, name) in c.buckets().iter().enumerate() {
                let n = s.by_bucket[bi];
                buckets.insert(
                    name.clone(),
                    json!({ "samples": n, "share_pct": pct(n, s.samples) }),
                );
            }
            let leaves: Vec<_> = top_leaves(s, &c, opts)
                .into_iter()
                .map(|(leaf, (n, b))| {
                    json!({
                        "frame": String::from_utf8_lossy(leaf),
                        "bucket": c.buckets()[*b],
                        "samples": n,
                        "share_pct": pct(*n, s.samples),
                    })
                })
                .collect();
            json!({
                "file": s.scan.file,
                "samples": s.samples,
                "buckets": buckets,
                "top_leaves": leaves,
                "scan": crate::scan_json(&s.scan),
            })
        })
        .collect();
    Ok(arena_report::json::document(
        "logs.profile",
        json!({ "buckets": c.buckets(), "files": files }),
    ))
}

/// Every file reduced; the flame graph, when asked for, is written here.
fn summarize_all(opts: &ProfileOptions) -> anyhow::Result<(Vec<ProfileSummary>, Classifier)> {
    let classifier = load_rules(opts.rules.as_deref())?;
    let mut sums = Vec::new();
    for f in &opts.files {
        let keep = opts.flamegraph.is_some();
        sums.push(reduce(f, &classifier, threads_for(f), keep)?);
    }
    if let Some(svg) = &opts.flamegraph {
        write_flamegraph(&mut sums, svg)?;
    }
    Ok((sums, classifier))
}

/// The top leaves of a file, leaving out the buckets asked for, most samples first.
fn top_leaves<'s>(
    s: &'s ProfileSummary,
    c: &Classifier,
    opts: &ProfileOptions,
) -> Vec<(&'s Vec<u8>, &'s (u64, usize))> {
    let mut v: Vec<(&Vec<u8>, &(u64, usize))> = s
        .leaves
        .iter()
        .filter(|(_, (_, b))| {
            !opts
                .skip_leaves_of
                .iter()
                .any(|x| x.eq_ignore_ascii_case(&c.buckets()[*b]))
        })
        .collect();
    v.sort_by(|a, b| b.1 .0.cmp(&a.1 .0).then(a.0.cmp(b.0)));
    v.truncate(opts.top);
    v
}

fn pct(n: u64, of: u64) -> f64 {
    if of == 0 {
        0.0
    } else {
        n as f64 / of as f64 * 100.0
    }
}

fn shares_table(sums: &[ProfileSummary], c: &Classifier) -> Table {
    let mut cols = vec![Column::left("")];
    cols.extend(sums.iter().map(|s| Column::right(short_name(&s.scan.file))));
    cols.extend(
        sums.iter()
            .skip(1)
            .map(|s| Column::right(format!("Δ {}", short_name(&s.scan.file)))),
    );
    let mut t = Table::new(cols).with_title("Profile shares by bucket (share of samples)");
    let mut row = vec![Cell::text("samples (n)")];
    row.extend(
        sums.iter()
            .map(|s| Cell::num(fmt_count(s.samples as i64), s.samples as f64)),
    );
    let base = sums.first().map_or(0, |s| s.samples) as f64;
    row.extend(sums.iter().skip(1).map(|s| {
        let p = arena_stats::pct_change(base, s.samples as f64);
        if p.is_finite() {
            Cell::num(arena_report::fmt_pct_change(p), p)
        } else {
            Cell::text("-")
        }
    }));
    t.push_row(row);
    for (bi, name) in c.buckets().iter().enumerate() {
        let mut row = vec![Cell::text(format!("of which {name}"))];
        let shares: Vec<f64> = sums
            .iter()
            .map(|s| pct(s.by_bucket[bi], s.samples))
            .collect();
        for (s, p) in sums.iter().zip(&shares) {
            row.push(Cell::num(
                format!("{p:.1} % ({})", fmt_count(s.by_bucket[bi] as i64)),
                *p,
            ));
        }
        for p in shares.iter().skip(1) {
            let d = p - shares[0];
            let sign = if d < 0.0 { "\u{2212}" } else { "+" };
            row.push(Cell::num(format!("{sign}{:.1} pp", d.abs()), d));
        }
        t.push_row(row);
    }
    for s in sums {
        crate::scan_notes(&mut t, &s.scan, CollapsedParser::KIND);
    }
    t.note("each stack counts toward the first rule that matches one of its frames; deltas of shares in percentage points");
    t
}

fn leaves_table(s: &ProfileSummary, c: &Classifier, opts: &ProfileOptions) -> Table {
    let mut t = Table::new(vec![
        Column::left("leaf frame"),
        Column::left("bucket"),
        Column::right("samples"),
        Column::right("share"),
    ])
    .with_title(format!(
        "Top {} leaf frames: {} (n={} samples){}",
        opts.top,
        short_name(&s.scan.file),
        fmt_count(s.samples as i64),
        if opts.skip_leaves_of.is_empty() {
            String::new()
        } else {
            format!(", leaving out {}", opts.skip_leaves_of.join(", "))
        }
    ));
    for (leaf, (n, b)) in top_leaves(s, c, opts) {
        let p = pct(*n, s.samples);
        t.push_row(vec![
            Cell::text(String::from_utf8_lossy(leaf).into_owned()),
            Cell::text(c.buckets()[*b].clone()),
            Cell::num(fmt_count(*n as i64), *n as f64),
            Cell::num(format!("{p:.2} %"), p),
        ]);
    }
    t.note("leaf annotations (_[j], _[i], _[0], _[1], _[k]) stripped; a leaf's bucket is that of the first stack it was seen in");
    t
}

/// Renders the stacks of all files as one flame graph SVG with inferno, from the stacks
/// kept during the one pass (taken out of `sums`), so gzip and pipes work and lines that
/// were not understood stay out of the picture.
pub fn write_flamegraph(sums: &mut [ProfileSummary], svg: &Path) -> anyhow::Result<()> {
    let mut all: HashMap<Vec<u8>, u64> = HashMap::new();
    for s in sums.iter_mut() {
        for (stack, n) in s.stacks.take().unwrap_or_default() {
            *all.entry(stack).or_insert(0) += n;
        }
    }
    let lines: Vec<String> = all
        .into_iter()
        .map(|(stack, n)| format!("{} {n}", String::from_utf8_lossy(&stack)))
        .collect();
    let out = std::fs::File::create(svg).map_err(|e| {
        Exit::bad_input(format!("{}: cannot write flame graph: {e}", svg.display()))
    })?;
    let mut opts = inferno::flamegraph::Options::default();
    opts.colors =
        inferno::flamegraph::Palette::Multi(inferno::flamegraph::color::MultiPalette::Java);
    opts.count_name = "samples".into();
    opts.title = sums
        .iter()
        .map(|s| short_name(&s.scan.file))
        .collect::<Vec<_>>()
        .join(" + ");
    let lines = lines.iter().map(String::as_str);
    inferno::flamegraph::from_lines(&mut opts, lines, std::io::BufWriter::new(out))
        .map_err(|e| Exit::bad_input(format!("{}: flame graph failed: {e}", svg.display())))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn classify(line: &str) -> String {
        let c = Classifier::new(&default_rules(), APPLICATION).unwrap();
        let Parsed::Record(s) = CollapsedParser.parse(line.as_bytes()) else {
            panic!("{line}")
        };
        c.buckets()[c.classify(&s)].clone()
    }

    #[test]
    fn default_buckets() {
        assert_eq!(classify("[C2 CompilerThre tid=12];thread_native_entry;Thread::call_run;JavaThread::run;CompileBroker::compiler_thread_loop;CompileBroker::invoke_compiler_on_method;C2Compiler::compile_method;Compile::Compile;PhaseIdealLoop::build_and_optimize 7"), JIT);
        assert_eq!(classify("thread_native_entry;Thread::call_run;GangWorker::run;GangWorker::loop;G1EvacuateRegionsBaseTask::work 3"), GC);
        assert_eq!(classify("Thread::call_run;VMThread::run;VMThread::evaluate_operation;VM_Operation::evaluate;VM_G1CollectForAllocation::doit 2"), GC);
        assert_eq!(classify("java/lang/Thread.run_[j];a/B.c_[j];java/lang/ClassLoader.loadClass_[j];SystemDictionary::resolve_or_fail;ClassFileParser::parse_stream 1"), CLASS);
        assert_eq!(
            classify(
                "InstanceKlass::link_class_impl;Verifier::verify;ClassVerifier::verify_method 1"
            ),
            CLASS
        );
        assert_eq!(
            classify("java/lang/Thread.run_[j];a/B.loop_[0] 4"),
            INTERPRETER
        );
        assert_eq!(
            classify(
                "java/lang/Thread.run_[j];a/B.loop_[j];java/util/zip/Deflater.deflateBytes_[j] 4"
            ),
            APPLICATION
        );
    }

    #[test]
    fn a_pattern_inside_another_match_is_seen() {
        // "xCompileBroker::" starts before the JIT pattern inside it.
        let rules = vec![
            rule("first", &["CompileBroker::"], &[], &[]),
            rule("second", &["xCompileB"], &[], &[]),
        ];
        let c = Classifier::new(&rules, APPLICATION).unwrap();
        let Parsed::Record(s) = CollapsedParser.parse(b"a;xCompileBroker::loop 1") else {
            panic!()
        };
        assert_eq!(c.buckets()[c.classify(&s)], "first");
    }

    #[test]
    fn user_rules_come_first() {
        let mut rules = vec![rule("zlib", &["Deflater."], &[], &[])];
        rules.extend(default_rules());
        let c = Classifier::new(&rules, APPLICATION).unwrap();
        let Parsed::Record(s) =
            CollapsedParser.parse(b"a/B.c_[j];java/util/zip/Deflater.deflateBytes_[j] 4")
        else {
            panic!()
        };
        assert_eq!(c.buckets()[c.classify(&s)], "zlib");
    }

    #[test]
    fn parallel_chunks_give_the_single_thread_shares() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.collapsed");
        let mut body = String::new();
        for i in 0..3000u64 {
            let root = [
                "[C2 CompilerThre tid=1];CompileBroker::compiler_thread_loop",
                "GangWorker::loop",
                "a/B.c_[j]",
            ][(i % 3) as usize];
            body.push_str(&format!("{root};leaf{}_[j] {}\n", i % 17, 1 + i % 5));
        }
        std::fs::write(&p, body).unwrap();
        let c = Classifier::new(&default_rules(), APPLICATION).unwrap();
        let one = summarize_with(&p, &c, 1).unwrap();
        let four = summarize_with(&p, &c, 4).unwrap();
        assert_eq!(
            (one.samples, &one.by_bucket, &one.leaves),
            (four.samples, &four.by_bucket, &four.leaves)
        );
        assert_eq!(one.scan, four.scan);
        assert_eq!(
            one.by_bucket[0],
            (0..3000u64)
                .filter(|i| i % 3 == 0)
                .map(|i| 1 + i % 5)
                .sum::<u64>()
        );
    }

    #[test]
    fn parse_lines() {
        let Parsed::Record(s) = CollapsedParser.parse(b"a;b;c_[k] 12\r") else {
            panic!()
        };
        assert_eq!(
            (s.count, s.leaf(), strip_annotation(s.leaf())),
            (12, &b"c_[k]"[..], &b"c"[..])
        );
        assert_eq!(CollapsedParser.parse(b"a;b;c"), Parsed::Unknown);
        assert_eq!(CollapsedParser.parse(b"a;b;c x12"), Parsed::Unknown);
        assert_eq!(CollapsedParser.parse(b" 12"), Parsed::Unknown);
        assert_eq!(
            CollapsedParser.parse(b"a 99999999999999999999"),
            Parsed::Unknown
        );
    }

    #[test]
    fn only_frames_make_a_stack() {
        let ok = |l: &str| matches!(CollapsedParser.parse(l.as_bytes()), Parsed::Record(_));
        // Real shapes: one frame, a thread root, C++ signatures and Rust types with spaces.
        assert!(ok("main 3"));
        assert!(ok("[main tid=1] 3"));
        assert!(ok("[GC Thread#0 tid=13];GangWorker::loop 1"));
        assert!(ok("a;operator new(unsigned long) 2"));
        assert!(ok("main;core::ptr::drop_in_place<[u8; 8]> 2"));
        assert!(ok("java/lang/Thread.run_[j];caf\u{e9}/X.y_[j] 1"));
        // Prose and junk that merely end in a number.
        assert!(!ok("see section 3"));
        assert!(!ok("Copyright (C) 2021"));
        assert!(!ok(";a;b 3"));
        assert!(!ok("a;b; 3"));
        assert!(!ok("a;;b 3"));
        assert_eq!(CollapsedParser.parse(b"a;b\x01c 3"), Parsed::Unknown);
        assert_eq!(CollapsedParser.parse(b"a;b\x7f 3"), Parsed::Unknown);
        assert_eq!(CollapsedParser.parse(b"a;\xff\xfe 3"), Parsed::Unknown);
        assert_eq!(CollapsedParser.parse(b"a;b\0c 3"), Parsed::Unknown);
    }

    /// HotSpot's stubs and adapters, as async-profiler writes them alone on a line.
    const STUB_LINES: [(&str, &str, u64); 7] = [
        ("I2C/C2I adapters(0xba) 1", "I2C/C2I adapters(0xba)", 1),
        ("StubRoutines (1) 3", "StubRoutines (1)", 3),
        ("Interpreter 7", "Interpreter", 7),
        ("[unknown_Java] 2", "[unknown_Java]", 2),
        ("StubRoutines (2) 1", "StubRoutines (2)", 1),
        ("vtable stubs 1", "vtable stubs", 1),
        ("itable stubs 4", "itable stubs", 4),
    ];

    #[test]
    fn a_stub_alone_on_a_line_is_a_stack() {
        for (line, frame, count) in STUB_LINES {
            let Parsed::Record(s) = CollapsedParser.parse(line.as_bytes()) else {
                panic!("{line}")
            };
            assert_eq!(
                (s.frames, s.leaf(), s.count),
                (frame.as_bytes(), frame.as_bytes(), count)
            );
            // The same frame under a Java caller.
            let deeper = format!("java/lang/Thread.run;com/example/Game.tick;{line}");
            let Parsed::Record(s) = CollapsedParser.parse(deeper.as_bytes()) else {
                panic!("{deeper}")
            };
            assert_eq!((s.leaf(), s.count), (frame.as_bytes(), count));
        }
        // Other qualifiers the JVM puts in the parentheses, and the names without one.
        for line in [
            "StubRoutines (final stubs) 2",
            "I2C/C2I adapters 1",
            "MethodHandles adapters 1",
            "vtable chunks 1",
            "native signature handlers 1",
        ] {
            assert!(
                matches!(CollapsedParser.parse(line.as_bytes()), Parsed::Record(_)),
                "{line}"
            );
        }
    }

    #[test]
    fn prose_is_still_not_a_stack() {
        for line in [
            "the quick brown fox jumped over 3",
            "Total samples: 984",
            "see page 12",
            "see section 3",
            "Copyright (C) 2021",
            // A stub's name must be the whole frame, its qualifier one parenthesis.
            "StubRoutines were called 3",
            "vtable stubs and itable stubs 2",
            "StubRoutines (1) (2) 1",
            "StubRoutines (1) more 1",
            "I2C/C2I adapters(0xba 1",
            "stubroutines (1) 1",
        ] {
            assert_eq!(
                CollapsedParser.parse(line.as_bytes()),
                Parsed::Unknown,
                "{line}"
            );
        }
        assert_eq!(
            CollapsedParser.parse(b"StubRoutines (\x01) 1"),
            Parsed::Unknown
        );
    }

    #[test]
    fn a_profile_with_stubs_alone_on_lines_keeps_every_sample() {
        // Java stacks, JVM threads, and stub frames both under Java callers and alone.
        let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/ctimer-stubs.collapsed");
        let c = Classifier::new(&default_rules(), APPLICATION).unwrap();
        let s = summarize_with(&p, &c, 1).unwrap();
        assert_eq!((s.scan.lines, s.scan.records, s.scan.unknown), (20, 20, 0));
        assert_eq!(s.samples, 152);
        assert_eq!(s.by_bucket.iter().sum::<u64>(), 152);
        // Each stub's samples: the line alone plus the stacks it ends under a Java caller.
        for (frame, n) in [
            ("I2C/C2I adapters(0xba)", 1 + 2),
            ("StubRoutines (1)", 3 + 4),
            ("Interpreter", 7 + 5),
            ("[unknown_Java]", 2),
            ("StubRoutines (2)", 1 + 1),
            ("vtable stubs", 1 + 3),
            ("itable stubs", 4 + 2),
        ] {
            assert_eq!(s.leaves[frame.as_bytes()].0, n, "{frame}");
        }
    }
}
