//! The closest-feature walk: Lin–Canny (Lin 1993, ch. 3 and appendix B) in the form of
//! Mirtich's V-Clip (1998), which also detects penetration.
//!
//! The state is a pair of features, one per body. Two features are the closest pair iff
//! each one's closest point to the other lies in the other's Voronoi region. Each step
//! tests the pair and, when a test fails, moves one feature to the neighbour behind the
//! violated Voronoi plane; the distance between the features does not increase, so from a
//! previous frame's pair (coherence) the walk usually ends in 0–2 steps.
//!
//! States: vertex–vertex, vertex–edge, vertex–face, edge–edge, edge–face (and their
//! mirrors). Face–face never occurs: like V-Clip, the edge–face state moves the edge to a
//! vertex, so every terminal pair has a unique closest-point pair. An edge is tested
//! against a region by clipping it to the region's planes; where the clipped part is not
//! empty, the sign of the derivative of the distance at the clip points says whether the
//! minimum lies beyond a plane (then the walk moves there). Where an edge misses a region
//! between two planes, the walk moves to the neighbour whose region holds the point of
//! the edge closest to the current feature (the distance then strictly drops).
//!
//! Penetration: an edge that crosses a face plane inside the face's prism, or a vertex
//! below a face with every face of that body above it (V-Clip's local-minimum search over
//! all faces). Termination: steps are bounded by `max_steps` and a pair seen twice ends
//! the walk; both return `Failed`, never a loop.

use glam::{DQuat, DVec3};

use super::sat;
use crate::bodies::Pose;
use crate::geometry::brute::closest_on_segment;
use crate::geometry::{ConvexPolytope, FeatureId, VoronoiPlane};

/// How a walk ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WalkState {
    /// The bodies are disjoint (or touch: distance 0); the result is exact.
    Separated,
    /// The bodies overlap; `distance` is 0 and the points are a witness of the overlap.
    Penetrating,
    /// The walk gave up; the result is the last pair's and must not be trusted.
    Failed(WalkFailure),
}

/// Why a walk failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WalkFailure {
    /// `max_steps` steps were taken.
    StepLimit,
    /// A feature pair came back (a tie the rules did not break).
    Cycle,
}

/// What the walk needs.
#[derive(Clone, Copy, Debug)]
pub struct WalkInput<'a> {
    /// Body A.
    pub a: &'a ConvexPolytope,
    /// Pose of A.
    pub pose_a: Pose,
    /// Body B.
    pub b: &'a ConvexPolytope,
    /// Pose of B.
    pub pose_b: Pose,
    /// Where to start: a previous result's `features` (warm start), or `None` (cold).
    pub start: Option<(FeatureId, FeatureId)>,
    /// Step bound; `None` picks 4 × (features of A + features of B) + 64.
    pub max_steps: Option<u32>,
}

impl<'a> WalkInput<'a> {
    /// A cold walk (no start pair) with the default step bound.
    pub fn new(a: &'a ConvexPolytope, pose_a: Pose, b: &'a ConvexPolytope, pose_b: Pose) -> Self {
        WalkInput {
            a,
            pose_a,
            b,
            pose_b,
            start: None,
            max_steps: None,
        }
    }
}

/// What the walk found.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WalkOutput {
    /// How it ended.
    pub state: WalkState,
    /// Distance between the bodies (0 when penetrating).
    pub distance: f64,
    /// Closest point on A, world space.
    pub point_a: DVec3,
    /// Closest point on B, world space.
    pub point_b: DVec3,
    /// The closest features (A's, B's): the cache for the next query.
    pub features: (FeatureId, FeatureId),
    /// Steps taken.
    pub steps: u32,
}

/// A per-pair cache: keeps the last closest features so a sequence of slightly moved poses
/// is answered in expected constant time.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WalkCache {
    /// The last closest features, if any.
    pub features: Option<(FeatureId, FeatureId)>,
}

impl WalkCache {
    /// Walks from the cached pair and remembers the new one.
    pub fn query(
        &mut self,
        a: &ConvexPolytope,
        pose_a: Pose,
        b: &ConvexPolytope,
        pose_b: Pose,
    ) -> WalkOutput {
        let out = walk(&WalkInput {
            start: self.features,
            ..WalkInput::new(a, pose_a, b, pose_b)
        });
        self.features = match out.state {
            WalkState::Failed(_) => None,
            _ => Some(out.features),
        };
        out
    }
}

