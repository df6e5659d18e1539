//! Refinement driven by the pieces' deviation from the mesh: VHACD's concavity measures
//! volume, so a piece may bridge a narrow pit or a gap between two limbs by more than any
//! length tolerance a user would read into it. Here every piece's whole surface is
//! measured against the mesh: its faces are cut into cells until each cell's deviation
//! (the distance of its points outside the solid from the solid) is bounded within the
//! tolerance, or a point farther out is found (`Surface::measure`; a bound, not a
//! sampling: a bridge across a hole whose corners and face centroids all sit near the
//! mesh is found too). A piece that strays further than the tolerance is split in two: by
//! a plane through the mesh point nearest its worst point and along the way out to it
//! (down into the pit or groove it bridges), or through that point square to that way
//! (across a gap between two parts of the mesh), whichever of a few such planes leaves
//! the least volume in the two halves, until every piece is within the tolerance or the
//! split budget is spent.
//!
//! A split replaces piece `P` by the hulls of `P ∩ H⁺ ∩ S` and `P ∩ H⁻ ∩ S` (`H±` the
//! plane's half-spaces, `S` the mesh's solid). The hull of such a set is the hull of its
//! boundary's extreme points, which are (a) the mesh's triangles clipped to the region
//! (their clipped corners) and (b) the region's own corners that lie inside the solid;
//! both are computed exactly, so each half covers what `P` covered of the solid on its
//! side and lies inside `P`: coverage of the mesh is kept. A half over the vertex budget
//! is cut to it ([`simplify`], scaled to hold what it dropped) and measured again.
//! Inside/outside is decided by the parity of a ray's crossings, on three rays in unrelated
//! directions, by majority (a ray that grazes an edge or a vertex and miscounts is
//! outvoted).

use glam::DVec3;

use super::simplify::simplify;
use super::surface::Surface;
use crate::geometry::{ConvexPolytope, TriMesh};
use crate::parallel;

/// Splits of one VHACD piece at most (a half cut to the vertex budget is scaled to hold what
/// it dropped, so a piece may near the tolerance slowly: the cow at 1% needs more than 8
/// splits in one place).
const MAX_DEPTH: u32 = 12;

/// Cut planes tried per split down into a pit (normals at even angles square to the way
/// out); one more goes across the way out.
const CUTS: u32 = 4;

/// A cell of a piece's face finer than this part of the tolerance, whose centroid lies
/// outside the solid and within the tolerance of the mesh but whose bound is not, counts
/// as over: the piece is split there (it strays by at least 63/64 of the tolerance).
const FINEST: f64 = 1.0 / 64.0;

/// The most pieces refinement may make in all.
const MAX_PIECES: usize = 2048;

/// Refines `pieces` (vertex lists) of the closed `mesh` until each deviates from it by at
/// most `tolerance`, cutting every new piece to `max_vertices`. Returns the pieces, the
/// largest deviation left (an upper bound over every piece's surface, at most the
/// tolerance; where the split budget ran out, the worst point found on the pieces it
/// left, above the tolerance) and the largest shortfall of a simplified piece.
pub fn refine(
    mesh: &TriMesh,
    pieces: Vec<Vec<DVec3>>,
    tolerance: f64,
    max_vertices: usize,
) -> (Vec<Vec<DVec3>>, f64, f64) {
    refine_on(&Surface::new(mesh), pieces, tolerance, max_vertices)
}

