//! The crate reads as layers (geometry → exact queries → GPU passes → frame plan →
//! world and pipeline → binary): a top-level module imports only modules below it, so
//! the imports between top-level modules form no cycle. This reads the sources' `crate::`
//! paths (comments left out) and names any cycle with a line that makes each of its steps.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// Every `.rs` file under `dir`, sorted.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(&dir).expect("read a source folder") {
            let path = entry.expect("a folder entry").path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// The names that follow `crate::` on a line of code, with the line's comment cut off.
fn crate_paths(line: &str) -> Vec<String> {
    let code = line.split("//").next().unwrap_or("");
    let mut names = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find("crate::") {
        let after = &rest[at + "crate::".len()..];
        let name: String = after
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        let before = rest[..at].chars().last();
        // `proxima_crate::` or `$crate::` are not this crate's paths.
        if !before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$') {
            names.push(name);
        }
        rest = after;
    }
    names
}

/// Edges between top-level modules: importer → imported → one place that does it.
fn module_imports(src: &Path) -> BTreeMap<String, BTreeMap<String, String>> {
    let modules: BTreeSet<String> = fs::read_dir(src)
        .expect("read src")
        .map(|e| e.expect("a folder entry").path())
        .filter_map(|p| {
            let stem = p.file_stem()?.to_str()?.to_string();
            (p.is_dir() || p.extension().is_some_and(|e| e == "rs")).then_some(stem)
        })
        .filter(|m| m != "lib" && m != "main")
        .collect();
    let mut edges: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    for file in rust_files(src) {
        let relative = file.strip_prefix(src).expect("under src");
        let first = relative.components().next().expect("a first component");
        let from = Path::new(first.as_os_str())
            .file_stem()
            .and_then(|s| s.to_str())
            .expect("a module name")
            .to_string();
        let text = fs::read_to_string(&file).expect("read a source file");
        for (number, line) in text.lines().enumerate() {
            for to in crate_paths(line) {
                if to != from && modules.contains(&to) {
                    edges
                        .entry(from.clone())
                        .or_default()
                        .entry(to)
                        .or_insert_with(|| format!("src/{}:{}", relative.display(), number + 1));
                }
            }
        }
    }
    edges
}

/// A cycle through the graph, if any, as the modules in order (the first repeated last).
fn find_cycle(edges: &BTreeMap<String, BTreeMap<String, String>>) -> Option<Vec<String>> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        Open,
        Done,
    }
    fn visit(
        node: &str,
        edges: &BTreeMap<String, BTreeMap<String, String>>,
        marks: &mut BTreeMap<String, Mark>,
        path: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        match marks.get(node) {
            Some(Mark::Done) => return None,
            Some(Mark::Open) => {
                let start = path.iter().position(|m| m == node).expect("on the path");
                let mut cycle = path[start..].to_vec();
                cycle.push(node.to_string());
                return Some(cycle);
            }
            None => {}
        }
        marks.insert(node.to_string(), Mark::Open);
        path.push(node.to_string());
        for next in edges.get(node).into_iter().flat_map(|e| e.keys()) {
            if let Some(cycle) = visit(next, edges, marks, path) {
                return Some(cycle);
            }
        }
        path.pop();
        marks.insert(node.to_string(), Mark::Done);
        None
    }
    let mut marks = BTreeMap::new();
    for node in edges.keys() {
        if let Some(cycle) = visit(node, edges, &mut marks, &mut Vec::new()) {
            return Some(cycle);
        }
    }
    None
}

#[test]
fn top_level_modules_import_only_downward() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let edges = module_imports(&src);
    assert!(
        edges.len() > 10,
        "the scan found imports in only {} modules: it is not reading the sources",
        edges.len()
    );
    if let Some(cycle) = find_cycle(&edges) {
        let steps: Vec<String> = cycle
            .windows(2)
            .map(|w| format!("{} -> {} ({})", w[0], w[1], edges[&w[0]][&w[1]]))
            .collect();
        panic!("top-level modules import each other:\n{}", steps.join("\n"));
    }
}

#[test]
fn the_cycle_finder_finds_a_planted_cycle() {
    fn add(edges: &mut BTreeMap<String, BTreeMap<String, String>>, a: &str, b: &str) {
        edges
            .entry(a.to_string())
            .or_default()
            .insert(b.to_string(), String::new());
    }
    let mut edges = BTreeMap::new();
    add(&mut edges, "world", "frame");
    add(&mut edges, "frame", "gpu");
    add(&mut edges, "gpu", "graph");
    assert_eq!(find_cycle(&edges), None);
    add(&mut edges, "graph", "frame");
    assert_eq!(
        find_cycle(&edges),
        Some(vec![
            "frame".to_string(),
            "gpu".to_string(),
            "graph".to_string(),
            "frame".to_string()
        ])
    );
    assert_eq!(
        crate_paths("use crate::gpu::Engine; // crate::world"),
        vec!["gpu".to_string()]
    );
    assert_eq!(crate_paths("$crate::bodies::Pose"), Vec::<String>::new());
}
