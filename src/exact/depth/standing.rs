//! What a full certificate proved, kept standing for the same pair's next queries.
//!
//! A coherent sequence repeats most of the global check: from one frame to the next
//! almost every candidate facet stays far above the depth. [`Standing`] keeps what a full
//! certificate found: the candidates within a margin of the depth with lower bounds of
//! their s, and one bound for all the others, per kind (A's faces, B's faces, A's edges'
//! Gauss arcs, B's edges' arcs). The bounds stay valid after motion, lowered by how the
//! bodies can have moved:
//! - A's faces and arcs are fixed in A's frame. Along a fixed unit d there,
//!   s(d) = h_A(d) + h_B(−d) changes only through B. Write B's points as c + R·(p − c_B)
//!   with c B's vertex centroid in A's frame: h_B(−d) = −d·c + h(−Rᵀd) with h the
//!   support function of B about its centroid, which is ρ_B-Lipschitz (ρ_B: B's largest
//!   vertex distance from its centroid). So s changes by −d·Δc (signed: motion across d
//!   costs nothing) and at most ρ_B·‖ΔR‖, and for rotations ‖R′ − R‖₂ = ‖R′ − R‖_F/√2
//!   (R′Rᵀ − I has singular values 2 sin(θ/2) twice and 0).
//! - B's faces and arcs are fixed in B's frame: the same with A's centroid in B's frame,
//!   s changing by +e·Δc for B's direction e = −n (n B's face normal), and ρ_A.
//! - Over an arc from n0 to n1 every direction u has |u − n0| ≤ |n1 − n0| (a minor arc),
//!   so u·Δc ≤ n0·Δc + |n1 − n0|·|Δc|, and |Δc| is at most the centroid's path.
//! - Every edge-pair facet's normal lies on an arc of A's edge and on one of B's, so it is
//!   bounded by either arc's bound.
//!
//! Each listed candidate keeps `key = bound + shift` with the shift n·c + chord·path +
//! ρ·turn + slack taken when the bound was found (path, turn: summed query by query since
//! the build; slack: a tolerance per query for rounding), so its bound now is `key −
//! shift now`. A query re-evaluates only the listed candidates whose bound falls below the
//! walk's s, and the full certificate runs again when an unlisted kind's bound does.

use glam::{DMat3, DVec3};

use super::certify::{Edge, Supports, smallest_crossing};
use super::inscribed::Kept;
use super::{Facet, Found, Pair};

/// The margin above the depth within which a full certificate lists candidates: this
/// share of the bodies' spread, or 16 of the last query's moves if more.
const MARGIN_REL: f64 = 0.5;

/// One listed candidate.
#[derive(Clone, Copy, Debug)]
pub(super) struct Entry {
    /// The face or edge.
    pub(super) index: u32,
    /// The face whose normal (own frame) the bound moves along: the face itself, or the
    /// edge's first face.
    pub(super) face: u32,
    /// |n1 − n0| over an edge's arc; 0 for a face.
    pub(super) chord: f64,
    /// The bound when found, plus the shift then.
    pub(super) key: f64,
}

/// What the last full certificate of a pair proved (see the module comment). Kinds index
/// the lists: A's faces, B's faces, A's edges, B's edges; kinds 0 and 2 live in A's
/// frame (side 0), 1 and 3 in B's (side 1).
#[derive(Clone, Debug, Default)]
pub(super) struct Standing {
    /// Whether the lists hold a certificate.
    built: bool,
    /// The shapes' sizes (vertices and faces of A, of B): a cache handed another pair's
    /// shapes starts over.
    shapes: [usize; 4],
    /// Each body's vertex centroid and largest vertex distance from it, own frame.
    centre: [DVec3; 2],
    spread: [f64; 2],
    /// B's rotation in A's frame at the last query.
    rotation: Option<DMat3>,
    /// B's centroid in A's frame and A's in B's: at the last query, and at the build.
    pos: [DVec3; 2],
    pos_built: [DVec3; 2],
    /// The rotation and centroids of the query before the last: the last move
    /// ([`Self::step`]) is worked out only where it is asked for.
    before: Option<(DMat3, [DVec3; 2])>,
    /// Since the build: each centroid's path, the summed turn, the summed tolerances.
    path: [f64; 2],
    turn: f64,
    slack: f64,
    /// Per kind, a lower bound of s at the build over every candidate not listed.
    rest: [f64; 4],
    /// Per kind, the listed candidates.
    pub(super) near: [Vec<Entry>; 4],
    /// Full certificates run, and queries settled without one (by the standing
    /// certificate or the inscribed polytope).
    pub(super) counts: [u64; 2],
    /// The inscribed polytope of the last query that it settled.
    pub(super) kept: Kept,
}

