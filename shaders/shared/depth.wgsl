// The sampled penetration-depth estimate's shared parts. For convex A and B,
// s(d) = h_A(d) + h_B(-d) is the overlap of their projections on the unit direction d;
// the estimate is the least s over a fixed set of directions. Rust twin:
// src/passes/depth.rs, which follows these functions operation by operation.
// The importing shader declares `normals: array<vec4<f32>>` (every shape's face normals).

// A shape's vertices and outward face normals in the shared tables.
struct DepthShape {
    vertex_offset: u32,
    vertex_count: u32,
    normal_offset: u32,
    normal_count: u32,
}

struct DepthParams {
    // Pairs to estimate.
    pairs: u32,
    // Cube-map resolution: 6 k^2 directions.
    k: u32,
    // Directions per work item.
    chunk: u32,
    // Work items per pair (the same for every pair).
    chunks_per_pair: u32,
    // sin(theta / 2), theta the largest angle from any unit direction to the cube map's
    // nearest sample.
    sin_half_theta: f32,
    // Relative rounding allowance (see DepthEstimate.slack).
    slack_rel: f32,
    // Partials a pair keeps: one per workgroup its work items meet (see pair_slots).
    slots_per_pair: u32,
    _pad0: u32,
}

// The workgroups pair p's work items meet: its items are p * chunks_per_pair onward, 64 to
// a workgroup, and each workgroup leaves one partial for each pair it serves.
fn pair_slots(p: u32, chunks_per_pair: u32) -> vec2<u32> {
    let first = p * chunks_per_pair;
    let group = first / 64u;
    return vec2<u32>(group, (first + chunks_per_pair - 1u) / 64u - group + 1u);
}

// The least s over some work items of a pair (one item's, or a workgroup's items of that
// pair): the value, the direction's index, and the supporting vertices (indices within
// each shape). An empty item has s = +inf and direction NO_DIRECTION.
struct DepthPartial {
    s: f32,
    direction: u32,
    witness_a: u32,
    witness_b: u32,
}

struct DepthEstimate {
    // The direction of least s, from A to B (moving B by depth * normal separates them).
    normal: vec3<f32>,
    // The least s sampled. The exact depth lies in [depth - bound - slack, depth + slack].
    depth: f32,
    // 2 R sin(theta / 2): how far the sampled least can exceed the true least.
    bound: f32,
    // The f32 rounding allowance: slack_rel * (reach_a + reach_b + |p_a - p_b|).
    slack: f32,
    witness_a: u32,
    witness_b: u32,
    // 1 when depth < -slack: some direction separates the bodies, certified.
    separated: u32,
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
}

const NO_DIRECTION: u32 = 0xffffffffu;

// Unit direction `index` of 6 k^2 cube-map cell centres: face f = index / k^2 is the axis
// f / 2 with sign + for even f, the cell (i, j) its k x k grid.
fn cube_direction(index: u32, k: u32) -> vec3<f32> {
    let per_face = k * k;
    let face = index / per_face;
    let cell = index % per_face;
    let kf = f32(k);
    let u = (2.0 * f32(cell % k) + 1.0) / kf - 1.0;
    let v = (2.0 * f32(cell / k) + 1.0) / kf - 1.0;
    let sign = select(1.0, -1.0, (face & 1u) == 1u);
    let axis = face / 2u;
    var d = vec3<f32>(u, v, sign);
    if axis == 0u {
        d = vec3<f32>(sign, u, v);
    } else if axis == 1u {
        d = vec3<f32>(u, sign, v);
    }
    return d * inverseSqrt(dot(d, d));
}

// A unit quaternion's rotation matrix (the quaternion normalised first).
fn rotation_of(q: vec4<f32>) -> mat3x3<f32> {
    return quat_to_mat3(q * inverseSqrt(dot(q, q)));
}

// A pair's direction `index`: the 6 k^2 cube-map directions, then A's face normals, then
// B's negated face normals, in world space (ra, rb: the bodies' rotations).
fn direction_of(
    index: u32,
    k: u32,
    sa: DepthShape,
    sb: DepthShape,
    ra: mat3x3<f32>,
    rb: mat3x3<f32>,
) -> vec3<f32> {
    let cube = 6u * k * k;
    if index < cube {
        return cube_direction(index, k);
    }
    if index < cube + sa.normal_count {
        return ra * normals[sa.normal_offset + index - cube].xyz;
    }
    return -(rb * normals[sb.normal_offset + index - cube - sa.normal_count].xyz);
}
