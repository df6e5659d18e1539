//! Penetration depth of two convex polytopes, exact: the Gauss-map walk (DEEP; Kim, Lin
//! and Manocha 2002) and the enumeration it is checked against.
//!
//! For convex A and B let s(d) = h_A(d) + h_B(−d), h the support function: the overlap of
//! their projections on the unit direction d. Some s(d) < 0 means d separates them;
//! otherwise the penetration depth is min over unit d of s(d), the distance from the
//! origin to the boundary of the Minkowski difference A − B, and the minimiser is the
//! contact normal (from A to B: moving B by depth · normal separates them). Every facet of
//! A − B is a face of A (with a vertex of B), a face of B (with a vertex of A), or an edge
//! of A with an edge of B whose arcs cross on the overlaid Gauss maps of A and −B; the
//! minimum is at one of their normals.
//!
//! - [`enumerate`] tries every candidate (the separating-axis test does: the largest
//!   separation over the candidates is minus the depth). O(E_A·E_B): the oracle.
//! - [`walk()`] moves between neighbouring facets: from the current facet, its neighbours on
//!   the overlaid Gauss maps of A and −B (the faces across a face's sides, edge pairs along
//!   the arcs through it whose arcs cross, and the faces at the other body's vertex) are
//!   the candidates, and the walk goes to the one with the smallest s while that is
//!   smaller beyond a tolerance. (Before: every facet sharing a vertex of A or of B with
//!   the current one. Cold walks took a little fewer steps, 0.8-1.3 a query against
//!   0.9-1.6 on the depth bench's sequences, but tested several times the edge pairs a
//!   step and took 10-35% longer.) Each candidate's s is taken from
//!   support queries, never assumed, so every value the walk holds is an upper bound of the
//!   depth. A local minimum of the facet graph need not be the global one (random pairs
//!   stop at the wrong edge–edge facet, not only deep overlaps), so at convergence the walk
//!   proves it global or restarts from a smaller candidate. First by an inscribed polytope
//!   (`inscribed`): points of A − B whose hull holds the ball of radius s less the
//!   tolerance, grown from the walk's facet as the expanding polytope algorithm grows its
//!   polytope, a few dozen support queries whatever the bodies' sizes; the pair's cache
//!   keeps it and the next query re-places its points (taken whole where the walk has
//!   moved to another facet), and with a cache every facet the
//!   walk reaches goes to it before its neighbours, so a coherent sequence mostly
//!   re-checks a few dozen triangles and walks no neighbours at all. Where it settles
//!   nothing, the walk checks every face axis and every edge pair.
//!   Most are dismissed by a lower bound of s, one dot product each (s(n) ≥ h_A(n) − n·q
//!   for any point q of B: the centroid, the deepest vertex, the last support vertex, with
//!   faces visited neighbour after neighbour) or, for an edge, over its whole Gauss arc
//!   (see `certify`); the surviving edges are paired by a sweep over their arcs' boxes,
//!   so only arcs that can cross are tested (`certify`).
//! - A cold query on small bodies whose centroids are near (crates spawned at one point)
//!   enumerates: the walk would descend and then prove a deep minimum of a nearly round
//!   A − B, which costs several times the enumeration of a few hundred candidates.
//! - [`DepthCache`] keeps, per pair, the facet to start from and what the last global
//!   check proved: the inscribed polytope, or the candidates near the depth with their
//!   bounds, lowered by how far the bodies can have moved since (`standing`), so a
//!   coherent sequence re-examines only the few that motion can have brought below the
//!   walk's s.

use std::cell::OnceCell;

use glam::DVec3;
use smallvec::SmallVec;

use super::placement::Placement;
use super::sat::{self, AxisSource};
use super::walk::{self, WalkInput};
use crate::bodies::Pose;
use crate::geometry::closest::segments_closest;
use crate::geometry::{ConvexPolytope, FeatureId};
use inscribed::Inscribed;
use standing::{Recheck, Standing};

mod certify;
mod inscribed;
mod standing;

/// How two overlapping bodies penetrate.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Penetration {
    /// The depth: the shortest translation of B that separates the bodies (0 touching).
    pub depth: f64,
    /// Unit normal, world space, from A to B.
    pub normal: DVec3,
    /// Deepest point on A's surface, world space: `(point_a − point_b)·normal = depth`.
    pub point_a: DVec3,
    /// Deepest point on B's surface, world space.
    pub point_b: DVec3,
    /// The features whose facet of A − B is nearest the origin: (face, vertex),
    /// (vertex, face) or (edge, edge). The cache for the next query.
    pub features: (FeatureId, FeatureId),
    /// Facets visited (0 for enumeration).
    pub steps: u32,
}

/// Relative size of the walk's tolerance: a candidate replaces the current facet only
/// when its s is smaller by more than this times the coordinates' size (rounding in s is
/// a few ulps of it), so rounding cannot send the walk round a cycle. Below depths of
/// 1e-4 of the size that is coarser than 1e-9 of the depth, so there a facet is compared
/// within 1e-9 of its s, never below 64 ulps of the reach (`Pair::tol_at`): a depth of
/// 6.8e-8 read 1.5e-13 deep of the least facet, accepted within the tolerance.
const TOL_REL: f64 = 1e-13;

