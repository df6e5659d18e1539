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
    ("bodies", include_str!("../shaders/shared/bodies.wgsl")),
    (
        "broadphase",
        include_str!("../shaders/shared/broadphase.wgsl"),
    ),
    ("dispatch", include_str!("../shaders/shared/dispatch.wgsl")),
    ("depth", include_str!("../shaders/shared/depth.wgsl")),
    ("numeric", include_str!("../shaders/shared/numeric.wgsl")),
    (
        "workgroup_scan",
        include_str!("../shaders/shared/workgroup_scan.wgsl"),
    ),
    (
        "pair_append",
        include_str!("../shaders/shared/pair_append.wgsl"),
    ),
    (
        "radix_common",
        include_str!("../shaders/shared/radix_common.wgsl"),
    ),
    (
        "radix_block",
        include_str!("../shaders/shared/radix_block.wgsl"),
    ),
    (
        "scan_common",
        include_str!("../shaders/shared/scan_common.wgsl"),
    ),
    (
        "stats_reduce",
        include_str!("../shaders/shared/stats_reduce.wgsl"),
    ),
    ("status", include_str!("../shaders/shared/status.wgsl")),
];

/// The entry shaders, listed once: each line names the variant, its file in `shaders/`
/// and what it does; the enum, [`ShaderId::ALL`], the file names and the embedded sources
/// all come from this one table.
macro_rules! entry_shaders {
    ($($(#[doc = $doc:literal])* $id:ident => $file:literal,)*) => {
        /// Identifies one entry shader (`shaders/<name>.wgsl`).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum ShaderId {
            $($(#[doc = $doc])* $id,)*
        }

        impl ShaderId {
            /// Every entry shader.
            pub const ALL: &'static [ShaderId] = &[$(ShaderId::$id,)*];

            /// File name inside `shaders/`.
            pub fn file_name(self) -> &'static str {
                match self {
                    $(ShaderId::$id => $file,)*
                }
            }

            /// The source as written, before imports are resolved.
            pub fn raw_source(self) -> &'static str {
                match self {
                    $(ShaderId::$id => include_str!(concat!("../shaders/", $file)),)*
                }
            }
        }
    };
}

entry_shaders! {
    /// The body table from a renderer's instance buffer.
    PoseGather => "pose_gather.wgsl",
    /// World AABBs from poses.
    Bounds => "bounds.wgsl",
    /// Indirect dispatch arguments from a GPU-side count.
    DispatchArgs => "dispatch_args.wgsl",
    /// Prefix scan: chunk sums.
    ScanReduce => "scan_reduce.wgsl",
    /// Prefix scan: chunk scans plus offsets.
    ScanBlock => "scan_block.wgsl",
    /// Radix sort: digit histograms.
    RadixCount => "radix_count.wgsl",
    /// Radix sort: each digit's block counts scanned from its first slot.
    RadixSpine => "radix_spine.wgsl",
    /// Radix sort: stable scatter.
    RadixScatter => "radix_scatter.wgsl",
    /// Radix sort by look-back (4- and 8-bit digits): every pass's digit totals.
    RadixHistogram => "radix_histogram.wgsl",
    /// Radix sort by look-back: a pass's stable scatter, its slots from the blocks before.
    RadixLookback => "radix_lookback.wgsl",
    /// 8-bit radix sort: each pass's digits' first slots.
    Radix8Starts => "radix8_starts.wgsl",
    /// 8-bit radix sort by look-back: a pass's stable scatter.
    Radix8Lookback => "radix8_lookback.wgsl",
    /// Broadphase setup: per-workgroup box statistics.
    AabbStats => "aabb_stats.wgsl",
    /// Broadphase setup: sweep axis and hash grid.
    BroadphaseSetup => "broadphase_setup.wgsl",
    /// Spatial hash: cells per body.
    HashCount => "hash_count.wgsl",
    /// Spatial hash: (cell, body) entries.
    HashFill => "hash_fill.wgsl",
    /// Spatial hash: pairs within cells.
    HashPairs => "hash_pairs.wgsl",
    /// Spatial hash: oversize bodies against all.
    HashOversize => "hash_oversize.wgsl",
    /// Sort-and-sweep: sort keys.
    SapKeys => "sap_keys.wgsl",
    /// Sort-and-sweep: boxes gathered in sorted order.
    SapGather => "sap_gather.wgsl",
    /// Sort-and-sweep: where each sweep ends, and its work items.
    SapReach => "sap_reach.wgsl",
    /// Sort-and-sweep: the sweep.
    SapSweep => "sap_sweep.wgsl",
    /// Sampled depth in a frame: the pair count from the broadphase's counter.
    DepthSetup => "depth_setup.wgsl",
    /// Sampled depth: least s per work item.
    DepthEstimate => "depth_estimate.wgsl",
    /// Sampled depth: least s per pair, with its bound.
    DepthReduce => "depth_reduce.wgsl",
    /// Sphere and capsule contacts per pair.
    RoundContacts => "round_contacts.wgsl",
}

impl ShaderId {
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
