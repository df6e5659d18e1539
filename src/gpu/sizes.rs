//! Sizes computed on the CPU in one place: workgroup counts and grid shapes, next to the
//! constants the shaders share. A change to a `@workgroup_size` must be mirrored here;
//! `tests/shaders.rs` checks that it is.

/// Threads per workgroup of the per-body passes (`bounds.wgsl`).
pub const BODY_WORKGROUP_SIZE: u32 = 256;

/// The default `max_compute_workgroups_per_dimension`; grids wider than this become 2D.
pub const DEFAULT_MAX_GROUPS_X: u32 = 65_535;

/// Storage buffers one pass binds at most (`hash_pairs.wgsl`, `depth_reduce.wgsl`; the
/// shaders' test holds this to their bindings).
pub const NEEDED_STORAGE_BUFFERS: u32 = 8;

/// Bindings one pass's group holds at most (`hash_pairs.wgsl`; the shaders' test holds this
/// to their bindings).
pub const NEEDED_BINDINGS: u32 = 10;

/// Threads one workgroup runs at most (`@workgroup_size(256)`; the shaders' test holds
/// this to them).
pub const NEEDED_INVOCATIONS: u32 = 256;

/// What a device with `limits` lacks for the passes, named by wgpu's limits, or `None`:
/// a renderer's device made with `downlevel_webgl2_defaults()` binds no storage buffer,
/// and a frame said its 50 bodies were "more than one frame binds (0)".
pub fn shortfall(limits: &wgpu::Limits) -> Option<String> {
    let short: Vec<String> = [
        (
            "max_storage_buffers_per_shader_stage",
            limits.max_storage_buffers_per_shader_stage,
            NEEDED_STORAGE_BUFFERS,
        ),
        (
            "max_compute_invocations_per_workgroup",
            limits.max_compute_invocations_per_workgroup,
            NEEDED_INVOCATIONS,
        ),
        (
            "max_compute_workgroup_size_x",
            limits.max_compute_workgroup_size_x,
            NEEDED_INVOCATIONS,
        ),
        (
            "max_uniform_buffers_per_shader_stage",
            limits.max_uniform_buffers_per_shader_stage,
            1,
        ),
        ("max_bind_groups", limits.max_bind_groups, 1),
        (
            "max_bindings_per_bind_group",
            limits.max_bindings_per_bind_group,
            NEEDED_BINDINGS,
        ),
        // Every grid is folded to two dimensions at this width: a device that takes fewer
        // refuses the direct dispatches, and its indirect ones are skipped without a word
        // (wgpu zeroes arguments past the limit), losing every pair of a sweep.
        (
            "max_compute_workgroups_per_dimension",
            limits.max_compute_workgroups_per_dimension,
            DEFAULT_MAX_GROUPS_X,
        ),
    ]
    .into_iter()
    .filter(|&(_, has, needs)| has < needs)
    .map(|(name, has, needs)| format!("{name} {has} (the passes need {needs})"))
    .chain((largest_binding(limits) < 4096).then(|| {
        format!(
            "max_storage_buffer_binding_size {} (the passes need 4096)",
            limits.max_storage_buffer_binding_size
        )
    }))
    .collect();
    (!short.is_empty()).then(|| {
        format!(
            "the device's limits are below what the GPU passes need: {}; a device made with \
             wgpu::Limits::default() has them",
            short.join(", ")
        )
    })
}

/// The largest storage buffer a device with `limits` can both hold and bind, in bytes.
pub fn largest_binding(limits: &wgpu::Limits) -> u64 {
    limits
        .max_storage_buffer_binding_size
        .min(limits.max_buffer_size)
}

/// The named buffer-limit error when a buffer `label` of `size` bytes with `usage` is more
/// than a device with `limits` holds (`max_buffer_size`) or binds (the storage or uniform
/// binding size its usage asks).
pub fn check_buffer(
    limits: &wgpu::Limits,
    label: &str,
    size: u64,
    usage: wgpu::BufferUsages,
) -> crate::Result<()> {
    let mut checks = vec![(limits.max_buffer_size, "max_buffer_size")];
    if usage.contains(wgpu::BufferUsages::STORAGE) {
        checks.push((
            limits.max_storage_buffer_binding_size,
            "max_storage_buffer_binding_size",
        ));
    }
    if usage.contains(wgpu::BufferUsages::UNIFORM) {
        checks.push((
            limits.max_uniform_buffer_binding_size,
            "max_uniform_buffer_binding_size",
        ));
    }
    match checks.into_iter().find(|&(limit, _)| size > limit) {
        Some((limit, limit_name)) => Err(crate::Error::BufferLimit {
            label: label.to_owned(),
            needed: size,
            limit,
            limit_name,
        }),
        None => Ok(()),
    }
}

/// How many items of `item_bytes` fit [`largest_binding`], at most `u32::MAX`.
pub fn items_in_binding(limits: &wgpu::Limits, item_bytes: u64) -> u32 {
    (largest_binding(limits) / item_bytes.max(1)).min(u64::from(u32::MAX)) as u32
}

/// Grid for `items` threads in workgroups of `workgroup_size`, at most `max_groups_x`
/// groups wide: `[x, y, 1]` with `x · y · workgroup_size ≥ items`, and the linear index
/// `gid.x + gid.y · x · workgroup_size` (shared/dispatch.wgsl) covering every item.
/// Twin of `shaders/dispatch_args.wgsl`.
pub fn dispatch_grid(items: u32, workgroup_size: u32, max_groups_x: u32) -> [u32; 3] {
    let groups = items.div_ceil(workgroup_size);
    let x = groups.min(max_groups_x);
    let y = if x == 0 { 0 } else { groups.div_ceil(x) };
    [x, y, 1]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grid_covers_every_item_with_less_than_one_row_of_waste() {
        for items in [
            0u32,
            1,
            255,
            256,
            257,
            65_535 * 256,
            65_535 * 256 + 1,
            16_000_000,
        ] {
            let [x, y, z] = dispatch_grid(items, 256, DEFAULT_MAX_GROUPS_X);
            assert_eq!(z, 1);
            assert!(x <= DEFAULT_MAX_GROUPS_X);
            let threads = u64::from(x) * u64::from(y) * 256;
            assert!(threads >= u64::from(items), "{items}: {x}x{y}");
            if items > 0 {
                assert!(threads - u64::from(items) < u64::from(x) * 256, "{items}");
            } else {
                assert_eq!(threads, 0);
            }
        }
    }
}