/// The depth by enumeration of every candidate, or `None` when the bodies are separated.
/// The oracle for [`walk()`].
pub fn enumerate(
    a: &ConvexPolytope,
    pose_a: &Pose,
    b: &ConvexPolytope,
    pose_b: &Pose,
) -> Option<Penetration> {
    let (place, world_a) = Placement::pair(pose_a, pose_b);
    let best = sat::max_separation_placed(a, b, &place);
    if best.distance > 0.0 {
        return None;
    }
    let facet = match best.source {
        AxisSource::FaceA(f) => Facet::FaceA(face_index(f)),
        AxisSource::FaceB(f) => Facet::FaceB(face_index(f)),
        AxisSource::Edges(FeatureId::Edge(x), FeatureId::Edge(y)) => Facet::Edges(x, y),
        AxisSource::Edges(..) => unreachable!("edge axes come from edges"),
    };
    let pair = Pair::new(a, b, place);
    let found = pair.evaluate(facet, (0, 0))?;
    Some(found.answer(&pair, &world_a, (pose_a, pose_b), 0))
}

/// What the walk needs.
#[derive(Clone, Copy, Debug)]
pub struct DepthInput<'a> {
    /// Body A.
    pub a: &'a ConvexPolytope,
    /// Pose of A.
    pub pose_a: Pose,
    /// Body B.
    pub b: &'a ConvexPolytope,
    /// Pose of B.
    pub pose_b: Pose,
    /// Where to start: a previous answer's features (warm start), or `None` (the facet
    /// [`DepthInput::toward`] points at, else the one the line between the centroids
    /// points at).
    pub start: Option<(FeatureId, FeatureId)>,
    /// A direction to start a cold walk from: the GPU's sampled estimate.
    pub toward: Option<Toward>,
}

/// A cold walk's start from a sampled direction (the GPU's depth estimate): the facet of
/// A or of B whose Gauss-map region is nearest `normal`, found around the support vertices
/// there instead of over every face. Only where the walk starts: the answer is the same.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Toward {
    /// The direction of least sampled s, world space, from A to B.
    pub normal: DVec3,
    /// A's and B's support vertices there, where the support queries start (any index
    /// is safe: an out-of-range one starts at the last vertex).
    pub vertices: (u32, u32),
}

impl<'a> DepthInput<'a> {
    /// A cold query.
    pub fn new(a: &'a ConvexPolytope, pose_a: Pose, b: &'a ConvexPolytope, pose_b: Pose) -> Self {
        DepthInput {
            a,
            pose_a,
            b,
            pose_b,
            start: None,
            toward: None,
        }
    }
}

/// A per-pair cache for coherent sequences: the last answer's facet (where the next walk
/// starts) and what its certificate proved (see `certify`: most of the next query's
/// global check is then already done).
#[derive(Clone, Debug, Default)]
pub struct DepthCache {
    /// The last answer's features, if any.
    pub features: Option<(FeatureId, FeatureId)>,
    /// Where the next query starts when it has no features (used once).
    pub toward: Option<Toward>,
    /// Boxed: a pair's warm starts move between frames, most pairs never overlap.
    standing: Option<Box<Standing>>,
}

impl DepthCache {
    /// Walks from the cached facet and remembers the new one.
    pub fn query(
        &mut self,
        a: &ConvexPolytope,
        pose_a: Pose,
        b: &ConvexPolytope,
        pose_b: Pose,
    ) -> Option<Penetration> {
        let input = DepthInput {
            start: self.features,
            toward: self.toward.take(),
            ..DepthInput::new(a, pose_a, b, pose_b)
        };
        let standing = self.standing.get_or_insert_with(Box::default);
        let out = walk_with(&input, Some(standing));
        self.features = out.map(|p| p.features);
        out
    }

    /// Lets go of what the last global check proved (the certificate and the inscribed
    /// polytope, a few hundred bytes to a few kB), keeping the facet to start from: for a
    /// pair the caller found apart, whose next overlap (if any) comes after motion that
    /// would have expired the certificate. A crowd keeps a cache per pair near enough to
    /// touch; those that overlapped once (parted at the start) held theirs for good.
    pub fn release(&mut self) {
        self.standing = None;
    }

    /// How many queries ran the full check of every candidate, and how many were settled
    /// without one (by the inscribed polytope or the standing certificate).
    pub fn certificates(&self) -> (u64, u64) {
        self.standing
            .as_ref()
            .map_or((0, 0), |s| (s.counts[0], s.counts[1]))
    }
}

/// The depth by the Gauss-map walk (see the module comment) of bodies that overlap or
/// touch (the closest-feature walk tells); `None` when the walk meets a separating axis
/// (s < 0). On separated bodies it may also stop at a facet with s > 0: the caller decides
/// overlap first.
pub fn walk(input: &DepthInput<'_>) -> Option<Penetration> {
    walk_with(input, None)
}

