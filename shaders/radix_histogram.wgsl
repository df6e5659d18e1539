// Radix sort by decoupled look-back, step 1 (once a sort): every pass's digit totals in
// one read of the keys, added into totals[pass · digits + digit] (cleared before the
// sort), for 4-bit digits (radix_lookback) and 8-bit ones (radix8_starts scans them
// first, for radix8_lookback) alike: `params.digit_bits` says which. The passes' order
// does not change a digit's total, so they need not wait for one another; each pass's
// look-back scatter then starts its digits at the sum of the lower digits' totals.
// CPU twin: passes::radix::sort_pairs_cpu.

#import radix_common
#import dispatch

@group(0) @binding(0) var<uniform> params: RadixParams;
@group(0) @binding(1) var<storage, read> keys: array<u32>;
@group(0) @binding(2) var<storage, read_write> totals: array<atomic<u32>>;

// The digits' counters of every pass: at most 8 passes of 16 digits or 4 of 256.
var<workgroup> histogram: array<atomic<u32>, 1024>;

@compute @workgroup_size(128)
fn main(
    @builtin(local_invocation_id) lid: vec3<u32>,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    let block = workgroup_index(wid, groups);
    let digits = 1u << params.digit_bits;
    // Only the counters the passes use: 128 of them with 4-bit digits, one a thread.
    let used = params.passes * digits;
    for (var at = lid.x; at < used; at += RADIX_THREADS) {
        atomicStore(&histogram[at], 0u);
    }
    workgroupBarrier();
    // Neighbouring threads read neighbouring keys (a histogram takes them in any order).
    let base = block * RADIX_BLOCK + lid.x;
    for (var k = 0u; k < RADIX_ITEMS; k++) {
        let i = base + k * RADIX_THREADS;
        if i < params.count {
            let key = keys[i] & params.mask;
            for (var p = 0u; p < params.passes; p++) {
                let d = (key >> (p * params.digit_bits)) & (digits - 1u);
                atomicAdd(&histogram[p * digits + d], 1u);
            }
        }
    }
    workgroupBarrier();
    for (var at = lid.x; at < used; at += RADIX_THREADS) {
        let c = atomicLoad(&histogram[at]);
        if c != 0u {
            atomicAdd(&totals[at], c);
        }
    }
}
