//! Every shader parses and validates with naga (so a broken shader fails `cargo test` on
//! any machine, GPU or not), every file in `shaders/` is registered, and every Pod struct
//! matches naga's layout of its WGSL twin field by field.

use std::collections::BTreeSet;

use proxima::bodies::{GpuAabb, GpuBody, GpuShapeBounds};
use proxima::gpu::layout::WgslTwin;
use proxima::gpu::sizes::BODY_WORKGROUP_SIZE;
use proxima::passes::bounds::GpuBoundsParams;
use proxima::passes::dispatch_args::GpuDispatchArgsParams;
use proxima::passes::status::GpuPassStatus;
use proxima::shaders::{self, BindingKind, ShaderId};

fn wgsl_files(dir: &str) -> BTreeSet<String> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
    std::fs::read_dir(&path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .filter_map(|e| {
            let name = e.ok()?.file_name().into_string().ok()?;
            name.ends_with(".wgsl").then_some(name)
        })
        .collect()
}

#[test]
fn every_shader_file_is_registered() {
    let entries: BTreeSet<String> = ShaderId::ALL
        .iter()
        .map(|s| s.file_name().to_owned())
        .collect();
    assert_eq!(
        wgsl_files("shaders"),
        entries,
        "shaders/*.wgsl vs ShaderId::ALL"
    );
    let shared: BTreeSet<String> = shaders::SHARED
        .iter()
        .map(|(n, _)| format!("{n}.wgsl"))
        .collect();
    assert_eq!(
        wgsl_files("shaders/shared"),
        shared,
        "shaders/shared vs SHARED"
    );
}

#[test]
fn every_shader_validates_and_reflects() {
    for &id in ShaderId::ALL {
        let info = shaders::reflect(id).unwrap_or_else(|e| panic!("{e}"));
        assert!(!info.bindings.is_empty(), "{}", id.file_name());
    }
}

/// The needs `gpu::sizes::shortfall` holds a device to are the shaders' own: the most
/// storage buffers and bindings one binds, and the largest workgroup; and the grids' width.
#[test]
fn the_limits_the_passes_need_are_the_shaders() {
    use proxima::gpu::sizes::{
        DEFAULT_MAX_GROUPS_X, NEEDED_BINDINGS, NEEDED_INVOCATIONS, NEEDED_STORAGE_BUFFERS,
        shortfall,
    };
    let (mut storage, mut bindings, mut invocations) = (0, 0, 0);
    for &id in ShaderId::ALL {
        let info = shaders::reflect(id).unwrap_or_else(|e| panic!("{e}"));
        let bound = info
            .bindings
            .iter()
            .filter(|k| !matches!(k, BindingKind::Uniform))
            .count();
        storage = storage.max(bound as u32);
        bindings = bindings.max(info.bindings.len() as u32);
        invocations = invocations.max(info.workgroup_size.iter().product::<u32>());
    }
    assert_eq!(
        (storage, bindings, invocations),
        (NEEDED_STORAGE_BUFFERS, NEEDED_BINDINGS, NEEDED_INVOCATIONS)
    );
    assert_eq!(shortfall(&wgpu::Limits::default()), None);
    let short = shortfall(&wgpu::Limits::downlevel_webgl2_defaults()).unwrap();
    assert!(
        short.contains("max_storage_buffers_per_shader_stage 0 (the passes need 8)")
            && short.contains("Limits::default()"),
        "{short}"
    );
    // A device taking fewer workgroups a dimension than the grids' width: its indirect
    // dispatches would be skipped without a word.
    let short = shortfall(&wgpu::Limits {
        max_compute_workgroups_per_dimension: 256,
        ..wgpu::Limits::default()
    })
    .unwrap();
    assert!(
        short.contains(&format!(
            "max_compute_workgroups_per_dimension 256 (the passes need {DEFAULT_MAX_GROUPS_X})"
        )),
        "{short}"
    );
}

#[test]
fn reflected_bindings_match_the_sources() {
    let bounds = shaders::reflect(ShaderId::Bounds).unwrap();
    use BindingKind::*;
    assert_eq!(
        bounds.bindings,
        vec![
            Uniform,
            StorageRead,
            StorageRead,
            StorageReadWrite,
            StorageReadWrite
        ]
    );
    assert_eq!(bounds.workgroup_size, [BODY_WORKGROUP_SIZE, 1, 1]);
    let args = shaders::reflect(ShaderId::DispatchArgs).unwrap();
    assert_eq!(args.bindings, vec![Uniform, StorageRead, StorageReadWrite]);
}