/// How far each centroid moved between two placements (rotation, centroids), and a bound
/// of the turn: the spectral norm of the rotations' difference.
fn movement((r0, p0): (DMat3, [DVec3; 2]), (r1, p1): (DMat3, [DVec3; 2])) -> ([f64; 2], f64) {
    let m = r1 - r0;
    let frobenius =
        (m.x_axis.length_squared() + m.y_axis.length_squared() + m.z_axis.length_squared()).sqrt();
    // The spectral norm of a difference of rotations; the slack covers matrices a few ulps
    // from orthogonal.
    let turn = frobenius * std::f64::consts::FRAC_1_SQRT_2 + 1e-12;
    ([p1[0].distance(p0[0]), p1[1].distance(p0[1])], turn)
}

/// The frame side of each kind.
const SIDE: [usize; 4] = [0, 1, 0, 1];

impl Standing {
    /// Takes in `pair`'s placement: the move from the last query's.
    pub(super) fn advance(&mut self, pair: &Pair<'_>) {
        let shapes = [
            pair.a.num_vertices(),
            pair.a.num_faces(),
            pair.b.num_vertices(),
            pair.b.num_faces(),
        ];
        // Entry by entry: comparing the whole arrays reads the fresh one back in pairs of
        // what was just written one by one, a stall on every query.
        if self
            .shapes
            .iter()
            .zip(shapes)
            .any(|(&kept, now)| kept != now)
        {
            let spread = |p: &crate::geometry::ConvexPolytope| {
                let c = p.centroid();
                let far = p
                    .vertices()
                    .iter()
                    .map(|v| v.distance(c))
                    .fold(0.0, f64::max);
                // Rounding in the distances, and in the points placed with them.
                far * (1.0 + 1e-12) + 1e-12 * p.reach()
            };
            *self = Standing {
                shapes,
                centre: [pair.a.centroid(), pair.b.centroid()],
                spread: [spread(pair.a), spread(pair.b)],
                counts: self.counts,
                ..Standing::default()
            };
        }
        let pos = [
            pair.place.point(self.centre[1]),
            pair.place.inverse_point(self.centre[0]),
        ];
        let rotation = pair.place.rotation;
        // The paths matter only to a certificate (a build starts them at zero).
        if self.built
            && let Some(last) = self.rotation
        {
            let (moved, turn) = movement((last, self.pos), (rotation, pos));
            self.path[0] += moved[0];
            self.path[1] += moved[1];
            self.turn += turn;
            self.slack += 4.0 * pair.tol;
        }
        self.before = self.rotation.map(|r| (r, self.pos));
        self.rotation = Some(rotation);
        self.pos = pos;
    }

    /// The last query's larger move: a centroid's displacement plus the other body's
    /// spread times the turn (0 before two queries).
    pub(super) fn step(&self) -> f64 {
        match (self.before, self.rotation) {
            (Some(before), Some(rotation)) => {
                let (moved, turn) = movement(before, (rotation, self.pos));
                (moved[0] + self.spread[1] * turn).max(moved[1] + self.spread[0] * turn)
            }
            _ => 0.0,
        }
    }

    /// Forgets the certificate (the walk answered another way).
    pub(super) fn drop_certificate(&mut self) {
        self.built = false;
    }

    /// Whether the lists hold a certificate.
    pub(super) fn built(&self) -> bool {
        self.built
    }

    /// Starts a new certificate at this query's placement; the margin above `s` within
    /// which candidates are listed.
    pub(super) fn rebuild(&mut self) -> f64 {
        self.built = true;
        self.pos_built = self.pos;
        self.path = [0.0; 2];
        self.turn = 0.0;
        self.slack = 0.0;
        self.rest = [f64::INFINITY; 4];
        self.near.iter_mut().for_each(Vec::clear);
        self.counts[0] += 1;
        (MARGIN_REL * (self.spread[0] + self.spread[1])).max(16.0 * self.step())
    }

    /// The shift of a bound moving along `normal` (own frame of `kind`'s body) over an
    /// arc of `chord`.
    #[inline]
    pub(super) fn shift(&self, kind: usize, normal: DVec3, chord: f64) -> f64 {
        let side = SIDE[kind];
        normal.dot(self.pos[side])
            + chord * self.path[side]
            + self.spread[1 - side] * self.turn
            + self.slack
    }

    /// Lists a candidate found with bound `low` (below the build's margin), or lowers its
    /// kind's bound for the unlisted.
    pub(super) fn note(&mut self, kind: usize, entry: Entry, listed: bool, normal: DVec3) {
        if listed {
            let key = entry.key + self.shift(kind, normal, entry.chord);
            self.near[kind].push(Entry { key, ..entry });
        } else {
            self.rest[kind] = self.rest[kind].min(entry.key);
        }
    }

    /// The bound of the unlisted candidates of `kind` now.
    pub(super) fn rest(&self, kind: usize) -> f64 {
        let side = SIDE[kind];
        self.rest[kind]
            - self.pos[side].distance(self.pos_built[side])
            - self.spread[1 - side] * self.turn
            - self.slack
    }

    /// Marks the unlisted edges of `kind` as unbounded (not looked at).
    pub(super) fn unbounded(&mut self, kind: usize) {
        self.rest[kind] = f64::NEG_INFINITY;
    }
}

