//! Distance, collision and penetration between rounded bodies (`geometry::rounded`:
//! spheres, capsules, rounded polytopes, and plain polytopes as radius 0): the cores'
//! query with the radii added.
//!
//! Cores. Point and segment pairs have closed forms (`geometry::closest`). A point or a
//! segment against a polytope: a point below every face plane, or a segment with a part
//! left after clipping against every face plane, overlaps it (one scan of the faces);
//! otherwise the Voronoi walk (`point_walk`) finds the closest pair from the face the point
//! (the segment's first end) is highest over, and where it gives up enumeration answers,
//! exact and O(V + E + F): a point takes the closest feature; a segment is closest at one
//! of its ends or against one of the polytope's edges, because the distance along the
//! segment is convex and, where its minimum is inside the segment, the closest feature can
//! be taken to be an edge. Two polytopes take the closest-feature walk (settled by the
//! separating-axis test and enumeration where it gives up).
//!
//! Radii. Apart by `c`, the bodies are apart by `c − r_A − r_B` along the cores' closest
//! direction `n`, their surfaces' closest points the cores' moved by `r_A n` and `−r_B n`;
//! closer than the radii, they penetrate by `r_A + r_B − c` along `n`. Cores that overlap
//! penetrate by the cores' depth plus both radii, along the cores' penetration normal:
//! two polytopes take the Gauss-map walk (`exact::depth`); with a point or a segment core
//! the depth is the minimum of `h_A(u) + h_B(−u)` over the facet normals of the cores'
//! Minkowski difference (the polytope's face normals, and the cross products of the
//! segment with each of its edges), a finite set that contains the minimiser; against a
//! polytope each is taken with no support query (a face's plane offset; an edge's end, in
//! the one sign of the cross product on the edge's Gauss arc), O(F + E). Where the
//! cores have no interior to tell a direction (two points, a point on a segment, parallel
//! segments), any direction perpendicular to them is a minimiser and the answer says the
//! normal is arbitrary.

use std::sync::Arc;

use glam::DVec3;

use super::depth::{self, DepthInput};
use super::placement::Placement;
use super::point_walk;
use super::sat;
use super::walk::{self, WalkInput, WalkState};
use crate::bodies::Pose;
use crate::geometry::closest::{closest_on_segment, gap, segments_closest_params};
use crate::geometry::rounded::{Core, Rounded};
use crate::geometry::{ConvexPolytope, FeatureId, brute};

/// How two rounded bodies stand.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Contact {
    /// Apart.
    Separated,
    /// Touching: distance exactly 0 and no overlap.
    Touching,
    /// Overlapping.
    Penetrating,
}

/// The distance between two rounded bodies.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RoundedDistance {
    /// How they stand.
    pub contact: Contact,
    /// Distance between the surfaces (0 unless separated).
    pub distance: f64,
    /// Closest point on A's surface, world space (meaningful unless penetrating).
    pub point_a: DVec3,
    /// Closest point on B's surface, world space.
    pub point_b: DVec3,
    /// Unit direction from A's core to B's between their closest points (zero when the
    /// cores share a point).
    pub normal: DVec3,
    /// The cores' closest features.
    pub features: (FeatureId, FeatureId),
}

/// How two rounded bodies penetrate.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RoundedPenetration {
    /// Depth (0 when touching).
    pub depth: f64,
    /// Unit normal from A to B: moving B by `depth · normal` separates them.
    pub normal: DVec3,
    /// Deepest point on A's surface: `(point_a − point_b)·normal = depth`.
    pub point_a: DVec3,
    /// Deepest point on B's surface.
    pub point_b: DVec3,
    /// The cores' features.
    pub features: (FeatureId, FeatureId),
    /// True when every direction perpendicular to the cores is as good (concentric
    /// spheres, a sphere centred on a capsule's axis, parallel capsules' axes crossing).
    pub arbitrary_normal: bool,
}