/// A plane in the walk's frame.
#[derive(Clone, Copy, Debug)]
struct Plane {
    normal: DVec3,
    offset: f64,
    neighbor: FeatureId,
}

impl Plane {
    fn signed(&self, x: DVec3) -> f64 {
        self.normal.dot(x) - self.offset
    }
}

/// A body placed in the walk's frame (A's body frame).
struct Body<'a> {
    poly: &'a ConvexPolytope,
    rotation: DQuat,
    translation: DVec3,
    identity: bool,
}

impl Body<'_> {
    fn point(&self, p: DVec3) -> DVec3 {
        if self.identity {
            p
        } else {
            self.rotation * p + self.translation
        }
    }

    fn vector(&self, v: DVec3) -> DVec3 {
        if self.identity { v } else { self.rotation * v }
    }

    fn vertex(&self, v: u32) -> DVec3 {
        self.point(self.poly.vertex(v))
    }

    fn edge(&self, e: u32) -> (DVec3, DVec3) {
        let [a, b] = self.poly.edge_vertices(e as usize);
        (self.vertex(a), self.vertex(b))
    }

    fn plane(&self, p: &VoronoiPlane) -> Plane {
        let normal = self.vector(p.normal);
        Plane {
            normal,
            offset: p.offset
                + if self.identity {
                    0.0
                } else {
                    normal.dot(self.translation)
                },
            neighbor: p.neighbor,
        }
    }

    fn planes(&self, f: FeatureId) -> impl Iterator<Item = Plane> + '_ {
        self.poly.voronoi_planes(f).iter().map(|p| self.plane(p))
    }

    /// Unit normal and offset of face `f`.
    fn face(&self, f: u32) -> (DVec3, f64) {
        let n = self.vector(self.poly.face_normal(f as usize));
        let d = self.poly.face_offset(f as usize)
            + if self.identity {
                0.0
            } else {
                n.dot(self.translation)
            };
        (n, d)
    }

    /// Closest point of feature `f` to the point `x`.
    fn closest_to(&self, f: FeatureId, x: DVec3) -> DVec3 {
        match f {
            FeatureId::Vertex(v) => self.vertex(v),
            FeatureId::Edge(e) => {
                let (t, h) = self.edge(e);
                closest_on_segment(t, h, x).0
            }
            FeatureId::Face(face) => {
                let (n, d) = self.face(face);
                x - n * (n.dot(x) - d)
            }
        }
    }
}

/// Result of clipping an edge against a Voronoi region.
enum Clip {
    /// The part `[lo, hi]` of the edge is inside; the planes that cut it, if any.
    Inside {
        lo: f64,
        hi: f64,
        n_lo: Option<FeatureId>,
        n_hi: Option<FeatureId>,
    },
    /// No part of the edge is inside.
    Excluded,
}

/// Clips the segment `t + λ (h − t)`, λ ∈ [0, 1], against planes (region side ≥ 0).
fn clip_edge(t: DVec3, h: DVec3, planes: impl Iterator<Item = Plane>) -> Clip {
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    let (mut n_lo, mut n_hi) = (None, None);
    for p in planes {
        let (dt, dh) = (p.signed(t), p.signed(h));
        if dt < 0.0 && dh < 0.0 {
            return Clip::Excluded;
        }
        if dt < 0.0 {
            let l = dt / (dt - dh);
            if l > lo {
                lo = l;
                n_lo = Some(p.neighbor);
            }
        } else if dh < 0.0 {
            let l = dt / (dt - dh);
            if l < hi {
                hi = l;
                n_hi = Some(p.neighbor);
            }
        }
        if lo > hi {
            return Clip::Excluded;
        }
    }
    Clip::Inside { lo, hi, n_lo, n_hi }
}

/// The plane of `planes` most violated by `x`, if any is violated.
fn most_violated(planes: impl Iterator<Item = Plane>, x: DVec3) -> Option<FeatureId> {
    let mut best: Option<(f64, FeatureId)> = None;
    for p in planes {
        let s = p.signed(x);
        if s < 0.0 && best.is_none_or(|(b, _)| s < b) {
            best = Some((s, p.neighbor));
        }
    }
    best.map(|(_, n)| n)
}

/// Closest points of two segments (Ericson, Real-Time Collision Detection, 5.1.9).
pub fn segments_closest(p0: DVec3, p1: DVec3, q0: DVec3, q1: DVec3) -> (DVec3, DVec3) {
    let (s, t) = segments_closest_params(p0, p1, q0, q1);
    (p0 + (p1 - p0) * s, q0 + (q1 - q0) * t)
}

