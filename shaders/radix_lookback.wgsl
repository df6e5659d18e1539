// Radix sort by decoupled look-back (Merrill and Garland 2016; Adinets and Merrill 2022),
// one dispatch a pass: each block takes the next ticket (blocks are numbered in the order
// they start, so a block mostly waits on blocks already running), counts its keys by
// digit and publishes the counts, then walks back over the blocks before it, adding their
// published counts, until one that has published its inclusive prefix: that is where its
// own keys of each digit start after the lower digits' (radix_histogram's totals). It
// publishes its own prefix and writes its keys as the spine's scatter does (radix_block).
// Where the three-dispatch pass (count, spine, scatter) reads the keys three times and
// waits twice for the whole device, this reads them twice and waits only on the blocks
// before it. A status word is a flag (2 bits: none yet, the block's own count, its
// inclusive prefix) over a 30-bit count, in one atomic so that flag and count are seen
// together; passes::radix records this only for fewer than 2^30 keys. A block that has
// not published in time is counted by the block waiting on it (see the look-back below), so
// no device's scheduling can make the sort hang.
// CPU twin: passes::radix::sort_pairs_cpu.

#import radix_block
#import dispatch

@group(0) @binding(0) var<uniform> params: RadixParams;
@group(0) @binding(1) var<storage, read> keys_in: array<u32>;
@group(0) @binding(2) var<storage, read> values_in: array<u32>;
@group(0) @binding(3) var<storage, read> totals: array<u32>;
// Each pass's ticket counter, the fallbacks' count, then per pass, per block, per digit,
// a status word (radix_common's STATUS). Cleared before the sort.
@group(0) @binding(4) var<storage, read_write> status: array<atomic<u32>>;
@group(0) @binding(5) var<storage, read_write> keys_out: array<u32>;
@group(0) @binding(6) var<storage, read_write> values_out: array<u32>;

var<workgroup> ticket: u32;

@compute @workgroup_size(128)
fn main(@builtin(local_invocation_id) lid: vec3<u32>) {
    let t = lid.x;
    let round = params.shift / RADIX_BITS;
    if t == 0u {
        ticket = atomicAdd(&status[round], 1u);
    }
    let block = workgroupUniformLoad(&ticket);
    // A grid larger than the blocks (a 2D one) leaves its last tickets with no block.
    if block >= params.blocks {
        return;
    }
    rank_block(t, block);
    if t < RADIX_DIGITS {
        let count = block_digit_count(t);
        let row = STATUS + (round * params.blocks) * RADIX_DIGITS + t;
        var before = 0u;
        if block == 0u {
            atomicStore(&status[row], FLAG_PREFIX | count);
        } else {
            atomicStore(&status[row + block * RADIX_DIGITS], FLAG_COUNT | count);
            var k = block - 1u;
            var spins = 0u;
            loop {
                let word = atomicLoad(&status[row + k * RADIX_DIGITS]);
                if (word & FLAGS) == 0u {
                    // Not published yet: that block mostly is running (it took its ticket
                    // first), and is waited on for `params.patience` reads. Past them this
                    // thread counts that block's keys of its digit itself (decoupled
                    // fallback, Smith, Levien and Owens 2025) and looks further back: no
                    // block waits on another without end, so the sort needs no promise
                    // that a running workgroup keeps running. Nor can a wait pass a
                    // software adapter's loop limit (llvmpipe ends an invocation's loops
                    // after 65535 iterations in all, and a look-back that waited without
                    // end sorted a million keys wrong in 6 of 34 sorts there): a block
                    // waits on at most the blocks running beside it, `params.patience`
                    // reads and one count of 256 rounds each.
                    if spins < params.patience {
                        spins += 1u;
                        continue;
                    }
                    before += block_keys_of_digit(k, t);
                    atomicAdd(&status[FALLBACKS], 1u);
                    // Block 0's inclusive prefix is its count.
                    if k == 0u {
                        break;
                    }
                } else {
                    before += word & VALUE_MASK;
                    if (word & FLAG_PREFIX) != 0u {
                        break;
                    }
                }
                k -= 1u;
                spins = 0u;
            }
            atomicStore(&status[row + block * RADIX_DIGITS], FLAG_PREFIX | (before + count));
        }
        var first = 0u;
        for (var d = 0u; d < t; d++) {
            first += totals[round * RADIX_DIGITS + d];
        }
        digit_base[t] = first + before - local_start[t];
    }
    workgroupBarrier();
    sort_block(t, block, true);
}

// Block `b`'s keys of digit `d` in this pass, counted by one thread, four a round (a
// block before the last is whole).
fn block_keys_of_digit(b: u32, d: u32) -> u32 {
    let first = b * RADIX_BLOCK;
    var c = 0u;
    // Four keys written out, not a loop: a software adapter counts every round of every
    // loop against its limit.
    let s = params.shift;
    for (var i = first; i < first + RADIX_BLOCK; i += 4u) {
        c += u32(digit_of(keys_in[i], s) == d) + u32(digit_of(keys_in[i + 1u], s) == d);
        c += u32(digit_of(keys_in[i + 2u], s) == d) + u32(digit_of(keys_in[i + 3u], s) == d);
    }
    return c;
}
