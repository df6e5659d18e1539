//! The WGSL sources: embedded at build time, joined by a small `#import name` mechanism
//! (a line `#import bodies` pulls in `shaders/shared/bodies.wgsl` once, before the
//! importing file), parsed and validated by naga, and reflected into the binding layout
//! the engine needs. One entry point (`main`) per file in `shaders/`.
//!
//! The sources are embedded, not read at run time, so the binary works from any directory.
//! `tests/shaders.rs` checks that every file in `shaders/` is listed here.

use std::collections::HashSet;

use crate::{Error, Result};

/// The shared files (`shaders/shared/*.wgsl`), by import name.
pub const SHARED: &[(&str, &str)] = &[
    ("bodies", include_str!("../../shaders/shared/bodies.wgsl")),
    (
        "broadphase",
        include_str!("../../shaders/shared/broadphase.wgsl"),
    ),
    (
        "dispatch",
        include_str!("../../shaders/shared/dispatch.wgsl"),
    ),
    ("depth", include_str!("../../shaders/shared/depth.wgsl")),
    ("numeric", include_str!("../../shaders/shared/numeric.wgsl")),
    (
        "pair_append",
        include_str!("../../shaders/shared/pair_append.wgsl"),
    ),
    (
        "radix_common",
        include_str!("../../shaders/shared/radix_common.wgsl"),
    ),
    (
        "scan_common",
        include_str!("../../shaders/shared/scan_common.wgsl"),
    ),
    (
        "stats_reduce",
        include_str!("../../shaders/shared/stats_reduce.wgsl"),
    ),
    ("status", include_str!("../../shaders/shared/status.wgsl")),
];

/// Identifies one entry shader (`shaders/<name>.wgsl`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ShaderId {
    /// World AABBs from poses (`bounds.wgsl`).
    Bounds,
    /// Indirect dispatch arguments from a GPU-side count (`dispatch_args.wgsl`).
    DispatchArgs,
    /// Prefix scan: chunk sums (`scan_reduce.wgsl`).
    ScanReduce,
    /// Prefix scan: chunk scans plus offsets (`scan_block.wgsl`).
    ScanBlock,
    /// Radix sort: digit histograms (`radix_count.wgsl`).
    RadixCount,
    /// Radix sort: stable scatter (`radix_scatter.wgsl`).
    RadixScatter,
    /// Broadphase setup: per-workgroup box statistics (`aabb_stats.wgsl`).
    AabbStats,
    /// Broadphase setup: sweep axis and hash grid (`broadphase_setup.wgsl`).
    BroadphaseSetup,
    /// Spatial hash: cells per body (`hash_count.wgsl`).
    HashCount,
    /// Spatial hash: (cell, body) entries (`hash_fill.wgsl`).
    HashFill,
    /// Spatial hash: pairs within cells (`hash_pairs.wgsl`).
    HashPairs,
    /// Spatial hash: oversize bodies against all (`hash_oversize.wgsl`).
    HashOversize,
    /// Sort-and-sweep: sort keys (`sap_keys.wgsl`).
    SapKeys,
    /// Sort-and-sweep: boxes gathered in sorted order (`sap_gather.wgsl`).
    SapGather,
    /// Sort-and-sweep: where each sweep ends, and its work items (`sap_reach.wgsl`).
    SapReach,
    /// Sort-and-sweep: the sweep (`sap_sweep.wgsl`).
    SapSweep,
    /// Sampled depth: least s per work item (`depth_estimate.wgsl`).
    DepthEstimate,
    /// Sampled depth: least s per pair, with its bound (`depth_reduce.wgsl`).
    DepthReduce,
    /// Sphere and capsule contacts per pair (`round_contacts.wgsl`).
    RoundContacts,
}

