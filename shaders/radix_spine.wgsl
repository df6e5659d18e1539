// Radix sort, step 2 per pass: one workgroup per digit scans that digit's row of block
// counts (counts[digit · blocks + block], from radix_count) exclusively and in place,
// starting from the digit's first output slot: the sum of the lower digits' totals, which
// radix_count added up in totals[pass · 16 + digit]. Afterwards counts[digit · blocks +
// block] is the first slot of the block's keys of that digit. One dispatch where a scan of
// all the counts would take three. CPU twin: passes::radix::sort_pairs_cpu.

#import radix_common
#import workgroup_scan

@group(0) @binding(0) var<uniform> params: RadixParams;
@group(0) @binding(1) var<storage, read> totals: array<u32>;
@group(0) @binding(2) var<storage, read_write> counts: array<u32>;

const SPINE_THREADS: u32 = 256u; // workgroup_scan's
const SPINE_ITEMS: u32 = 16u;

@compute @workgroup_size(256)
fn main(
    @builtin(local_invocation_id) lid: vec3<u32>,
    @builtin(workgroup_id) wid: vec3<u32>,
) {
    let digit = wid.x;
    let first_total = (params.shift / RADIX_BITS) * RADIX_DIGITS;
    var carry = 0u;
    for (var d = 0u; d < digit; d++) {
        carry += totals[first_total + d];
    }
    let row = digit * params.blocks;
    for (var start = 0u; start < params.blocks; start += SPINE_THREADS * SPINE_ITEMS) {
        let base = start + lid.x * SPINE_ITEMS;
        var items: array<u32, SPINE_ITEMS>;
        var s = 0u;
        for (var k = 0u; k < SPINE_ITEMS; k++) {
            let i = base + k;
            var v = 0u;
            if i < params.blocks {
                v = counts[row + i];
            }
            items[k] = s;
            s += v;
        }
        let prefix = carry + workgroup_inclusive_scan(lid.x, s) - s;
        for (var k = 0u; k < SPINE_ITEMS; k++) {
            let i = base + k;
            if i < params.blocks {
                counts[row + i] = prefix + items[k];
            }
        }
        carry += scan_sums[SPINE_THREADS - 1u];
        // Every thread has read the chunk's total before the next chunk writes it.
        workgroupBarrier();
    }
}