/// The walk, certified by `standing` where it still holds (and rebuilt where not).
fn walk_with(input: &DepthInput<'_>, mut standing: Option<&mut Standing>) -> Option<Penetration> {
    let (place, world_a) = Placement::pair(&input.pose_a, &input.pose_b);
    let pair = Pair::new(input.a, input.b, place);
    if let Some(st) = standing.as_deref_mut() {
        st.advance(&pair);
    }
    // Small bodies run deep into each other (crates spawned at one point), cold: the
    // enumeration of every candidate costs less than descending and proving the minimum.
    // Decided by the bodies alone (their centroids' distance), not by where a walk would
    // start, so that a query answers the same with a sampled start or without.
    if input.start.is_none() && pair.enumerates() {
        if let Some(st) = standing {
            st.drop_certificate();
        }
        return enumerate(input.a, &input.pose_a, input.b, &input.pose_b);
    }
    let cold = || match input.toward {
        Some(t) => pair.facet_toward(world_a.inverse_vector(t.normal), t.vertices),
        None => pair.cold_start(),
    };
    let warm = input
        .start
        .and_then(|f| Some((Facet::from_features(f, input.a, input.b)?, f)));
    // A start facet that is not one of A − B (a stale cache) gives way to the cold start.
    let mut best = warm
        .and_then(|(facet, f)| pair.evaluate(facet, pair.start_vertices(f)))
        .or_else(cold)
        .or_else(|| pair.cold_start())?;
    let max_steps = 4 * (input.a.num_faces() + input.b.num_faces()) as u32 + 64;
    let mut steps = 0;
    // The inscribed polytope proves a facet the minimum or names a smaller one, and covers
    // the neighbours either way. In a coherent sequence (a cache warm-started from its
    // last facet) each facet the walk reaches goes to it first, the kept surface re-placed
    // or a new one grown; a cold walk (a new cache's first query too: it has no last
    // facet) first descends to a local minimum, where a new surface is grown once (from a
    // facet far from the minimum most support values undercut the goal, and the walk's
    // neighbour steps are cheaper than surfaces abandoned one after another). Small bodies
    // ask it after the first step down in shallow contact (a facet within SHALLOW of the
    // reach), after the second otherwise: one step mostly reaches the minimum in shallow
    // contact, two in deep, and the surface that proves it costs less than the neighbours'
    // search that would only confirm it (the depth bench, cold: 8 vertices shallow 0.76 ->
    // 0.56 of EPA's time, deep 0.66 -> 0.59; 32: 0.71 -> 0.58, 0.68 -> 0.65; after the
    // first step on deep or larger bodies it was slower). Where it settles nothing, the
    // candidates' check (standing, else full) decides.
    let eager = standing.is_some() && input.start.is_some();
    let small = pair.scans_both();
    let mut tried: Option<Facet> = None;
    loop {
        if best.s < 0.0 {
            return None;
        }
        if steps >= max_steps {
            break;
        }
        let ask = tried != Some(best.facet);
        // Down the facet graph while a neighbour is smaller (a cached walk asks first).
        let settled_down = small && (steps > 1 || (steps > 0 && best.s <= SHALLOW * pair.reach));
        if !((eager || settled_down) && ask)
            && let Some(n) = pair
                .best_neighbour(&best)
                .filter(|n| n.s < best.s - pair.tol_at(best.s))
        {
            best = n;
            steps += 1;
            continue;
        }
        if ask {
            tried = Some(best.facet);
            let kept = standing.as_deref_mut().map(|st| &mut st.kept);
            match pair.inscribe(&best, kept) {
                Inscribed::Holds => {
                    if let Some(st) = standing.as_deref_mut() {
                        st.counts[1] += 1;
                    }
                    break;
                }
                Inscribed::HoldsAt(f) => {
                    if let Some(st) = standing.as_deref_mut() {
                        st.counts[1] += 1;
                    }
                    best = f;
                    steps += 1;
                    break;
                }
                Inscribed::Smaller(f) => {
                    best = f;
                    steps += 1;
                }
                // To the neighbours, or at a local minimum to the candidates' check.
                Inscribed::Unsettled => {}
            }
            continue;
        }
        // A local minimum: any smaller candidate anywhere restarts the walk.
        let smaller = match standing.as_deref_mut() {
            Some(st) => match pair.recheck(&best, st) {
                Recheck::Holds => {
                    st.counts[1] += 1;
                    None
                }
                Recheck::Smaller(f) => Some(f),
                Recheck::Expired => pair.certify(&best, Some(st)),
            },
            None => pair.certify(&best, None),
        };
        match smaller {
            Some(f) => {
                best = f;
                steps += 1;
            }
            None => break,
        }
    }
    if steps >= max_steps {
        // Bounded work: past the bound the enumeration answers.
        if let Some(st) = standing {
            st.drop_certificate();
        }
        let found = enumerate(input.a, &input.pose_a, input.b, &input.pose_b)?;
        return Some(Penetration { steps, ..found });
    }
    Some(best.answer(&pair, &world_a, (&input.pose_a, &input.pose_b), steps))
}

/// A candidate facet of A − B, named by the features that span it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Facet {
    /// Face of A (with B's support vertex).
    FaceA(u32),
    /// Face of B (with A's support vertex).
    FaceB(u32),
    /// Edge of A, edge of B.
    Edges(u32, u32),
}

impl Facet {
    fn from_features(
        (fa, fb): (FeatureId, FeatureId),
        a: &ConvexPolytope,
        b: &ConvexPolytope,
    ) -> Option<Facet> {
        match (fa, fb) {
            (FeatureId::Face(f), _) if (f as usize) < a.num_faces() => Some(Facet::FaceA(f)),
            (_, FeatureId::Face(f)) if (f as usize) < b.num_faces() => Some(Facet::FaceB(f)),
            (FeatureId::Edge(x), FeatureId::Edge(y))
                if (x as usize) < a.num_edges() && (y as usize) < b.num_edges() =>
            {
                Some(Facet::Edges(x, y))
            }
            _ => None,
        }
    }
}