impl ShaderId {
    /// Every entry shader.
    pub const ALL: &'static [ShaderId] = &[
        ShaderId::Bounds,
        ShaderId::DispatchArgs,
        ShaderId::ScanReduce,
        ShaderId::ScanBlock,
        ShaderId::RadixCount,
        ShaderId::RadixScatter,
        ShaderId::AabbStats,
        ShaderId::BroadphaseSetup,
        ShaderId::HashCount,
        ShaderId::HashFill,
        ShaderId::HashPairs,
        ShaderId::HashOversize,
        ShaderId::SapKeys,
        ShaderId::SapGather,
        ShaderId::SapReach,
        ShaderId::SapSweep,
        ShaderId::DepthEstimate,
        ShaderId::DepthReduce,
        ShaderId::RoundContacts,
    ];

    /// File name inside `shaders/`.
    pub fn file_name(self) -> &'static str {
        match self {
            ShaderId::Bounds => "bounds.wgsl",
            ShaderId::DispatchArgs => "dispatch_args.wgsl",
            ShaderId::ScanReduce => "scan_reduce.wgsl",
            ShaderId::ScanBlock => "scan_block.wgsl",
            ShaderId::RadixCount => "radix_count.wgsl",
            ShaderId::RadixScatter => "radix_scatter.wgsl",
            ShaderId::AabbStats => "aabb_stats.wgsl",
            ShaderId::BroadphaseSetup => "broadphase_setup.wgsl",
            ShaderId::HashCount => "hash_count.wgsl",
            ShaderId::HashFill => "hash_fill.wgsl",
            ShaderId::HashPairs => "hash_pairs.wgsl",
            ShaderId::HashOversize => "hash_oversize.wgsl",
            ShaderId::SapKeys => "sap_keys.wgsl",
            ShaderId::SapGather => "sap_gather.wgsl",
            ShaderId::SapReach => "sap_reach.wgsl",
            ShaderId::SapSweep => "sap_sweep.wgsl",
            ShaderId::DepthEstimate => "depth_estimate.wgsl",
            ShaderId::DepthReduce => "depth_reduce.wgsl",
            ShaderId::RoundContacts => "round_contacts.wgsl",
        }
    }

    /// The source as written, before imports are resolved.
    pub fn raw_source(self) -> &'static str {
        match self {
            ShaderId::Bounds => include_str!("../../shaders/bounds.wgsl"),
            ShaderId::DispatchArgs => include_str!("../../shaders/dispatch_args.wgsl"),
            ShaderId::ScanReduce => include_str!("../../shaders/scan_reduce.wgsl"),
            ShaderId::ScanBlock => include_str!("../../shaders/scan_block.wgsl"),
            ShaderId::RadixCount => include_str!("../../shaders/radix_count.wgsl"),
            ShaderId::RadixScatter => include_str!("../../shaders/radix_scatter.wgsl"),
            ShaderId::AabbStats => include_str!("../../shaders/aabb_stats.wgsl"),
            ShaderId::BroadphaseSetup => include_str!("../../shaders/broadphase_setup.wgsl"),
            ShaderId::HashCount => include_str!("../../shaders/hash_count.wgsl"),
            ShaderId::HashFill => include_str!("../../shaders/hash_fill.wgsl"),
            ShaderId::HashPairs => include_str!("../../shaders/hash_pairs.wgsl"),
            ShaderId::HashOversize => include_str!("../../shaders/hash_oversize.wgsl"),
            ShaderId::SapKeys => include_str!("../../shaders/sap_keys.wgsl"),
            ShaderId::SapGather => include_str!("../../shaders/sap_gather.wgsl"),
            ShaderId::SapReach => include_str!("../../shaders/sap_reach.wgsl"),
            ShaderId::SapSweep => include_str!("../../shaders/sap_sweep.wgsl"),
            ShaderId::DepthEstimate => include_str!("../../shaders/depth_estimate.wgsl"),
            ShaderId::DepthReduce => include_str!("../../shaders/depth_reduce.wgsl"),
            ShaderId::RoundContacts => include_str!("../../shaders/round_contacts.wgsl"),
        }
    }

    /// The source with every import resolved: ready for naga or wgpu.
    pub fn source(self) -> Result<String> {
        resolve_imports(self.file_name(), self.raw_source())
    }
}

/// Resolves `#import name` lines: each shared file is inlined once, at its first import,
/// with its own imports resolved before it. The line numbers naga reports refer to the
/// joined text; each inlined part starts with a `// --- name ---` marker.
pub fn resolve_imports(file: &str, source: &str) -> Result<String> {
    let mut out = String::with_capacity(source.len() * 2);
    let mut seen = HashSet::new();
    let mut stack = vec![file.to_owned()];
    append_resolved(file, source, &mut out, &mut seen, &mut stack)?;
    Ok(out)
}