/// [`refine`] against a mesh whose BVH is built (the decomposition's, which has asked it
/// where its parts' voxel corners lie).
///
/// Each piece's splits are its own, so each piece is refined on the pool as a tree of its
/// own, and the trees' pieces are joined in the order one loop over all of them leaves
/// (last piece first, each tree whole). That loop refuses a split only when the pieces
/// would pass [`MAX_PIECES`], and the pieces it holds at any split are never more than it
/// ends with: so where the trees together end within [`MAX_PIECES`] the loop refuses
/// nothing and makes exactly these pieces; otherwise the loop runs, on this thread.
pub(super) fn refine_on(
    surface: &Surface<'_>,
    pieces: Vec<Vec<DVec3>>,
    tolerance: f64,
    max_vertices: usize,
) -> (Vec<Vec<DVec3>>, f64, f64) {
    let trees = parallel::on_threads(pieces.clone(), |piece| {
        refine_loop(surface, vec![piece], tolerance, max_vertices)
    });
    let total: usize = trees.iter().map(|t| t.pieces.len()).sum();
    if trees.iter().any(|t| t.refused) || total > MAX_PIECES {
        let all = refine_loop(surface, pieces, tolerance, max_vertices);
        return (all.pieces, all.left, all.shortfall);
    }
    let (mut done, mut left, mut shortfall) = (Vec::with_capacity(total), 0.0f64, 0.0f64);
    for tree in trees.into_iter().rev() {
        done.extend(tree.pieces);
        left = left.max(tree.left);
        shortfall = shortfall.max(tree.shortfall);
    }
    (done, left, shortfall)
}

/// What [`refine_loop`] made.
struct Refined {
    pieces: Vec<Vec<DVec3>>,
    /// The largest deviation left.
    left: f64,
    /// The largest shortfall of a simplified piece.
    shortfall: f64,
    /// Whether a split was refused because the pieces would pass [`MAX_PIECES`].
    refused: bool,
}

/// The refinement of `pieces` (taken last first, each split's halves next), splitting
/// while a piece strays, within [`MAX_DEPTH`] splits of it and [`MAX_PIECES`] pieces.
fn refine_loop(
    surface: &Surface<'_>,
    pieces: Vec<Vec<DVec3>>,
    tolerance: f64,
    max_vertices: usize,
) -> Refined {
    let mut work: Vec<(Vec<DVec3>, u32)> = pieces.into_iter().map(|p| (p, 0)).collect();
    let (mut done, mut left, mut shortfall) = (Vec::new(), 0.0f64, 0.0f64);
    let mut refused = false;
    while let Some((points, depth)) = work.pop() {
        let Ok(piece) = ConvexPolytope::from_points(&points) else {
            done.push(points);
            continue;
        };
        let worst = match surface.measure(&piece, tolerance) {
            Measure::Within(bound) => {
                left = left.max(bound);
                done.push(points);
                continue;
            }
            Measure::Over(worst) => worst,
        };
        let full = done.len() + work.len() + 2 > MAX_PIECES;
        refused |= full && depth < MAX_DEPTH;
        // Both halves cut to the vertex budget, or the piece stays as it is.
        let halves = if depth >= MAX_DEPTH || full {
            None
        } else {
            surface.split(&piece, &worst).and_then(|[below, above]| {
                Some([
                    simplify(&below, max_vertices).ok()?,
                    simplify(&above, max_vertices).ok()?,
                ])
            })
        };
        match halves {
            Some(halves) => {
                for half in halves {
                    shortfall = shortfall.max(half.deviation);
                    work.push((half.hull.vertices().to_vec(), depth + 1));
                }
            }
            None => {
                left = left.max(worst.distance);
                done.push(points);
            }
        }
    }
    Refined {
        pieces: done,
        left,
        shortfall,
        refused,
    }
}

/// A piece's surface against the tolerance ([`Surface::measure`]).
enum Measure {
    /// Within it: an upper bound of the surface's deviation.
    Within(f64),
    /// Over it (or within a [`FINEST`] part of it at a point outside): the worst point
    /// found.
    Over(Worst),
}

/// What a cell's parent learnt at its centroid.
#[derive(Clone, Copy)]
struct Parent {
    centre: DVec3,
    /// The centroid's distance from the mesh.
    distance: f64,
    inside: bool,
    /// The parent's bound of the deviation over itself, so over the cell.
    bound: f64,
}

