// Pose gather: the body table from a renderer's own instance buffer, on the GPU (no CPU
// upload of poses). Each instance is `stride_words` 32-bit words; its position is three
// f32 at word `position_word`, its rotation a unit quaternion (x, y, z, w) of four f32 at
// `rotation_word`. Shape indices come from the world.
// CPU twin: src/passes/pose_gather.rs (gather_cpu).

#import bodies
#import dispatch

struct GatherParams {
    body_count: u32,
    stride_words: u32,
    position_word: u32,
    rotation_word: u32,
}

const WORKGROUP_SIZE: u32 = 256u;

@group(0) @binding(0) var<uniform> params: GatherParams;
@group(0) @binding(1) var<storage, read> instances: array<u32>;
@group(0) @binding(2) var<storage, read> shape_of: array<u32>;
@group(0) @binding(3) var<storage, read_write> bodies: array<Body>;

fn word(k: u32) -> f32 {
    return bitcast<f32>(instances[k]);
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
    bodies[i] = Body(
        vec3<f32>(word(p), word(p + 1u), word(p + 2u)),
        shape_of[i],
        vec4<f32>(word(r), word(r + 1u), word(r + 2u), word(r + 3u)),
    );
}
