//! The global check at a local minimum of the Gauss-map walk: no candidate facet of A − B
//! (a face of either body, an edge pair whose arcs cross) has s below the walk's, or one
//! that has. Every candidate's s is bounded from below cheaply first (see the comments in
//! [`Pair::certify`]) and queried only when the bound does not settle it; with a
//! [`Standing`] to build, the candidates near the depth are listed for the next queries.

use glam::DVec3;

use super::standing::{Entry, Standing};
use super::{Facet, Found, Pair};
use crate::exact::sat;
use crate::geometry::ConvexPolytope;
use crate::geometry::polytope::GaussArc;

/// No support vertex found yet.
const UNKNOWN: u32 = u32::MAX;

/// The other body's support vertex at each face axis found during one check, made on
/// first use (most standing checks query no face).
pub(super) struct Supports {
    found: Vec<u32>,
    faces: usize,
}

impl Supports {
    /// None found yet, for a body of `faces` faces.
    pub(super) fn new(faces: usize) -> Self {
        Supports {
            found: Vec::new(),
            faces,
        }
    }

    fn get(&self, f: usize) -> Option<u32> {
        self.found.get(f).copied().filter(|&v| v != UNKNOWN)
    }

    /// A support vertex found at a face beside face `f` of `body` (the body whose faces
    /// these are): where a climb toward `f`'s answer starts close to it.
    fn beside(&self, body: &ConvexPolytope, f: u32) -> Option<u32> {
        if self.found.is_empty() {
            return None;
        }
        body.face_half_edges(f as usize)
            .iter()
            .find_map(|&h| self.get(body.half_edge_face(h ^ 1) as usize))
    }

    /// Remembers `v` at face `f`.
    pub(super) fn set(&mut self, f: usize, v: u32) {
        if self.found.is_empty() {
            self.found = vec![UNKNOWN; self.faces];
        }
        self.found[f] = v;
    }
}

