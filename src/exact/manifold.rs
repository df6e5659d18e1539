//! Contact manifolds: one normal per pair of convex bodies (from A to B) and up to four
//! points with their signed separation and ids that stay the same while the touching
//! features do, as a physics solver wants them (Box2D v3 `manifold.c`, Jolt
//! `ManifoldBetweenTwoFaces`).
//!
//! The normal is exact: the closest-feature walk's direction between the closest points
//! for bodies apart (within the speculative distance), the Gauss-map walk's penetration
//! normal for bodies that touch or overlap (`exact::depth`; for curved bodies
//! `exact::rounded`). The points come from clipping, in f64:
//!
//! - The reference face is the face, of either body, whose outward normal is closest to
//!   the pair normal (for A: n; for B: −n), looked for among the faces at each body's
//!   support vertex in that direction, so the deepest vertex is on the faces compared. A
//!   tie goes to A (within [`REFERENCE_BIAS`]), so a resting box does not swap its
//!   reference face under a tiny perturbation. The incident face is the other body's face
//!   at its support vertex most opposed to the reference normal.
//! - Sutherland–Hodgman clips the incident face against the reference face's side planes
//!   (each through an edge of the face and along the pair normal, so a point kept lies
//!   over the face along the normal even where the normal is a little off the face's);
//!   each point left is measured along the pair normal to the reference face's plane, and
//!   those no farther than the speculative distance are kept. More than four are reduced
//!   to four: the deepest, the farthest from it, then the two that span the largest
//!   triangles on either side (Box2D's and Bullet's reduction).
//! - A point's id is the pair of features that made it: an incident vertex inside the
//!   reference face is (face, vertex); an incident edge crossing a side plane is (edge,
//!   edge); a reference corner inside the incident face is (vertex, face). Clipping keeps
//!   the labels as it cuts, so the ids are those features whatever the exact coordinates.
//! - No face within [`FACE_COS`] of the normal (edge against edge, a vertex against an
//!   edge, a sphere): one point, the exact witnesses, with the exact features as its id.
//!
//! Curved bodies. A capsule's core segment is its incident "face" when it lies across
//! the normal (clipped against the reference face's side planes as a segment); two
//! parallel capsules clip one segment against the other's end planes. A sphere gives one
//! point. Each point moves from its core to the surface along the normal: by the radius
//! where the core under it lies square to the normal, and by up to `r / cos θ` over a core
//! face or segment tilted by θ (solved along the line on the core's features), so every
//! point lies on both surfaces and its separation is the gap along the normal there.
//!
//! What this does not do: a box edge lying along a capsule gives one point, not two (the
//! segment against an edge has no face to clip against); hull trees get one manifold per
//! touching piece pair (`exact::tree::pieces_within`), not one per body pair.

use std::collections::{HashMap, HashSet};

use glam::DVec3;
use smallvec::SmallVec;

use super::depth::DepthCache;
use super::placement::Placement;
use super::rounded::{self, Contact};
use super::sat;
use super::walk::{self, WalkCache, WalkState};
use crate::bodies::Pose;
use crate::geometry::closest::closest_on_segment;
use crate::geometry::rounded::{Core, Rounded};
use crate::geometry::{ConvexPolytope, FeatureId, brute};

/// At most this many points per manifold.
pub const MAX_POINTS: usize = 4;

/// The smallest cosine between the pair normal and a face normal for the face to be
/// clipped against (about 1.1°): below it the contact is at an edge or a vertex and one
/// point says all there is.
pub const FACE_COS: f64 = 0.9998;

/// How much better aligned B's face must be than A's to become the reference face.
pub const REFERENCE_BIAS: f64 = 1e-7;

/// Which features made a contact point: a feature of A's core and one of B's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ContactId {
    /// A's feature.
    pub a: FeatureId,
    /// B's feature.
    pub b: FeatureId,
}

impl ContactId {
    /// The id as one number (for solvers that key warm starts by an integer): each
    /// feature's kind in two bits above its index (polytopes have far fewer than 2^30
    /// features).
    pub fn key(&self) -> u64 {
        let code = |f: FeatureId| -> u64 {
            match f {
                FeatureId::Vertex(i) => u64::from(i),
                FeatureId::Edge(i) => (1 << 30) | u64::from(i),
                FeatureId::Face(i) => (2 << 30) | u64::from(i),
            }
        };
        (code(self.a) << 32) | code(self.b)
    }
}

/// One contact point.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ContactPoint {
    /// On A's surface, world space.
    pub point_a: DVec3,
    /// On B's surface, world space.
    pub point_b: DVec3,
    /// `(point_b − point_a)·normal`: negative where the bodies overlap.
    pub separation: f64,
    /// The features that made it.
    pub id: ContactId,
}

/// The contact of two convex bodies.
#[derive(Clone, Debug, PartialEq)]
pub struct Manifold {
    /// Unit normal from A to B, world space.
    pub normal: DVec3,
    /// One to four points.
    pub points: Vec<ContactPoint>,
}

