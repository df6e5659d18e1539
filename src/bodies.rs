//! Bodies as the GPU sees them: a pose (position + unit quaternion) with the index of the
//! body's shape, the local bounds of every shape, and world-space boxes. The f32 Pod
//! structs here are byte-for-byte twins of `shaders/shared/bodies.wgsl`; the f64 types are
//! what the exact CPU code works in.

use glam::{DQuat, DVec3, Quat, Vec3};

use crate::wgsl_twin;

wgsl_twin! {
    /// One body: pose and shape index, packed in 32 bytes (the shape index fills the
    /// padding after the vec3 position).
    pub struct GpuBody as "Body" {
        /// World position of the body frame's origin.
        pub position: [f32; 3],
        /// Index into the shape table.
        pub shape: u32,
        /// Unit quaternion, glam order `[x, y, z, w]`.
        pub rotation: [f32; 4],
    }
}

wgsl_twin! {
    /// Local bounds of a shape in its body frame: a box `center ± half_extents`, and a
    /// sphere of `radius` about the same center that also contains the shape. The world box
    /// is, per axis, the tighter of the rotated box and the sphere.
    pub struct GpuShapeBounds as "ShapeBounds" {
        /// Center of the local box.
        pub center: [f32; 3],
        /// Radius of a sphere about `center` that contains the shape.
        pub radius: f32,
        /// Half extents of the local box (all ≥ 0).
        pub half_extents: [f32; 3],
        /// Padding to 32 bytes.
        pub _pad: u32,
    }
}

wgsl_twin! {
    /// An axis-aligned box in world space (`min ≤ max` per axis).
    pub struct GpuAabb as "Aabb" {
        /// Lower corner.
        pub min: [f32; 3],
        /// Padding (vec3 alignment).
        pub _pad0: u32,
        /// Upper corner.
        pub max: [f32; 3],
        /// Padding (vec3 alignment).
        pub _pad1: u32,
    }
}

impl GpuBody {
    /// A body at `position` with `rotation`, of shape `shape`.
    pub fn new(position: Vec3, rotation: Quat, shape: u32) -> Self {
        Self {
            position: position.to_array(),
            shape,
            rotation: rotation.to_array(),
        }
    }
}

impl GpuShapeBounds {
    /// Bounds from a local box; the sphere is the box's circumscribed sphere, rounded up.
    pub fn from_box(center: Vec3, half_extents: Vec3) -> Self {
        let radius = half_extents.length() * (1.0 + 4.0 * f32::EPSILON);
        Self::new(center, half_extents, radius)
    }

    /// Bounds from a local box and a containing sphere about the box's center.
    pub fn new(center: Vec3, half_extents: Vec3, radius: f32) -> Self {
        Self {
            center: center.to_array(),
            radius,
            half_extents: half_extents.to_array(),
            _pad: 0,
        }
    }

    /// Checks that the bounds are finite and non-negative; `index` names the shape.
    pub fn validate(&self, index: u32) -> crate::Result<()> {
        // The bounds pass sizes a body's margin by the sums of the center's and the half
        // extents' magnitudes, which must stay finite in f32 (a sphere of 2e38 passed here,
        // its half extents finite, and its box at a body overflowed in the first frame).
        let sum = |v: [f32; 3]| Vec3::from(v).as_dvec3().abs().element_sum();
        let total = sum(self.center) + sum(self.half_extents);
        // NaN is the check below's.
        let fits = total <= f64::from(f32::MAX) || total.is_nan();
        let finite = self.center.iter().all(|v| v.is_finite())
            && self.half_extents.iter().all(|v| v.is_finite() && *v >= 0.0)
            && self.radius.is_finite()
            && self.radius >= 0.0
            && fits;
        // A shape's own coordinates are checked finite (and within ±1e75) before its bounds
        // are made, so bounds that are not finite in f32 are a shape past f32's range.
        let overflowed = !fits
            || self
                .center
                .iter()
                .chain(&self.half_extents)
                .chain([&self.radius])
                .any(|v| !v.is_finite());
        if finite {
            Ok(())
        } else if overflowed {
            // A shape's error, not a body's: it was said of "body {index}" before any body.
            Err(crate::Error::Geometry(format!(
                "shape {index}'s bounds are not finite in f32 (±3.4e38), in which the GPU \
                 passes hold them and the sums of their magnitudes (center {:?}, half extents \
                 {:?}, radius {}): the shape is too large for them; scale the scene down",
                self.center, self.half_extents, self.radius
            )))
        } else {
            Err(crate::Error::Geometry(format!(
                "shape {index} has unusable local bounds (center {:?}, half extents {:?}, radius \
                 {}): values must be finite and extents non-negative",
                self.center, self.half_extents, self.radius
            )))
        }
    }
}