/// Parameters `(s, t)` in [0, 1] of the closest points of two segments.
fn segments_closest_params(p0: DVec3, p1: DVec3, q0: DVec3, q1: DVec3) -> (f64, f64) {
    let (d1, d2, r) = (p1 - p0, q1 - q0, p0 - q0);
    let (a, e, f) = (d1.length_squared(), d2.length_squared(), d2.dot(r));
    if a == 0.0 && e == 0.0 {
        return (0.0, 0.0);
    }
    if a == 0.0 {
        return (0.0, (f / e).clamp(0.0, 1.0));
    }
    let c = d1.dot(r);
    if e == 0.0 {
        return ((-c / a).clamp(0.0, 1.0), 0.0);
    }
    let b = d1.dot(d2);
    let denom = a * e - b * b;
    let s = if denom > 0.0 {
        ((b * f - c * e) / denom).clamp(0.0, 1.0)
    } else {
        0.0
    };
    let t = (b * s + f) / e;
    if t < 0.0 {
        ((-c / a).clamp(0.0, 1.0), 0.0)
    } else if t > 1.0 {
        (((b - c) / a).clamp(0.0, 1.0), 1.0)
    } else {
        (s, t)
    }
}

enum Step {
    Continue,
    Done,
    Penetrating(DVec3),
}

/// The walk. See the module comment.
pub fn walk(input: &WalkInput<'_>) -> WalkOutput {
    let inv = input.pose_a.rotation.inverse();
    let a = Body {
        poly: input.a,
        rotation: DQuat::IDENTITY,
        translation: DVec3::ZERO,
        identity: true,
    };
    let b = Body {
        poly: input.b,
        rotation: inv * input.pose_b.rotation,
        translation: inv * (input.pose_b.translation - input.pose_a.translation),
        identity: false,
    };
    let (mut fa, mut fb) = input
        .start
        .filter(|&(x, y)| valid(input.a, x) && valid(input.b, y))
        .unwrap_or_else(|| cold_start(&a, &b));
    let max_steps = input.max_steps.unwrap_or_else(|| {
        let count = |p: &ConvexPolytope| (p.num_vertices() + p.num_edges() + p.num_faces()) as u32;
        4 * (count(input.a) + count(input.b)) + 64
    });
    let mut seen: Vec<(FeatureId, FeatureId)> = Vec::new();
    let mut steps = 0;
    let finish = |state, fa, fb, steps, pa: DVec3, pb: DVec3| {
        let to_world = |p: DVec3| input.pose_a.rotation * p + input.pose_a.translation;
        WalkOutput {
            state,
            distance: if state == WalkState::Penetrating {
                0.0
            } else {
                pa.distance(pb)
            },
            point_a: to_world(pa),
            point_b: to_world(pb),
            features: (fa, fb),
            steps,
        }
    };
    loop {
        let step = match (fa, fb) {
            (FeatureId::Vertex(_), FeatureId::Vertex(_)) => vertex_vertex(&a, &mut fa, &b, &mut fb),
            (FeatureId::Vertex(_), FeatureId::Edge(_)) => vertex_edge(&a, &mut fa, &b, &mut fb),
            (FeatureId::Edge(_), FeatureId::Vertex(_)) => vertex_edge(&b, &mut fb, &a, &mut fa),
            (FeatureId::Vertex(_), FeatureId::Face(_)) => vertex_face(&a, &mut fa, &b, &mut fb),
            (FeatureId::Face(_), FeatureId::Vertex(_)) => vertex_face(&b, &mut fb, &a, &mut fa),
            (FeatureId::Edge(_), FeatureId::Edge(_)) => edge_edge(&a, &mut fa, &b, &mut fb),
            (FeatureId::Edge(_), FeatureId::Face(_)) => edge_face(&a, &mut fa, &b, &mut fb),
            (FeatureId::Face(_), FeatureId::Edge(_)) => edge_face(&b, &mut fb, &a, &mut fa),
            (FeatureId::Face(_), FeatureId::Face(_)) => face_face(&a, &mut fa, &b, &mut fb),
        };
        match step {
            Step::Done => {
                let (pa, pb) = closest_points(&a, fa, &b, fb);
                // At distance 0 the features alone cannot tell touching from overlap
                // (identical bodies at identical poses touch at every feature): the exact
                // separating-axis test decides.
                if pa == pb
                    && sat::max_separation(input.a, &input.pose_a, input.b, &input.pose_b).distance
                        < 0.0
                {
                    return finish(WalkState::Penetrating, fa, fb, steps, pa, pb);
                }
                return finish(WalkState::Separated, fa, fb, steps, pa, pb);
            }
            Step::Penetrating(witness) => {
                return finish(WalkState::Penetrating, fa, fb, steps, witness, witness);
            }
            Step::Continue => {
                steps += 1;
                let (pa, pb) = closest_points(&a, fa, &b, fb);
                if steps >= max_steps {
                    return finish(
                        WalkState::Failed(WalkFailure::StepLimit),
                        fa,
                        fb,
                        steps,
                        pa,
                        pb,
                    );
                }
                if seen.contains(&(fa, fb)) {
                    return finish(WalkState::Failed(WalkFailure::Cycle), fa, fb, steps, pa, pb);
                }
                seen.push((fa, fb));
            }
        }
    }
}