impl Manifold {
    /// The same contact seen from B: normal reversed, points and features swapped.
    pub fn swapped(mut self) -> Self {
        self.normal = -self.normal;
        for p in &mut self.points {
            (p.point_a, p.point_b) = (p.point_b, p.point_a);
            p.id = ContactId {
                a: p.id.b,
                b: p.id.a,
            };
        }
        self
    }

    /// The smallest separation (minus the deepest point's depth).
    pub fn min_separation(&self) -> f64 {
        self.points
            .iter()
            .map(|p| p.separation)
            .fold(f64::INFINITY, f64::min)
    }
}

/// The exact answer a manifold is built around.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PairNormal {
    /// Unit normal from A to B.
    pub normal: DVec3,
    /// Distance (≥ 0) or minus the depth.
    pub separation: f64,
    /// Closest or deepest point on A.
    pub point_a: DVec3,
    /// Closest or deepest point on B.
    pub point_b: DVec3,
    /// The features of the closest or deepest points.
    pub features: (FeatureId, FeatureId),
}

/// Warm starts of one pair of polytopes across frames.
#[derive(Clone, Debug, Default)]
pub struct ManifoldCache {
    /// The closest-feature walk's.
    pub walk: WalkCache,
    /// The Gauss-map walk's.
    pub depth: DepthCache,
    /// At most the bodies' distance at the last query: the walk's distance, the
    /// separating-axis test's largest separation where the walk gave up, 0 when they touch
    /// or overlap (and before any query).
    pub distance: f64,
}

/// Closest points nearer than this times the bodies' size (their reaches and the origins'
/// offset) give no direction of their own: their difference is mostly rounding.
const NORMAL_FROM_POINTS_REL: f64 = 1e-9;

/// The exact normal of two polytopes no farther apart than `speculative`, or `None`.
pub fn polytope_normal(
    a: &ConvexPolytope,
    pose_a: &Pose,
    b: &ConvexPolytope,
    pose_b: &Pose,
    speculative: f64,
    cache: &mut ManifoldCache,
) -> Option<PairNormal> {
    let w = cache.walk.query(a, *pose_a, b, *pose_b);
    cache.distance = 0.0;
    if w.state == WalkState::Touching && w.touching_axis != DVec3::ZERO {
        // Depth 0 along the axis the walk found them touching on (a face's normal, or the
        // separating-axis test's best axis): no Gauss-map walk, whose global check is at
        // its dearest at depth 0 (the origin on the boundary of A − B).
        return Some(PairNormal {
            normal: w.touching_axis,
            separation: 0.0,
            point_a: w.point_a,
            point_b: w.point_b,
            features: w.features,
        });
    }
    let overlap = match w.state {
        WalkState::Separated => false,
        WalkState::Touching | WalkState::Penetrating => true,
        WalkState::Failed(_) => {
            let s = sat::max_separation(a, pose_a, b, pose_b);
            if s.distance > speculative {
                cache.distance = s.distance;
                return None;
            }
            s.distance <= 0.0 && sat::intersects(a, pose_a, b, pose_b)
        }
    };
    if !overlap {
        let (distance, pa, pb, features) = if let WalkState::Failed(_) = w.state {
            let c = brute::polytope_closest_pair(a, pose_a, b, pose_b);
            (c.distance, c.point_a, c.point_b, c.features)
        } else {
            (w.distance, w.point_a, w.point_b, w.features)
        };
        cache.distance = distance;
        if distance > 0.0 {
            cache.depth.release();
        }
        if distance > speculative {
            return None;
        }
        // The points' difference gives no direction at a gap near the rounding of the
        // points (crates on a decimal grid stand 1e-17 apart; boxes at 1e9 touch to 1e-7).
        let size = a.radius() + b.radius() + (pose_b.translation - pose_a.translation).length();
        let near = (NORMAL_FROM_POINTS_REL * size).max(walk::points_rounding(a, pose_a, b, pose_b));
        let normal = walk::touch_normal(a, pose_a, b, pose_b, features, (pa, pb), distance, near);
        return Some(PairNormal {
            normal,
            separation: distance,
            point_a: pa,
            point_b: pb,
            features,
        });
    }
    let Some(p) = cache
        .depth
        .query(a, *pose_a, b, *pose_b)
        .or_else(|| super::depth::enumerate(a, pose_a, b, pose_b))
    else {
        // The walk found them touching or overlapping within rounding, and the depth's
        // candidates a hair apart (crates corner to corner at 1e3, 1e-16 apart): a contact
        // all the same, along the separating-axis test's best axis (it was dropped).
        let s = sat::max_separation(a, pose_a, b, pose_b);
        if s.distance > speculative {
            return None;
        }
        let c = brute::polytope_closest_pair(a, pose_a, b, pose_b);
        cache.distance = c.distance;
        return Some(PairNormal {
            normal: s.axis,
            separation: c.distance,
            point_a: c.point_a,
            point_b: c.point_b,
            features: c.features,
        });
    };
    Some(PairNormal {
        normal: p.normal,
        separation: -p.depth,
        point_a: p.point_a,
        point_b: p.point_b,
        features: p.features,
    })
}

