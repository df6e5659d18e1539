// Radix sort with 8-bit digits, step 1 (once a sort): every pass's digit totals in one
// read of the keys, added into totals[pass · 256 + digit] (cleared before the sort), as
// radix_histogram does for 4-bit digits. CPU twin: passes::radix::sort_pairs_cpu.

#import radix_common
#import dispatch

@group(0) @binding(0) var<uniform> params: RadixParams;
@group(0) @binding(1) var<storage, read> keys: array<u32>;
@group(0) @binding(2) var<storage, read_write> totals: array<atomic<u32>>;

// RADIX8_DIGITS counters for each of at most 4 passes.
var<workgroup> histogram: array<atomic<u32>, 1024>;

@compute @workgroup_size(128)
fn main(
    @builtin(local_invocation_id) lid: vec3<u32>,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    let block = workgroup_index(wid, groups);
    for (var k = 0u; k < 8u; k++) {
        atomicStore(&histogram[k * RADIX_THREADS + lid.x], 0u);
    }
    workgroupBarrier();
    // Neighbouring threads read neighbouring keys (a histogram takes them in any order).
    let base = block * RADIX_BLOCK + lid.x;
    for (var k = 0u; k < RADIX_ITEMS; k++) {
        let i = base + k * RADIX_THREADS;
        if i < params.count {
            let key = keys[i];
            for (var p = 0u; p < params.passes; p++) {
                let d = digit8_of(key & params.mask, p * RADIX8_BITS);
                atomicAdd(&histogram[p * RADIX8_DIGITS + d], 1u);
            }
        }
    }
    workgroupBarrier();
    for (var k = 0u; k < 8u; k++) {
        let at = k * RADIX_THREADS + lid.x;
        if at < params.passes * RADIX8_DIGITS {
            let c = atomicLoad(&histogram[at]);
            if c != 0u {
                atomicAdd(&totals[at], c);
            }
        }
    }
}