fn valid(p: &ConvexPolytope, f: FeatureId) -> bool {
    match f {
        FeatureId::Vertex(v) => (v as usize) < p.num_vertices(),
        FeatureId::Edge(e) => (e as usize) < p.num_edges(),
        FeatureId::Face(x) => (x as usize) < p.num_faces(),
    }
}

/// Vertices facing each other along the line between the bodies' centroids.
fn cold_start(a: &Body<'_>, b: &Body<'_>) -> (FeatureId, FeatureId) {
    let centroid =
        |p: &ConvexPolytope| p.vertices().iter().sum::<DVec3>() / p.num_vertices() as f64;
    let (ca, cb) = (a.point(centroid(a.poly)), b.point(centroid(b.poly)));
    let d = (cb - ca).try_normalize().unwrap_or(DVec3::X);
    let (va, _) = a.poly.support(d, 0);
    let (vb, _) = b.poly.support(b.rotation.inverse() * -d, 0);
    (FeatureId::Vertex(va), FeatureId::Vertex(vb))
}

/// Closest points of a terminal (or current) pair.
fn closest_points(a: &Body<'_>, fa: FeatureId, b: &Body<'_>, fb: FeatureId) -> (DVec3, DVec3) {
    match (fa, fb) {
        (FeatureId::Edge(x), FeatureId::Edge(y)) => {
            let (p0, p1) = a.edge(x);
            let (q0, q1) = b.edge(y);
            segments_closest(p0, p1, q0, q1)
        }
        (FeatureId::Vertex(v), _) => {
            let p = a.vertex(v);
            (p, b.closest_to(fb, p))
        }
        (_, FeatureId::Vertex(v)) => {
            let q = b.vertex(v);
            (a.closest_to(fa, q), q)
        }
        (FeatureId::Edge(x), FeatureId::Face(_)) => {
            let (p0, p1) = a.edge(x);
            let pa = if b.closest_to(fb, p0).distance(p0) <= b.closest_to(fb, p1).distance(p1) {
                p0
            } else {
                p1
            };
            (pa, b.closest_to(fb, pa))
        }
        (FeatureId::Face(_), FeatureId::Edge(y)) => {
            let (q0, q1) = b.edge(y);
            let pb = if a.closest_to(fa, q0).distance(q0) <= a.closest_to(fa, q1).distance(q1) {
                q0
            } else {
                q1
            };
            (a.closest_to(fa, pb), pb)
        }
        (FeatureId::Face(_), FeatureId::Face(_)) => {
            let q = b.vertex(b.poly.face_vertices(face_index(fb)).next().unwrap_or(0));
            (a.closest_to(fa, q), q)
        }
    }
}

fn face_index(f: FeatureId) -> usize {
    match f {
        FeatureId::Face(i) => i as usize,
        _ => 0,
    }
}

fn vertex_vertex(p: &Body<'_>, x: &mut FeatureId, q: &Body<'_>, y: &mut FeatureId) -> Step {
    let (FeatureId::Vertex(vp), FeatureId::Vertex(vq)) = (*x, *y) else {
        unreachable!()
    };
    let (u, w) = (p.vertex(vp), q.vertex(vq));
    if let Some(n) = most_violated(p.planes(*x), w) {
        *x = n;
        return Step::Continue;
    }
    if let Some(n) = most_violated(q.planes(*y), u) {
        *y = n;
        return Step::Continue;
    }
    Step::Done
}

