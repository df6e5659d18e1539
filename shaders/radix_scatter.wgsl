// Radix sort, step 3 per pass (step 2 gave every (digit, block) its first slot): every key
// goes to its slot, stably. CPU twin: passes::radix::sort_pairs_cpu.
//
// Thread t owns keys [8t, 8t + 8) of the block, so thread order is key order. The block
// is first sorted by digit in workgroup memory: a key's place there is the block's
// same-digit keys before it (a per-digit scan of the threads' counts, plus those before
// it in its own thread) after the block's keys of lower digits. Then neighbouring threads
// write neighbouring places, each to its digit's first slot for the block (the scanned
// counts) plus its place in the digit's run, so a warp's writes land on a few runs of
// consecutive words instead of a word each (each its own write to the L2).
//
// The threads' counts are 16-bit halves, two digits to a word (a block's counts stay
// below 2^16, so a packed sum adds both halves at once), in a column of words per thread
// (row `digit / 2`, padded to ROW words): a thread is the only one to write its column,
// and lanes of a warp read different banks. Arrays of the thread's own indexed by digit
// live in off-chip local memory on a GPU.
//
// On an H100 (each dispatch timed on its own; passes::radix has the whole sort), one
// pass at 1M pairs: 46 us with those arrays and each key written to its slot from its
// thread, 33 with the counts in workgroup memory, 24.4 with the block sorted first; 16M:
// 442, 362, 303 us. Writing every key to its own place instead (a wrong sort, for the
// bound) took 165 us at 16M; keeping the thread's keys in registers between the count
// and the sort, 309.

#import radix_common
#import dispatch

@group(0) @binding(0) var<uniform> params: RadixParams;
@group(0) @binding(1) var<storage, read> keys_in: array<u32>;
@group(0) @binding(2) var<storage, read> values_in: array<u32>;
@group(0) @binding(3) var<storage, read> offsets: array<u32>;
@group(0) @binding(4) var<storage, read_write> keys_out: array<u32>;
@group(0) @binding(5) var<storage, read_write> values_out: array<u32>;

const PAIRS: u32 = 8u; // RADIX_DIGITS / 2
const ROW: u32 = 129u; // RADIX_THREADS + 1
var<workgroup> columns: array<u32, 1032>; // PAIRS × ROW
var<workgroup> segment_sums: array<u32, 128>;
var<workgroup> pair_totals: array<u32, 8>;
// Per digit: where its keys start in the block's sorted order, and the slot of the
// block's sorted place 0 for it (its first slot less that start, wrapping).
var<workgroup> local_start: array<u32, 16>;
var<workgroup> digit_base: array<u32, 16>;
var<workgroup> sorted_keys: array<u32, 1024>;
var<workgroup> sorted_values: array<u32, 1024>;

fn half_shift(d: u32) -> u32 {
    return (d & 1u) * 16u;
}

@compute @workgroup_size(128)
fn main(
    @builtin(local_invocation_id) lid: vec3<u32>,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    let block = workgroup_index(wid, groups);
    let live = block < params.blocks;
    let t = lid.x;
    let start = block * RADIX_BLOCK;
    let base = start + t * RADIX_ITEMS;
    for (var p = 0u; p < PAIRS; p++) {
        columns[p * ROW + t] = 0u;
    }
    for (var k = 0u; k < RADIX_ITEMS; k++) {
        let i = base + k;
        if i < params.count {
            let d = digit_of(keys_in[i], params.shift);
            let at = (d >> 1u) * ROW + t;
            columns[at] = columns[at] + (1u << half_shift(d));
        }
    }
    workgroupBarrier();
    // Exclusive scan of each digit pair's 128 packed thread counts: 16 threads a pair, 8
    // columns each (lanes of a warp read 32 different banks).
    let pair = t & 7u;
    let segment = t >> 3u;
    let first = pair * ROW + segment * 8u;
    var s = 0u;
    for (var k = 0u; k < 8u; k++) {
        s += columns[first + k];
    }
    segment_sums[t] = s;
    workgroupBarrier();
    var prefix = 0u;
    for (var k = 0u; k < segment; k++) {
        prefix += segment_sums[k * 8u + pair];
    }
    for (var k = 0u; k < 8u; k++) {
        let c = columns[first + k];
        columns[first + k] = prefix;
        prefix += c;
    }
    if segment == 15u {
        pair_totals[pair] = prefix;
    }
    workgroupBarrier();
    if t < RADIX_DIGITS {
        var before = 0u;
        for (var d = 0u; d < t; d++) {
            before += (pair_totals[d >> 1u] >> half_shift(d)) & 0xffffu;
        }
        local_start[t] = before;
        if live {
            digit_base[t] = offsets[t * params.blocks + block] - before;
        }
    }
    workgroupBarrier();
    // Each key to its place in the block's sorted order.
    for (var k = 0u; k < RADIX_ITEMS; k++) {
        let i = base + k;
        if i < params.count {
            let key = keys_in[i];
            let d = digit_of(key, params.shift);
            let at = (d >> 1u) * ROW + t;
            let word = columns[at];
            columns[at] = word + (1u << half_shift(d));
            let place = local_start[d] + ((word >> half_shift(d)) & 0xffffu);
            sorted_keys[place] = key;
            sorted_values[place] = values_in[i];
        }
    }
    workgroupBarrier();
    // Neighbouring places to neighbouring slots.
    var in_block = 0u;
    if live && start < params.count {
        in_block = min(params.count - start, RADIX_BLOCK);
    }
    for (var k = 0u; k < RADIX_ITEMS; k++) {
        let place = k * RADIX_THREADS + t;
        if place < in_block {
            let key = sorted_keys[place];
            let slot = digit_base[digit_of(key, params.shift)] + place;
            keys_out[slot] = key;
            values_out[slot] = sorted_values[place];
        }
    }
}
