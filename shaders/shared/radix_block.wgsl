// A block of the radix sort's keys ranked and sorted by digit in workgroup memory, then
// written to its slots: the body of both 4-bit scatters (radix_scatter, whose slots come
// from the spine's scanned counts, and radix_lookback, whose come from the blocks before
// it); its ranking also sorts radix8_lookback's blocks, a nibble at a time.
// The importing shader declares the bindings these functions read and write: `params`,
// `keys_in`, `values_in`, `keys_out`, `values_out`.
//
// Thread t owns keys [8t, 8t + 8) of the block, so thread order is key order. The block
// is first sorted by digit in workgroup memory: a key's place there is the block's
// same-digit keys before it (a per-digit scan of the threads' counts, plus those before
// it in its own thread) after the block's keys of lower digits. Then neighbouring threads
// write neighbouring places, each to its digit's first slot for the block plus its place
// in the digit's run, so a warp's writes land on a few runs of consecutive words instead
// of a word each (each its own write to the L2).
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
// and the sort, 309. Reading the block into workgroup memory a warp's 32 neighbouring
// words at a time, each thread's 8 then taken from there (an H200: 24.2 -> 31.1 us at 1M,
// 297 -> 446 at 16M): the L1 already serves a thread's 8 neighbouring words.

#import radix_common

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

// Counts block `block`'s keys by digit (thread t its own 8) and scans the counts: then
// `block_digit_count(d)` is the block's keys of digit d, `local_start[d]` (written by
// thread d) where they start in the block's sorted order, and each thread's column the
// places its keys take. Every thread calls it, in uniform control flow; the caller sets
// `digit_base` (threads below 16) and passes a barrier before `sort_block`.
fn rank_block(t: u32, block: u32) {
    let base = block * RADIX_BLOCK + t * RADIX_ITEMS;
    clear_column(t);
    for (var k = 0u; k < RADIX_ITEMS; k++) {
        let i = base + k;
        if i < params.count {
            count_in_column(t, digit_of(keys_in[i], params.shift));
        }
    }
    scan_columns(t);
}

// Thread t's column of counts, zeroed.
fn clear_column(t: u32) {
    for (var p = 0u; p < PAIRS; p++) {
        columns[p * ROW + t] = 0u;
    }
}

// One more of thread t's keys has digit `d`.
fn count_in_column(t: u32, d: u32) {
    let at = (d >> 1u) * ROW + t;
    columns[at] = columns[at] + (1u << half_shift(d));
}

// The threads' counts (each thread's column) scanned: then each column holds the places
// of the thread's first key of each digit, `pair_totals` the block's counts and
// `local_start` (threads below 16) where each digit's keys start. Every thread calls it,
// in uniform control flow, after counting; it starts with a barrier.
fn scan_columns(t: u32) {
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
            before += block_digit_count(d);
        }
        local_start[t] = before;
    }
}

// The place in the block's sorted order of thread t's next key of digit `d` (its keys
// taken in order, after `scan_columns` and a barrier).
fn take_place(t: u32, d: u32) -> u32 {
    let at = (d >> 1u) * ROW + t;
    let word = columns[at];
    columns[at] = word + (1u << half_shift(d));
    return local_start[d] + ((word >> half_shift(d)) & 0xffffu);
}

// The block's keys of digit `d` (after `rank_block`).
fn block_digit_count(d: u32) -> u32 {
    return (pair_totals[d >> 1u] >> half_shift(d)) & 0xffffu;
}

// Each of thread t's keys to its place in the block's sorted order, then (after a
// barrier) neighbouring places to neighbouring slots: `digit_base[d]` plus the place.
// Every thread calls it, in uniform control flow, after `rank_block`, `digit_base` and a
// barrier.
fn sort_block(t: u32, block: u32, live: bool) {
    let start = block * RADIX_BLOCK;
    let base = start + t * RADIX_ITEMS;
    for (var k = 0u; k < RADIX_ITEMS; k++) {
        let i = base + k;
        if i < params.count {
            let key = keys_in[i];
            let place = take_place(t, digit_of(key, params.shift));
            sorted_keys[place] = key;
            sorted_values[place] = values_in[i];
        }
    }
    workgroupBarrier();
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
