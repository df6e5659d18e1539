// Radix sort, step 1 per pass: the digit histogram of each block, written digit-major
// (counts[digit · blocks + block]) so that one exclusive scan over `counts` gives every
// (digit, block) its first output slot. CPU twin: passes::radix::sort_pairs_cpu.

#import radix_common
#import dispatch

@group(0) @binding(0) var<uniform> params: RadixParams;
@group(0) @binding(1) var<storage, read> keys: array<u32>;
@group(0) @binding(2) var<storage, read_write> counts: array<u32>;

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
    let base = block * RADIX_BLOCK + lid.x * RADIX_ITEMS;
    for (var k = 0u; k < RADIX_ITEMS; k++) {
        let i = base + k;
        if i < params.count {
            atomicAdd(&histogram[digit_of(keys[i], params.shift)], 1u);
        }
    }
    workgroupBarrier();
    if lid.x < RADIX_DIGITS && block < params.blocks {
        counts[lid.x * params.blocks + block] = atomicLoad(&histogram[lid.x]);
    }
}