/// The manifold of two polytopes no farther apart than `speculative`, or `None`.
pub fn polytopes(
    a: &ConvexPolytope,
    pose_a: &Pose,
    b: &ConvexPolytope,
    pose_b: &Pose,
    speculative: f64,
    cache: &mut ManifoldCache,
) -> Option<Manifold> {
    let exact = polytope_normal(a, pose_a, b, pose_b, speculative, cache)?;
    let side_a = Side::new(CoreRef::Polytope(a), pose_a, 0.0);
    let side_b = Side::new(CoreRef::Polytope(b), pose_b, 0.0);
    Some(build(&side_a, &side_b, &exact, speculative))
}

/// The exact normal of two rounded bodies (spheres, capsules, rounded polytopes) no
/// farther apart than `speculative`, or `None`.
pub fn rounded_normal(
    a: &Rounded,
    pose_a: &Pose,
    b: &Rounded,
    pose_b: &Pose,
    speculative: f64,
) -> Option<PairNormal> {
    let d = rounded::distance(a, pose_a, b, pose_b);
    if d.contact == Contact::Separated {
        if d.distance > speculative {
            return None;
        }
        return Some(PairNormal {
            normal: d.normal,
            separation: d.distance,
            point_a: d.point_a,
            point_b: d.point_b,
            features: d.features,
        });
    }
    let p = rounded::penetration(a, pose_a, b, pose_b)?;
    Some(PairNormal {
        normal: p.normal,
        separation: -p.depth,
        point_a: p.point_a,
        point_b: p.point_b,
        features: p.features,
    })
}

/// The manifold of two rounded bodies no farther apart than `speculative`, or `None`.
pub fn rounded(
    a: &Rounded,
    pose_a: &Pose,
    b: &Rounded,
    pose_b: &Pose,
    speculative: f64,
) -> Option<Manifold> {
    let exact = rounded_normal(a, pose_a, b, pose_b, speculative)?;
    let side_a = Side::new(CoreRef::of(a), pose_a, a.radius);
    let side_b = Side::new(CoreRef::of(b), pose_b, b.radius);
    Some(build(&side_a, &side_b, &exact, speculative))
}

/// A body's core, borrowed.
#[derive(Clone, Copy)]
enum CoreRef<'a> {
    Point,
    Segment(f64),
    Polytope(&'a ConvexPolytope),
}

impl<'a> CoreRef<'a> {
    fn of(r: &'a Rounded) -> Self {
        match &r.core {
            Core::Point => CoreRef::Point,
            Core::Segment { half_height } => CoreRef::Segment(*half_height),
            Core::Polytope(p) => CoreRef::Polytope(p),
        }
    }
}

/// One body of the pair: its core placed in the world and its radius.
struct Side<'a> {
    core: CoreRef<'a>,
    frame: Placement,
    radius: f64,
}

/// A face (or a capsule's segment) a body offers for clipping, world space.
struct Patch {
    /// Corners in order (counter-clockwise about `normal` for a face), with their ids.
    corners: Vec<(DVec3, FeatureId)>,
    /// The edge from corner `k` to corner `k + 1`.
    edges: Vec<FeatureId>,
    /// Outward unit normal (a face's; for a segment, the pair direction).
    normal: DVec3,
    /// The face's id (a segment's: its edge).
    feature: FeatureId,
    /// Cosine between `normal` and the direction it should face.
    alignment: f64,
}

impl<'a> Side<'a> {
    fn new(core: CoreRef<'a>, pose: &Pose, radius: f64) -> Self {
        Side {
            core,
            frame: Placement::of(pose),
            radius,
        }
    }

    /// The face at the support vertex in world direction `dir` best aligned with it.
    fn face(&self, dir: DVec3) -> Option<Patch> {
        let CoreRef::Polytope(poly) = self.core else {
            return None;
        };
        let local = self.frame.inverse_vector(dir);
        let (v, _) = poly.support(local, 0);
        let (f, alignment) = poly
            .vertex_out(v as usize)
            .iter()
            .map(|&h| poly.half_edge_face(h))
            .map(|f| (f, poly.face_normal(f as usize).dot(local)))
            .fold((u32::MAX, f64::NEG_INFINITY), |best, c| {
                if c.1 > best.1 { c } else { best }
            });
        let f = f as usize;
        Some(Patch {
            corners: poly
                .face_vertices(f)
                .map(|v| (self.frame.point(poly.vertex(v)), FeatureId::Vertex(v)))
                .collect(),
            edges: poly.face_edges(f).map(FeatureId::Edge).collect(),
            normal: self.frame.vector(poly.face_normal(f)),
            feature: FeatureId::Face(f as u32),
            alignment,
        })
    }

