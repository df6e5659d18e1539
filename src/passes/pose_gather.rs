//! Pose gather: the body table from a renderer's own instance buffer, on the GPU, so a
//! renderer that keeps its instance transforms in a wgpu buffer hands proxima the buffer
//! instead of the poses (`shaders/pose_gather.wgsl`; CPU twin [`gather_cpu`]).
//!
//! The rotation is a quaternion, or a rotation matrix's columns (a model matrix's
//! upper-left 3×3: [`PoseLayout::model_matrix`]), turned into a quaternion on the GPU; a
//! matrix that is not a rotation (scale, shear, a mirror) is reported by instance
//! ([`check_status`]): proxima's bodies are rigid.
//!
//! The gather is the read of the renderer's buffer: the passes after it (bounds, depth
//! estimate, particle contacts) and the exact stage's readback take the compact body
//! table it writes (32 bytes a body, read back for the CPU stages), not the renderer's
//! wider instances with their stride, so each reads the poses once at 32 bytes.
//!
//! The layout is checked before anything runs ([`PoseLayout::check`]): a stride and
//! offsets that are whole 32-bit words, a position (3 × f32) and a rotation (4 × f32,
//! x y z w, or 3 columns of 4 × f32 whose last is unread) inside the stride, a buffer
//! large enough for every body and usable as a storage buffer. A wrong buffer is a named
//! error, never a wrong read.

use glam::{Mat3, Quat, Vec3};

use crate::bodies::GpuBody;
use crate::gpu::sizes::{BODY_WORKGROUP_SIZE, DEFAULT_MAX_GROUPS_X, dispatch_grid};
use crate::graph::{BufferProxy, Recording};
use crate::passes::status::GpuPassStatus;
use crate::shaders::ShaderId;
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
        /// Word offset of the rotation (4 × f32, x y z w; or the first of three
        /// columns, 4 words apart) in an instance.
        pub rotation_word: u32,
        /// 1: the rotation is a matrix's columns.
        pub matrix: u32,
        /// Padding.
        pub _pad0: u32,
        /// Padding.
        pub _pad1: u32,
        /// Padding.
        pub _pad2: u32,
    }
}

/// Largest |c_i·c_j − δ_ij| of a rotation matrix's columns (twin of `RIGID_TOLERANCE`):
/// f32 matrices composed from many rotations stay well inside it, any scale or shear a
/// renderer applies is far outside.
pub const RIGID_TOLERANCE: f32 = 1e-4;

/// Error kind: a matrix that is not a rotation (twin of `ERROR_NOT_RIGID`).
pub const ERROR_NOT_RIGID: u32 = 1;

/// How an instance holds its rotation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RotationForm {
    /// A unit quaternion: four f32, x y z w.
    Quaternion,
    /// A rotation matrix: three columns of three f32, each column 16 bytes from the
    /// last (a column-major 4×4's or 3×4's upper-left 3×3, as glam's `Mat4` and WGSL's
    /// `mat4x4<f32>` lay it out).
    Matrix,
}

impl RotationForm {
    /// Bytes the rotation spans from its offset.
    fn span(self) -> u32 {
        match self {
            RotationForm::Quaternion => 16,
            RotationForm::Matrix => 44,
        }
    }
}

/// Where a body's pose lies in a renderer's instance: byte stride and offsets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PoseLayout {
    /// Bytes from one instance to the next.
    pub stride: u32,
    /// Byte offset of the position: three f32.
    pub position: u32,
    /// Byte offset of the rotation.
    pub rotation: u32,
    /// What the rotation is: a quaternion or a matrix's columns.
    pub form: RotationForm,
}

impl PoseLayout {
    /// Instances of a position then a quaternion, nothing else (28 bytes).
    pub const POSITION_ROTATION: PoseLayout = PoseLayout {
        stride: 28,
        position: 0,
        rotation: 12,
        form: RotationForm::Quaternion,
    };

