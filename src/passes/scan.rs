//! Exclusive prefix scan of u32 values on the GPU (reduce-then-scan: per-chunk sums, a
//! scan of the sums — recursively — then a scan of each chunk plus its offset), and its
//! CPU twin. WGSL gives no forward-progress guarantee between workgroups, so the single-
//! pass decoupled look-back scan is not portable; three dispatches per level are.

use crate::gpu::sizes::{DEFAULT_MAX_GROUPS_X, dispatch_grid};
use crate::graph::{BufferProxy, Recording};
use crate::shaders::ShaderId;
use crate::wgsl_twin;

/// Values per scan workgroup (256 threads × 4); twin of `SCAN_CHUNK` in scan_common.wgsl.
pub const SCAN_CHUNK: u32 = 1024;

wgsl_twin! {
    /// Twin of `ScanParams` in `shaders/shared/scan_common.wgsl`.
    pub struct GpuScanParams as "ScanParams" {
        /// Number of values.
        pub count: u32,
        /// First value's index in the buffer.
        pub offset: u32,
        /// Number of chunks.
        pub groups: u32,
        /// 1 when chunk offsets are added.
        pub use_offsets: u32,
    }
}

/// Records an exclusive scan of `data[0..count]` in place. Returns a 4-byte buffer that
/// will hold the sum of all values (wrapping, like u32 arithmetic on the GPU).
pub fn record_exclusive_scan(rec: &mut Recording, data: BufferProxy, count: u32) -> BufferProxy {
    let total = rec.buffer(4, "scan total");
    let dummy = rec.buffer(4, "scan no offsets");
    rec.clear(dummy);
    record_level(rec, data, count, total, dummy);
    rec.free(dummy);
    total
}

fn record_level(
    rec: &mut Recording,
    data: BufferProxy,
    count: u32,
    total: BufferProxy,
    dummy: BufferProxy,
) {
    let groups = count.div_ceil(SCAN_CHUNK).max(1);
    let grid = dispatch_grid(groups, 1, DEFAULT_MAX_GROUPS_X);
    let params = rec.buffer(size_of::<GpuScanParams>() as u64, "scan params");
    if groups == 1 {
        rec.upload(
            params,
            &[GpuScanParams {
                count,
                offset: 0,
                groups: 1,
                use_offsets: 0,
            }],
        );
        rec.dispatch(ShaderId::ScanBlock, grid, &[params, data, dummy, total]);
        rec.free(params);
        return;
    }
    rec.upload(
        params,
        &[GpuScanParams {
            count,
            offset: 0,
            groups,
            use_offsets: 1,
        }],
    );
    let partials = rec.array_buffer::<u32>(groups as usize, "scan partials");
    rec.dispatch(ShaderId::ScanReduce, grid, &[params, data, partials]);
    record_level(rec, partials, groups, total, dummy);
    rec.dispatch(ShaderId::ScanBlock, grid, &[params, data, partials, total]);
    rec.free(partials);
    rec.free(params);
}

/// CPU twin: exclusive scan in place; returns the total. Wrapping arithmetic, as on the GPU.
pub fn exclusive_scan_cpu(data: &mut [u32]) -> u32 {
    let mut sum = 0u32;
    for v in data.iter_mut() {
        let x = *v;
        *v = sum;
        sum = sum.wrapping_add(x);
    }
    sum
}
