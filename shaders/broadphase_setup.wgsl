// Broadphase setup, step 2 (one workgroup): combine the partial statistics and derive
// the sort-and-sweep axis and the hash grid. Cell size rule: twice the mean of the
// boxes' largest sides (a typical box then covers at most 2 cells per axis), raised if
// needed so the grid has fewer than 2^30 cells. CPU twin: passes::broadphase::setup_cpu.

#import broadphase

@group(0) @binding(0) var<uniform> params: CountParams;
@group(0) @binding(1) var<storage, read> partials: array<StatsPartial>;
@group(0) @binding(2) var<storage, read_write> setup: BroadphaseSetup;

var<workgroup> s_sum: array<vec3<f32>, 256>;
var<workgroup> s_sq: array<vec3<f32>, 256>;
var<workgroup> s_lo: array<vec3<f32>, 256>;
var<workgroup> s_hi: array<vec3<f32>, 256>;
var<workgroup> s_ext: array<f32, 256>;
var<workgroup> s_n: array<u32, 256>;

@compute @workgroup_size(256)
fn main(@builtin(local_invocation_id) lid: vec3<u32>) {
    let t = lid.x;
    var sum = vec3<f32>(0.0);
    var sq = vec3<f32>(0.0);
    var lo = vec3<f32>(3.0e38);
    var hi = vec3<f32>(-3.0e38);
    var ext = 0.0;
    var n = 0u;
    for (var g = t; g < params.groups; g += 256u) {
        let p = partials[g];
        sum += p.sum;
        sq += p.sum_sq;
        lo = min(lo, p.lo);
        hi = max(hi, p.hi);
        ext += p.extent_sum;
        n += p.count;
    }
    s_sum[t] = sum;
    s_sq[t] = sq;
    s_lo[t] = lo;
    s_hi[t] = hi;
    s_ext[t] = ext;
    s_n[t] = n;
    workgroupBarrier();
    for (var stride = 128u; stride > 0u; stride >>= 1u) {
        if t < stride {
            s_sum[t] += s_sum[t + stride];
            s_sq[t] += s_sq[t + stride];
            s_lo[t] = min(s_lo[t], s_lo[t + stride]);
            s_hi[t] = max(s_hi[t], s_hi[t + stride]);
            s_ext[t] += s_ext[t + stride];
            s_n[t] += s_n[t + stride];
        }
        workgroupBarrier();
    }
    if t != 0u {
        return;
    }
    let count = max(f32(s_n[0]), 1.0);
    let mean = s_sum[0] / count;
    let variance = s_sq[0] / count - mean * mean;
    var axis = 0u;
    if variance.y > variance.x && variance.y >= variance.z {
        axis = 1u;
    } else if variance.z > variance.x && variance.z > variance.y {
        axis = 2u;
    }
    var grid_min = s_lo[0];
    var size = max(s_hi[0] - s_lo[0], vec3<f32>(0.0));
    if s_n[0] == 0u {
        grid_min = vec3<f32>(0.0);
        size = vec3<f32>(0.0);
    }
    let scale = max(max(abs(grid_min.x), abs(grid_min.y)), max(abs(grid_min.z), max(max(size.x, size.y), size.z)));
    var cell = max(2.0 * s_ext[0] / count, 1e-6 * scale);
    cell = max(cell, 1e-30);
    // At most 2^30 cells: grow the cell until the grid fits.
    let volume_cells = (size.x / cell + 1.0) * (size.y / cell + 1.0) * (size.z / cell + 1.0);
    if volume_cells > 1.0e9 {
        cell = cell * pow(volume_cells / 1.0e9, 1.0 / 3.0) * 1.01;
    }
    let dims = vec3<u32>(min(floor(size / cell) + 1.0, vec3<f32>(1024.0 * 1024.0)));
    setup = BroadphaseSetup(grid_min, axis, max(dims, vec3<u32>(1u)), cell);
}