/// A point of a piece's surface outside the solid, far from the mesh.
struct Worst {
    /// The sample, on the piece's surface.
    sample: DVec3,
    /// The mesh point nearest it.
    nearest: DVec3,
    distance: f64,
}

impl Surface<'_> {
    /// How far the piece's surface strays outside the solid, against `tolerance`: `Within`
    /// with an upper bound of the deviation over the whole surface (at most the
    /// tolerance), or `Over` with the worst point found.
    ///
    /// The faces are cut into triangular cells. The distance `g` from a point outside the
    /// solid to the solid (0 inside) is 1-Lipschitz, and a cell lies within `reach` of its
    /// centroid `c`, so over the cell `g ≤ g(c) + reach`; where `c` lies inside at depth
    /// `d` from the mesh, the ball of radius `d` about it is inside too, so `g ≤ reach − d`.
    /// Either way `g ≤ d + reach`, with `d` the distance from `c` to the mesh, which needs
    /// no inside test. A cell whose bound is above the tolerance is split in four until
    /// its bound is within it, or its centroid is outside by more than the tolerance (the
    /// piece is over), or it is finer than [`FINEST`] of the tolerance with its centroid
    /// outside (over by at most that much: the piece is split there too).
    fn measure(&self, piece: &ConvexPolytope, tolerance: f64) -> Measure {
        let finest = tolerance * FINEST;
        // Each cell with what its parent's centroid tells about it: the centroid, its
        // distance from the mesh and whether it is inside (a ball of that radius about it
        // is on the same side), and the parent's bound over the cell.
        let mut cells: Vec<([DVec3; 3], Option<Parent>)> = Vec::new();
        for f in 0..piece.num_faces() {
            let ring: Vec<DVec3> = piece.face_vertices(f).map(|v| piece.vertex(v)).collect();
            cells.extend((1..ring.len() - 1).map(|i| ([ring[0], ring[i], ring[i + 1]], None)));
        }
        let mut bound = 0.0f64;
        let mut worst: Option<Worst> = None;
        while let Some(([a, b, c], parent)) = cells.pop() {
            let beaten =
                |w: &Option<Worst>, at_most: f64| w.as_ref().is_some_and(|w| at_most <= w.distance);
            if parent.is_some_and(|p| beaten(&worst, p.bound)) {
                continue;
            }
            let centre = (a + b + c) / 3.0;
            let reach = centre
                .distance_squared(a)
                .max(centre.distance_squared(b))
                .max(centre.distance_squared(c))
                .sqrt();
            let nearest = self.nearest(centre);
            let d = centre.distance(nearest);
            if d + reach <= tolerance || beaten(&worst, d + reach) {
                bound = bound.max(d + reach);
                continue;
            }
            let inside = match parent {
                Some(p) if centre.distance(p.centre) < p.distance => p.inside,
                _ => self.inside(centre),
            };
            let here = if inside {
                (reach - d).max(0.0)
            } else {
                d + reach
            };
            if here <= tolerance {
                bound = bound.max(here);
                continue;
            }
            if !inside && (d > tolerance || reach <= finest) {
                if !beaten(&worst, d) {
                    worst = Some(Worst {
                        sample: centre,
                        nearest,
                        distance: d,
                    });
                }
                continue;
            }
            let parent = Some(Parent {
                centre,
                distance: d,
                inside,
                bound: here,
            });
            let (ab, bc, ca) = ((a + b) / 2.0, (b + c) / 2.0, (c + a) / 2.0);
            cells.extend(
                [[a, ab, ca], [ab, b, bc], [ca, bc, c], [ab, bc, ca]].map(|cell| (cell, parent)),
            );
        }
        match worst {
            Some(worst) => Measure::Over(worst),
            None => Measure::Within(bound),
        }
    }

    /// The two halves of `piece` cut by the plane, among a few through the worst sample or
    /// the mesh point nearest it, that leaves the least volume in the two hulls (the cut
    /// that removes most of the empty space the piece bridges); `None` when every cut
    /// leaves a flat or empty half.
    fn split(&self, piece: &ConvexPolytope, worst: &Worst) -> Option<[Vec<DVec3>; 2]> {
        let across = (worst.sample - worst.nearest).normalize_or(DVec3::Z);
        let long = longest_direction(piece, across);
        let side = across.cross(long);
        // Planes down into a pit or groove (through its bottom, along the way out), and
        // one across a gap between two parts of the mesh (through the sample, square to
        // the way out: the sample may sit halfway between two limbs).
        let cuts = (0..CUTS)
            .map(|k| {
                let angle = std::f64::consts::PI * f64::from(k) / f64::from(CUTS);
                (long * angle.cos() + side * angle.sin(), worst.nearest)
            })
            .chain([(across, worst.sample)]);
        // What every cut shares: the piece's face planes, and which of its vertices lie
        // inside the solid.
        let faces: Vec<(DVec3, f64)> = (0..piece.num_faces())
            .map(|f| (piece.face_normal(f), piece.face_offset(f)))
            .collect();
        let inside: Vec<bool> = piece.vertices().iter().map(|&v| self.in_solid(v)).collect();
        let mut best: Option<(f64, [Vec<DVec3>; 2])> = None;
        for (normal, through) in cuts {
            let offset = normal.dot(through);
            let (Some(below), Some(above)) = (
                self.half(piece, (&faces, &inside), normal, offset),
                self.half(piece, (&faces, &inside), -normal, -offset),
            ) else {
                continue;
            };
            let volume = below.1 + above.1;
            if best.as_ref().is_none_or(|(v, _)| volume < *v) {
                best = Some((volume, [below.0, above.0]));
            }
        }
        best.map(|(_, halves)| halves)
    }

    /// The extreme points of `piece ∩ {x·normal ≤ offset} ∩ solid` and their hull's
    /// volume, or `None` when they span no volume.
    /// `faces` are the piece's face planes, `inside` whether each of its vertices lies
    /// inside the solid.
    fn half(
        &self,
        piece: &ConvexPolytope,
        (faces, inside): (&[(DVec3, f64)], &[bool]),
        normal: DVec3,
        offset: f64,
    ) -> Option<(Vec<DVec3>, f64)> {
        let mut planes = faces.to_vec();
        planes.push((normal, offset));
        // The region's corners, each with whether it lies inside the solid: the piece's on
        // this side, and its edges' crossings.
        let side = |v: DVec3| normal.dot(v) - offset;
        let mut corners: Vec<(DVec3, bool)> = piece
            .vertices()
            .iter()
            .zip(inside)
            .filter(|(v, _)| side(**v) <= 0.0)
            .map(|(v, within)| (*v, *within))
            .collect();
        for e in 0..piece.num_edges() {
            let [a, b] = piece.edge_vertices(e).map(|v| piece.vertex(v));
            let (sa, sb) = (side(a), side(b));
            if (sa < 0.0 && sb > 0.0) || (sa > 0.0 && sb < 0.0) {
                let c = a + (b - a) * (sa / (sa - sb));
                corners.push((c, self.in_solid(c)));
            }
        }
        if corners.len() < 4 {
            return None;
        }
        let (lo, hi) = corners.iter().fold(
            (DVec3::INFINITY, DVec3::NEG_INFINITY),
            |(lo, hi), &(c, _)| (lo.min(c), hi.max(c)),
        );
        let mut points: Vec<DVec3> = corners
            .into_iter()
            .filter_map(|(c, within)| within.then_some(c))
            .collect();
        self.each(
            &mut |tlo, thi| !(tlo.cmpgt(hi).any() || thi.cmplt(lo).any()),
            &mut |i| points.extend(clip(self.triangle(i).to_vec(), &planes, self.on())),
        );
        let hull = ConvexPolytope::from_points(&points).ok()?;
        Some((hull.vertices().to_vec(), volume(&hull)))
    }
}

