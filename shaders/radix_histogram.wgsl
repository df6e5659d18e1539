// Radix sort by decoupled look-back, step 1 (once a sort): every pass's digit totals in
// one read of the keys, added into totals[pass · 16 + digit] (cleared before the sort).
// The passes' order does not change a digit's total, so they need not wait for one
// another; each pass's look-back scatter (radix_lookback) then starts its digits at the
// sum of the lower digits' totals. CPU twin: passes::radix::sort_pairs_cpu.

#import radix_common
#import dispatch

@group(0) @binding(0) var<uniform> params: RadixParams;
@group(0) @binding(1) var<storage, read> keys: array<u32>;
@group(0) @binding(2) var<storage, read_write> totals: array<atomic<u32>>;

// RADIX_DIGITS counters for each of at most 8 passes.
var<workgroup> histogram: array<atomic<u32>, 128>;

@compute @workgroup_size(128)
fn main(
    @builtin(local_invocation_id) lid: vec3<u32>,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    let block = workgroup_index(wid, groups);
    atomicStore(&histogram[lid.x], 0u);
    workgroupBarrier();
    // Neighbouring threads read neighbouring keys (a histogram takes them in any order).
    let base = block * RADIX_BLOCK + lid.x;
    for (var k = 0u; k < RADIX_ITEMS; k++) {
        let i = base + k * RADIX_THREADS;
        if i < params.count {
            let key = keys[i];
            for (var p = 0u; p < params.passes; p++) {
                let d = digit_of(key, p * RADIX_BITS);
                atomicAdd(&histogram[p * RADIX_DIGITS + d], 1u);
            }
        }
    }
    workgroupBarrier();
    if lid.x < params.passes * RADIX_DIGITS {
        let c = atomicLoad(&histogram[lid.x]);
        if c != 0u {
            atomicAdd(&totals[lid.x], c);
        }
    }
}
