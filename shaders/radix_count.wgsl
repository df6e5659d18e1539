// Radix sort, step 1 per pass: the digit histogram of each block, written digit-major
// (counts[digit · blocks + block]) so that a scan of each digit's row from the digit's
// first slot gives every (digit, block) its first output slot (radix_spine), and added
// into the pass's digit totals (totals[pass · 16 + digit], cleared before the sort).
// CPU twin: passes::radix::sort_pairs_cpu.

#import radix_common
#import dispatch

@group(0) @binding(0) var<uniform> params: RadixParams;
@group(0) @binding(1) var<storage, read> keys: array<u32>;
@group(0) @binding(2) var<storage, read_write> counts: array<u32>;
@group(0) @binding(3) var<storage, read_write> totals: array<atomic<u32>>;

var<workgroup> histogram: array<atomic<u32>, 16>;

@compute @workgroup_size(128)
fn main(
    @builtin(local_invocation_id) lid: vec3<u32>,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    let block = workgroup_index(wid, groups);
    if lid.x < RADIX_DIGITS {
        atomicStore(&histogram[lid.x], 0u);
    }
    workgroupBarrier();
    // Neighbouring threads read neighbouring keys (a histogram takes them in any order).
    let base = block * RADIX_BLOCK + lid.x;
    for (var k = 0u; k < RADIX_ITEMS; k++) {
        let i = base + k * RADIX_THREADS;
        if i < params.count {
            atomicAdd(&histogram[digit_of(keys[i], params.shift)], 1u);
        }
    }
    workgroupBarrier();
    if lid.x < RADIX_DIGITS && block < params.blocks {
        let c = atomicLoad(&histogram[lid.x]);
        counts[lid.x * params.blocks + block] = c;
        if c != 0u {
            atomicAdd(&totals[(params.shift / RADIX_BITS) * RADIX_DIGITS + lid.x], c);
        }
    }
}
