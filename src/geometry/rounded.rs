//! Curved bodies as a core swept by a ball (Lin's thesis, ch. 4, treats curved boundaries
//! the same way): a sphere is a point swept by radius `r`, a capsule a segment, a rounded
//! polytope a polytope. The closest features of two rounded bodies are those of their
//! cores; the distance shrinks by the radii and the support function grows by them, so
//! every query is the core's query with the radii added (`exact::rounded`).

use std::sync::Arc;

use glam::DVec3;

use super::ConvexPolytope;
use super::hull::MIN_EXTENT;
use crate::bodies::MAX_COORDINATE;
use crate::{Error, Result};

/// The core a ball sweeps.
#[derive(Clone, Debug)]
pub enum Core {
    /// The body origin (a sphere).
    Point,
    /// The segment from `(0, 0, −h)` to `(0, 0, h)` (a capsule along z).
    Segment {
        /// Half the segment's length (0 allowed: then a sphere).
        half_height: f64,
    },
    /// A convex polytope (a rounded polytope; radius 0: the polytope itself).
    Polytope(Arc<ConvexPolytope>),
}

/// A core swept by a ball of `radius`.
#[derive(Clone, Debug)]
pub struct Rounded {
    /// The core.
    pub core: Core,
    /// The ball's radius (0 allowed: the core itself).
    pub radius: f64,
}

impl Rounded {
    /// A sphere of `radius` (0: a point).
    pub fn sphere(radius: f64) -> Result<Self> {
        Ok(Rounded {
            core: Core::Point,
            radius: check_radius(radius, "sphere radius")?,
        })
    }

    /// A capsule along z: a segment of half length `half_height` swept by `radius`.
    pub fn capsule(half_height: f64, radius: f64) -> Result<Self> {
        check_half_height(half_height)?;
        Ok(Rounded {
            core: Core::Segment { half_height },
            radius: check_radius(radius, "capsule radius")?,
        })
    }

    /// The constructors' rules, for one built from its fields (a capsule of half height −1
    /// was bounded as flat and its pairs dropped): the radius and a segment's half height
    /// finite, not negative, 0 or at least 1e-70, and at most 1e75.
    pub fn check(&self) -> Result<()> {
        let what = match self.core {
            Core::Point => "sphere radius",
            Core::Segment { half_height } => {
                check_half_height(half_height)?;
                "capsule radius"
            }
            Core::Polytope(_) => "rounding radius",
        };
        check_radius(self.radius, what).map(|_| ())
    }

    /// A polytope swept by `radius`.
    pub fn polytope(core: Arc<ConvexPolytope>, radius: f64) -> Result<Self> {
        Ok(Rounded {
            core: Core::Polytope(core),
            radius: check_radius(radius, "rounding radius")?,
        })
    }

    /// The support function `h(u) = max x·u` of the core (body frame, unit `u`) and the
    /// core point attaining it.
    pub fn core_support(&self, u: DVec3) -> (f64, DVec3) {
        match &self.core {
            Core::Point => (0.0, DVec3::ZERO),
            Core::Segment { half_height } => {
                let p = DVec3::new(
                    0.0,
                    0.0,
                    if u.z >= 0.0 {
                        *half_height
                    } else {
                        -half_height
                    },
                );
                (p.dot(u), p)
            }
            Core::Polytope(poly) => {
                let (v, h) = poly.support_brute(u);
                (h, poly.vertex(v))
            }
        }
    }

    /// The core's points that span it (body frame): the origin, the segment's ends, or the
    /// polytope's vertices.
    pub fn core_points(&self) -> Vec<DVec3> {
        match &self.core {
            Core::Point => vec![DVec3::ZERO],
            Core::Segment { half_height } => vec![
                DVec3::new(0.0, 0.0, -half_height),
                DVec3::new(0.0, 0.0, *half_height),
            ],
            Core::Polytope(p) => p.vertices().to_vec(),
        }
    }

    /// The largest distance of a point of the body from its origin, rounded up (the sum
    /// of the radius and the core's reach is taken to the next f64 above).
    pub fn reach(&self) -> f64 {
        let core = match &self.core {
            Core::Point => 0.0,
            Core::Segment { half_height } => *half_height,
            Core::Polytope(p) => p.radius(),
        };
        if core == 0.0 {
            self.radius
        } else {
            (self.radius + core).next_up()
        }
    }
}

/// A capsule's half height: finite, not negative, 0 or at least [`MIN_EXTENT`], at most
/// [`MAX_COORDINATE`].
fn check_half_height(half_height: f64) -> Result<()> {
    if !(half_height.is_finite() && (0.0..=MAX_COORDINATE).contains(&half_height)) {
        return Err(Error::Geometry(format!(
            "capsule half height must be finite, non-negative and at most \
             {MAX_COORDINATE:e}, got {half_height:?}"
        )));
    }
    if half_height > 0.0 && half_height < MIN_EXTENT {
        return Err(Error::Geometry(format!(
            "capsule half height {half_height:e} is below {MIN_EXTENT:e} (0 makes a \
             sphere): the closest points take squares of it, which sink into the subnormals"
        )));
    }
    Ok(())
}

/// A radius: finite and non-negative, or a named error.
fn check_radius(r: f64, what: &str) -> Result<f64> {
    if !(r.is_finite() && (0.0..=MAX_COORDINATE).contains(&r)) {
        return Err(Error::Geometry(format!(
            "{what} must be finite, non-negative and at most {MAX_COORDINATE:e}, got {r:?}"
        )));
    }
    // As a hull's extent: a capsule of 1e-85 answered distances 30% off, and balls of
    // 1e-200 passed through each other in `toi`.
    if r > 0.0 && r < MIN_EXTENT {
        return Err(Error::Geometry(format!(
            "{what} {r:e} is below {MIN_EXTENT:e} (0 makes a point): the queries take \
             squares of it, which sink into the subnormals"
        )));
    }
    Ok(r)
}