/// What the standing certificate says at a new local minimum.
pub(super) enum Recheck {
    /// No candidate is smaller.
    Holds,
    /// This one is smaller: the walk goes on from it.
    Smaller(Found),
    /// An unlisted kind may be smaller: the full certificate decides.
    Expired,
}

/// How many of the last query's moves a recomputed edge bound should clear, so that the
/// edge sleeps a few queries.
const AHEAD: f64 = 4.0;

impl Pair<'_> {
    /// The standing certificate at the local minimum `at`: the listed candidates whose
    /// bound now falls below `at`'s s are bounded afresh (faces queried, edges' arcs
    /// bounded and the survivors paired), the unlisted are covered by their kinds' bounds.
    pub(super) fn recheck(&self, at: &Found, st: &mut Standing) -> Recheck {
        if !st.built() {
            return Recheck::Expired;
        }
        let tol = self.tol_at(at.s);
        let bar = at.s - tol;
        if (0..3).any(|k| st.rest(k) < bar) {
            return Recheck::Expired;
        }
        let mut best: Option<Found> = None;
        let cut = |best: &Option<Found>| best.map_or(at.s, |b| b.s) - tol;
        let (mut wa, mut wb) = (at.va, at.vb);
        let (deep_a, deep_b) = (self.a.vertex(at.va), self.place.point(self.b.vertex(at.vb)));
        let mut known = [
            Supports::new(self.a.num_faces()),
            Supports::new(self.b.num_faces()),
        ];
        for (kind, found_at) in known.iter_mut().enumerate() {
            let mut list = std::mem::take(&mut st.near[kind]);
            for entry in list.iter_mut() {
                let f = entry.face as usize;
                let normal = if kind == 0 {
                    self.a.face_normal(f)
                } else {
                    self.b.face_normal(f)
                };
                let shift = st.shift(kind, normal, 0.0);
                if entry.key - shift >= cut(&best) {
                    continue;
                }
                let low = if kind == 0 {
                    let near = self.place.point(self.b.vertex(wb));
                    self.face_bound_a(f, &[self.insides().b, deep_b, near])
                } else {
                    self.face_bound_b(f, &[self.insides().a, deep_a, self.a.vertex(wa)])
                };
                entry.key = entry.key.max(low + shift);
                if low >= cut(&best) {
                    continue;
                }
                let facet = if kind == 0 {
                    Facet::FaceA(entry.index)
                } else {
                    Facet::FaceB(entry.index)
                };
                if let Some(found) = self.evaluate(facet, (wa, wb)) {
                    (wa, wb) = (found.va, found.vb);
                    entry.key = found.s + shift;
                    found_at.set(f, if kind == 0 { found.vb } else { found.va });
                    if found.s < cut(&best) {
                        best = Some(found);
                    }
                }
            }
            st.near[kind] = list;
        }
        let limit = cut(&best);
        let ahead = limit + AHEAD * st.step();
        let deep_a_in_b = self.place.inverse_point(deep_a);
        let mut live: [Vec<Edge>; 2] = [Vec::new(), Vec::new()];
        for kind in 2..4 {
            if kind == 3 {
                if live[0].is_empty() {
                    break;
                }
                if st.rest(3) < limit {
                    return Recheck::Expired;
                }
            }
            let mut list = std::mem::take(&mut st.near[kind]);
            for entry in list.iter_mut() {
                let (f0, x) = (entry.face, entry.index);
                let normal = if kind == 2 {
                    self.a.face_normal(f0 as usize)
                } else {
                    self.b.face_normal(f0 as usize)
                };
                let shift = st.shift(kind, normal, entry.chord);
                if entry.key - shift >= limit {
                    continue;
                }
                // The cheap bounds in full, the ends' support queries while below `ahead`.
                let low = if kind == 2 {
                    self.arc_bound_a(
                        x,
                        f64::NEG_INFINITY,
                        (f64::INFINITY, ahead),
                        deep_b,
                        (&mut known[0], &mut wb),
                    )
                } else {
                    self.arc_bound_b(
                        x,
                        f64::NEG_INFINITY,
                        (f64::INFINITY, ahead),
                        deep_a_in_b,
                        (&mut known[1], &mut wa),
                    )
                };
                entry.key = entry.key.max(low + shift);
                if low < limit {
                    live[kind - 2].push(if kind == 2 {
                        self.edge_a(x)
                    } else {
                        self.edge_b(x)
                    });
                }
            }
            st.near[kind] = list;
        }
        let [live_a, live_b] = live;
        if let Some((_, x, y)) = smallest_crossing(&live_a, &live_b, limit)
            && let Some(found) = self.evaluate(Facet::Edges(x, y), (wa, wb))
            && found.s < cut(&best)
        {
            best = Some(found);
        }
        match best {
            Some(found) => Recheck::Smaller(found),
            None => Recheck::Holds,
        }
    }
}