/// The volume of a convex polytope: its faces' fans of tetrahedra from the origin.
fn volume(p: &ConvexPolytope) -> f64 {
    let mut six = 0.0;
    for f in 0..p.num_faces() {
        let ring: Vec<DVec3> = p.face_vertices(f).map(|v| p.vertex(v)).collect();
        for i in 1..ring.len() - 1 {
            six += ring[0].dot(ring[i].cross(ring[i + 1]));
        }
    }
    (six / 6.0).abs()
}

/// The direction across which `piece` is longest, square to `across` (the direction from
/// the mesh to the worst sample): the farthest pair of vertices, projected.
fn longest_direction(piece: &ConvexPolytope, across: DVec3) -> DVec3 {
    let across = across.normalize_or(DVec3::Z);
    let v = piece.vertices();
    let mut best = (0.0, across.any_orthonormal_vector());
    for (i, &a) in v.iter().enumerate() {
        for &b in &v[i + 1..] {
            let d = (b - a) - across * across.dot(b - a);
            let l = d.length_squared();
            if l > best.0 {
                best = (l, d);
            }
        }
    }
    best.1.normalize()
}

/// The polygon clipped to `x·n ≤ d` for every plane (Sutherland–Hodgman), a point within
/// `on` of a plane taken as on it (a polygon in a plane is kept whole, whichever way the
/// rounding of the plane falls).
fn clip(mut polygon: Vec<DVec3>, planes: &[(DVec3, f64)], on: f64) -> Vec<DVec3> {
    let side = |x: f64| if x.abs() <= on { 0.0 } else { x };
    for &(n, d) in planes {
        if polygon.is_empty() {
            break;
        }
        let mut out = Vec::with_capacity(polygon.len() + 2);
        for (i, &a) in polygon.iter().enumerate() {
            let b = polygon[(i + 1) % polygon.len()];
            let (sa, sb) = (side(n.dot(a) - d), side(n.dot(b) - d));
            if sa <= 0.0 {
                out.push(a);
            }
            if (sa < 0.0 && sb > 0.0) || (sa > 0.0 && sb < 0.0) {
                out.push(a + (b - a) * (sa / (sa - sb)));
            }
        }
        polygon = out;
    }
    polygon
}