/// A candidate with its value: s along its axis, and the support vertices there.
#[derive(Clone, Copy, Debug)]
struct Found {
    facet: Facet,
    /// Unit axis in A's frame, from A to B.
    axis: DVec3,
    /// s(axis): an upper bound of the depth, equal to it at the minimum.
    s: f64,
    /// A's support vertex along `axis`, B's along `−axis`.
    va: u32,
    vb: u32,
}

/// The two bodies in A's frame.
struct Pair<'a> {
    a: &'a ConvexPolytope,
    b: &'a ConvexPolytope,
    place: Placement,
    tol: f64,
    /// Points inside the bodies, for the certificate's lower bounds and the cold start:
    /// placed when first asked (a warm query that holds never asks).
    insides: OnceCell<Insides>,
    /// At least the largest |x| over A − B in A's frame: s's Lipschitz constant.
    reach: f64,
}

/// A point of each body (the centroids of their vertices) in A's frame, and A's in B's.
#[derive(Clone, Copy, Debug)]
struct Insides {
    a: DVec3,
    b: DVec3,
    a_in_b: DVec3,
}

impl<'a> Pair<'a> {
    /// The tolerance a facet of value `s` is compared with: the walk's, or where that is
    /// coarser than 1e-9 of `s` (depths below 1e-4 of the size), 1e-9 of `s`, never below
    /// 64 ulps of the reach (the rounding of s).
    fn tol_at(&self, s: f64) -> f64 {
        self.tol
            .min((1e-9 * s).max(64.0 * f64::EPSILON * self.reach))
    }

    /// The bodies' inside points, placed on first use.
    fn insides(&self) -> &Insides {
        self.insides.get_or_init(|| Insides {
            a: self.a.centroid(),
            b: self.place.point(self.b.centroid()),
            a_in_b: self.place.inverse_point(self.a.centroid()),
        })
    }

    fn new(a: &'a ConvexPolytope, b: &'a ConvexPolytope, place: Placement) -> Self {
        Pair {
            a,
            b,
            place,
            tol: TOL_REL * place.scale(a, b),
            insides: OnceCell::new(),
            reach: norm_bound(a) + norm_bound(b) + place.translation.length(),
        }
    }

    /// Whether a cold query enumerates every candidate: small bodies (at most
    /// [`ENUMERATE_EDGE_PAIRS`] edge pairs) whose centroids are nearer than
    /// [`ENUMERATE_NEARER`] of the smaller body's radius. Two unit crates, cold, in random
    /// orientations (µs a query, enumeration / the walk): centroids together 3.2 / 11.8,
    /// 0.3 apart 3.1 / 6.8, 0.8: 3.2 / 3.9, 1.2: 3.1 / 2.3.
    fn enumerates(&self) -> bool {
        self.a.num_edges() * self.b.num_edges() <= ENUMERATE_EDGE_PAIRS
            && (self.a.centroid() - self.place.point(self.b.centroid())).length()
                < ENUMERATE_NEARER * self.a.radius().min(self.b.radius())
    }

    /// Whether both bodies' support queries scan every vertex (no climb, no warm start).
    fn scans_both(&self) -> bool {
        self.a.num_vertices() <= SCAN_UP_TO && self.b.num_vertices() <= SCAN_UP_TO
    }

    /// h_A(d) and its vertex: a scan on small bodies, else hill climbing from `warm`.
    fn support_a(&self, d: DVec3, warm: u32) -> (u32, f64) {
        self.a.extreme_scanning(d, warm, SCAN_UP_TO)
    }

    /// h_B(d) in A's frame and its vertex.
    #[inline]
    fn support_b(&self, d: DVec3, warm: u32) -> (u32, f64) {
        let (v, h) = self
            .b
            .extreme_scanning(self.place.inverse_vector(d), warm, SCAN_UP_TO);
        (v, h + d.dot(self.place.translation))
    }

    /// B's face `f` normal in A's frame.
    fn normal_b(&self, f: u32) -> DVec3 {
        self.place.vector(self.b.face_normal(f as usize))
    }

    /// The facet's axis and s, from support queries (warm: A's and B's vertices to climb
    /// from). `None` for an edge pair that spans no facet (parallel edges).
    fn evaluate(&self, facet: Facet, (wa, wb): (u32, u32)) -> Option<Found> {
        let axis = match facet {
            Facet::FaceA(f) => self.a.face_normal(f as usize),
            Facet::FaceB(f) => -self.normal_b(f),
            Facet::Edges(x, y) => self.edge_axis(x, y)?,
        };
        // A face's own body is supported along its normal at the face itself: no climb
        // (on two 2,048-vertex hulls at one point, half the support queries of a check).
        let (va, ha) = match facet {
            Facet::FaceA(f) => self.a.face_support(f as usize),
            _ => self.support_a(axis, wa),
        };
        let (vb, hb) = match facet {
            Facet::FaceB(f) => {
                let (v, h) = self.b.face_support(f as usize);
                (v, self.place.offset(-axis, h))
            }
            _ => self.support_b(-axis, wb),
        };
        Some(Found {
            facet,
            axis,
            s: ha + hb,
            va,
            vb,
        })
    }

    /// The unit cross product of A's edge `x` and B's edge `y`, pointing out of A at `x`,
    /// when their arcs cross on the Gauss maps of A and −B (the pair spans a facet).
    fn edge_axis(&self, x: u32, y: u32) -> Option<DVec3> {
        self.crossing(&self.arc_a(x), &self.arc_b(y))
            .map(|c| c.axis)
    }

