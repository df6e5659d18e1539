// Radix sort, step 3 per pass (step 2 gave every (digit, block) its first slot): every key
// goes to its slot, stably. Thread t owns keys [8t, 8t + 8) of the block, so thread order
// is key order; a key's slot is the block's first slot for its digit (the scanned counts),
// plus the same-digit keys of lower threads (a per-digit scan over the threads), plus
// those before it in its own thread. CPU twin: passes::radix::sort_pairs_cpu.

#import radix_common
#import dispatch

@group(0) @binding(0) var<uniform> params: RadixParams;
@group(0) @binding(1) var<storage, read> keys_in: array<u32>;
@group(0) @binding(2) var<storage, read> values_in: array<u32>;
@group(0) @binding(3) var<storage, read> offsets: array<u32>;
@group(0) @binding(4) var<storage, read_write> keys_out: array<u32>;
@group(0) @binding(5) var<storage, read_write> values_out: array<u32>;

// thread_counts[digit · 128 + thread], scanned in place over the threads.
var<workgroup> thread_counts: array<u32, 2048>;
var<workgroup> segment_sums: array<u32, 128>;

@compute @workgroup_size(128)
fn main(
    @builtin(local_invocation_id) lid: vec3<u32>,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    let block = workgroup_index(wid, groups);
    let t = lid.x;
    let base = block * RADIX_BLOCK + t * RADIX_ITEMS;
    var local_counts: array<u32, 16>;
    for (var d = 0u; d < RADIX_DIGITS; d++) {
        local_counts[d] = 0u;
    }
    for (var k = 0u; k < RADIX_ITEMS; k++) {
        let i = base + k;
        if i < params.count {
            local_counts[digit_of(keys_in[i], params.shift)] += 1u;
        }
    }
    for (var d = 0u; d < RADIX_DIGITS; d++) {
        thread_counts[d * RADIX_THREADS + t] = local_counts[d];
    }
    workgroupBarrier();
    // Exclusive scan of each digit's 128 thread counts: 8 threads per digit, 16 each.
    let digit = t >> 3u;
    let segment = t & 7u;
    let first = digit * RADIX_THREADS + segment * 16u;
    var s = 0u;
    for (var k = 0u; k < 16u; k++) {
        s += thread_counts[first + k];
    }
    segment_sums[t] = s;
    workgroupBarrier();
    var prefix = 0u;
    for (var k = 0u; k < segment; k++) {
        prefix += segment_sums[digit * 8u + k];
    }
    for (var k = 0u; k < 16u; k++) {
        let c = thread_counts[first + k];
        thread_counts[first + k] = prefix;
        prefix += c;
    }
    workgroupBarrier();
    if block >= params.blocks {
        return;
    }
    var running: array<u32, 16>;
    for (var d = 0u; d < RADIX_DIGITS; d++) {
        running[d] = offsets[d * params.blocks + block] + thread_counts[d * RADIX_THREADS + t];
    }
    for (var k = 0u; k < RADIX_ITEMS; k++) {
        let i = base + k;
        if i < params.count {
            let key = keys_in[i];
            let d = digit_of(key, params.shift);
            let slot = running[d];
            running[d] = slot + 1u;
            keys_out[slot] = key;
            values_out[slot] = values_in[i];
        }
    }
}