    /// The core segment, when the core is one, with `alignment` the cosine of its angle to
    /// the plane across `dir` (1: the segment lies across the normal).
    fn segment(&self, dir: DVec3) -> Option<Patch> {
        let CoreRef::Segment(h) = self.core else {
            return None;
        };
        let (p0, p1) = (
            self.frame.point(DVec3::new(0.0, 0.0, -h)),
            self.frame.point(DVec3::new(0.0, 0.0, h)),
        );
        let axis = (p1 - p0).try_normalize()?;
        Some(Patch {
            corners: vec![(p0, FeatureId::Vertex(0)), (p1, FeatureId::Vertex(1))],
            edges: vec![FeatureId::Edge(0)],
            normal: dir,
            feature: FeatureId::Edge(0),
            alignment: (1.0 - axis.dot(dir).powi(2)).max(0.0).sqrt(),
        })
    }
}

impl Side<'_> {
    /// How far the body's surface lies from `p`, a world point on its core's patch `start`,
    /// along the world unit direction `u` out of the body: the `t` at which `p + t·u` is
    /// the radius from the core. That is the radius where the core under `p` lies square
    /// to `u` (a face across it, a corner whose region holds it), and up to `r / cos θ` over
    /// a face or segment tilted by θ (a rounded box resting on an edge: its far corners'
    /// points, moved by the radius alone, lay inside it and read farther from the floor
    /// than they are).
    ///
    /// Along the line the distance to the core is solved exactly on one feature at a time
    /// (a face's plane, an edge's line, a vertex), the feature the core's closest point to
    /// the last answer lies on, until the answer's closest feature is the one solved on;
    /// a walk that does not settle in a few steps bisects between `r` (the distance from
    /// `p` grows no faster than `t`) and the patch plane's answer (the core lies behind it).
    fn surface_offset(&self, p: DVec3, u: DVec3, start: FeatureId) -> f64 {
        let r = self.radius;
        if r == 0.0 {
            return 0.0;
        }
        let (x0, u) = (self.frame.inverse_point(p), self.frame.inverse_vector(u));
        // The core's closest feature to `x` (outside it), its hull and its closest point.
        let closest = |x: DVec3, from: FeatureId| -> (FeatureId, Hull, DVec3) {
            match self.core {
                CoreRef::Point => (FeatureId::Vertex(0), Hull::Point(DVec3::ZERO), DVec3::ZERO),
                CoreRef::Segment(h) => {
                    let (a, b) = (DVec3::new(0.0, 0.0, -h), DVec3::new(0.0, 0.0, h));
                    let (q, s) = closest_on_segment(a, b, x);
                    if s <= 0.0 {
                        (FeatureId::Vertex(0), Hull::Point(a), q)
                    } else if s >= 1.0 {
                        (FeatureId::Vertex(1), Hull::Point(b), q)
                    } else {
                        (FeatureId::Edge(0), Hull::Line(a, DVec3::Z), q)
                    }
                }
                CoreRef::Polytope(poly) => {
                    let (f, q) = rounded::closest_on_polytope(poly, x, from);
                    (f, Hull::of(poly, f), q)
                }
            }
        };
        // The patch's own hull first: a face's plane, a segment's line; either is an upper
        // bound, the core lying behind the plane and on the line.
        let first = match self.core {
            CoreRef::Polytope(poly) => Hull::of(poly, start),
            CoreRef::Segment(_) => Hull::Line(DVec3::ZERO, DVec3::Z),
            CoreRef::Point => return r,
        };
        let Some(high) = first.reach(x0, u, r).filter(|&t| t >= r) else {
            return r;
        };
        let (mut t, mut feature) = (high, start);
        for _ in 0..8 {
            let (f, hull, _) = closest(x0 + u * t, feature);
            if f == feature {
                return t;
            }
            // Between the two bounds (a root may fall past one by rounding).
            match hull.reach(x0, u, r) {
                Some(next) => t = next.clamp(r, high),
                None => break,
            }
            feature = f;
        }
        // Bisection on the distance, which grows along the line.
        let (mut low, mut high) = (r, high);
        for _ in 0..60 {
            let mid = 0.5 * (low + high);
            if !(low < mid && mid < high) {
                break;
            }
            let (f, _, q) = closest(x0 + u * mid, feature);
            feature = f;
            if (x0 + u * mid - q).length() < r {
                low = mid;
            } else {
                high = mid;
            }
        }
        low
    }
}

/// The affine hull of a core feature, body frame: what the distance along a line is solved
/// on.
#[derive(Clone, Copy)]
enum Hull {
    Plane(DVec3, f64),
    Line(DVec3, DVec3),
    Point(DVec3),
}