#[test]
fn a_broken_shader_is_a_named_error() {
    let err = shaders::parse_and_validate("broken.wgsl", "fn main( { }").unwrap_err();
    assert!(err.to_string().contains("broken.wgsl"), "{err}");
    // Parses, but does not validate: a u32 returned as f32.
    let err =
        shaders::parse_and_validate("typed.wgsl", "fn f() -> f32 { return 1u; }").unwrap_err();
    assert!(err.to_string().contains("typed.wgsl"), "{err}");
}

/// Finds the struct named `name` in any entry shader; returns (size, [(member, offset)]).
fn wgsl_struct(name: &str) -> (u32, Vec<(String, u32)>) {
    for &id in ShaderId::ALL {
        let source = id.source().unwrap();
        let module = shaders::parse_and_validate(id.file_name(), &source).unwrap();
        for (_, ty) in module.types.iter() {
            if ty.name.as_deref() != Some(name) {
                continue;
            }
            if let naga::TypeInner::Struct { members, span } = &ty.inner {
                let fields = members
                    .iter()
                    .map(|m| (m.name.clone().unwrap_or_default(), m.offset))
                    .collect();
                return (*span, fields);
            }
        }
    }
    panic!("no WGSL struct named {name}");
}

/// Differences between a Rust twin and its WGSL struct; empty when they agree. Rust padding
/// fields (leading `_`) that WGSL lacks are ignored; every WGSL member must exist in Rust at
/// the same offset.
fn layout_mismatches<T: WgslTwin>(wgsl_name: &str) -> Vec<String> {
    let (size, members) = wgsl_struct(wgsl_name);
    let rust = T::field_offsets();
    let mut problems = Vec::new();
    if size as usize != size_of::<T>() {
        problems.push(format!("size: WGSL {size}, Rust {}", size_of::<T>()));
    }
    for (name, offset) in &members {
        match rust.iter().find(|(n, _)| n == name) {
            Some((_, o)) if *o == *offset as usize => {}
            Some((_, o)) => problems.push(format!("{name}: WGSL offset {offset}, Rust {o}")),
            None => problems.push(format!("{name}: missing on the Rust side")),
        }
    }
    for (name, _) in &rust {
        if !name.starts_with('_') && !members.iter().any(|(m, _)| m == name) {
            problems.push(format!("{name}: missing on the WGSL side"));
        }
    }
    problems
}

fn assert_twin<T: WgslTwin>() {
    let problems = layout_mismatches::<T>(T::WGSL_NAME);
    assert!(problems.is_empty(), "{}: {problems:?}", T::WGSL_NAME);
}

#[test]
fn pod_structs_match_their_wgsl_twins() {
    assert_twin::<GpuBody>();
    assert_twin::<GpuShapeBounds>();
    assert_twin::<GpuAabb>();
    assert_twin::<GpuPassStatus>();
    assert_twin::<GpuBoundsParams>();
    assert_twin::<proxima::passes::pose_gather::GpuGatherParams>();
    assert_twin::<GpuDispatchArgsParams>();
    assert_twin::<proxima::passes::scan::GpuScanParams>();
    assert_twin::<proxima::passes::radix::GpuRadixParams>();
    assert_twin::<proxima::passes::broadphase::GpuCountParams>();
    assert_twin::<proxima::passes::broadphase::GpuStatsPartial>();
    assert_twin::<proxima::passes::broadphase::GpuBroadphaseSetup>();
    assert_twin::<proxima::passes::broadphase::GpuPairCounter>();
    assert_twin::<proxima::passes::broadphase::GpuHashParams>();
    assert_twin::<proxima::passes::broadphase::GpuSortedBox>();
    assert_twin::<proxima::passes::broadphase::GpuSweepParams>();
    assert_twin::<proxima::passes::broadphase::GpuOversizeParams>();
    assert_twin::<proxima::passes::broadphase::GpuHashPairsParams>();
    assert_twin::<proxima::passes::round_contacts::GpuRoundShape>();
    assert_twin::<proxima::passes::round_contacts::GpuRoundContact>();
    assert_twin::<proxima::passes::round_contacts::GpuRoundParams>();
    assert_twin::<proxima::passes::round_contacts::GpuTouchContact>();
}