    /// A's edge `x`'s arc on A's Gauss map.
    fn arc_a(&self, x: u32) -> EdgeArc {
        let [f0, f1] = self.a.edge_faces(x as usize);
        EdgeArc::new(
            (
                self.a.face_normal(f0 as usize),
                self.a.face_normal(f1 as usize),
            ),
            x,
        )
    }

    /// B's edge `y`'s arc on the Gauss map of −B, in A's frame.
    fn arc_b(&self, y: u32) -> EdgeArc {
        let [f0, f1] = self.b.edge_faces(y as usize);
        EdgeArc::new((-self.normal_b(f0), -self.normal_b(f1)), y)
    }

    /// The facet of A's edge and B's edge whose arcs `a` and `b` are, when the arcs cross
    /// and the edges are not parallel: its unit axis (the edges' cross product, out of A at
    /// its edge), its s and the edges' first vertices. The edges are placed only here,
    /// for the few pairs whose arcs cross.
    fn crossing(&self, a: &EdgeArc, b: &EdgeArc) -> Option<Crossing> {
        let ((na, nb), (nc, nd)) = (a.ends, b.ends);
        if !sat::arcs_cross_on_planes((na, nb, a.plane), (nc, nd, b.plane)) {
            return None;
        }
        let [a0, a1] = self.a.edge_vertices(a.edge as usize);
        let [b0, b1] = self.b.edge_vertices(b.edge as usize);
        let start_a = self.a.vertex(a0);
        let dir_a = self.a.vertex(a1) - start_a;
        let dir_b = self.place.vector(self.b.vertex(b1) - self.b.vertex(b0));
        let axis = dir_a.cross(dir_b);
        let len = axis.length();
        if len <= 1e-12 * dir_a.length() * dir_b.length() {
            return None;
        }
        // Out of A: on the side of A's two face normals at the edge.
        let axis = axis / len;
        let axis = if axis.dot(na + nb) < 0.0 { -axis } else { axis };
        // The edges support both bodies along the axis: s = axis·(p − q).
        let s = axis.dot(start_a - self.place.point(self.b.vertex(b0)));
        Some(Crossing {
            axis,
            s,
            va: a0,
            vb: b0,
        })
    }

    /// Where the support queries at a cached facet start climbing: a vertex of each body's
    /// feature (a face's first vertex, an edge's first end, the vertex itself), a step or
    /// none from last query's support vertices where vertex 0 may lie across the body.
    fn start_vertices(&self, (fa, fb): (FeatureId, FeatureId)) -> (u32, u32) {
        let vertex = |p: &ConvexPolytope, f: FeatureId| match f {
            FeatureId::Vertex(v) => v,
            FeatureId::Edge(e) if (e as usize) < p.num_edges() => p.edge_vertices(e as usize)[0],
            FeatureId::Face(f) if (f as usize) < p.num_faces() => {
                p.face_vertices(f as usize).next().unwrap_or(0)
            }
            _ => 0,
        };
        (vertex(self.a, fa), vertex(self.b, fb))
    }

    /// The facet to start from without a cache: [`Self::facet_toward`] the direction from
    /// A's centroid to B's (each body's support climbing from its [`seed`]), or where that
    /// direction has no length, A's face [`Self::cold_face`], evaluated with A's support
    /// query starting on the face. Where A's face most facing B was found by a scan of
    /// every face, two climbs and the faces about their ends take a body's square root:
    /// callgrind over the depth bench's cold sequences, instructions a query, shallow 8 /
    /// 32 / 128 / 512 / 2048 vertices 12.3k / 16.0k / 28.6k / 53.2k / 145k -> 11.9k /
    /// 15.0k / 23.4k / 29.3k / 44.6k, deep 8 / 512 / 2048 17.1k / 147k / 277k -> 15.7k /
    /// 124k / 178k, centred 512 / 2048 2-3% fewer; deep and centred 32 1-2% more.
    fn cold_start(&self) -> Option<Found> {
        let insides = self.insides();
        let d = insides.b - insides.a;
        let starts = (seed(self.a, d), seed(self.b, self.place.inverse_vector(-d)));
        if let Some(found) = self.facet_toward(d, starts) {
            return Some(found);
        }
        let f = self.cold_face();
        let start = self.start_vertices((FeatureId::Face(f), FeatureId::Vertex(0)));
        self.evaluate(Facet::FaceA(f), start)
    }

    /// A's face most facing B's centroid.
    fn cold_face(&self) -> u32 {
        let insides = self.insides();
        let d = (insides.b - insides.a).try_normalize().unwrap_or(DVec3::X);
        // Each face's cosine once; the last of equals.
        let mut best = (0, f64::NEG_INFINITY);
        for f in 0..self.a.num_faces() {
            let c = self.a.face_normal(f).dot(d);
            if c.total_cmp(&best.1).is_ge() {
                best = (f as u32, c);
            }
        }
        best.0
    }