/// The edge of face `f` nearest to the segment `(t, h)`.
fn nearest_boundary_edge(p: &Body<'_>, f: u32, t: DVec3, h: DVec3) -> FeatureId {
    let mut best = (f64::INFINITY, FeatureId::Face(f));
    for e in p.poly.face_edges(f as usize) {
        let (a0, a1) = p.edge(e);
        let (c, d) = segments_closest(t, h, a0, a1);
        let dist = c.distance_squared(d);
        if dist < best.0 {
            best = (dist, FeatureId::Edge(e));
        }
    }
    best.1
}

/// Moves `x` when the edge `(t, h)` misses `x`'s region or its distance to `x` is smallest
/// beyond a clip plane. Returns `Some(step)` when `x` moved.
fn clip_against(p: &Body<'_>, x: &mut FeatureId, t: DVec3, h: DVec3) -> Option<Step> {
    let dir = h - t;
    match clip_edge(t, h, p.planes(*x)) {
        Clip::Excluded => {
            // Move to the neighbour holding the point of x closest to the edge: the edge
            // misses x's region, so that point is on x's boundary (a vertex of an edge,
            // an edge of a face) or, for a vertex, the region behind its most violated
            // plane holds the edge's closest point.
            match *x {
                FeatureId::Vertex(v) => {
                    let c = closest_on_segment(t, h, p.vertex(v)).0;
                    *x = most_violated(p.planes(*x), c)?;
                }
                FeatureId::Edge(e) => {
                    let (a0, a1) = p.edge(e);
                    let (sc, tx) = segments_closest_params(t, h, a0, a1);
                    let c = t + (h - t) * sc;
                    let [tail, head] = p.poly.edge_vertices(e as usize);
                    *x = if tx <= 0.0 {
                        FeatureId::Vertex(tail)
                    } else if tx >= 1.0 {
                        FeatureId::Vertex(head)
                    } else {
                        // Closest inside the edge: the face whose side the edge passes.
                        let planes: Vec<Plane> = p.planes(*x).collect();
                        most_violated(planes[2..].iter().copied(), c)
                            .or_else(|| most_violated(planes[..2].iter().copied(), c))?
                    };
                }
                FeatureId::Face(f) => {
                    *x = nearest_boundary_edge(p, f, t, h);
                }
            }
            Some(Step::Continue)
        }
        Clip::Inside { lo, hi, n_lo, n_hi } => {
            if let Some(n) = n_lo {
                let pt = t + dir * lo;
                if (pt - p.closest_to(*x, pt)).dot(dir) > 0.0 {
                    *x = n;
                    return Some(Step::Continue);
                }
            }
            if let Some(n) = n_hi {
                let pt = t + dir * hi;
                if (pt - p.closest_to(*x, pt)).dot(dir) < 0.0 {
                    *x = n;
                    return Some(Step::Continue);
                }
            }
            None
        }
    }
}

fn vertex_edge(p: &Body<'_>, x: &mut FeatureId, q: &Body<'_>, y: &mut FeatureId) -> Step {
    let (FeatureId::Vertex(v), FeatureId::Edge(e)) = (*x, *y) else {
        unreachable!()
    };
    let u = p.vertex(v);
    // The vertex against the edge's region: end planes first, then face planes.
    let planes: Vec<Plane> = q.planes(*y).collect();
    if let Some(n) = most_violated(planes[..2].iter().copied(), u)
        .or_else(|| most_violated(planes[2..].iter().copied(), u))
    {
        *y = n;
        return Step::Continue;
    }
    let (t, h) = q.edge(e);
    clip_against(p, x, t, h).unwrap_or(Step::Done)
}

fn edge_edge(p: &Body<'_>, x: &mut FeatureId, q: &Body<'_>, y: &mut FeatureId) -> Step {
    let (FeatureId::Edge(ex), FeatureId::Edge(ey)) = (*x, *y) else {
        unreachable!()
    };
    let (qt, qh) = q.edge(ey);
    if let Some(step) = clip_against(p, x, qt, qh) {
        return step;
    }
    let (pt, ph) = p.edge(ex);
    if let Some(step) = clip_against(q, y, pt, ph) {
        return step;
    }
    Step::Done
}