impl Pair<'_> {
    /// A's edge `x` in A's frame.
    pub(super) fn edge_a(&self, x: u32) -> Edge {
        let [f0, f1] = self.a.edge_faces(x as usize);
        let [v0, v1] = self.a.edge_vertices(x as usize);
        let p = self.a.vertex(v0);
        (
            x,
            self.a.face_normal(f0 as usize),
            self.a.face_normal(f1 as usize),
            p,
            self.a.vertex(v1) - p,
        )
    }

    /// B's edge `y` in A's frame, its arc on the Gauss map of −B.
    pub(super) fn edge_b(&self, y: u32) -> Edge {
        let [f0, f1] = self.b.edge_faces(y as usize);
        let [v0, v1] = self.b.edge_vertices(y as usize);
        let q = self.place.point(self.b.vertex(v0));
        (
            y,
            -self.normal_b(f0),
            -self.normal_b(f1),
            q,
            self.place.point(self.b.vertex(v1)) - q,
        )
    }

    /// Lower bounds of A's face `f` axis and of B's face `f` axis from points of the other
    /// body (s(n) ≥ offset − n·q for every q of B; likewise for B's faces).
    pub(super) fn face_bound_a(&self, f: usize, points_b: &[DVec3]) -> f64 {
        let n = self.a.face_normal(f);
        self.a.face_offset(f) - points_b.iter().map(|q| n.dot(*q)).fold(f64::MAX, f64::min)
    }

    pub(super) fn face_bound_b(&self, f: usize, points_a: &[DVec3]) -> f64 {
        let axis = -self.normal_b(f as u32);
        points_a
            .iter()
            .map(|p| axis.dot(*p))
            .fold(f64::MIN, f64::max)
            + self.place.offset(-axis, self.b.face_offset(f))
    }

    /// B's support point (A's frame) against A's face `f` axis, queried once per check
    /// (`known`: the vertices found so far), climbing from the one found at a face beside
    /// `f` where there is one, else from the last (`warm`): the edges come in index order,
    /// and from the last edge's end a climb crossed much of a round body (on 512-vertex
    /// hulls at one point, 1,400 instructions a query against 460).
    fn end_support_b(&self, f: u32, known: &mut Supports, warm: &mut u32) -> DVec3 {
        let v = known.get(f as usize).unwrap_or_else(|| {
            let start = known.beside(self.a, f).unwrap_or(*warm);
            let v = self.support_b(-self.a.face_normal(f as usize), start).0;
            known.set(f as usize, v);
            *warm = v;
            v
        });
        self.place.point(self.b.vertex(v))
    }

    /// A's support point against B's face `f` axis, queried once per check, climbing as
    /// [`Self::end_support_b`] does.
    fn end_support_a(&self, f: u32, known: &mut Supports, warm: &mut u32) -> DVec3 {
        let v = known.get(f as usize).unwrap_or_else(|| {
            let start = known.beside(self.b, f).unwrap_or(*warm);
            let v = self.support_a(-self.normal_b(f), start).0;
            known.set(f as usize, v);
            *warm = v;
            v
        });
        self.a.vertex(v)
    }

    /// A lower bound of s over the Gauss arc of A's edge `x`: along u in the arc,
    /// h_A(u) = u·p for p on the edge and h_B(−u) ≥ −u·q for every q in B, so
    /// s(u) ≥ min over the arc of u·(p − q). B's centroid, the deep vertex, and B's support
    /// vertices at the arc's ends (which make the bound exact there) are tried in that
    /// order until the bound reaches `hold` (the ends only below `limit`, for an edge that
    /// would be paired); `low` is one already known.
    pub(super) fn arc_bound_a(
        &self,
        x: u32,
        low: f64,
        (hold, limit): (f64, f64),
        deep_b: DVec3,
        (known, warm): (&mut Supports, &mut u32),
    ) -> f64 {
        let faces = self.a.edge_faces(x as usize);
        raise_arc_bound(
            self.a.edge_arc(x as usize),
            self.a.vertex(self.a.edge_vertices(x as usize)[0]),
            [self.insides().b, deep_b],
            |i| self.end_support_b(faces[i], known, warm),
            low,
            (hold, limit),
        )
    }

    /// The same over the arc of B's edge `y` on the Gauss map of −B, worked in B's frame
    /// (no edge placed): with u = −R·w for w on B's own arc, u·(p − q) = w·(q′ − p′) for
    /// p′, q′ the points in B's frame. `deep_a` is given in B's frame.
    pub(super) fn arc_bound_b(
        &self,
        y: u32,
        low: f64,
        (hold, limit): (f64, f64),
        deep_a: DVec3,
        (known, warm): (&mut Supports, &mut u32),
    ) -> f64 {
        let faces = self.b.edge_faces(y as usize);
        raise_arc_bound(
            self.b.edge_arc(y as usize),
            self.b.vertex(self.b.edge_vertices(y as usize)[0]),
            [self.insides().a_in_b, deep_a],
            |i| {
                self.place
                    .inverse_point(self.end_support_a(faces[i], known, warm))
            },
            low,
            (hold, limit),
        )
    }

    /// A candidate of either body with s smaller than `at`'s beyond the tolerance, if any
    /// (the smallest such): every face axis, then every edge pair. A candidate whose lower
    /// bound is not smaller is skipped unqueried; an edge whose bound over its whole Gauss
    /// arc is not smaller is skipped with all its pairs. With `build`, the candidates
    /// within a margin of `at` are listed there with their bounds (see [`Standing`]).
    pub(super) fn certify(&self, at: &Found, mut build: Option<&mut Standing>) -> Option<Found> {
        let mut best: Option<Found> = None;
        let tol = self.tol_at(at.s);
        let bar = |best: &Option<Found>| best.map_or(at.s, |b| b.s) - tol;
        // Candidates below `keep` are listed, the others' bounds make `rest`.
        let keep = match build.as_deref_mut() {
            Some(st) => at.s - tol + st.rebuild(),
            None => f64::NEG_INFINITY,
        };
        let (mut wa, mut wb) = (at.va, at.vb);
        // h_B(−u) ≥ −u·q for every point q of B: its centroid, and the vertex deepest
        // along the current axis (tight near it); likewise for A.
        let (deep_a, deep_b) = (self.a.vertex(at.va), self.place.point(self.b.vertex(at.vb)));
        // A lower bound of s at every face axis (exact where it was queried), for the
        // edges' bounds below. Faces are visited neighbour after neighbour, so the last
        // support vertices (wa, wb) start each query close to its answer and give a tight
        // bound of their own: h_B(−n) ≥ −n·q for every q in B, h_A(n) ≥ n·p for every p
        // in A.
        let mut known = [
            Supports::new(self.a.num_faces()),
            Supports::new(self.b.num_faces()),
        ];
        let mut low_a = vec![0.0; self.a.num_faces()];
        for &f in self.a.face_order() {
            let f = f as usize;
            let near = self.place.point(self.b.vertex(wb));
            low_a[f] = self.face_bound_a(f, &[self.insides().b, deep_b, near]);
            if low_a[f] < bar(&best)
                && let Some(found) = self.evaluate(Facet::FaceA(f as u32), (wa, wb))
            {
                (wa, wb) = (found.va, found.vb);
                low_a[f] = found.s;
                known[0].set(f, found.vb);
                if found.s < bar(&best) {
                    best = Some(found);
                }
            }
            note(
                &mut build,
                keep,
                0,
                (f as u32, f as u32, 0.0),
                low_a[f],
                self.a.face_normal(f),
            );
        }
        let mut low_b = vec![0.0; self.b.num_faces()];
        for &f in self.b.face_order() {
            let f = f as usize;
            low_b[f] = self.face_bound_b(f, &[self.insides().a, deep_a, self.a.vertex(wa)]);
            if low_b[f] < bar(&best)
                && let Some(found) = self.evaluate(Facet::FaceB(f as u32), (wa, wb))
            {
                (wa, wb) = (found.va, found.vb);
                low_b[f] = found.s;
                known[1].set(f, found.va);
                if found.s < bar(&best) {
                    best = Some(found);
                }
            }
            note(
                &mut build,
                keep,
                1,
                (f as u32, f as u32, 0.0),
                low_b[f],
                self.b.face_normal(f),
            );
        }
        // Edge pairs, pruned edge by edge with the larger of two lower bounds over the
        // edge's Gauss arc (from n0 to n1):
        // - along u in the arc of A's edge x, h_A(u) = u·p for any point p of x and
        //   h_B(−u) ≥ −u·q, so s(u) ≥ u·(p − q) with q B's centroid or deepest vertex
        //   (likewise for B's edges);
        // - s is R-Lipschitz on the unit sphere (R: the largest |x| over A − B), and every
        //   u on the arc has (|u − n0| + |u − n1|)/2 ≤ |n0 − n1|/√2, so
        //   s(u) ≥ (low(n0) + low(n1))/2 − R·|n0 − n1|/√2.
        let lipschitz = |l0: f64, l1: f64, chord: f64| {
            0.5 * (l0 + l1) - self.reach * chord * std::f64::consts::FRAC_1_SQRT_2
        };
        // The bounds are tried cheapest first and an edge is dropped at the first that
        // reaches the bar (or, building, the margin above it): the same edges survive as
        // taking the largest of the three, for a fraction of the arithmetic (the arc
        // bounds were a sixth of a crowd's time). Edges below the bar are paired.
        let limit = bar(&best);
        let hold = keep.max(limit);
        let mut live_a: Vec<Edge> = Vec::new();
        let mut listed_a = false;
        for x in 0..self.a.num_edges() as u32 {
            let [f0, f1] = self.a.edge_faces(x as usize);
            let (n0, n1) = (
                self.a.face_normal(f0 as usize),
                self.a.face_normal(f1 as usize),
            );
            let chord = n0.distance(n1);
            let mut low = lipschitz(low_a[f0 as usize], low_a[f1 as usize], chord);
            if low < hold {
                low = self.arc_bound_a(x, low, (hold, limit), deep_b, (&mut known[0], &mut wb));
            }
            note(&mut build, keep, 2, (x, f0, chord), low, n0);
            listed_a |= low < keep;
            if low < limit {
                live_a.push(self.edge_a(x));
            }
        }
        if !listed_a && live_a.is_empty() {
            // No edge pair can matter while A's edges stay far; B's edges are not listed
            // (the standing certificate falls back when one of A's comes near).
            if let Some(st) = build {
                st.unbounded(3);
            }
            return best;
        }
        let deep_a_in_b = self.place.inverse_point(deep_a);
        let mut live_b: Vec<Edge> = Vec::new();
        for y in 0..self.b.num_edges() as u32 {
            let [f0, f1] = self.b.edge_faces(y as usize);
            let (n0, n1) = (-self.normal_b(f0), -self.normal_b(f1));
            let chord = n0.distance(n1);
            let mut low = lipschitz(low_b[f0 as usize], low_b[f1 as usize], chord);
            if low < hold {
                low =
                    self.arc_bound_b(y, low, (hold, limit), deep_a_in_b, (&mut known[1], &mut wa));
            }
            note(
                &mut build,
                keep,
                3,
                (y, f0, chord),
                low,
                self.b.face_normal(f0 as usize),
            );
            if low < limit {
                live_b.push(self.edge_b(y));
            }
        }
        if let Some((_, x, y)) = smallest_crossing(&live_a, &live_b, limit)
            && let Some(found) = self.evaluate(Facet::Edges(x, y), (wa, wb))
            && found.s < bar(&best)
        {
            best = Some(found);
        }
        best
    }
}

