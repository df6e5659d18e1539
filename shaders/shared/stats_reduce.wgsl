// Workgroup reduction of box statistics, shared by aabb_stats.wgsl and
// broadphase_setup.wgsl. Every thread of a 256-thread workgroup must call it.

#import broadphase

var<workgroup> s_sum: array<vec3<f32>, 256>;
var<workgroup> s_sq: array<vec3<f32>, 256>;
var<workgroup> s_lo: array<vec3<f32>, 256>;
var<workgroup> s_hi: array<vec3<f32>, 256>;
var<workgroup> s_ext: array<f32, 256>;
var<workgroup> s_n: array<u32, 256>;

fn empty_stats() -> StatsPartial {
    return StatsPartial(vec3<f32>(0.0), 0u, vec3<f32>(0.0), 0.0, vec3<f32>(3.0e38), 0u, vec3<f32>(-3.0e38), 0u);
}

// Combines thread t's statistics with the whole workgroup's; the result is the same in
// every thread.
fn reduce_stats(t: u32, p: StatsPartial) -> StatsPartial {
    s_sum[t] = p.sum;
    s_sq[t] = p.sum_sq;
    s_lo[t] = p.lo;
    s_hi[t] = p.hi;
    s_ext[t] = p.extent_sum;
    s_n[t] = p.count;
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
    return StatsPartial(s_sum[0], s_n[0], s_sq[0], s_ext[0], s_lo[0], 0u, s_hi[0], 0u);
}