/// Two polytopes' penetration (the Gauss-map walk's): their normal is always determined.
impl From<depth::Penetration> for RoundedPenetration {
    fn from(p: depth::Penetration) -> Self {
        RoundedPenetration {
            depth: p.depth,
            normal: p.normal,
            point_a: p.point_a,
            point_b: p.point_b,
            features: p.features,
            arbitrary_normal: false,
        }
    }
}

/// A core placed in the world.
enum Placed<'a> {
    Point(DVec3),
    Segment(DVec3, DVec3),
    /// The polytope, its pose (for the walks) and its placement (for points).
    Polytope(&'a ConvexPolytope, Pose, Placement),
}

/// The core in the world. Poses act through [`Placement`], so a quarter turn written as a
/// quaternion is the exact turn the user meant (as in the walk).
fn place<'a>(r: &'a Rounded, pose: &Pose) -> Placed<'a> {
    match &r.core {
        // A point needs no rotation.
        Core::Point => Placed::Point(pose.translation),
        Core::Segment { half_height } => {
            let frame = Placement::of(pose);
            Placed::Segment(
                frame.point(DVec3::new(0.0, 0.0, -half_height)),
                frame.point(DVec3::new(0.0, 0.0, *half_height)),
            )
        }
        Core::Polytope(p) => Placed::Polytope(p, *pose, Placement::of(pose)),
    }
}

impl Placed<'_> {
    /// Support value and point in world direction `u`.
    fn support(&self, u: DVec3) -> (f64, DVec3) {
        match self {
            Placed::Point(p) => (p.dot(u), *p),
            Placed::Segment(a, b) => {
                if a.dot(u) >= b.dot(u) {
                    (a.dot(u), *a)
                } else {
                    (b.dot(u), *b)
                }
            }
            Placed::Polytope(poly, _, frame) => {
                let (v, _) = poly.support_brute(frame.inverse_vector(u));
                let x = frame.point(poly.vertex(v));
                (x.dot(u), x)
            }
        }
    }
}

/// The cores' closest points (world), distance and features; `overlap` when they share a
/// point.
struct CoreClosest {
    distance: f64,
    pa: DVec3,
    pb: DVec3,
    features: (FeatureId, FeatureId),
    overlap: bool,
}

impl CoreClosest {
    fn swapped(self) -> Self {
        CoreClosest {
            pa: self.pb,
            pb: self.pa,
            features: (self.features.1, self.features.0),
            ..self
        }
    }
}

fn segment_feature(s: f64) -> FeatureId {
    if s <= 0.0 {
        FeatureId::Vertex(0)
    } else if s >= 1.0 {
        FeatureId::Vertex(1)
    } else {
        FeatureId::Edge(0)
    }
}

fn closest_pair(pa: DVec3, pb: DVec3, features: (FeatureId, FeatureId)) -> CoreClosest {
    let distance = gap(pa, pb);
    CoreClosest {
        distance,
        pa,
        pb,
        features,
        overlap: distance == 0.0,
    }
}

fn core_closest(a: &Placed<'_>, b: &Placed<'_>) -> CoreClosest {
    let v0 = FeatureId::Vertex(0);
    match (a, b) {
        (Placed::Point(p), Placed::Point(q)) => closest_pair(*p, *q, (v0, v0)),
        (Placed::Point(p), Placed::Segment(s0, s1)) => {
            let (q, t) = closest_on_segment(*s0, *s1, *p);
            closest_pair(*p, q, (v0, segment_feature(t)))
        }
        (Placed::Segment(..), Placed::Point(_)) => core_closest(b, a).swapped(),
        (Placed::Segment(p0, p1), Placed::Segment(q0, q1)) => {
            let (s, t) = segments_closest_params(*p0, *p1, *q0, *q1);
            closest_pair(
                *p0 + (*p1 - *p0) * s,
                *q0 + (*q1 - *q0) * t,
                (segment_feature(s), segment_feature(t)),
            )
        }
        (Placed::Point(p), Placed::Polytope(poly, _, frame)) => point_polytope(*p, poly, frame),
        (Placed::Segment(s0, s1), Placed::Polytope(poly, _, frame)) => {
            segment_polytope(*s0, *s1, poly, frame)
        }
        (Placed::Polytope(..), Placed::Point(_) | Placed::Segment(..)) => {
            core_closest(b, a).swapped()
        }
        (Placed::Polytope(pa, posa, ..), Placed::Polytope(pb, posb, ..)) => {
            polytope_polytope(pa, posa, pb, posb)
        }
    }
}

