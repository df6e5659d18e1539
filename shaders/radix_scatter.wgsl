// Radix sort, step 3 per pass (step 2 gave every (digit, block) its first slot): every key
// goes to its slot, stably, the block sorted in workgroup memory first (radix_block says
// how and what it gained). CPU twin: passes::radix::sort_pairs_cpu.

#import radix_block
#import dispatch

@group(0) @binding(0) var<uniform> params: RadixParams;
@group(0) @binding(1) var<storage, read> keys_in: array<u32>;
@group(0) @binding(2) var<storage, read> values_in: array<u32>;
@group(0) @binding(3) var<storage, read> offsets: array<u32>;
@group(0) @binding(4) var<storage, read_write> keys_out: array<u32>;
@group(0) @binding(5) var<storage, read_write> values_out: array<u32>;

@compute @workgroup_size(128)
fn main(
    @builtin(local_invocation_id) lid: vec3<u32>,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    let block = workgroup_index(wid, groups);
    let live = block < params.blocks;
    let t = lid.x;
    rank_block(t, block);
    if t < RADIX_DIGITS && live {
        digit_base[t] = offsets[t * params.blocks + block] - local_start[t];
    }
    workgroupBarrier();
    sort_block(t, block, live);
}