impl Hull {
    fn of(poly: &ConvexPolytope, f: FeatureId) -> Self {
        match f {
            FeatureId::Face(k) => {
                Hull::Plane(poly.face_normal(k as usize), poly.face_offset(k as usize))
            }
            FeatureId::Edge(e) => {
                let [a, b] = poly.edge_vertices(e as usize);
                let (a, b) = (poly.vertex(a), poly.vertex(b));
                Hull::Line(a, (b - a).normalize())
            }
            FeatureId::Vertex(v) => Hull::Point(poly.vertex(v)),
        }
    }

    /// The `t ≥ 0` at which `x0 + t·u` is `r` from the hull, on the side `u` leads away
    /// to; `None` where `u` does not lead away from it.
    fn reach(self, x0: DVec3, u: DVec3, r: f64) -> Option<f64> {
        // |w + t v|² = r² for a line or a point, its larger root.
        let root = |w: DVec3, v: DVec3| -> Option<f64> {
            let (a, b, c) = (v.length_squared(), w.dot(v), w.length_squared() - r * r);
            if a <= 0.0 {
                return None;
            }
            let d = (b * b - a * c).max(0.0).sqrt();
            // The larger root without cancellation.
            let t = if b < 0.0 { (d - b) / a } else { -c / (b + d) };
            (t.is_finite() && t >= 0.0).then_some(t)
        };
        match self {
            Hull::Plane(n, offset) => {
                let rate = n.dot(u);
                (rate > 0.0).then(|| (r - (n.dot(x0) - offset)) / rate)
            }
            Hull::Line(a, d) => {
                let across = |v: DVec3| v - d * d.dot(v);
                root(across(x0 - a), across(u))
            }
            Hull::Point(v) => root(x0 - v, u),
        }
    }
}

/// The manifold around an exact answer.
fn build(a: &Side<'_>, b: &Side<'_>, exact: &PairNormal, speculative: f64) -> Manifold {
    let n = exact.normal;
    let witness = ContactPoint {
        point_a: exact.point_a,
        point_b: exact.point_b,
        separation: exact.separation,
        id: ContactId {
            a: exact.features.0,
            b: exact.features.1,
        },
    };
    let single = || Manifold {
        normal: n,
        points: vec![witness],
    };
    let Some((reference, incident, a_is_reference)) = choose(a, b, n) else {
        return single();
    };
    let mut points = clip(&reference, &incident, a_is_reference, n);
    let (patch_a, patch_b) = if a_is_reference {
        (reference.feature, incident.feature)
    } else {
        (incident.feature, reference.feature)
    };
    points.retain_mut(|p| {
        let (ta, tb) = (
            a.surface_offset(p.point_a, n, patch_a),
            b.surface_offset(p.point_b, -n, patch_b),
        );
        p.point_a += n * ta;
        p.point_b -= n * tb;
        p.separation -= ta + tb;
        p.separation <= speculative
    });
    if points.is_empty() {
        // Clipping lost the contact to rounding (a vertex on a side plane): the exact one.
        return single();
    }
    // The exact closest (or deepest) points where clipping made none as near: faces a
    // hair from parallel whose nearest corner lies outside the other face's prism (a
    // cube 2.64e-6 above another, tilted by 1e-6, read 3.33e-6 apart at its nearest
    // clipped point, and a solver would have let it close by the difference).
    let nearest = points
        .iter()
        .map(|p| p.separation)
        .fold(f64::INFINITY, f64::min);
    let scale = exact
        .point_a
        .abs()
        .max_element()
        .max(exact.point_b.abs().max_element());
    if nearest > exact.separation + 1e-12 * scale + 1e-9 * exact.separation.abs() {
        // A clipped point named as the witness (a crossing near its vertex takes the
        // vertex's name) is not the witness: the exact point takes its place.
        match points.iter_mut().find(|p| p.id == witness.id) {
            Some(p) => *p = witness,
            None => points.push(witness),
        }
    }
    Manifold {
        normal: n,
        points: reduce(points, n),
    }
}

/// The reference and incident patches, and whether A holds the reference; `None` when
/// no face lies across the normal.
fn choose(a: &Side<'_>, b: &Side<'_>, n: DVec3) -> Option<(Patch, Patch, bool)> {
    let (fa, fb) = (a.face(n), b.face(-n));
    let align = |p: &Option<Patch>| p.as_ref().map_or(f64::NEG_INFINITY, |p| p.alignment);
    let (aa, ab) = (align(&fa), align(&fb));
    if aa.max(ab) >= FACE_COS {
        let a_is_reference = aa + REFERENCE_BIAS >= ab;
        let (reference, other, other_face, other_dir) = if a_is_reference {
            (fa?, b, fb, -n)
        } else {
            (fb?, a, fa, n)
        };
        let incident = match other.core {
            // Its face along the same direction: found above.
            CoreRef::Polytope(_) => other_face?,
            CoreRef::Segment(_) => {
                let s = other.segment(other_dir)?;
                (s.alignment >= FACE_COS).then_some(s)?
            }
            CoreRef::Point => return None,
        };
        return Some((reference, incident, a_is_reference));
    }
    // Two capsules lying side by side.
    let (sa, sb) = (a.segment(n)?, b.segment(-n)?);
    let (da, db) = (
        sa.corners[1].0 - sa.corners[0].0,
        sb.corners[1].0 - sb.corners[0].0,
    );
    let parallel = da.normalize().dot(db.normalize()).abs() >= FACE_COS;
    (sa.alignment >= FACE_COS && sb.alignment >= FACE_COS && parallel).then_some((sa, sb, true))
}