#[test]
fn the_layout_check_catches_a_mismatch() {
    // GpuAabb held against Body: same size, different fields.
    let problems = layout_mismatches::<GpuAabb>("Body");
    assert!(
        problems.iter().any(|p| p.contains("position")),
        "{problems:?}"
    );
    let problems = layout_mismatches::<GpuPassStatus>("Aabb");
    assert!(
        problems.iter().any(|p| p.starts_with("size")),
        "{problems:?}"
    );
}

/// The compute shaders are built without naga's loop bounding (`gpu::engine`'s
/// `COMPUTE_CHECKS`), on the promise that every loop ends by its own condition. This holds
/// each loop in `shaders/` and `shaders/shared/` to a form that does: a counted `for` whose
/// variable only grows (`++`, `+=` a constant or a bound, `<<= 1u`) up to a `<` bound, or
/// halves (`>>= 1u`) to `> 0u`; `<=` only over a cell range that `cell_of` clamps to the
/// grid; `while lo < hi` only as a binary search that narrows each round; `loop` only as a
/// look-back wait that gives up after `params.patience` reads. A new loop of another form
/// fails here, to be audited before the promise is extended to it.
#[test]
fn every_compute_loop_ends_by_its_own_condition() {
    let mut bad = Vec::new();
    let mut loops = 0;
    for dir in ["shaders", "shaders/shared"] {
        for name in wgsl_files(dir) {
            let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join(dir)
                .join(&name);
            let source = std::fs::read_to_string(&path).unwrap();
            let lines: Vec<&str> = source
                .lines()
                .map(|l| l.split("//").next().unwrap().trim())
                .collect();
            for (i, line) in lines.iter().enumerate() {
                let after = lines[i + 1..(i + 40).min(lines.len())].join("\n");
                let verdict = if let Some(header) = line.strip_prefix("for (") {
                    Some(counted_for_ends(&name, header))
                } else if line.starts_with("while ") {
                    Some(
                        (*line == "while lo < hi {"
                            && after.contains("lo = mid + 1u;")
                            && after.contains("hi = mid;"))
                        .then_some(())
                        .ok_or("a while loop that is not a binary search"),
                    )
                } else if *line == "loop {" || line.starts_with("loop ") {
                    Some(
                        after
                            .contains("< params.patience")
                            .then_some(())
                            .ok_or("a loop that is not a look-back wait with patience"),
                    )
                } else {
                    None
                };
                if let Some(verdict) = verdict {
                    loops += 1;
                    if let Err(why) = verdict {
                        bad.push(format!("{dir}/{name}:{}: {why}: {line}", i + 1));
                    }
                }
            }
        }
    }
    assert!(loops > 50, "only {loops} loops found: the scan is broken");
    assert!(
        bad.is_empty(),
        "loops not known to end:\n{}",
        bad.join("\n")
    );
}

/// Whether a `for` header (after `for (`) counts to a bound it cannot step past or wrap.
fn counted_for_ends(file: &str, header: &str) -> Result<(), &'static str> {
    let header = header
        .strip_suffix(") {")
        .ok_or("a for header on several lines")?;
    let parts: Vec<&str> = header.split(';').map(str::trim).collect();
    let [_, condition, step] = parts[..] else {
        return Err("a for header without three clauses");
    };
    let (var, op, bound) = {
        let words: Vec<&str> = condition.splitn(3, ' ').collect();
        let [var, op, bound] = words[..] else {
            return Err("a condition not of the form `v < bound`");
        };
        (var, op, bound)
    };
    let grows = step == format!("{var}++")
        || step
            .strip_prefix(&format!("{var} += "))
            .is_some_and(|by| !by.contains(var) && !by.starts_with('-') && by != "0u");
    match (op, step) {
        ("<", _) if grows => Ok(()),
        ("<", s) if s == format!("{var} <<= 1u") && bound.ends_with('u') => Ok(()),
        (">", s) if s == format!("{var} >>= 1u") && bound == "0u" => Ok(()),
        // A cell range: `cell_of` clamps both ends to the grid, far below u32's end.
        ("<=", _) if grows && (file == "hash_count.wgsl" || file == "hash_fill.wgsl") => Ok(()),
        _ => Err("a for loop not counted up to a bound (or halved to zero)"),
    }
}