/// `low` raised to min over `arc` of u·(own − other) for points `other` of the other
/// body: the two `cheap` ones, then the two ends' (`end(0)`, `end(1)`), until `low`
/// reaches `hold` (the ends only below `limit` too).
fn raise_arc_bound(
    arc: &GaussArc,
    own: DVec3,
    cheap: [DVec3; 2],
    mut end: impl FnMut(usize) -> DVec3,
    mut low: f64,
    (hold, limit): (f64, f64),
) -> f64 {
    for other in cheap {
        if low >= hold {
            return low;
        }
        low = low.max(arc.min(own - other));
    }
    // The ends' support queries only for an edge that would be paired.
    for i in 0..2 {
        if low >= hold.min(limit) {
            break;
        }
        low = low.max(arc.min(own - end(i)));
    }
    low
}

/// Lists a candidate (index, the face its bound moves along, its arc's chord) whose lower
/// bound `low` is below `keep`, or lowers its kind's bound for the unlisted; `normal` is
/// that face's normal in its body's frame.
fn note(
    build: &mut Option<&mut Standing>,
    keep: f64,
    kind: usize,
    (index, face, chord): (u32, u32, f64),
    low: f64,
    normal: DVec3,
) {
    if let Some(st) = build.as_deref_mut() {
        let entry = Entry {
            index,
            face,
            chord,
            key: low,
        };
        st.note(kind, entry, low < keep, normal);
    }
}