/// Largest height of a body-frame point over the polytope's face planes, and the face.
fn height(poly: &ConvexPolytope, x: DVec3) -> (f64, u32) {
    (0..poly.num_faces())
        .map(|f| poly.face_normal(f).dot(x) - poly.face_offset(f))
        .enumerate()
        .fold((f64::NEG_INFINITY, 0), |best, (f, h)| {
            if h > best.0 { (h, f as u32) } else { best }
        })
}

/// The walk's tolerance about the body-frame point `x` (as the closest-feature walk's).
fn walk_tolerance(poly: &ConvexPolytope, x: DVec3) -> f64 {
    walk::TOL_REL * (poly.reach() + x.abs().max_element())
}

/// The feature of `poly` closest to the body-frame point `x` outside it and its closest
/// point: the Voronoi walk from `start`, enumeration where it gives up.
pub(crate) fn closest_on_polytope(
    poly: &ConvexPolytope,
    x: DVec3,
    start: FeatureId,
) -> (FeatureId, DVec3) {
    point_walk::closest_to_point(poly, x, start, walk_tolerance(poly, x)).unwrap_or_else(|| {
        let (feature, _, q) = brute::closest_feature(poly, x);
        (feature, q)
    })
}

fn point_polytope(p: DVec3, poly: &ConvexPolytope, frame: &Placement) -> CoreClosest {
    let x = frame.inverse_point(p);
    let (above, face) = height(poly, x);
    if above <= 0.0 {
        return CoreClosest {
            distance: 0.0,
            pa: p,
            pb: p,
            features: (FeatureId::Vertex(0), FeatureId::Vertex(0)),
            overlap: true,
        };
    }
    // From the face the point is highest over, which it is outside of.
    let (feature, q) = closest_on_polytope(poly, x, FeatureId::Face(face));
    closest_pair(p, frame.point(q), (FeatureId::Vertex(0), feature))
}

fn segment_polytope(s0: DVec3, s1: DVec3, poly: &ConvexPolytope, frame: &Placement) -> CoreClosest {
    let (t, h) = (frame.inverse_point(s0), frame.inverse_point(s1));
    // Cyrus–Beck: the part of the segment inside every face's half-space.
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    for f in 0..poly.num_faces() {
        let n = poly.face_normal(f);
        let (at, slope) = (n.dot(t) - poly.face_offset(f), n.dot(h - t));
        if slope == 0.0 {
            if at > 0.0 {
                lo = 2.0;
                break;
            }
        } else {
            let s = -at / slope;
            if slope > 0.0 {
                hi = hi.min(s);
            } else {
                lo = lo.max(s);
            }
        }
        if lo > hi {
            break;
        }
    }
    if lo <= hi {
        let x = s0 + (s1 - s0) * lo;
        return CoreClosest {
            distance: 0.0,
            pa: x,
            pb: x,
            features: (segment_feature(lo), FeatureId::Vertex(0)),
            overlap: true,
        };
    }
    let (_, face) = height(poly, t);
    let tol = walk_tolerance(poly, t.abs().max(h.abs()));
    let start = FeatureId::Face(face);
    if let Some((s, feature, q)) = point_walk::closest_to_segment(poly, t, h, start, tol) {
        return closest_pair(
            s0 + (s1 - s0) * s,
            frame.point(q),
            (segment_feature(s), feature),
        );
    }
    let mut best = point_polytope(s0, poly, frame);
    let end = point_polytope(s1, poly, frame);
    if end.distance < best.distance {
        best = CoreClosest {
            features: (FeatureId::Vertex(1), end.features.1),
            ..end
        };
    }
    for e in 0..poly.num_edges() {
        let [v0, v1] = poly.edge_vertices(e);
        let (q0, q1) = (frame.point(poly.vertex(v0)), frame.point(poly.vertex(v1)));
        let (s, u) = segments_closest_params(s0, s1, q0, q1);
        let (pa, pb) = (s0 + (s1 - s0) * s, q0 + (q1 - q0) * u);
        let d = pa.distance(pb);
        if d < best.distance {
            best = closest_pair(pa, pb, (segment_feature(s), FeatureId::Edge(e as u32)));
        }
    }
    best
}

