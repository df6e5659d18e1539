// Radix sort with 8-bit digits by decoupled look-back, one dispatch a pass (after
// radix_histogram and radix8_starts, once a sort): half the passes of the 4-bit sorts,
// so a 32-bit key's pairs are read and written 4 times instead of 8. As radix_lookback
// does for 4-bit digits, each block takes a ticket as it starts, publishes its digits'
// counts, walks back over the blocks before it to an inclusive prefix (counting a block
// that has not published after `params.patience` reads itself), publishes its own and
// writes its keys, neighbouring places to neighbouring slots.
//
// The block is sorted by its 8-bit digit in workgroup memory by two stable 4-bit splits
// (the digit's low nibble, then its high one), each ranked as radix_block ranks a 4-bit
// digit: 256 digits' per-thread counts would not fit in 16 KiB of workgroup memory. Each
// thread holds its 8 keys (and values) between the splits, in key order: keys [8t, 8t + 8)
// of the block, then of the block sorted by the low nibble.
// CPU twin: passes::radix::sort_pairs_cpu.

#import radix_common
#import radix_block

@group(0) @binding(0) var<uniform> params: RadixParams;
@group(0) @binding(1) var<storage, read> keys_in: array<u32>;
@group(0) @binding(2) var<storage, read> values_in: array<u32>;
// Each pass's digits' first slots (radix8_starts).
@group(0) @binding(3) var<storage, read> starts: array<u32>;
// Each pass's ticket counter, the fallbacks' count, then two regions, a status word per
// block and digit in each, used by the passes in turn (radix_common's STATUS). Cleared
// before the sort.
@group(0) @binding(4) var<storage, read_write> status: array<atomic<u32>>;
@group(0) @binding(5) var<storage, read_write> keys_out: array<u32>;
@group(0) @binding(6) var<storage, read_write> values_out: array<u32>;

var<workgroup> ticket: u32;
// The block's sorted keys and values, and the ranking's counts, are radix_block's
// (`sorted_keys`, `sorted_values`, `columns`). Per digit: where its keys start in the
// block's sorted order; where they end, then the slot of sorted place 0 for the digit
// (its first slot less its start, wrapping).
var<workgroup> digit_start: array<u32, 256>;
var<workgroup> digit_slot: array<u32, 256>;

fn digit8(key: u32) -> u32 {
    return digit8_of(key & params.mask, params.shift);
}

fn nibble(key: u32, high: bool) -> u32 {
    return (digit8(key) >> select(0u, 4u, high)) & 15u;
}