    /// The start nearest direction `d` (A's frame, from A to B): around A's support
    /// vertex along `d`, A's face whose normal is nearest `d`; around B's along −d, B's
    /// face whose reversed normal is; the one with the smaller s.
    fn facet_toward(&self, d: DVec3, (wa, wb): (u32, u32)) -> Option<Found> {
        let d = d.try_normalize()?;
        let (va, _) = self.support_a(d, wa);
        let (vb, _) = self.support_b(-d, wb);
        let nearest = |around: &mut dyn Iterator<Item = (u32, f64)>| {
            around.max_by(|x, y| x.1.total_cmp(&y.1)).map(|(f, _)| f)
        };
        let fa = nearest(&mut self.a.vertex_out(va as usize).iter().map(|&h| {
            let f = left_face(self.a, h);
            (f, self.a.face_normal(f as usize).dot(d))
        }));
        let fb = nearest(&mut self.b.vertex_out(vb as usize).iter().map(|&h| {
            let f = left_face(self.b, h);
            (f, -self.normal_b(f).dot(d))
        }));
        let found_a = fa.and_then(|f| self.evaluate(Facet::FaceA(f), (va, vb)));
        let found_b = fb.and_then(|f| self.evaluate(Facet::FaceB(f), (va, vb)));
        match (found_a, found_b) {
            (Some(x), Some(y)) => Some(if y.s < x.s { y } else { x }),
            (x, y) => x.or(y),
        }
    }

    /// The smallest candidate among `at`'s neighbours on the overlaid Gauss maps of A and
    /// −B: `at` is a vertex of the overlay, and its edges run along the arcs through it.
    /// From a face of A (a vertex of A's map inside the region of B's vertex there) they
    /// run along the face's edges' arcs, to the face across or to where a B arc at that
    /// vertex crosses first; from an edge pair's crossing, along either arc, to its faces
    /// or to a crossing with an arc at the other edge's ends. So the candidates are the
    /// faces across the facet's sides, the faces at the other body's vertex (a cheap bound
    /// dismisses most), and the edge pairs those arcs can meet.
    fn best_neighbour(&self, at: &Found) -> Option<Found> {
        let (mut faces_a, mut faces_b): (Ids, Ids) = (SmallVec::new(), SmallVec::new());
        let (mut edges_a, mut edges_b): (Ids, Ids) = (SmallVec::new(), SmallVec::new());
        match at.facet {
            Facet::FaceA(f) => {
                across(self.a, f, &mut faces_a, &mut edges_a);
                around(self.b, at.vb, &mut faces_b, &mut edges_b);
                self.best_of(at, &faces_a, &faces_b, &[(&edges_a, &edges_b)])
            }
            Facet::FaceB(f) => {
                across(self.b, f, &mut faces_b, &mut edges_b);
                around(self.a, at.va, &mut faces_a, &mut edges_a);
                self.best_of(at, &faces_a, &faces_b, &[(&edges_a, &edges_b)])
            }
            Facet::Edges(x, y) => {
                faces_a.extend(self.a.edge_faces(x as usize));
                faces_b.extend(self.b.edge_faces(y as usize));
                let mut unused: Ids = SmallVec::new();
                for v in self.a.edge_vertices(x as usize) {
                    around(self.a, v, &mut unused, &mut edges_a);
                }
                for v in self.b.edge_vertices(y as usize) {
                    around(self.b, v, &mut unused, &mut edges_b);
                }
                self.best_of(
                    at,
                    &faces_a,
                    &faces_b,
                    &[(&[x], &edges_b), (&edges_a, &[y])],
                )
            }
        }
    }

    /// The smallest candidate below `at`'s s by more than the tolerance, other than `at`'s
    /// own facet, among the faces at A's vertices `verts_a` and B's `verts_b` and the
    /// pairs of their edges whose arcs cross; support queries start at `at`'s vertices.
    fn best_around(&self, verts_a: &[u32], verts_b: &[u32], at: &Found) -> Option<Found> {
        let (mut faces_a, mut faces_b): (Ids, Ids) = (SmallVec::new(), SmallVec::new());
        let (mut edges_a, mut edges_b): (Ids, Ids) = (SmallVec::new(), SmallVec::new());
        for &u in verts_a {
            around(self.a, u, &mut faces_a, &mut edges_a);
        }
        for &w in verts_b {
            around(self.b, w, &mut faces_b, &mut edges_b);
        }
        self.best_of(at, &faces_a, &faces_b, &[(&edges_a, &edges_b)])
    }