fn vertex_face(p: &Body<'_>, x: &mut FeatureId, q: &Body<'_>, y: &mut FeatureId) -> Step {
    let (FeatureId::Vertex(v), FeatureId::Face(f)) = (*x, *y) else {
        unreachable!()
    };
    let u = p.vertex(v);
    if let Some(n) = most_violated(q.planes(*y), u) {
        *y = n;
        return Step::Continue;
    }
    let (n, d) = q.face(f);
    let s = n.dot(u) - d;
    if s == 0.0 {
        return Step::Done; // touching
    }
    // An edge of the vertex along which the distance to the face plane drops.
    let mut best: Option<(f64, FeatureId)> = None;
    for &he in p.poly.vertex_out(v as usize) {
        let w = p.vertex(p.poly.half_edge_target(he));
        let rate = s.signum() * n.dot(w - u);
        if rate < 0.0 && best.is_none_or(|(r, _)| rate < r) {
            best = Some((rate, FeatureId::Edge(he / 2)));
        }
    }
    if let Some((_, edge)) = best {
        *x = edge;
        return Step::Continue;
    }
    if s > 0.0 {
        return Step::Done;
    }
    // Below the face: either inside q's body or past another of its faces.
    local_minimum(q, y, u)
}

/// V-Clip's local-minimum search: the face of `q` most above `u`, or penetration.
fn local_minimum(q: &Body<'_>, y: &mut FeatureId, u: DVec3) -> Step {
    let mut best = (f64::NEG_INFINITY, 0u32);
    for f in 0..q.poly.num_faces() as u32 {
        let (n, d) = q.face(f);
        let s = n.dot(u) - d;
        if s > best.0 {
            best = (s, f);
        }
    }
    if best.0 < 0.0 {
        return Step::Penetrating(u);
    }
    if FeatureId::Face(best.1) == *y {
        return Step::Done; // on the face's plane: touching
    }
    *y = FeatureId::Face(best.1);
    Step::Continue
}

fn edge_face(p: &Body<'_>, x: &mut FeatureId, q: &Body<'_>, y: &mut FeatureId) -> Step {
    let (FeatureId::Edge(e), FeatureId::Face(f)) = (*x, *y) else {
        unreachable!()
    };
    let (t, h) = p.edge(e);
    let dir = h - t;
    match clip_edge(t, h, q.planes(*y)) {
        Clip::Excluded => {
            *y = nearest_boundary_edge(q, f, t, h);
            Step::Continue
        }
        Clip::Inside { lo, hi, n_lo, n_hi } => {
            let (n, d) = q.face(f);
            let (pl, ph) = (t + dir * lo, t + dir * hi);
            let (sl, sh) = (n.dot(pl) - d, n.dot(ph) - d);
            if sl * sh < 0.0 || (sl == 0.0 && sh == 0.0) {
                // The edge crosses (or lies in) the face inside its prism.
                let witness = if sl == sh {
                    pl
                } else {
                    pl + (ph - pl) * (sl / (sl - sh))
                };
                return if sl * sh < 0.0 {
                    Step::Penetrating(witness)
                } else {
                    Step::Done
                };
            }
            let side = if sl != 0.0 { sl.signum() } else { sh.signum() };
            let rate = side * n.dot(dir); // d|s|/dλ
            if let Some(nb) = n_lo
                && rate > 0.0
            {
                *y = nb;
                return Step::Continue;
            }
            if let Some(nb) = n_hi
                && rate < 0.0
            {
                *y = nb;
                return Step::Continue;
            }
            // The minimum is at an end of the edge (or the edge is parallel): go to it.
            let [tail, head] = p.poly.edge_vertices(e as usize);
            *x = FeatureId::Vertex(if rate > 0.0 || (rate == 0.0 && lo == 0.0) {
                tail
            } else {
                head
            });
            Step::Continue
        }
    }
}

/// Face–face is not a V-Clip state; it can only be a warm start. Step A's face to the
/// vertex of it closest to B's face plane.
fn face_face(p: &Body<'_>, x: &mut FeatureId, q: &Body<'_>, y: &mut FeatureId) -> Step {
    let (FeatureId::Face(fp), FeatureId::Face(fq)) = (*x, *y) else {
        unreachable!()
    };
    let (n, d) = q.face(fq);
    let v = p
        .poly
        .face_vertices(fp as usize)
        .min_by(|&a, &b| {
            (n.dot(p.vertex(a)) - d)
                .abs()
                .total_cmp(&(n.dot(p.vertex(b)) - d).abs())
        })
        .unwrap_or(0);
    *x = FeatureId::Vertex(v);
    Step::Continue
}