#[cfg(test)]
mod tests {
    use super::super::piece_bits;
    use super::*;
    use crate::geometry::generators::{bumpy_sphere, torus};

    /// Pieces refined one tree a task on the pool are, bit for bit and in order, what one
    /// loop over all of them makes: the hulls of a torus's and a bumpy sphere's vertices in
    /// each octant (bridging the hole, the pits) split many times.
    #[test]
    fn pieces_refined_on_the_pool_equal_one_loop_over_them() {
        for mesh in [
            torus(1.0, 0.3, 32, 16).unwrap(),
            bumpy_sphere(1.0, 3, 0.3, 5.0).unwrap(),
        ] {
            let surface = Surface::new(&mesh);
            let pieces: Vec<Vec<DVec3>> = (0..8)
                .map(|octant: u32| {
                    let side = |v: f64, bit: u32| (v >= 0.0) == (octant >> bit & 1 == 1);
                    mesh.vertices
                        .iter()
                        .copied()
                        .filter(|v| side(v.x, 0) && side(v.y, 1) && side(v.z, 2))
                        .collect()
                })
                .collect();
            let tolerance = 0.02 * 2.6;
            let pooled = refine_on(&surface, pieces.clone(), tolerance, 64);
            let lone = refine_loop(&surface, pieces, tolerance, 64);
            assert!(!lone.refused);
            assert!(pooled.0.len() > 16, "{} pieces", pooled.0.len());
            assert_eq!(piece_bits(&pooled.0), piece_bits(&lone.pieces));
            assert_eq!(pooled.1.to_bits(), lone.left.to_bits());
            assert_eq!(pooled.2.to_bits(), lone.shortfall.to_bits());
        }
    }
}