fn polytope_polytope(a: &ConvexPolytope, pa: &Pose, b: &ConvexPolytope, pb: &Pose) -> CoreClosest {
    let w = walk::walk(&WalkInput::new(a, *pa, b, *pb));
    let overlap = match w.state {
        WalkState::Penetrating | WalkState::Touching => true,
        WalkState::Separated => false,
        WalkState::Failed(_) => sat::intersects(a, pa, b, pb),
    };
    if overlap {
        return CoreClosest {
            distance: 0.0,
            pa: w.point_a,
            pb: w.point_b,
            features: w.features,
            overlap,
        };
    }
    if let WalkState::Failed(_) = w.state {
        let c = brute::polytope_closest_pair(a, pa, b, pb);
        return closest_pair(c.point_a, c.point_b, c.features);
    }
    closest_pair(w.point_a, w.point_b, w.features)
}

/// The distance between two rounded bodies.
pub fn distance(a: &Rounded, pose_a: &Pose, b: &Rounded, pose_b: &Pose) -> RoundedDistance {
    let (ca, cb) = (place(a, pose_a), place(b, pose_b));
    let c = core_closest(&ca, &cb);
    let radii = a.radius + b.radius;
    if c.overlap {
        // Touching only when neither has a radius and the cores do not overlap.
        let contact = if radii == 0.0 && core_depth(&ca, &cb).depth == 0.0 {
            Contact::Touching
        } else {
            Contact::Penetrating
        };
        return RoundedDistance {
            contact,
            distance: 0.0,
            point_a: c.pa,
            point_b: c.pb,
            normal: DVec3::ZERO,
            features: c.features,
        };
    }
    let n = (c.pb - c.pa) / c.distance;
    let gap = c.distance - radii;
    let touch = touch_rounding(&c, radii);
    RoundedDistance {
        contact: if gap > touch {
            Contact::Separated
        } else if gap >= -touch {
            Contact::Touching
        } else {
            Contact::Penetrating
        },
        distance: if gap > touch { gap } else { 0.0 },
        point_a: c.pa + n * a.radius,
        point_b: c.pb - n * b.radius,
        normal: n,
        features: c.features,
    }
}

/// Whether two rounded bodies touch or overlap.
pub fn collide(a: &Rounded, pose_a: &Pose, b: &Rounded, pose_b: &Pose) -> bool {
    distance(a, pose_a, b, pose_b).contact != Contact::Separated
}

/// How two rounded bodies penetrate, or `None` when they are apart.
pub fn penetration(
    a: &Rounded,
    pose_a: &Pose,
    b: &Rounded,
    pose_b: &Pose,
) -> Option<RoundedPenetration> {
    let (ca, cb) = (place(a, pose_a), place(b, pose_b));
    let c = core_closest(&ca, &cb);
    let radii = a.radius + b.radius;
    // Apart as `distance` says (cores a few units apart at 1e15 were within the rounding
    // below, and penetrated by the radii): surfaces apart by their cores' distance less
    // the radii penetrate by no more than the radii less it, and touch within its rounding.
    let touch = touch_rounding(&c, radii);
    let gap = (!c.overlap).then_some(c.distance - radii);
    if gap.is_some_and(|g| g > touch) {
        return None;
    }
    // Cores nearer than their coordinates' rounding share a point as far as f64 can tell:
    // their closest points' difference is rounding and gives no direction (a ball centred
    // on a capsule's axis at z = 0.3 is 5.6e-17 off it, and that difference, along the
    // axis, was the normal: moving the ball by the depth along it left it inside).
    let rounding = cores_rounding(&c, &ca, &cb);
    let core = if c.overlap || c.distance <= rounding {
        let deepest = core_depth(&ca, &cb);
        if deepest.depth <= rounding && c.distance <= rounding {
            // Cores that only touch (crossing segments meeting at a point, a point on a
            // segment): where they touch, rather than the support points along the
            // normal, which on a segment square to it may be either end.
            RoundedPenetration {
                point_a: c.pa,
                point_b: c.pb,
                features: c.features,
                ..deepest
            }
        } else {
            deepest
        }
    } else {
        let n = (c.pb - c.pa) / c.distance;
        RoundedPenetration {
            depth: -c.distance,
            normal: n,
            point_a: c.pa,
            point_b: c.pb,
            features: c.features,
            arbitrary_normal: false,
        }
    };
    let depth = match gap {
        Some(g) if g >= -touch => 0.0,
        Some(g) => -g,
        None => core.depth + radii,
    };
    Some(RoundedPenetration {
        depth,
        point_a: core.point_a + core.normal * a.radius,
        point_b: core.point_b - core.normal * b.radius,
        ..core
    })
}

