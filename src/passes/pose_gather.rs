//! Pose gather: the body table from a renderer's own instance buffer, on the GPU, so a
//! renderer that keeps its instance transforms in a wgpu buffer hands proxima the buffer
//! instead of the poses (`shaders/pose_gather.wgsl`; CPU twin [`gather_cpu`]).
//!
//! The layout is checked before anything runs ([`PoseLayout::check`]): a stride and
//! offsets that are whole 32-bit words, a position (3 × f32) and a rotation (4 × f32,
//! x y z w) inside the stride, a buffer large enough for every body and usable as a
//! storage buffer. A wrong buffer is a named error, never a wrong read.

use crate::bodies::GpuBody;
use crate::gpu::shaders::ShaderId;
use crate::gpu::sizes::{BODY_WORKGROUP_SIZE, DEFAULT_MAX_GROUPS_X, dispatch_grid};
use crate::graph::{BufferProxy, Recording};
use crate::{Error, Result, wgsl_twin};

wgsl_twin! {
    /// Twin of `GatherParams` in `shaders/pose_gather.wgsl`.
    pub struct GpuGatherParams as "GatherParams" {
        /// Number of bodies.
        pub body_count: u32,
        /// Instance stride in 32-bit words.
        pub stride_words: u32,
        /// Word offset of the position (3 × f32) in an instance.
        pub position_word: u32,
        /// Word offset of the rotation (4 × f32, x y z w) in an instance.
        pub rotation_word: u32,
    }
}

/// Where a body's pose lies in a renderer's instance: byte stride and offsets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PoseLayout {
    /// Bytes from one instance to the next.
    pub stride: u32,
    /// Byte offset of the position: three f32.
    pub position: u32,
    /// Byte offset of the rotation: a unit quaternion, four f32 (x, y, z, w).
    pub rotation: u32,
}

impl PoseLayout {
    /// Instances of a position then a quaternion, nothing else (28 bytes).
    pub const POSITION_ROTATION: PoseLayout = PoseLayout {
        stride: 28,
        position: 0,
        rotation: 12,
    };

    /// Checks the layout against a buffer of `size` bytes with `usage` for `bodies`
    /// instances.
    pub fn check(&self, size: u64, usage: wgpu::BufferUsages, bodies: usize) -> Result<()> {
        let bad = |what: String| Err(Error::Usage(format!("pose buffer: {what}")));
        if !usage.contains(wgpu::BufferUsages::STORAGE) {
            return bad(format!(
                "its usage {usage:?} lacks STORAGE, which the pose gather pass reads it as"
            ));
        }
        if self.stride == 0
            || !self.stride.is_multiple_of(4)
            || !self.position.is_multiple_of(4)
            || !self.rotation.is_multiple_of(4)
        {
            return bad(format!(
                "stride {} and offsets {} (position), {} (rotation) must be whole 4-byte words, the stride non-zero",
                self.stride, self.position, self.rotation
            ));
        }
        if self.position + 12 > self.stride || self.rotation + 16 > self.stride {
            return bad(format!(
                "a position at byte {} (12 bytes) and a rotation at byte {} (16 bytes) must fit in the {}-byte stride",
                self.position, self.rotation, self.stride
            ));
        }
        let overlap = self.position < self.rotation + 16 && self.rotation < self.position + 12;
        if overlap {
            return bad(format!(
                "the position (bytes {}..{}) and the rotation (bytes {}..{}) overlap",
                self.position,
                self.position + 12,
                self.rotation,
                self.rotation + 16
            ));
        }
        let need = bodies as u64 * u64::from(self.stride);
        if size < need {
            return bad(format!(
                "{size} bytes hold fewer than the {bodies} instances of {} bytes the world has ({need} bytes)",
                self.stride
            ));
        }
        Ok(())
    }

    /// The shader's parameters for `bodies` instances.
    pub fn params(&self, bodies: usize) -> GpuGatherParams {
        GpuGatherParams {
            body_count: bodies as u32,
            stride_words: self.stride / 4,
            position_word: self.position / 4,
            rotation_word: self.rotation / 4,
        }
    }
}

/// Records the gather: `instances` (the renderer's buffer) and `shape_of` (one u32 per
/// body) into a new body table, returned.
pub fn record_pose_gather(
    rec: &mut Recording,
    instances: BufferProxy,
    shape_of: BufferProxy,
    params: GpuGatherParams,
) -> BufferProxy {
    let params_buf = rec.buffer(size_of::<GpuGatherParams>() as u64, "gather params");
    rec.upload(params_buf, &[params]);
    let bodies = rec.array_buffer::<GpuBody>(params.body_count as usize, "bodies");
    let grid = dispatch_grid(params.body_count, BODY_WORKGROUP_SIZE, DEFAULT_MAX_GROUPS_X);
    rec.dispatch(
        ShaderId::PoseGather,
        grid,
        &[params_buf, instances, shape_of, bodies],
    );
    rec.free(params_buf);
    bodies
}

/// CPU twin of `pose_gather.wgsl`: the body table from the instance words.
pub fn gather_cpu(words: &[u32], shape_of: &[u32], params: GpuGatherParams) -> Vec<GpuBody> {
    let f = |k: u32| f32::from_bits(words[k as usize]);
    (0..params.body_count)
        .map(|i| {
            let base = i * params.stride_words;
            let (p, r) = (base + params.position_word, base + params.rotation_word);
            GpuBody {
                position: [f(p), f(p + 1), f(p + 2)],
                shape: shape_of[i as usize],
                rotation: [f(r), f(r + 1), f(r + 2), f(r + 3)],
            }
        })
        .collect()
}
