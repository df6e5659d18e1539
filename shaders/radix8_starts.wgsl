// Radix sort with 8-bit digits, step 2 (once a sort, one workgroup): each pass's digit
// totals (radix_histogram) scanned into the digits' first slots, in place: where the
// keys of each digit start after the lower digits'. CPU twin: passes::radix::sort_pairs_cpu.

#import radix_common
#import workgroup_scan

@group(0) @binding(0) var<uniform> params: RadixParams;
@group(0) @binding(1) var<storage, read_write> totals: array<u32>;

@compute @workgroup_size(256)
fn main(@builtin(local_invocation_id) lid: vec3<u32>) {
    let t = lid.x;
    for (var p = 0u; p < params.passes; p++) {
        let total = totals[p * RADIX8_DIGITS + t];
        let inclusive = workgroup_inclusive_scan(t, total);
        totals[p * RADIX8_DIGITS + t] = inclusive - total;
        workgroupBarrier();
    }
}