    /// Instances of `stride` bytes holding a column-major 4×4 model matrix (16 f32, a
    /// rigid transform: rotation columns, then the translation) at byte `offset`.
    pub const fn model_matrix(stride: u32, offset: u32) -> PoseLayout {
        PoseLayout {
            stride,
            position: offset + 48,
            rotation: offset,
            form: RotationForm::Matrix,
        }
    }

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
        let span = self.form.span();
        let fits =
            |offset: u32, len: u32| offset.checked_add(len).is_some_and(|e| e <= self.stride);
        if !fits(self.position, 12) || !fits(self.rotation, span) {
            return bad(format!(
                "a position at byte {} (12 bytes) and a rotation at byte {} ({span} bytes) must fit in the {}-byte stride",
                self.position, self.rotation, self.stride
            ));
        }
        let overlap = self.position < self.rotation + span && self.rotation < self.position + 12;
        if overlap {
            return bad(format!(
                "the position (bytes {}..{}) and the rotation (bytes {}..{}) overlap",
                self.position,
                self.position + 12,
                self.rotation,
                self.rotation + span
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
            matrix: u32::from(self.form == RotationForm::Matrix),
            ..Default::default()
        }
    }
}

/// The gather's outputs: the body table and the pass status.
#[derive(Clone, Copy, Debug)]
pub struct GatherOut {
    /// One [`GpuBody`] per instance.
    pub bodies: BufferProxy,
    /// A [`GpuPassStatus`]: matrices that are not rotations.
    pub status: BufferProxy,
}

/// The named error for a gather's status, if it found anything, naming instances from
/// `first` on (the gathered window's first instance).
pub fn check_status(status: &GpuPassStatus, first: u32) -> Result<()> {
    if status.is_ok() {
        return Ok(());
    }
    Err(Error::Usage(format!(
        "pose buffer: instance {}'s rotation matrix is not a rotation (its columns are not \
         orthonormal within {RIGID_TOLERANCE}, or it mirrors: a scale or shear), and {} \
         instance(s) in all; bodies are rigid, so register the shape at its scaled size",
        u64::from(status.first_error) + u64::from(first),
        status.error_count
    )))
}

/// Records the gather: `instances` (the renderer's buffer) and `shape_of` (one u32 per
/// body) into a new body table, returned with the pass status.
pub fn record_pose_gather(
    rec: &mut Recording,
    instances: BufferProxy,
    shape_of: BufferProxy,
    params: GpuGatherParams,
) -> GatherOut {
    let params_buf = rec.buffer(size_of::<GpuGatherParams>() as u64, "gather params");
    rec.upload(params_buf, &[params]);
    let bodies = rec.array_buffer::<GpuBody>(params.body_count as usize, "bodies");
    let status = rec.buffer(size_of::<GpuPassStatus>() as u64, "gather status");
    rec.upload(status, &[GpuPassStatus::INITIAL]);
    let grid = dispatch_grid(params.body_count, BODY_WORKGROUP_SIZE, DEFAULT_MAX_GROUPS_X);
    rec.dispatch(
        ShaderId::PoseGather,
        grid,
        &[params_buf, instances, shape_of, bodies, status],
    );
    rec.free(params_buf);
    GatherOut { bodies, status }
}

/// Twin of `matrix_quaternion`: the unit quaternion of a rotation matrix's columns, the
/// zero quaternion when they are not a rotation.
pub fn matrix_quaternion(m: Mat3) -> Quat {
    let finite = m.is_finite();
    let g = m.transpose() * m;
    let off = g.x_axis.y.abs().max(g.x_axis.z.abs().max(g.y_axis.z.abs()));
    let diag = (g.x_axis.x - 1.0)
        .abs()
        .max((g.y_axis.y - 1.0).abs().max((g.z_axis.z - 1.0).abs()));
    let det = m.x_axis.dot(m.y_axis.cross(m.z_axis));
    if finite && (off.max(diag) > RIGID_TOLERANCE || det <= 0.0) {
        return Quat::from_xyzw(0.0, 0.0, 0.0, 0.0);
    }
    let [c0, c1, c2] = [m.x_axis, m.y_axis, m.z_axis];
    let tr = c0.x + c1.y + c2.z;
    let q = if tr > 0.0 {
        let s = (tr + 1.0).sqrt() * 2.0;
        [
            (c1.z - c2.y) / s,
            (c2.x - c0.z) / s,
            (c0.y - c1.x) / s,
            0.25 * s,
        ]
    } else if c0.x > c1.y && c0.x > c2.z {
        let s = (1.0 + c0.x - c1.y - c2.z).sqrt() * 2.0;
        [
            0.25 * s,
            (c1.x + c0.y) / s,
            (c2.x + c0.z) / s,
            (c1.z - c2.y) / s,
        ]
    } else if c1.y > c2.z {
        let s = (1.0 + c1.y - c0.x - c2.z).sqrt() * 2.0;
        [
            (c1.x + c0.y) / s,
            0.25 * s,
            (c2.y + c1.z) / s,
            (c2.x - c0.z) / s,
        ]
    } else {
        let s = (1.0 + c2.z - c0.x - c1.y).sqrt() * 2.0;
        [
            (c2.x + c0.z) / s,
            (c2.y + c1.z) / s,
            0.25 * s,
            (c0.y - c1.x) / s,
        ]
    };
    let q = Quat::from_array(q);
    q / q.dot(q).sqrt()
}

/// CPU twin of `pose_gather.wgsl`: the body table from the instance words, and the pass
/// status.
pub fn gather_cpu(
    words: &[u32],
    shape_of: &[u32],
    params: GpuGatherParams,
) -> (Vec<GpuBody>, GpuPassStatus) {
    let f = |k: u32| f32::from_bits(words[k as usize]);
    let column = |k: u32| Vec3::new(f(k), f(k + 1), f(k + 2));
    let mut status = GpuPassStatus::INITIAL;
    let bodies = (0..params.body_count)
        .map(|i| {
            let base = i * params.stride_words;
            let (p, r) = (base + params.position_word, base + params.rotation_word);
            let mut q = [f(r), f(r + 1), f(r + 2), f(r + 3)];
            if params.matrix != 0 {
                let m = Mat3::from_cols(column(r), column(r + 4), column(r + 8));
                q = matrix_quaternion(m).to_array();
                if q == [0.0; 4] {
                    status.report(i, ERROR_NOT_RIGID);
                }
            }
            GpuBody {
                position: column(p).to_array(),
                shape: shape_of[i as usize],
                rotation: q,
            }
        })
        .collect();
    (bodies, status)
}
