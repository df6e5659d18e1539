// Pose gather: the body table from a renderer's own instance buffer, on the GPU (no CPU
// upload of poses). Each instance is `stride_words` 32-bit words; its position is three
// f32 at word `position_word`. Its rotation is either a unit quaternion (x, y, z, w) of
// four f32 at `rotation_word`, or (`matrix` = 1) a rotation matrix's three columns of
// three f32 at `rotation_word`, +4 and +8 (the upper-left 3×3 of a column-major 4×4 model
// matrix), turned into a quaternion here (Shepperd's method, the largest of w, x, y, z
// from the diagonal). A matrix whose columns are not orthonormal within
// RIGID_TOLERANCE or that reflects (scale, shear, mirror: not a rigid pose) is reported in
// `status` by instance, and its body gets the zero quaternion. Shape indices come from
// the world.
// CPU twin: src/passes/pose_gather.rs (gather_cpu).

#import bodies
#import dispatch
#import numeric
#import status

struct GatherParams {
    body_count: u32,
    stride_words: u32,
    position_word: u32,
    rotation_word: u32,
    matrix: u32,
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
}

// Largest |c_i·c_j − δ_ij| of a rigid rotation's columns. Twin: pose_gather::RIGID_TOLERANCE.
const RIGID_TOLERANCE: f32 = 1e-4;
// Error kind. Twin: pose_gather::ERROR_NOT_RIGID.
const ERROR_NOT_RIGID: u32 = 1u;

const WORKGROUP_SIZE: u32 = 256u;

@group(0) @binding(0) var<uniform> params: GatherParams;
@group(0) @binding(1) var<storage, read> instances: array<u32>;
@group(0) @binding(2) var<storage, read> shape_of: array<u32>;
@group(0) @binding(3) var<storage, read_write> bodies: array<Body>;
@group(0) @binding(4) var<storage, read_write> status: PassStatus;

fn word(k: u32) -> f32 {
    return bitcast<f32>(instances[k]);
}

fn column(k: u32) -> vec3<f32> {
    return vec3<f32>(word(k), word(k + 1u), word(k + 2u));
}

// The unit quaternion (x, y, z, w) of a rotation matrix's columns (m[c][r]: row r of
// column c); the zero quaternion when they are not a rotation. Non-finite entries pass
// through to the bounds pass, which names them.
fn matrix_quaternion(m: mat3x3<f32>) -> vec4<f32> {
    let finite = all_finite3(m[0]) && all_finite3(m[1]) && all_finite3(m[2]);
    let g = transpose(m) * m;
    let off = max(abs(g[0][1]), max(abs(g[0][2]), abs(g[1][2])));
    let diag = max(abs(g[0][0] - 1.0), max(abs(g[1][1] - 1.0), abs(g[2][2] - 1.0)));
    let det = dot(m[0], cross(m[1], m[2]));
    if finite && (max(off, diag) > RIGID_TOLERANCE || det <= 0.0) {
        return vec4<f32>(0.0);
    }
    let tr = m[0][0] + m[1][1] + m[2][2];
    var q: vec4<f32>;
    if tr > 0.0 {
        let s = sqrt(tr + 1.0) * 2.0;
        q = vec4<f32>((m[1][2] - m[2][1]) / s, (m[2][0] - m[0][2]) / s, (m[0][1] - m[1][0]) / s, 0.25 * s);
    } else if m[0][0] > m[1][1] && m[0][0] > m[2][2] {
        let s = sqrt(1.0 + m[0][0] - m[1][1] - m[2][2]) * 2.0;
        q = vec4<f32>(0.25 * s, (m[1][0] + m[0][1]) / s, (m[2][0] + m[0][2]) / s, (m[1][2] - m[2][1]) / s);
    } else if m[1][1] > m[2][2] {
        let s = sqrt(1.0 + m[1][1] - m[0][0] - m[2][2]) * 2.0;
        q = vec4<f32>((m[1][0] + m[0][1]) / s, 0.25 * s, (m[2][1] + m[1][2]) / s, (m[2][0] - m[0][2]) / s);
    } else {
        let s = sqrt(1.0 + m[2][2] - m[0][0] - m[1][1]) * 2.0;
        q = vec4<f32>((m[2][0] + m[0][2]) / s, (m[2][1] + m[1][2]) / s, 0.25 * s, (m[0][1] - m[1][0]) / s);
    }
    return q / sqrt(dot(q, q));
}

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let i = linear_index(gid, groups, WORKGROUP_SIZE);
    if i >= params.body_count {
        return;
    }
    let base = i * params.stride_words;
    let p = base + params.position_word;
    let r = base + params.rotation_word;
    var q = vec4<f32>(word(r), word(r + 1u), word(r + 2u), word(r + 3u));
    if params.matrix != 0u {
        q = matrix_quaternion(mat3x3<f32>(column(r), column(r + 4u), column(r + 8u)));
        if all(q == vec4<f32>(0.0)) {
            atomicAdd(&status.error_count, 1u);
            atomicMin(&status.first_error, i);
            atomicOr(&status.error_kinds, ERROR_NOT_RIGID);
        }
    }
    bodies[i] = Body(column(p), shape_of[i], q);
}
