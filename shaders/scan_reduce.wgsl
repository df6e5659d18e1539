// Prefix scan, step 1 of 3 (reduce-then-scan; WGSL promises no forward progress between
// workgroups, so no decoupled look-back): each workgroup sums its chunk of SCAN_CHUNK
// values into partials[group]. CPU twin: passes::scan::exclusive_scan_cpu.

#import dispatch
#import scan_common

@group(0) @binding(0) var<uniform> params: ScanParams;
@group(0) @binding(1) var<storage, read> data: array<u32>;
@group(0) @binding(2) var<storage, read_write> partials: array<u32>;

var<workgroup> sums: array<u32, 256>;

@compute @workgroup_size(256)
fn main(
    @builtin(local_invocation_id) lid: vec3<u32>,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    let group = workgroup_index(wid, groups);
    let base = group * SCAN_CHUNK + lid.x * SCAN_ITEMS;
    var s = 0u;
    for (var k = 0u; k < SCAN_ITEMS; k++) {
        let i = base + k;
        if i < params.count {
            s += data[params.offset + i];
        }
    }
    sums[lid.x] = s;
    workgroupBarrier();
    for (var stride = 128u; stride > 0u; stride >>= 1u) {
        if lid.x < stride {
            sums[lid.x] += sums[lid.x + stride];
        }
        workgroupBarrier();
    }
    if lid.x == 0u && group < params.groups {
        partials[group] = sums[0];
    }
}
