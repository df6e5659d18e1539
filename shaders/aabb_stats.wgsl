// Broadphase setup, step 1: per-workgroup statistics of the boxes (center sums and sums
// of squares relative to body 0's center, sum of the largest side, bounds).
// CPU twin: passes::broadphase::setup_cpu.

#import bodies
#import dispatch
#import broadphase
#import stats_reduce

@group(0) @binding(0) var<uniform> params: CountParams;
@group(0) @binding(1) var<storage, read> aabbs: array<Aabb>;
@group(0) @binding(2) var<storage, read_write> partials: array<StatsPartial>;

@compute @workgroup_size(256)
fn main(
    @builtin(local_invocation_id) lid: vec3<u32>,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    let group = workgroup_index(wid, groups);
    let t = lid.x;
    var p = empty_stats();
    var reference = vec3<f32>(0.0);
    if params.count > 0u {
        reference = (aabbs[0].min + aabbs[0].max) * 0.5;
    }
    for (var k = 0u; k < 4u; k++) {
        let i = group * 1024u + k * 256u + t;
        if i < params.count {
            let b = aabbs[i];
            let c = (b.min + b.max) * 0.5 - reference;
            p.sum += c;
            p.sum_sq += c * c;
            p.lo = min(p.lo, b.min);
            p.hi = max(p.hi, b.max);
            let e = b.max - b.min;
            p.extent_sum += max(e.x, max(e.y, e.z));
            p.count += 1u;
        }
    }
    let total = reduce_stats(t, p);
    if t == 0u && group < params.groups {
        partials[group] = total;
    }
}
