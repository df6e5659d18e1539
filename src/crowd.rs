//! The bodies of a scene as the pipeline consumes them: the shape table (local bounds), one
//! [`GpuBody`] per body, and a motion per body so frames can be stepped. The built-in
//! default scene, [`Crowd::random`], is what `proxima` runs with no arguments.

use glam::{Quat, Vec3};

use crate::bodies::{GpuBody, GpuShapeBounds, MAX_BODIES};
use crate::rng::Rng;
use crate::{Error, Result};

/// Constant linear and angular velocity of a body (world frame, per second).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Motion {
    /// Linear velocity of the body frame's origin.
    pub linear: Vec3,
    /// Angular velocity (axis × radians per second).
    pub angular: Vec3,
}

/// Bodies, their shapes and their motions.
#[derive(Clone, Debug, Default)]
pub struct Crowd {
    /// Local bounds of every shape.
    pub shapes: Vec<GpuShapeBounds>,
    /// Pose and shape index of every body.
    pub bodies: Vec<GpuBody>,
    /// Motion of every body (same length as `bodies`).
    pub motions: Vec<Motion>,
    /// Bodies that leave this box re-enter on the opposite side (`None`: no wrapping).
    pub wrap: Option<(Vec3, Vec3)>,
}

/// Shapes of the built-in crowd: a cube, a rod, a plate, a ball, and a box whose bounds are
/// off its body origin (so rotation about the origin is exercised).
fn crowd_shapes() -> Vec<GpuShapeBounds> {
    vec![
        GpuShapeBounds::from_box(Vec3::ZERO, Vec3::splat(0.5)),
        GpuShapeBounds::from_box(Vec3::ZERO, Vec3::new(0.15, 0.15, 1.0)),
        GpuShapeBounds::from_box(Vec3::ZERO, Vec3::new(0.8, 0.08, 0.6)),
        GpuShapeBounds::new(Vec3::ZERO, Vec3::splat(0.45), 0.45),
        GpuShapeBounds::from_box(Vec3::new(0.4, 0.0, 0.0), Vec3::new(0.4, 0.25, 0.25)),
    ]
}

impl Crowd {
    /// The default crowd: `count` bodies of five shapes, uniformly placed in a cube sized
    /// for about one body per 8 unit cells (a few overlaps per body), random orientations,
    /// speeds up to 2 units/s and spins up to 3 rad/s, wrapping at the cube's faces.
    pub fn random(count: usize, seed: u64) -> Self {
        let mut rng = Rng::new(seed);
        let shapes = crowd_shapes();
        let side = (count.max(1) as f64 * 8.0).cbrt();
        let lo = glam::DVec3::splat(-side / 2.0);
        let hi = glam::DVec3::splat(side / 2.0);
        let mut bodies = Vec::with_capacity(count);
        let mut motions = Vec::with_capacity(count);
        for _ in 0..count {
            let shape = rng.below(shapes.len() as u64) as u32;
            let position = rng.point_in(lo, hi).as_vec3();
            let rotation = rng.rotation().as_quat();
            bodies.push(GpuBody::new(position, rotation, shape));
            motions.push(Motion {
                linear: (rng.unit_vector() * rng.range(0.0, 2.0)).as_vec3(),
                angular: (rng.unit_vector() * rng.range(0.0, 3.0)).as_vec3(),
            });
        }
        Crowd {
            shapes,
            bodies,
            motions,
            wrap: Some((lo.as_vec3(), hi.as_vec3())),
        }
    }

    /// Number of bodies.
    pub fn len(&self) -> usize {
        self.bodies.len()
    }

    /// True when there are no bodies.
    pub fn is_empty(&self) -> bool {
        self.bodies.is_empty()
    }

    /// Checks the shape table (finite, non-negative bounds) and that `motions` matches.
    pub fn validate(&self) -> Result<()> {
        for (i, s) in self.shapes.iter().enumerate() {
            s.validate(i as u32)?;
        }
        if self.motions.len() != self.bodies.len() {
            return Err(Error::Scene {
                path: "<world>".into(),
                message: format!(
                    "{} bodies but {} motions",
                    self.bodies.len(),
                    self.motions.len()
                ),
            });
        }
        if self.bodies.len() > MAX_BODIES {
            return Err(Error::Scene {
                path: "<world>".into(),
                message: format!(
                    "{} bodies: at most {MAX_BODIES} (2^28) are supported",
                    self.bodies.len()
                ),
            });
        }
        Ok(())
    }

    /// Advances every body by `dt` seconds along its motion (screw motion about the body
    /// origin), wrapping positions if the world wraps.
    pub fn advance(&mut self, dt: f32) {
        for (body, motion) in self.bodies.iter_mut().zip(&self.motions) {
            let mut p = Vec3::from_array(body.position) + motion.linear * dt;
            if let Some((lo, hi)) = self.wrap {
                let size = hi - lo;
                p = lo + (p - lo).rem_euclid(size);
            }
            let spin = Quat::from_scaled_axis(motion.angular * dt);
            let q = (spin * Quat::from_array(body.rotation)).normalize();
            body.position = p.to_array();
            body.rotation = q.to_array();
        }
    }
}