/// How far apart (or into each other) surfaces may be computed and still touch: the
/// rounding of placing the cores and adding the radii, 4ε of the largest magnitude
/// involved (4 to 8 ulps of it) (a capsule resting on a box, its core's end at 0.4 − 0.1 as placed, came out
/// 2.8e-17 apart where the doubles as written touch exactly).
fn touch_rounding(c: &CoreClosest, radii: f64) -> f64 {
    4.0 * f64::EPSILON * (c.pa.abs().max_element().max(c.pb.abs().max_element()) + radii)
}

/// How near the cores' closest points may be and still be their coordinates' rounding:
/// 64 ulps of the points' largest coordinate and the cores' extents (a segment's closest
/// point is found along its length, a polytope's over its reach).
fn cores_rounding(c: &CoreClosest, ca: &Placed<'_>, cb: &Placed<'_>) -> f64 {
    let extent = |p: &Placed<'_>| match p {
        Placed::Point(_) => 0.0,
        Placed::Segment(s0, s1) => s0.distance(*s1),
        Placed::Polytope(poly, ..) => poly.reach(),
    };
    let scale = c.pa.abs().max_element().max(c.pb.abs().max_element()) + extent(ca) + extent(cb);
    64.0 * f64::EPSILON * scale
}

/// The cores' penetration (they share a point): depth ≥ 0, normal, deepest points.
fn core_depth(ca: &Placed<'_>, cb: &Placed<'_>) -> RoundedPenetration {
    if let (Placed::Polytope(pa, posa, ..), Placed::Polytope(pb, posb, ..)) = (ca, cb) {
        let found = depth::walk(&DepthInput::new(pa, *posa, pb, *posb))
            .or_else(|| depth::enumerate(pa, posa, pb, posb));
        if let Some(p) = found {
            return p.into();
        }
    }
    if let Some(p) = small_core_in_polytope(ca, cb) {
        return p;
    }
    let (mut dirs, arbitrary) = candidate_normals(ca, cb);
    dirs.extend(dirs.clone().into_iter().map(|u| -u));
    let mut best: Option<(f64, DVec3)> = None;
    for u in dirs {
        let s = ca.support(u).0 + cb.support(-u).0;
        if best.is_none_or(|(b, _)| s < b) {
            best = Some((s, u));
        }
    }
    let (depth, normal) = best.expect("at least one candidate direction");
    RoundedPenetration {
        depth: depth.max(0.0),
        normal,
        point_a: ca.support(normal).1,
        point_b: cb.support(-normal).1,
        features: (FeatureId::Vertex(0), FeatureId::Vertex(0)),
        arbitrary_normal: arbitrary,
    }
}