/// A side plane of the reference patch: points with `outward·(x − point) > 0` are cut.
struct Cut {
    point: DVec3,
    outward: DVec3,
    /// The reference feature the plane stands on (an edge of a face, an end of a segment).
    feature: FeatureId,
    /// The reference corners at the plane's ends, for naming a corner two planes make.
    ends: [FeatureId; 2],
}

fn cuts(reference: &Patch, toward: DVec3) -> Vec<Cut> {
    let c = &reference.corners;
    if reference.edges.len() == 1 {
        // A segment: its two end planes.
        let d = c[1].0 - c[0].0;
        return vec![
            Cut {
                point: c[0].0,
                outward: -d,
                feature: c[0].1,
                ends: [c[0].1, c[0].1],
            },
            Cut {
                point: c[1].0,
                outward: d,
                feature: c[1].1,
                ends: [c[1].1, c[1].1],
            },
        ];
    }
    (0..c.len())
        .map(|k| {
            let (p, q) = (c[k], c[(k + 1) % c.len()]);
            Cut {
                point: p.0,
                outward: (q.0 - p.0).cross(toward),
                feature: reference.edges[k],
                ends: [p.1, q.1],
            }
        })
        .collect()
}

/// A polygon vertex during clipping: its point, its (reference, incident) features, and
/// what the edge to the next vertex lies on.
#[derive(Clone, Copy)]
struct Corner {
    point: DVec3,
    id: (FeatureId, FeatureId),
    out: Along,
}

#[derive(Clone, Copy)]
enum Along {
    /// An edge of the incident patch.
    Incident(FeatureId),
    /// The side plane with this index.
    Cut(usize),
}

/// Clips the incident patch against the reference's side planes and measures each point
/// left along `n` to the reference plane.
fn clip(reference: &Patch, incident: &Patch, a_is_reference: bool, n: DVec3) -> Vec<ContactPoint> {
    let toward = if a_is_reference { n } else { -n };
    let planes = cuts(reference, toward);
    let corners = || reference.corners.iter().chain(&incident.corners);
    let scale = corners()
        .map(|c| c.0.abs().max_element())
        .fold(0.0, f64::max)
        .max(f64::MIN_POSITIVE);
    // 1e-12 of the coordinates, but never past 1e-9 of the patches' own size where that
    // is above the coordinates' rounding (64 ulps): 1e-4 crates at 1e9 had a tolerance of
    // 1e-3, and their four corners were merged into one point.
    let size = corners()
        .map(|c| (c.0 - reference.corners[0].0).abs().max_element())
        .fold(0.0, f64::max);
    let tol = (1e-12 * scale).min((1e-9 * size).max(64.0 * f64::EPSILON * scale));
    let polygon: Vec<Corner> = if incident.edges.len() == 1 {
        clip_segment(incident, reference, &planes, tol)
    } else {
        let mut poly: Vec<Corner> = incident
            .corners
            .iter()
            .zip(&incident.edges)
            .map(|(&(p, f), &e)| Corner {
                point: p,
                id: (reference.feature, f),
                out: Along::Incident(e),
            })
            .collect();
        // Two buffers, each step clipping one into the other.
        let mut next = Vec::with_capacity(poly.len() + planes.len());
        for (j, plane) in planes.iter().enumerate() {
            clip_polygon(&poly, j, plane, &planes, incident.feature, tol, &mut next);
            std::mem::swap(&mut poly, &mut next);
            if poly.is_empty() {
                break;
            }
        }
        poly
    };
    let polygon = corners_named(polygon, reference, incident, toward, size);
    // Measured along the pair normal from the reference plane to the incident point.
    let (m, origin) = (reference.normal, reference.corners[0].0);
    let slope = m.dot(toward);
    polygon
        .into_iter()
        .map(|c| {
            let t = m.dot(c.point - origin) / slope;
            let on_reference = c.point - toward * t;
            let (point_a, point_b, id) = if a_is_reference {
                (on_reference, c.point, (c.id.0, c.id.1))
            } else {
                (c.point, on_reference, (c.id.1, c.id.0))
            };
            ContactPoint {
                point_a,
                point_b,
                separation: t,
                id: ContactId { a: id.0, b: id.1 },
            }
        })
        .collect()
}

