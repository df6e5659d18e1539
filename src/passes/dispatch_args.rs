//! Indirect dispatch arguments from a GPU-side count (`shaders/dispatch_args.wgsl`), so a
//! pass can run one thread per item of a count only the GPU knows (pairs found, say).
//! CPU twin: [`crate::gpu::sizes::dispatch_grid`].

use crate::graph::{BufferProxy, Recording};
use crate::shaders::ShaderId;
use crate::wgsl_twin;

wgsl_twin! {
    /// Twin of `DispatchArgsParams` in `shaders/dispatch_args.wgsl`.
    pub struct GpuDispatchArgsParams as "DispatchArgsParams" {
        /// Index of the count inside the counts buffer.
        pub count_index: u32,
        /// Threads per workgroup of the pass to be dispatched.
        pub workgroup_size: u32,
        /// Largest x dimension of the grid.
        pub max_groups_x: u32,
        /// Threads per counted item.
        pub per_item: u32,
    }
}

/// Records the computation of `[x, y, 1]` for `counts[count_index]` items into a new
/// 12-byte buffer, returned for [`Recording::dispatch_indirect`].
pub fn record_dispatch_args(
    rec: &mut Recording,
    counts: BufferProxy,
    count_index: u32,
    workgroup_size: u32,
    max_groups_x: u32,
) -> BufferProxy {
    record_dispatch_args_per_item(rec, counts, count_index, 1, workgroup_size, max_groups_x)
}

/// The same for `per_item` threads per counted item (their product must fit a u32).
pub fn record_dispatch_args_per_item(
    rec: &mut Recording,
    counts: BufferProxy,
    count_index: u32,
    per_item: u32,
    workgroup_size: u32,
    max_groups_x: u32,
) -> BufferProxy {
    let params = rec.buffer(
        size_of::<GpuDispatchArgsParams>() as u64,
        "dispatch args params",
    );
    rec.upload(
        params,
        &[GpuDispatchArgsParams {
            count_index,
            workgroup_size,
            max_groups_x,
            per_item,
        }],
    );
    let args = rec.buffer(12, "dispatch args");
    rec.dispatch(ShaderId::DispatchArgs, [1, 1, 1], &[params, counts, args]);
    rec.free(params);
    args
}