    /// The smallest candidate below `at`'s s by more than the tolerance, other than `at`'s
    /// own facet, among the faces of A and of B listed and the edge pairs of each product
    /// listed whose arcs cross; support queries start at `at`'s vertices.
    fn best_of(
        &self,
        at: &Found,
        faces_a: &[u32],
        faces_b: &[u32],
        products: &[(&[u32], &[u32])],
    ) -> Option<Found> {
        let mut best: Option<Found> = None;
        // Only a candidate below `at` by the tolerance moves the walk: one whose lower bound
        // is not is skipped unqueried (h_B(−n) ≥ −n·q and h_A(n) ≥ n·p for points p of A
        // and q of B). The points are the facet's support vertices and those of every
        // candidate queried so far (up to KNOWN of each body's): more of them dismiss more
        // candidates, and a candidate dismissed is above the bar, so the best found is the
        // same. (Climbing each candidate's support from the known vertex highest along its
        // axis instead of the facet's: 1-6% fewer instructions on most real and random
        // hulls, 8% more on the bunny's, deep; not kept.)
        let tol = self.tol_at(at.s);
        let bar = |best: &Option<Found>| best.map_or(at.s, |b| b.s.min(at.s)) - tol;
        let mut known_a: SmallVec<[DVec3; KNOWN]> = SmallVec::new();
        let mut known_b: SmallVec<[DVec3; KNOWN]> = SmallVec::new();
        known_a.push(self.a.vertex(at.va));
        known_b.push(self.place.point(self.b.vertex(at.vb)));
        let learn = |found: &Found, known_a: &mut SmallVec<_>, known_b: &mut SmallVec<_>| {
            if known_a.len() < KNOWN {
                known_a.push(self.a.vertex(found.va));
            }
            if known_b.len() < KNOWN {
                known_b.push(self.place.point(self.b.vertex(found.vb)));
            }
        };
        for &f in faces_a {
            if self.face_bound_a(f as usize, &known_b) >= bar(&best) {
                continue;
            }
            let facet = Facet::FaceA(f);
            if facet != at.facet
                && let Some(found) = self.evaluate(facet, (at.va, at.vb))
            {
                learn(&found, &mut known_a, &mut known_b);
                if found.s < bar(&best) {
                    best = Some(found);
                }
            }
        }
        for &f in faces_b {
            if self.face_bound_b(f as usize, &known_a) >= bar(&best) {
                continue;
            }
            let facet = Facet::FaceB(f);
            if facet != at.facet
                && let Some(found) = self.evaluate(facet, (at.va, at.vb))
            {
                learn(&found, &mut known_a, &mut known_b);
                if found.s < bar(&best) {
                    best = Some(found);
                }
            }
        }
        // A pair whose arcs cross spans a facet: its edges support both bodies along the
        // axis, so s comes with no support query, and their ends are the facet's support
        // vertices.
        for &(edges_a, edges_b) in products {
            // B's arcs are turned into A's frame once, not once for each of A's edges.
            let mut arcs_b: SmallVec<[EdgeArc; 16]> = SmallVec::new();
            for &y in edges_b {
                arcs_b.push(self.arc_b(y));
            }
            for &x in edges_a {
                let arc_a = self.arc_a(x);
                for arc_b in &arcs_b {
                    let facet = Facet::Edges(x, arc_b.edge);
                    if facet == at.facet {
                        continue;
                    }
                    let Some(c) = self.crossing(&arc_a, arc_b) else {
                        continue;
                    };
                    if c.s < bar(&best) {
                        best = Some(Found {
                            facet,
                            axis: c.axis,
                            s: c.s,
                            va: c.va,
                            vb: c.vb,
                        });
                    }
                }
            }
        }
        best
    }

    /// The vertices of A and of B that span the facet.
    fn facet_vertices(&self, at: &Found) -> (Ids, Ids) {
        match at.facet {
            Facet::FaceA(f) => (
                self.a.face_vertices(f as usize).collect(),
                SmallVec::from_slice(&[at.vb]),
            ),
            Facet::FaceB(f) => (
                SmallVec::from_slice(&[at.va]),
                self.b.face_vertices(f as usize).collect(),
            ),
            Facet::Edges(x, y) => (
                SmallVec::from_slice(&self.a.edge_vertices(x as usize)),
                SmallVec::from_slice(&self.b.edge_vertices(y as usize)),
            ),
        }
    }
}

impl Found {
    /// The answer in world space: the facet's features and the deepest points (see
    /// [`Penetration`]).
    fn answer(
        &self,
        pair: &Pair<'_>,
        world_a: &Placement,
        (pose_a, pose_b): (&Pose, &Pose),
        steps: u32,
    ) -> Penetration {
        let depth = self.s.max(0.0);
        let (witness, features) = match self.facet {
            Facet::FaceA(f) => {
                // B's deepest vertex and its projection on the face, when that lies in
                // the face (with a face of B parallel to it, the vertex may be one whose
                // projection misses).
                let pb = pair.place.point(pair.b.vertex(self.vb));
                let pa = pb + self.axis * depth;
                let inside = pair
                    .a
                    .voronoi_planes(FeatureId::Face(f))
                    .all(|p| p.signed_distance(pa) >= -pair.tol);
                (
                    inside.then_some((pa, pb)),
                    (FeatureId::Face(f), FeatureId::Vertex(self.vb)),
                )
            }
            Facet::FaceB(f) => {
                let pa = pair.a.vertex(self.va);
                let pb = pa - self.axis * depth;
                let local = pair.place.inverse_point(pb);
                let inside = pair
                    .b
                    .voronoi_planes(FeatureId::Face(f))
                    .all(|p| p.signed_distance(local) >= -pair.tol);
                (
                    inside.then_some((pa, pb)),
                    (FeatureId::Vertex(self.va), FeatureId::Face(f)),
                )
            }
            Facet::Edges(x, y) => {
                let [a0, a1] = pair.a.edge_vertices(x as usize);
                let [b0, b1] = pair.b.edge_vertices(y as usize);
                let points = segments_closest(
                    pair.a.vertex(a0),
                    pair.a.vertex(a1),
                    pair.place.point(pair.b.vertex(b0)),
                    pair.place.point(pair.b.vertex(b1)),
                );
                (Some(points), (FeatureId::Edge(x), FeatureId::Edge(y)))
            }
        };
        let normal = world_a.vector(self.axis);
        let (point_a, point_b) = match witness {
            Some((pa, pb)) => (world_a.point(pa), world_a.point(pb)),
            None => {
                // B moved out along the normal by the depth and a hair: the closest points
                // of the now separated bodies lie on both surfaces, and B's, moved back,
                // is the deepest point of B.
                let lift = depth + pair.tol;
                let moved = Pose::new(pose_b.translation + normal * lift, pose_b.rotation);
                let w = walk::walk(&WalkInput::new(pair.a, *pose_a, pair.b, moved));
                (w.point_a, w.point_b - normal * lift)
            }
        };
        Penetration {
            depth,
            normal,
            point_a,
            point_b,
            features,
            steps,
        }
    }
}