fn append_resolved(
    file: &str,
    source: &str,
    out: &mut String,
    seen: &mut HashSet<String>,
    stack: &mut Vec<String>,
) -> Result<()> {
    for (line_no, line) in source.lines().enumerate() {
        let Some(rest) = line.trim_start().strip_prefix("#import") else {
            out.push_str(line);
            out.push('\n');
            continue;
        };
        let name = rest.trim();
        let shader_error = |message: String| Error::Shader {
            name: file.to_owned(),
            message: format!("line {}: {message}", line_no + 1),
        };
        if name.is_empty() || name.contains(char::is_whitespace) {
            return Err(shader_error(format!("malformed import `{}`", line.trim())));
        }
        if stack.iter().any(|s| s == name) {
            return Err(shader_error(format!(
                "import cycle: {} -> {name}",
                stack.join(" -> ")
            )));
        }
        if !seen.insert(name.to_owned()) {
            continue;
        }
        let Some((_, shared)) = SHARED.iter().find(|(n, _)| *n == name) else {
            return Err(shader_error(format!(
                "unknown import `{name}` (known: {})",
                SHARED
                    .iter()
                    .map(|(n, _)| *n)
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        };
        out.push_str(&format!("// --- {name} ---\n"));
        stack.push(name.to_owned());
        append_resolved(name, shared, out, seen, stack)?;
        stack.pop();
        out.push_str(&format!("// --- end {name} ---\n"));
    }
    Ok(())
}

/// How a shader binds one buffer (`@group(0) @binding(n)`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BindingKind {
    /// `var<uniform>`.
    Uniform,
    /// `var<storage, read>`.
    StorageRead,
    /// `var<storage, read_write>`.
    StorageReadWrite,
}

/// What the engine needs to know about an entry shader, reflected from its source.
#[derive(Clone, Debug)]
pub struct ShaderInfo {
    /// Which shader.
    pub id: ShaderId,
    /// Source with imports resolved.
    pub source: String,
    /// Binding kinds of group 0, indexed by binding number (bindings must be dense).
    pub bindings: Vec<BindingKind>,
    /// `@workgroup_size` of `main`.
    pub workgroup_size: [u32; 3],
}

/// Parses and validates a shader with naga and reflects its group-0 bindings.
pub fn reflect(id: ShaderId) -> Result<ShaderInfo> {
    let source = id.source()?;
    let module = parse_and_validate(id.file_name(), &source)?;
    let shader_error = |message: String| Error::Shader {
        name: id.file_name().to_owned(),
        message,
    };
    let entry = match module.entry_points.as_slice() {
        [e] if e.name == "main" && e.stage == naga::ShaderStage::Compute => e,
        _ => {
            return Err(shader_error(
                "a shader file must hold exactly one compute entry point named `main`".into(),
            ));
        }
    };
    let mut slots: Vec<Option<BindingKind>> = Vec::new();
    for (_, var) in module.global_variables.iter() {
        let Some(binding) = &var.binding else {
            continue;
        };
        if binding.group != 0 {
            return Err(shader_error(format!(
                "`{}` uses group {}: only group 0 is supported",
                var.name.as_deref().unwrap_or("?"),
                binding.group
            )));
        }
        let kind = match var.space {
            naga::AddressSpace::Uniform => BindingKind::Uniform,
            naga::AddressSpace::Storage { access } => {
                if access.contains(naga::StorageAccess::STORE) {
                    BindingKind::StorageReadWrite
                } else {
                    BindingKind::StorageRead
                }
            }
            other => {
                return Err(shader_error(format!(
                    "binding {} is in address space {other:?}: only buffers are supported",
                    binding.binding
                )));
            }
        };
        let slot = binding.binding as usize;
        if slots.len() <= slot {
            slots.resize(slot + 1, None);
        }
        slots[slot] = Some(kind);
    }
    let bindings = slots
        .into_iter()
        .enumerate()
        .map(|(i, k)| k.ok_or_else(|| shader_error(format!("binding {i} is missing"))))
        .collect::<Result<Vec<_>>>()?;
    Ok(ShaderInfo {
        id,
        source,
        bindings,
        workgroup_size: entry.workgroup_size,
    })
}

/// Parses WGSL and runs naga's full validation; errors carry naga's own message.
pub fn parse_and_validate(name: &str, source: &str) -> Result<naga::Module> {
    let module = naga::front::wgsl::parse_str(source).map_err(|e| Error::Shader {
        name: name.to_owned(),
        message: e.emit_to_string(source),
    })?;
    let mut validator = naga::valid::Validator::new(
        naga::valid::ValidationFlags::all(),
        naga::valid::Capabilities::default(),
    );
    validator.validate(&module).map_err(|e| Error::Shader {
        name: name.to_owned(),
        message: e.emit_to_string(source),
    })?;
    Ok(module)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn imports_are_inlined_once_and_in_order() {
        let joined = resolve_imports("t.wgsl", "#import status\n#import status\nfn f() {}\n")
            .expect("resolves");
        assert_eq!(joined.matches("struct PassStatus").count(), 1);
        assert!(joined.find("struct PassStatus").unwrap() < joined.find("fn f()").unwrap());
    }

    #[test]
    fn unknown_and_malformed_imports_are_named_errors() {
        let err = resolve_imports("t.wgsl", "\n#import nowhere\n").unwrap_err();
        let text = err.to_string();
        assert!(text.contains("t.wgsl") && text.contains("line 2") && text.contains("nowhere"));
        let err = resolve_imports("t.wgsl", "#import a b\n").unwrap_err();
        assert!(err.to_string().contains("malformed import"));
    }
}
