// Broadphase setup, step 1: per-workgroup statistics of the boxes (center sums and sums
// of squares relative to body 0's center, sum of the largest side, bounds).
// CPU twin: passes::broadphase::setup_cpu.

#import bodies
#import broadphase

@group(0) @binding(0) var<uniform> params: CountParams;
@group(0) @binding(1) var<storage, read> aabbs: array<Aabb>;
@group(0) @binding(2) var<storage, read_write> partials: array<StatsPartial>;

var<workgroup> s_sum: array<vec3<f32>, 256>;
var<workgroup> s_sq: array<vec3<f32>, 256>;
var<workgroup> s_lo: array<vec3<f32>, 256>;
var<workgroup> s_hi: array<vec3<f32>, 256>;
var<workgroup> s_ext: array<f32, 256>;
var<workgroup> s_n: array<u32, 256>;

@compute @workgroup_size(256)
fn main(
    @builtin(local_invocation_id) lid: vec3<u32>,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    let group = wid.x + wid.y * groups.x;
    let t = lid.x;
    var sum = vec3<f32>(0.0);
    var sq = vec3<f32>(0.0);
    var lo = vec3<f32>(3.0e38);
    var hi = vec3<f32>(-3.0e38);
    var ext = 0.0;
    var n = 0u;
    var reference = vec3<f32>(0.0);
    if params.count > 0u {
        reference = (aabbs[0].min + aabbs[0].max) * 0.5;
    }
    for (var k = 0u; k < 4u; k++) {
        let i = group * 1024u + k * 256u + t;
        if i < params.count {
            let b = aabbs[i];
            let c = (b.min + b.max) * 0.5 - reference;
            sum += c;
            sq += c * c;
            lo = min(lo, b.min);
            hi = max(hi, b.max);
            let e = b.max - b.min;
            ext += max(e.x, max(e.y, e.z));
            n += 1u;
        }
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
    if t == 0u && group < params.groups {
        partials[group] = StatsPartial(s_sum[0], s_n[0], s_sq[0], s_ext[0], s_lo[0], 0u, s_hi[0], 0u);
    }
}
