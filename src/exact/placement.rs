//! Body B placed in body A's frame: the one relative transform that the exact queries
//! (the walk, the separating-axis test, and what builds on them) work in.
//!
//! Working in A's frame leaves A's coordinates untouched, so only B's are rounded. The
//! rotation is a matrix, not a quaternion: a quarter turn written as a unit quaternion
//! (components √½, which f64 cannot hold exactly) gives a matrix within a few ulps of a
//! signed permutation, and such a matrix is snapped to the permutation. Users mean a
//! quarter turn when they write one, and with the snap a quarter-turned box on a dyadic
//! grid is placed exactly, so exact predicates can tell "touching" from "1e-17 apart".

use glam::{DMat3, DQuat, DVec3};

use crate::bodies::Pose;
use crate::geometry::ConvexPolytope;

/// How far (in ulps of 1) a rotation matrix entry may sit from 0 or ±1 and still be taken
/// as a quarter-turn entry.
const SNAP: f64 = 8.0 * f64::EPSILON;

/// B's frame in A's: `x_A = rotation · x_B + translation`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Placement {
    /// Rotation from B's frame to A's.
    pub rotation: DMat3,
    /// B's origin in A's frame.
    pub translation: DVec3,
    /// True when B's frame is A's (no arithmetic needed).
    pub identity: bool,
}

impl Placement {
    /// A body in its own frame.
    pub const IDENTITY: Placement = Placement {
        rotation: DMat3::IDENTITY,
        translation: DVec3::ZERO,
        identity: true,
    };

    /// B at `pose_b` seen from A at `pose_a`.
    #[inline]
    pub fn new(pose_a: &Pose, pose_b: &Pose) -> Self {
        Self::pair(pose_a, pose_b).0
    }

    /// A body's frame in the world's (`point` maps the body's points to world space).
    #[inline]
    pub fn of(pose: &Pose) -> Self {
        let rotation = matrix(pose.rotation);
        Placement {
            rotation,
            translation: pose.translation,
            identity: rotation == DMat3::IDENTITY && pose.translation == DVec3::ZERO,
        }
    }

    /// B at `pose_b` seen from A at `pose_a`, and A's frame in the world's (a query
    /// answers in world space): A's matrix is made once for both.
    #[inline(always)]
    pub fn pair(pose_a: &Pose, pose_b: &Pose) -> (Self, Self) {
        // The relative rotation is snapped on its own and A's for the translation on its
        // own, so two quarter-turned bodies are placed exactly relative to each other (the
        // product of two quarter turns' quaternions is a quarter turn's, up to rounding).
        // Equal rotations (crates on a grid, bodies of one orientation) are exactly
        // parallel: no rounded product may say otherwise.
        let rotation = if pose_a.rotation == pose_b.rotation {
            DMat3::IDENTITY
        } else {
            matrix(pose_a.rotation.conjugate() * pose_b.rotation)
        };
        let world_a = Self::of(pose_a);
        let offset = pose_b.translation - pose_a.translation;
        let translation = if pose_a.rotation == DQuat::IDENTITY {
            offset
        } else {
            world_a.rotation.transpose() * offset
        };
        let identity = rotation == DMat3::IDENTITY && translation == DVec3::ZERO;
        let b_in_a = Placement {
            rotation,
            translation,
            identity,
        };
        (b_in_a, world_a)
    }

    /// The size of both bodies' coordinates in A's frame (each body's reach plus B's
    /// offset): what the exact queries' tolerances are relative to.
    pub fn scale(&self, a: &ConvexPolytope, b: &ConvexPolytope) -> f64 {
        a.reach() + b.reach() + self.translation.abs().max_element()
    }

    /// A point of B in A's frame.
    #[inline]
    pub fn point(&self, p: DVec3) -> DVec3 {
        if self.identity {
            p
        } else {
            self.rotation * p + self.translation
        }
    }

    /// A direction of B in A's frame.
    #[inline]
    pub fn vector(&self, v: DVec3) -> DVec3 {
        if self.identity { v } else { self.rotation * v }
    }

    /// The offset in A's frame of B's plane `{x : normal·x = offset}`, given the plane's
    /// normal already placed in A's frame.
    #[inline]
    pub fn offset(&self, placed_normal: DVec3, offset: f64) -> f64 {
        if self.identity {
            offset
        } else {
            offset + placed_normal.dot(self.translation)
        }
    }

    /// A point of A's frame in B's.
    #[inline]
    pub fn inverse_point(&self, p: DVec3) -> DVec3 {
        if self.identity {
            p
        } else {
            transpose_mul(&self.rotation, p - self.translation)
        }
    }

    /// A direction of A's frame in B's.
    pub fn inverse_vector(&self, v: DVec3) -> DVec3 {
        if self.identity {
            v
        } else {
            transpose_mul(&self.rotation, v)
        }
    }

    /// A's origin in B's frame.
    pub fn inverse_translation(&self) -> DVec3 {
        self.inverse_vector(-self.translation)
    }
}

/// `mᵀ v`: the columns' dot products, no transposed copy.
#[inline]
fn transpose_mul(m: &DMat3, v: DVec3) -> DVec3 {
    DVec3::new(m.x_axis.dot(v), m.y_axis.dot(v), m.z_axis.dot(v))
}

/// A pose's rotation matrix, quarter turns snapped exact (the identity, the commonest
/// rotation, without arithmetic).
#[inline]
fn matrix(q: DQuat) -> DMat3 {
    if q == DQuat::IDENTITY {
        DMat3::IDENTITY
    } else {
        snap_quarter_turns(DMat3::from_quat(q))
    }
}

/// The signed permutation `m` is within [`SNAP`] of, or `m` itself.
#[inline]
fn snap_quarter_turns(m: DMat3) -> DMat3 {
    // Each entry taken to the nearest of -1, 0, 1 (without `round`, a libm call on
    // baseline x86-64); a general rotation fails on its first column.
    let entries = m.to_cols_array();
    let mut snapped = [0.0; 9];
    for (col, out) in entries.chunks_exact(3).zip(snapped.chunks_exact_mut(3)) {
        let mut err = 0.0f64;
        for (s, &x) in out.iter_mut().zip(col) {
            *s = if x > 0.5 {
                1.0
            } else if x < -0.5 {
                -1.0
            } else {
                0.0
            };
            err = err.max((x - *s).abs());
        }
        if err > SNAP {
            return m;
        }
    }
    // Orthonormal axes with x × y = z: a signed permutation with determinant +1, a
    // rotation (exact: every product is 0 or ±1). Anything else is not what `m` was near.
    let s = DMat3::from_cols_array(&snapped);
    let (x, y) = (s.x_axis, s.y_axis);
    if x.length_squared() == 1.0
        && y.length_squared() == 1.0
        && x.dot(y) == 0.0
        && x.cross(y) == s.z_axis
    {
        s
    } else {
        m
    }
}