/// How near (a fraction of the patches' size) a clipped point must lie to a corner of
/// either patch to be named by it.
const CORNER_SNAP: f64 = 1e-6;

/// Points whose depths differ by less than this share of their spread tie for the
/// deepest (a tilt of 1e-10 decided it), the smallest id going first.
const DEPTH_TIE: f64 = 1e-9;

/// The clipped points named by the corners they lie at, whichever step of the clipping
/// made them: equal crates stacked corner on corner had each corner named as an incident
/// vertex inside the reference face, a reference corner inside the incident face or two
/// edges crossing, as a nudge of 1e-9 decided, and a solver matching last frame's points
/// by id lost most of them every frame. A point within [`CORNER_SNAP`] of the patches'
/// size of a reference corner and an incident corner (measured across the normal) is
/// (corner, corner), of one of them (corner, other patch), else it keeps the features
/// that made it; of points that come to share an id, the first is kept.
fn corners_named(
    polygon: Vec<Corner>,
    reference: &Patch,
    incident: &Patch,
    toward: DVec3,
    size: f64,
) -> Vec<Corner> {
    let snap = CORNER_SNAP * size;
    let across = |v: DVec3| v - toward * (toward.dot(v) / toward.length_squared());
    // Large patches (faces of many-sided cylinders) find their corners near a point on a
    // grid of cells twice the snap (each point looks in the cells about its own), where a
    // scan of every corner for every point made two 1,024-sided caps' manifold quadratic;
    // the same corner is chosen (the nearest, the first in order on ties).
    let cell = |v: DVec3| (across(v) / (2.0 * snap)).floor().as_i64vec3().to_array();
    let grid = |patch: &Patch| -> Option<HashMap<[i64; 3], Vec<usize>>> {
        (patch.corners.len() > LARGE_PATCH && snap > 0.0).then(|| {
            let mut grid: HashMap<[i64; 3], Vec<usize>> = HashMap::new();
            for (k, c) in patch.corners.iter().enumerate() {
                grid.entry(cell(c.0)).or_default().push(k);
            }
            grid
        })
    };
    let (grid_r, grid_i) = (grid(reference), grid(incident));
    let near = |patch: &Patch, grid: &Option<HashMap<[i64; 3], Vec<usize>>>, x: DVec3| {
        let mut nearby: SmallVec<[usize; 8]> = SmallVec::new();
        match grid {
            Some(grid) => {
                let [i, j, k] = cell(x);
                for key in (i - 1..=i + 1).flat_map(|a| {
                    (j - 1..=j + 1).flat_map(move |b| (k - 1..=k + 1).map(move |c| [a, b, c]))
                }) {
                    nearby.extend(grid.get(&key).into_iter().flatten().copied());
                }
                nearby.sort_unstable();
            }
            None => nearby.extend(0..patch.corners.len()),
        }
        nearby
            .iter()
            .map(|&k| patch.corners[k])
            .filter(|c| matches!(c.1, FeatureId::Vertex(_)))
            .map(|c| (across(c.0 - x).length(), c.1))
            .filter(|&(d, _)| d <= snap)
            .min_by(|p, q| p.0.total_cmp(&q.0))
            .map(|(_, f)| f)
    };
    let mut named: Vec<Corner> = Vec::with_capacity(polygon.len());
    let mut ids = HashSet::with_capacity(polygon.len());
    for mut c in polygon {
        let (r, i) = (
            near(reference, &grid_r, c.point),
            near(incident, &grid_i, c.point),
        );
        c.id = match (r, i) {
            (Some(r), Some(i)) => (r, i),
            (Some(r), None) => (r, incident.feature),
            (None, Some(i)) => (reference.feature, i),
            (None, None) => c.id,
        };
        if ids.insert(c.id) {
            named.push(c);
        }
    }
    named
}

/// Patches of more corners than this find corners near a point on a grid (see
/// `corners_named`).
const LARGE_PATCH: usize = 32;

/// One Sutherland–Hodgman step: the polygon's part on the inner side of plane `j`, into
/// `out` (cleared first).
fn clip_polygon(
    poly: &[Corner],
    j: usize,
    plane: &Cut,
    planes: &[Cut],
    incident_face: FeatureId,
    tol: f64,
    out: &mut Vec<Corner>,
) {
    let length = plane.outward.length();
    let height = |x: DVec3| plane.outward.dot(x - plane.point) / length;
    out.clear();
    for k in 0..poly.len() {
        let next = (k + 1) % poly.len();
        let (p, q) = (poly[k], poly[next]);
        let (hp, hq) = (height(p.point), height(q.point));
        let crossing = |out: Along| Corner {
            point: p.point + (q.point - p.point) * (hp / (hp - hq)),
            id: match p.out {
                Along::Incident(e) => (plane.feature, e),
                Along::Cut(i) => (corner_between(&planes[i], plane), incident_face),
            },
            out,
        };
        match (hp <= tol, hq <= tol) {
            (true, true) => out.push(p),
            (true, false) if hp < -tol => {
                // Leaving: p, the crossing, then along the plane.
                out.push(p);
                out.push(crossing(Along::Cut(j)));
            }
            // Leaving from a point on the plane: the edge after it runs along the plane.
            (true, false) => out.push(Corner {
                out: Along::Cut(j),
                ..p
            }),
            // Entering: the crossing (unless q is on the plane), q comes next.
            (false, true) if hq < -tol => out.push(crossing(p.out)),
            (false, _) => {}
        }
    }
    dedup(out, tol);
}

