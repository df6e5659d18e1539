//! Body B placed in body A's frame: the one relative transform that the exact queries
//! (the walk, the separating-axis test, and what builds on them) work in.
//!
//! Working in A's frame leaves A's coordinates untouched, so only B's are rounded. The
//! rotation is a matrix, not a quaternion: a quarter turn written as a unit quaternion
//! (components √½, which f64 cannot hold exactly) gives a matrix within a few ulps of a
//! signed permutation, and such a matrix is snapped to the permutation. Users mean a
//! quarter turn when they write one, and with the snap a quarter-turned box on a dyadic
//! grid is placed exactly, so exact predicates can tell "touching" from "1e-17 apart".

use glam::{DMat3, DVec3};

use crate::bodies::Pose;

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
    pub fn new(pose_a: &Pose, pose_b: &Pose) -> Self {
        // Each pose's matrix is snapped on its own, so two quarter-turned bodies are placed
        // exactly relative to each other too (the translation is rotated by A's snapped
        // matrix, not by its quaternion).
        let to_a = snap_quarter_turns(DMat3::from_quat(pose_a.rotation)).transpose();
        let rotation = to_a * snap_quarter_turns(DMat3::from_quat(pose_b.rotation));
        let translation = to_a * (pose_b.translation - pose_a.translation);
        let identity = rotation == DMat3::IDENTITY && translation == DVec3::ZERO;
        Placement {
            rotation,
            translation,
            identity,
        }
    }

    /// A point of B in A's frame.
    pub fn point(&self, p: DVec3) -> DVec3 {
        if self.identity {
            p
        } else {
            self.rotation * p + self.translation
        }
    }

    /// A direction of B in A's frame.
    pub fn vector(&self, v: DVec3) -> DVec3 {
        if self.identity { v } else { self.rotation * v }
    }

    /// The offset in A's frame of B's plane `{x : normal·x = offset}`, given the plane's
    /// normal already placed in A's frame.
    pub fn offset(&self, placed_normal: DVec3, offset: f64) -> f64 {
        if self.identity {
            offset
        } else {
            offset + placed_normal.dot(self.translation)
        }
    }

    /// A direction of A's frame in B's.
    pub fn inverse_vector(&self, v: DVec3) -> DVec3 {
        if self.identity {
            v
        } else {
            self.rotation.transpose() * v
        }
    }

    /// A's origin in B's frame.
    pub fn inverse_translation(&self) -> DVec3 {
        self.inverse_vector(-self.translation)
    }
}

/// The signed permutation `m` is within [`SNAP`] of, or `m` itself.
fn snap_quarter_turns(m: DMat3) -> DMat3 {
    let snap = |x: f64| {
        if x.abs() <= SNAP {
            Some(0.0)
        } else if (x.abs() - 1.0).abs() <= SNAP {
            Some(x.signum())
        } else {
            None
        }
    };
    let mut cols = [DVec3::ZERO; 3];
    for (c, col) in cols.iter_mut().enumerate() {
        for r in 0..3 {
            match snap(m.col(c)[r]) {
                Some(v) => col[r] = v,
                None => return m,
            }
        }
        if col.abs().element_sum() != 1.0 {
            return m;
        }
    }
    let snapped = DMat3::from_cols(cols[0], cols[1], cols[2]);
    // A signed permutation with determinant +1 is a rotation; anything else is not what
    // `m` was near.
    if snapped.determinant() == 1.0 && (snapped * snapped.transpose()) == DMat3::IDENTITY {
        snapped
    } else {
        m
    }
}