impl GpuAabb {
    /// Box from corners.
    pub fn new(min: Vec3, max: Vec3) -> Self {
        Self {
            min: min.to_array(),
            _pad0: 0,
            max: max.to_array(),
            _pad1: 0,
        }
    }

    /// The box in f64.
    pub fn to_f64(&self) -> Aabb {
        Aabb {
            min: Vec3::from_array(self.min).as_dvec3(),
            max: Vec3::from_array(self.max).as_dvec3(),
        }
    }
}

/// The most bodies a world holds: the one limit that scenes, worlds and the broadphase
/// check (2^28, 8 GiB of bodies on the GPU; the broadphase's hash entry could name 2^29).
pub const MAX_BODIES: usize = 1 << 28;

/// How far a pose's quaternion norm may stray from 1 before it is rejected rather than
/// normalised (queries and motions read poses by this one rule): wide enough for a
/// quaternion written to four decimals (`[0, 0, 0.7071, 0.7071]`, norm 1 − 7.6e-6), narrow
/// enough to reject what is no rotation (`[0, 0, 0, 2]`, or Euler angles in its place).
pub const UNIT_TOLERANCE: f64 = 1e-3;

/// The largest coordinate a shape or a pose may have. Face normals (Newell's sums of
/// products of two coordinates) and the cross products of two edges are normalised, which
/// squares them: fourth powers of the coordinates, so 1e75 keeps every product finite
/// (1e300) with room for the sums; past it a face's normal overflows (a 1e80 box had "zero
/// area") and a query would answer `inf` or NaN.
pub const MAX_COORDINATE: f64 = 1e75;

/// A world pose in f64: `x_world = rotation * x_local + translation`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pose {
    /// Position of the body frame's origin.
    pub translation: DVec3,
    /// Unit quaternion.
    pub rotation: DQuat,
}

impl Default for Pose {
    fn default() -> Self {
        Self::IDENTITY
    }
}

impl Pose {
    /// No translation, no rotation.
    pub const IDENTITY: Pose = Pose {
        translation: DVec3::ZERO,
        rotation: DQuat::IDENTITY,
    };

    /// A pose from its parts; `rotation` must be a unit quaternion.
    pub const fn new(translation: DVec3, rotation: DQuat) -> Self {
        Self {
            translation,
            rotation,
        }
    }

    /// `self⁻¹ · other`: `other`'s frame seen from this one (a point `x` of `other`'s body
    /// is at `self.inv_mul(other).transform_point(x)` in this body's frame).
    pub fn inv_mul(&self, other: &Pose) -> Pose {
        let inverse = self.rotation.conjugate();
        Pose {
            translation: inverse * (other.translation - self.translation),
            rotation: inverse * other.rotation,
        }
    }

    /// Maps a world point into the body frame.
    pub fn inverse_transform_point(&self, p: DVec3) -> DVec3 {
        self.rotation.conjugate() * (p - self.translation)
    }