/// A point or a segment core in a polytope (they share a point): the least of s(u) over
/// the facet normals of their Minkowski difference, each s with no support query. A
/// face's outward normal n has the polytope's support on the face (its plane's offset)
/// and the core's at its end deepest along −n; an edge e has a facet with the segment
/// where the direction u ⟂ both, of the sign that lies on e's Gauss arc (between its
/// faces' normals), and the polytope's support at e's ends. `None` for other cores.
fn small_core_in_polytope(ca: &Placed<'_>, cb: &Placed<'_>) -> Option<RoundedPenetration> {
    // The core's ends in the polytope's frame, and the sign of A-to-B against the
    // polytope's outward directions.
    let (ends, poly, frame, sign) = match (ca, cb) {
        (Placed::Point(p), Placed::Polytope(poly, _, frame)) => ([*p, *p], *poly, frame, -1.0),
        (Placed::Polytope(poly, _, frame), Placed::Point(p)) => ([*p, *p], *poly, frame, 1.0),
        (Placed::Segment(s0, s1), Placed::Polytope(poly, _, frame)) => {
            ([*s0, *s1], *poly, frame, -1.0)
        }
        (Placed::Polytope(poly, _, frame), Placed::Segment(s0, s1)) => {
            ([*s0, *s1], *poly, frame, 1.0)
        }
        _ => return None,
    };
    let [t, h] = ends.map(|x| frame.inverse_point(x));
    // s along the polytope's outward unit u, its support there being `reach`.
    let s_of = |u: DVec3, reach: f64| reach - u.dot(t).min(u.dot(h));
    let mut best = (f64::INFINITY, DVec3::X, FeatureId::Face(0));
    for f in 0..poly.num_faces() {
        let n = poly.face_normal(f);
        let s = s_of(n, poly.face_offset(f));
        if s < best.0 {
            best = (s, n, FeatureId::Face(f as u32));
        }
    }
    let axis = h - t;
    if axis != DVec3::ZERO {
        for e in 0..poly.num_edges() {
            let [v0, v1] = poly.edge_vertices(e);
            let p0 = poly.vertex(v0);
            let Some(u) = axis.cross(poly.vertex(v1) - p0).try_normalize() else {
                continue;
            };
            let arc = poly.edge_arc(e);
            let on_arc = |u: DVec3| u.dot(arc.tangents[0]) >= 0.0 && u.dot(arc.tangents[1]) >= 0.0;
            for u in [u, -u] {
                if arc.plane != DVec3::ZERO && on_arc(u) {
                    let s = s_of(u, u.dot(p0));
                    if s < best.0 {
                        best = (s, u, FeatureId::Edge(e as u32));
                    }
                }
            }
        }
    }
    let (s, u, facet) = best;
    // The witnesses: the core's point q whose foot q + s·u along the normal lies on the
    // facet (the facet of A − B nearest the origin holds the origin's foot s·u, so such a
    // q exists), and that foot.
    let param = match facet {
        FeatureId::Edge(e) => {
            // Square to both the core and the edge: the lines' closest points.
            let [v0, v1] = poly.edge_vertices(e as usize);
            segments_closest_params(t, h, poly.vertex(v0), poly.vertex(v1)).0
        }
        // A face: the part of the core whose foot falls in the face, between its side
        // planes, and there its point deepest along −u (the middle where the core lies
        // along the face). The core's deepest end when rounding leaves no part.
        face => {
            let (mut lo, mut hi) = (0.0_f64, 1.0_f64);
            for plane in poly.voronoi_planes(face) {
                // Above the plane where d0 + λ (d1 − d0) ≥ 0.
                let (d0, d1) = (plane.signed_distance(t), plane.signed_distance(h));
                if d0 < 0.0 && d1 < 0.0 {
                    (lo, hi) = (1.0, 0.0);
                } else if d0 < 0.0 {
                    lo = lo.max(d0 / (d0 - d1));
                } else if d1 < 0.0 {
                    hi = hi.min(d0 / (d0 - d1));
                }
            }
            let (ut, uh) = (u.dot(t), u.dot(h));
            match (lo <= hi, ut.total_cmp(&uh)) {
                (true, std::cmp::Ordering::Less) => lo,
                (true, std::cmp::Ordering::Greater) => hi,
                (true, std::cmp::Ordering::Equal) => 0.5 * (lo + hi),
                (false, std::cmp::Ordering::Greater) => 1.0,
                (false, _) => 0.0,
            }
        }
    };
    let q = t + (h - t) * param;
    let (in_core, on_poly) = (frame.point(q), frame.point(q + u * s));
    let core_feature = if t == h {
        FeatureId::Vertex(0)
    } else {
        segment_feature(param)
    };
    let (point_a, point_b, features) = if sign > 0.0 {
        (on_poly, in_core, (facet, core_feature))
    } else {
        (in_core, on_poly, (core_feature, facet))
    };
    Some(RoundedPenetration {
        depth: s.max(0.0),
        normal: frame.vector(u) * sign,
        point_a,
        point_b,
        features,
        arbitrary_normal: false,
    })
}