/// An edge's arc on the Gauss map (of A, or of −B for B's edges, in A's frame): what the
/// crossing test reads, and the edge.
struct EdgeArc {
    /// The arc's ends: the normals of the edge's two faces (negated for B).
    ends: (DVec3, DVec3),
    /// `ends.1 × ends.0`: the arc's plane, for [`sat::arcs_cross_on_planes`].
    plane: DVec3,
    edge: u32,
}

impl EdgeArc {
    fn new(ends: (DVec3, DVec3), edge: u32) -> Self {
        EdgeArc {
            ends,
            plane: ends.1.cross(ends.0),
            edge,
        }
    }
}

/// An edge pair's facet (see [`Pair::crossing`]).
struct Crossing {
    axis: DVec3,
    s: f64,
    va: u32,
    vb: u32,
}

/// Bodies of up to this many vertices answer the walk's support queries by a scan: the
/// walk asks along directions far from the last (its candidates, the surface's triangles),
/// where a climb from the last vertex goes far. Against climbing past `SCAN_VERTICES`
/// (time of impact's threshold, whose queries follow a smooth motion), on the depth
/// bench's sequences: 32 and 40 vertices, cold queries 3-14% and warm ones 1-7% faster;
/// 48 about even; 64 up to 10% slower.
const SCAN_UP_TO: usize = 48;

/// The most support points of each body [`Pair::best_of`] bounds its candidates with.
const KNOWN: usize = 8;

/// Vertices a cold climb's start is picked among ([`seed`]).
const SEEDS: usize = 16;

/// Where a cold climb along `d` (the body's frame) starts: among every `n / SEEDS`-th
/// vertex, the one highest along `d`; vertex 0 on a body the support queries scan (no
/// climb). On the depth bench's cold sequences, against a climb from vertex 0,
/// instructions a query: shallow 512 / 2048 vertices 30.2k / 44.9k -> 26.3k / 41.3k, deep
/// about 1% fewer, 32 and 128 vertices within 1%.
fn seed(p: &ConvexPolytope, d: DVec3) -> u32 {
    let n = p.num_vertices();
    if n <= SCAN_UP_TO {
        return 0;
    }
    let mut best = (0, d.dot(p.vertex(0)));
    for v in (0..n).step_by(n / SEEDS).skip(1) {
        let h = d.dot(p.vertex(v as u32));
        if h > best.1 {
            best = (v as u32, h);
        }
    }
    best.0
}

/// Edge pairs up to which a cold query on bodies with near centroids enumerates every
/// candidate (see `Pair::enumerates`): two boxes have 144, two 8-vertex random hulls
/// about 324 (18 edges each), two of 10 vertices 576. Cold, the depth bench's hulls at
/// one point (µs a query, enumeration / the walk): 8 vertices 2.4-3.4 / 4.5-5.4, 10
/// vertices 5.0 / 3.3-3.9, 12: 4.9-5.2 / 3.6-3.7.
const ENUMERATE_EDGE_PAIRS: usize = 400;

/// Centroids nearer than this fraction of the smaller body's radius make a cold query on
/// small bodies enumerate (see `Pair::enumerates`).
const ENUMERATE_NEARER: f64 = 0.5;

/// A facet whose s is at most this fraction of the reach of A − B is shallow (see
/// [`walk`]): bodies pressed together rather than run through each other.
const SHALLOW: f64 = 0.05;

/// At least the largest |x| over the polytope's points, from its box (in its own frame).
fn norm_bound(p: &ConvexPolytope) -> f64 {
    let (lo, hi) = p.local_aabb();
    lo.abs().max(hi.abs()).length()
}

/// A short list of vertices, faces or edges: a facet's, or those around it.
type Ids = SmallVec<[u32; 32]>;

/// Adds the faces across face `f`'s sides and its edges to the lists (each once).
fn across(p: &ConvexPolytope, f: u32, faces: &mut Ids, edges: &mut Ids) {
    let fresh = (faces.is_empty(), edges.is_empty());
    for &h in p.face_half_edges(f as usize) {
        push_new(faces, left_face(p, h ^ 1), fresh.0);
        push_new(edges, h / 2, fresh.1);
    }
}

/// Adds the faces and the edges at vertex `v` of `p` to the lists (each once).
fn around(p: &ConvexPolytope, v: u32, faces: &mut Ids, edges: &mut Ids) {
    let fresh = (faces.is_empty(), edges.is_empty());
    for &h in p.vertex_out(v as usize) {
        push_new(faces, left_face(p, h), fresh.0);
        push_new(edges, h / 2, fresh.1);
    }
}

/// Appends `x` unless it is there (the lists are a few dozen long); a list that was empty
/// before one face's or one vertex's items needs no look (on a convex polytope the faces
/// and edges around a face, or around a vertex, are distinct).
#[inline]
fn push_new(v: &mut Ids, x: u32, fresh: bool) {
    if fresh || !v.contains(&x) {
        v.push(x);
    }
}

/// The face to the left of half-edge `h`.
fn left_face(p: &ConvexPolytope, h: u32) -> u32 {
    p.edge_faces((h / 2) as usize)[(h % 2) as usize]
}

fn face_index(f: FeatureId) -> u32 {
    match f {
        FeatureId::Face(i) => i,
        _ => 0,
    }
}