/// Removes consecutive points closer than `tol` (clipping a vertex on a plane twice).
fn dedup(poly: &mut Vec<Corner>, tol: f64) {
    let mut k = 0;
    while poly.len() > 1 && k < poly.len() {
        let next = (k + 1) % poly.len();
        if poly[k].point.distance(poly[next].point) <= tol {
            poly.remove(next);
        } else {
            k += 1;
        }
    }
}

/// The reference corner where two side planes meet (their shared end), or the planes'
/// first's feature where they share none.
fn corner_between(p: &Cut, q: &Cut) -> FeatureId {
    p.ends
        .into_iter()
        .find(|e| q.ends.contains(e))
        .unwrap_or(p.feature)
}

/// A segment clipped against the side planes (Cyrus–Beck), as its two ends.
fn clip_segment(segment: &Patch, reference: &Patch, planes: &[Cut], tol: f64) -> Vec<Corner> {
    let (p0, p1) = (segment.corners[0].0, segment.corners[1].0);
    let mut ends = [
        (0.0f64, (reference.feature, segment.corners[0].1)),
        (1.0f64, (reference.feature, segment.corners[1].1)),
    ];
    for plane in planes {
        let unit = plane.outward / plane.outward.length();
        let (h0, h1) = (unit.dot(p0 - plane.point), unit.dot(p1 - plane.point));
        if h0 > tol && h1 > tol {
            return Vec::new();
        }
        let cut = (plane.feature, segment.edges[0]);
        if h0 > tol {
            let s = h0 / (h0 - h1);
            if s > ends[0].0 {
                ends[0] = (s, cut);
            }
        } else if h1 > tol {
            let s = h0 / (h0 - h1);
            if s < ends[1].0 {
                ends[1] = (s, cut);
            }
        }
    }
    if ends[0].0 > ends[1].0 {
        return Vec::new();
    }
    ends.iter()
        .map(|&(s, id)| Corner {
            point: p0 + (p1 - p0) * s,
            id,
            out: Along::Incident(segment.edges[0]),
        })
        .collect()
}

/// At most [`MAX_POINTS`]: the deepest, the farthest from it, then the largest triangle
/// on each side of the line between them (ties, the smallest id first: depths within
/// [`DEPTH_TIE`] of the points' spread, distances and areas within [`CORNER_SNAP`]); kept
/// in their clipping order.
fn reduce(points: Vec<ContactPoint>, n: DVec3) -> Vec<ContactPoint> {
    if points.len() <= MAX_POINTS {
        return points;
    }
    let at = |i: usize| points[i].point_b;
    let flat = |v: DVec3| v - n * n.dot(v);
    let size = (0..points.len())
        .map(|i| flat(at(i) - at(0)).length())
        .fold(0.0, f64::max);
    // The best by `score`, a tie within `slack` going to the smallest id: on faces a hair
    // from parallel (a layer of crates turned on the one below, tilted by 1e-10), the
    // deepest point was whichever the tilt made deepest, and another four were kept each
    // frame.
    let best = |score: &dyn Fn(usize) -> f64, slack: f64| {
        let top = (0..points.len())
            .map(score)
            .fold(f64::NEG_INFINITY, f64::max);
        (0..points.len())
            .filter(|&i| score(i) >= top - slack)
            .min_by_key(|&i| points[i].id.key())
            .expect("points")
    };
    let slack = CORNER_SNAP * size;
    // Depth ties only within DEPTH_TIE of the spread: a point deeper than that is the one
    // a solver must have (a tie at the corners' snap let a point 1e-6 nearer go).
    let deepest = best(&|i| -points[i].separation, DEPTH_TIE * size);
    let farthest = best(&|i| flat(at(i) - at(deepest)).length(), slack);
    let area = |i: usize| {
        (at(farthest) - at(deepest))
            .cross(at(i) - at(deepest))
            .dot(n)
    };
    let left = best(&area, slack * size);
    let right = best(&|i| -area(i), slack * size);
    let mut keep = [deepest, farthest, left, right];
    keep.sort_unstable();
    let mut out: Vec<ContactPoint> = Vec::with_capacity(MAX_POINTS);
    for (k, &i) in keep.iter().enumerate() {
        if k == 0 || keep[k - 1] != i {
            out.push(points[i]);
        }
    }
    out
}
