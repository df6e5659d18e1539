// An inclusive prefix sum over a workgroup of 256 threads, one u32 a thread (Hillis–
// Steele), through `scan_sums`: shared by the scan and the radix sort's spine. Every
// thread calls it, in uniform control flow; afterwards `scan_sums[255]` holds the
// workgroup's total until the next call writes it.

var<workgroup> scan_sums: array<u32, 256>;

fn workgroup_inclusive_scan(lid: u32, value: u32) -> u32 {
    scan_sums[lid] = value;
    workgroupBarrier();
    for (var stride = 1u; stride < 256u; stride <<= 1u) {
        var add = 0u;
        if lid >= stride {
            add = scan_sums[lid - stride];
        }
        workgroupBarrier();
        scan_sums[lid] += add;
        workgroupBarrier();
    }
    return scan_sums[lid];
}