    /// The pose a [`GpuBody`] stands for, exactly: the f32 values widened to f64 and the
    /// quaternion normalised in f64 (the GPU normalises too, in f32).
    pub fn from_gpu(body: &GpuBody) -> Self {
        let q = DQuat::from_array(body.rotation.map(f64::from));
        Self {
            translation: DVec3::from_array(body.position.map(f64::from)),
            rotation: q.normalize(),
        }
    }

    /// Maps a point from the body frame to the world.
    pub fn transform_point(&self, p: DVec3) -> DVec3 {
        self.rotation * p + self.translation
    }

    /// The pose with its quaternion normalised, if the exact stage can use it: finite,
    /// within [`MAX_COORDINATE`], its quaternion unit within [`UNIT_TOLERANCE`]. The one
    /// rule for every pose that comes in (a World's bodies, a query's lines, a motion's
    /// ends); each caller names the pose in its own error.
    pub fn checked(self) -> Result<Pose, PoseFault> {
        let (t, q) = (self.translation, self.rotation);
        if !t.is_finite() {
            return Err(PoseFault::TranslationNotFinite(t));
        }
        if !q.is_finite() {
            return Err(PoseFault::RotationNotFinite(q));
        }
        if t.abs().max_element() > MAX_COORDINATE {
            return Err(PoseFault::OutOfRange(t));
        }
        let norm = q.length();
        if (norm - 1.0).abs() > UNIT_TOLERANCE {
            return Err(PoseFault::NotUnit(norm));
        }
        Ok(Pose::new(t, q / norm))
    }
}

/// What makes a pose unusable ([`Pose::checked`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PoseFault {
    /// A coordinate of the translation is NaN or infinite.
    TranslationNotFinite(DVec3),
    /// A component of the quaternion is NaN or infinite.
    RotationNotFinite(DQuat),
    /// The translation lies outside ±[`MAX_COORDINATE`].
    OutOfRange(DVec3),
    /// The quaternion's norm, off 1 by more than [`UNIT_TOLERANCE`].
    NotUnit(f64),
}

impl std::fmt::Display for PoseFault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PoseFault::TranslationNotFinite(t) => {
                write!(f, "translation {} is not finite", short(*t))
            }
            PoseFault::RotationNotFinite(q) => write!(f, "rotation {q} is not finite"),
            PoseFault::OutOfRange(t) => {
                write!(
                    f,
                    "translation {} is outside ±{MAX_COORDINATE:e}",
                    short(*t)
                )
            }
            PoseFault::NotUnit(norm) => {
                write!(f, "rotation is not a unit quaternion (norm {norm})")
            }
        }
    }
}

/// An axis-aligned box in f64.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Aabb {
    /// Lower corner.
    pub min: DVec3,
    /// Upper corner.
    pub max: DVec3,
}

impl Aabb {
    /// True when `other` lies inside `self` (boundaries included).
    pub fn contains(&self, other: &Aabb) -> bool {
        self.min.cmple(other.min).all() && self.max.cmpge(other.max).all()
    }

    /// True when the boxes share at least one point.
    pub fn intersects(&self, other: &Aabb) -> bool {
        self.min.cmple(other.max).all() && other.min.cmple(self.max).all()
    }

    /// Largest distance between corresponding faces of `self` and `other`.
    pub fn max_face_gap(&self, other: &Aabb) -> f64 {
        let lo = (self.min - other.min).abs().max_element();
        let hi = (self.max - other.max).abs().max_element();
        lo.max(hi)
    }
}

/// A point as `[x, y, z]` with each coordinate as `{:?}` writes it: 2e75 rather than 76
/// digits (the errors that name a pose or a scene's region).
pub(crate) fn short(v: DVec3) -> String {
    format!("[{:?}, {:?}, {:?}]", v.x, v.y, v.z)
}

/// An f32 vector as [`short`] writes one, each number as f32 reads back (a resized wrap box
/// held in f32 was written `4.626064777374268`, its f64 widening).
pub(crate) fn short32(v: Vec3) -> String {
    format!("[{:?}, {:?}, {:?}]", v.x, v.y, v.z)
}