/// The smallest s below `limit` over the pairs of A's and B's edges whose arcs cross
/// (such a pair spans a facet: its edges support A along the axis and B against it, so
/// s = axis·(p − q) with no support query), with the edges. Only arcs whose boxes overlap
/// can cross: a sweep over the boxes' x ranges finds those pairs.
pub(super) fn smallest_crossing(
    edges_a: &[Edge],
    edges_b: &[Edge],
    limit: f64,
) -> Option<(f64, u32, u32)> {
    if edges_a.is_empty() || edges_b.is_empty() {
        return None;
    }
    let mut smallest: Option<(f64, u32, u32)> = None;
    let boxes = |edges: &[Edge]| -> Vec<(DVec3, DVec3)> {
        edges.iter().map(|e| sat::arc_box(e.1, e.2)).collect()
    };
    sat::overlapping_arc_boxes(&boxes(edges_a), &boxes(edges_b), |i, j| {
        let (&(x, na, nb, p, da), &(y, nc, nd, q, db)) = (&edges_a[i], &edges_b[j]);
        if !sat::arcs_cross(na, nb, nc, nd) {
            return;
        }
        let axis = da.cross(db);
        let len = axis.length();
        if len <= 1e-12 * da.length() * db.length() {
            return;
        }
        let axis = axis / len;
        let axis = if axis.dot(na + nb) < 0.0 { -axis } else { axis };
        let s = axis.dot(p - q);
        if s < smallest.map_or(limit, |(v, ..)| v) {
            smallest = Some((s, x, y));
        }
    });
    smallest
}

/// An edge in A's frame: its index, its Gauss arc's ends, a point and its direction.
pub(super) type Edge = (u32, DVec3, DVec3, DVec3, DVec3);