@compute @workgroup_size(128)
fn main(@builtin(local_invocation_id) lid: vec3<u32>) {
    let t = lid.x;
    let round = params.shift / RADIX8_BITS;
    if t == 0u {
        ticket = atomicAdd(&status[round], 1u);
    }
    let block = workgroupUniformLoad(&ticket);
    // A grid larger than the blocks (a 2D one) leaves its last tickets with no block.
    if block >= params.blocks {
        return;
    }
    let start = block * RADIX_BLOCK;
    let in_block = min(params.count - start, RADIX_BLOCK);
    let live = min(in_block - min(in_block, t * RADIX_ITEMS), RADIX_ITEMS);
    var keys: array<u32, 8>;
    var values: array<u32, 8>;
    for (var k = 0u; k < RADIX_ITEMS; k++) {
        if k < live {
            let i = start + t * RADIX_ITEMS + k;
            keys[k] = keys_in[i];
            values[k] = values_in[i];
        }
    }
    split(t, &keys, &values, live, false);
    for (var k = 0u; k < RADIX_ITEMS; k++) {
        if k < live {
            keys[k] = sorted_keys[t * RADIX_ITEMS + k];
            values[k] = sorted_values[t * RADIX_ITEMS + k];
        }
    }
    split(t, &keys, &values, live, true);

    // The block is sorted by digit: each digit's run, from its ends.
    for (var j = 0u; j < 2u; j++) {
        digit_start[t + j * RADIX_THREADS] = 0u;
        digit_slot[t + j * RADIX_THREADS] = 0u;
    }
    workgroupBarrier();
    for (var k = 0u; k < RADIX_ITEMS; k++) {
        let place = k * RADIX_THREADS + t;
        if place < in_block {
            let d = digit8(sorted_keys[place]);
            if place == 0u || digit8(sorted_keys[place - 1u]) != d {
                digit_start[d] = place;
            }
            if place + 1u == in_block || digit8(sorted_keys[place + 1u]) != d {
                digit_slot[d] = place + 1u;
            }
        }
    }
    workgroupBarrier();

    // Thread t walks back for digits t and t + 128, both published first, in this pass's
    // region of the status words; and clears them in the other region, which the pass
    // before used (it has ended) and the next one uses.
    let region = (round & 1u) * params.blocks * RADIX8_DIGITS;
    let other = ((round + 1u) & 1u) * params.blocks * RADIX8_DIGITS;
    let row = STATUS + region + t;
    for (var j = 0u; j < 2u; j++) {
        atomicStore(&status[STATUS + other + block * RADIX8_DIGITS + t + j * RADIX_THREADS], 0u);
    }
    var count: array<u32, 2>;
    for (var j = 0u; j < 2u; j++) {
        let d = t + j * RADIX_THREADS;
        count[j] = digit_slot[d] - digit_start[d];
        let flag = select(FLAG_COUNT, FLAG_PREFIX, block == 0u);
        atomicStore(&status[row + j * RADIX_THREADS + block * RADIX8_DIGITS], flag | count[j]);
    }
    // Both digits walk back together, each round reading both words before looking at
    // either, so that the two reads' round trips overlap. `k[j]`: the block digit j looks
    // at next is the one before it.
    var before = array<u32, 2>(0u, 0u);
    var k = array<u32, 2>(block, block);
    var open = array<bool, 2>(block != 0u, block != 0u);
    var spins = array<u32, 2>(0u, 0u);
    loop {
        if !open[0] && !open[1] {
            break;
        }
        var words = array<u32, 2>(0u, 0u);
        for (var j = 0u; j < 2u; j++) {
            if open[j] {
                let at = row + j * RADIX_THREADS + (k[j] - 1u) * RADIX8_DIGITS;
                words[j] = atomicLoad(&status[at]);
            }
        }
        for (var j = 0u; j < 2u; j++) {
            if !open[j] {
                continue;
            }
            let b = k[j] - 1u;
            if (words[j] & FLAGS) == 0u {
                // Not published yet: waited on for `params.patience` reads, then counted
                // here (decoupled fallback; see radix_lookback, also for the loop limit).
                if spins[j] < params.patience {
                    spins[j] += 1u;
                    continue;
                }
                before[j] += block_keys_of_digit(b, t + j * RADIX_THREADS);
                atomicAdd(&status[FALLBACKS], 1u);
                // Block 0's inclusive prefix is its count.
                open[j] = b != 0u;
            } else {
                before[j] += words[j] & VALUE_MASK;
                open[j] = (words[j] & FLAG_PREFIX) == 0u;
            }
            k[j] = b;
            spins[j] = 0u;
        }
    }
    for (var j = 0u; j < 2u; j++) {
        let d = t + j * RADIX_THREADS;
        if block != 0u {
            let at = row + j * RADIX_THREADS + block * RADIX8_DIGITS;
            atomicStore(&status[at], FLAG_PREFIX | (before[j] + count[j]));
        }
        digit_slot[d] = starts[round * RADIX8_DIGITS + d] + before[j] - digit_start[d];
    }
    workgroupBarrier();
    for (var k = 0u; k < RADIX_ITEMS; k++) {
        let place = k * RADIX_THREADS + t;
        if place < in_block {
            let key = sorted_keys[place];
            let slot = digit_slot[digit8(key)] + place;
            keys_out[slot] = key;
            values_out[slot] = sorted_values[place];
        }
    }
}

// The thread's `live` keys (in key order) stably sorted into `sorted_keys` and
// `sorted_values` by the low or high nibble of their digit, ranked as radix_block's
// `rank_block` ranks a 4-bit digit. Every thread calls it, in uniform control flow; it
// ends with a barrier.
fn split(
    t: u32,
    keys: ptr<function, array<u32, 8>>,
    values: ptr<function, array<u32, 8>>,
    live: u32,
    high: bool,
) {
    clear_column(t);
    for (var k = 0u; k < RADIX_ITEMS; k++) {
        if k < live {
            count_in_column(t, nibble((*keys)[k], high));
        }
    }
    scan_columns(t);
    workgroupBarrier();
    for (var k = 0u; k < RADIX_ITEMS; k++) {
        if k < live {
            let key = (*keys)[k];
            let place = take_place(t, nibble(key, high));
            sorted_keys[place] = key;
            sorted_values[place] = (*values)[k];
        }
    }
    workgroupBarrier();
}

// Block `b`'s keys of digit `d` in this pass, counted by one thread, four a round (a
// block before the last is whole).
fn block_keys_of_digit(b: u32, d: u32) -> u32 {
    let first = b * RADIX_BLOCK;
    var c = 0u;
    // Four keys written out, not a loop: a software adapter counts every round of every
    // loop against its limit.
    for (var i = first; i < first + RADIX_BLOCK; i += 4u) {
        c += u32(digit8(keys_in[i]) == d) + u32(digit8(keys_in[i + 1u]) == d);
        c += u32(digit8(keys_in[i + 2u]) == d) + u32(digit8(keys_in[i + 3u]) == d);
    }
    return c;
}
