// Prefix scan, step 3 of 3 (step 2 scans the partials, recursively): each workgroup
// scans its chunk exclusively in place and adds the scanned partial of its chunk. With
// params.use_offsets == 0 (a single chunk) there are no partials; then the total of the
// whole scan is written to total[0]. CPU twin: passes::scan::exclusive_scan_cpu.

#import dispatch
#import scan_common
#import workgroup_scan

@group(0) @binding(0) var<uniform> params: ScanParams;
@group(0) @binding(1) var<storage, read_write> data: array<u32>;
@group(0) @binding(2) var<storage, read> offsets: array<u32>;
@group(0) @binding(3) var<storage, read_write> total: array<u32>;

@compute @workgroup_size(256)
fn main(
    @builtin(local_invocation_id) lid: vec3<u32>,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    let group = workgroup_index(wid, groups);
    let base = group * SCAN_CHUNK + lid.x * SCAN_ITEMS;
    var items: array<u32, SCAN_ITEMS>;
    var s = 0u;
    for (var k = 0u; k < SCAN_ITEMS; k++) {
        let i = base + k;
        var v = 0u;
        if i < params.count {
            v = data[params.offset + i];
        }
        items[k] = s;
        s += v;
    }
    let inclusive = workgroup_inclusive_scan(lid.x, s);
    var prefix = inclusive - s;
    if params.use_offsets != 0u && group < params.groups {
        prefix += offsets[group];
    }
    for (var k = 0u; k < SCAN_ITEMS; k++) {
        let i = base + k;
        if i < params.count {
            data[params.offset + i] = prefix + items[k];
        }
    }
    if params.use_offsets == 0u && group == 0u && lid.x == 255u {
        total[0] = inclusive;
    }
}