/// Facet normals of the cores' Minkowski difference (one sign each), and whether the
/// cores leave the normal arbitrary.
fn candidate_normals(a: &Placed<'_>, b: &Placed<'_>) -> (Vec<DVec3>, bool) {
    let faces = |poly: &ConvexPolytope, frame: &Placement| -> Vec<DVec3> {
        (0..poly.num_faces())
            .map(|f| frame.vector(poly.face_normal(f)))
            .collect()
    };
    let edges = |poly: &ConvexPolytope, frame: &Placement| -> Vec<DVec3> {
        (0..poly.num_edges())
            .map(|e| {
                let [v0, v1] = poly.edge_vertices(e);
                frame.vector(poly.vertex(v1) - poly.vertex(v0))
            })
            .collect()
    };
    let perpendiculars = |d: DVec3| {
        let d = d.try_normalize().unwrap_or(DVec3::Z);
        let p = d.any_orthonormal_vector();
        vec![p, d.cross(p)]
    };
    match (a, b) {
        (Placed::Point(_), Placed::Point(_)) => (vec![DVec3::X], true),
        (Placed::Point(_), Placed::Segment(s0, s1))
        | (Placed::Segment(s0, s1), Placed::Point(_)) => (perpendiculars(*s1 - *s0), true),
        (Placed::Segment(p0, p1), Placed::Segment(q0, q1)) => {
            let (da, db) = (*p1 - *p0, *q1 - *q0);
            match da.cross(db).try_normalize() {
                Some(n) => (vec![n], false),
                None => (perpendiculars(da), true),
            }
        }
        (Placed::Point(_), Placed::Polytope(poly, _, frame))
        | (Placed::Polytope(poly, _, frame), Placed::Point(_)) => (faces(poly, frame), false),
        (Placed::Segment(s0, s1), Placed::Polytope(poly, _, frame))
        | (Placed::Polytope(poly, _, frame), Placed::Segment(s0, s1)) => {
            let s = *s1 - *s0;
            let mut dirs = faces(poly, frame);
            dirs.extend(
                edges(poly, frame)
                    .into_iter()
                    .filter_map(|e| s.cross(e).try_normalize()),
            );
            (dirs, false)
        }
        (Placed::Polytope(pa, _, posa), Placed::Polytope(pb, _, posb)) => {
            let mut dirs = faces(pa, posa);
            dirs.extend(faces(pb, posb));
            for ea in edges(pa, posa) {
                dirs.extend(
                    edges(pb, posb)
                        .into_iter()
                        .filter_map(|eb| ea.cross(eb).try_normalize()),
                );
            }
            (dirs, false)
        }
    }
}

/// A rounded body for a plain polytope (radius 0).
pub fn plain(poly: Arc<ConvexPolytope>) -> Rounded {
    Rounded {
        core: Core::Polytope(poly),
        radius: 0.0,
    }
}

/// The cores' separation along the unit direction `n` (from A to B):
/// `min over B's core of x·n − max over A's core of x·n`, by support queries. Positive:
/// `n` separates the cores by that much.
pub fn core_separation(a: &Rounded, pose_a: &Pose, b: &Rounded, pose_b: &Pose, n: DVec3) -> f64 {
    let (ca, cb) = (place(a, pose_a), place(b, pose_b));
    -cb.support(-n).0 - ca.support(n).0
}
