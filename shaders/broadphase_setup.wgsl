// Broadphase setup, step 2 (one workgroup): combine the partial statistics and derive
// the sort-and-sweep axis and the hash grid. Cell size rule: twice the mean of the
// boxes' largest sides (a typical box then covers at most 2 cells per axis), raised if
// needed so the grid has fewer than 2^30 cells. CPU twin: passes::broadphase::setup_cpu.

#import broadphase
#import stats_reduce

@group(0) @binding(0) var<uniform> params: CountParams;
@group(0) @binding(1) var<storage, read> partials: array<StatsPartial>;
@group(0) @binding(2) var<storage, read_write> setup: BroadphaseSetup;

@compute @workgroup_size(256)
fn main(@builtin(local_invocation_id) lid: vec3<u32>) {
    let t = lid.x;
    var p = empty_stats();
    for (var g = t; g < params.groups; g += 256u) {
        let q = partials[g];
        p.sum += q.sum;
        p.sum_sq += q.sum_sq;
        p.lo = min(p.lo, q.lo);
        p.hi = max(p.hi, q.hi);
        p.extent_sum += q.extent_sum;
        p.count += q.count;
    }
    let total = reduce_stats(t, p);
    if t != 0u {
        return;
    }
    let count = max(f32(total.count), 1.0);
    let mean = total.sum / count;
    let variance = total.sum_sq / count - mean * mean;
    var axis = 0u;
    if variance.y > variance.x && variance.y >= variance.z {
        axis = 1u;
    } else if variance.z > variance.x && variance.z > variance.y {
        axis = 2u;
    }
    var grid_min = total.lo;
    var size = max(total.hi - total.lo, vec3<f32>(0.0));
    if total.count == 0u {
        grid_min = vec3<f32>(0.0);
        size = vec3<f32>(0.0);
    }
    let scale = max(max(abs(grid_min.x), abs(grid_min.y)), max(abs(grid_min.z), max(max(size.x, size.y), size.z)));
    var cell = max(2.0 * total.extent_sum / count, 1e-6 * scale);
    cell = max(cell, 1e-30);
    // At most 2^30 cells: grow the cell until the grid fits.
    let volume_cells = (size.x / cell + 1.0) * (size.y / cell + 1.0) * (size.z / cell + 1.0);
    if volume_cells > 1.0e9 {
        cell = cell * pow(volume_cells / 1.0e9, 1.0 / 3.0) * 1.01;
    }
    let dims = vec3<u32>(min(floor(size / cell) + 1.0, vec3<f32>(1024.0 * 1024.0)));
    setup = BroadphaseSetup(grid_min, axis, max(dims, vec3<u32>(1u)), cell);
}
