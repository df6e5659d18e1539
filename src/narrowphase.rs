//! The exact stage after the broadphase, on the CPU: every candidate pair of a scene's
//! bodies decided exactly, whatever their shapes. Each shape becomes an exact body once:
//! a convex polytope (the closest-feature walk, settled by the separating-axis test where
//! it gives up), a non-convex mesh decomposed into a hull tree (`exact::tree`; the
//! decomposition is cached on disk), or a sphere or capsule (`exact::rounded`). Pairs are
//! split over all cores.
//!
//! Three questions per pair: do they touch ([`Narrowphase::collide_pairs`]), where
//! (contact manifolds, [`Narrowphase::contacts`], warm-started per pair across frames by
//! a [`ContactState`]), and when do they first touch over a step
//! ([`Narrowphase::time_of_impact`]). A non-convex body gives one manifold per touching
//! piece pair, each with its own normal.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;

use glam::DVec3;

use crate::bodies::{GpuBody, Pose};
use crate::exact::advance::{self, ToiInput, ToiOutput, ToiState};
use crate::exact::depth::Toward;
use crate::exact::manifold::{self, Manifold, ManifoldCache};
use crate::exact::rounded::{self, plain};
use crate::exact::tree::{self, TreeCache};
use crate::exact::{rounded_toi, tree_toi, walk};
use crate::geometry::decompose::{Cache, DecomposeParams};
use crate::geometry::rounded::{Core, Rounded};
use crate::geometry::{ConvexPolytope, FeatureId, HullTree};
use crate::motion::ScrewMotion;
use crate::parallel;
use crate::shape::ShapeGeometry;
use crate::{Error, Result};

/// A shape as the exact stage holds it.
#[derive(Clone, Debug)]
pub enum ExactShape {
    /// A convex polytope.
    Convex(Arc<ConvexPolytope>),
    /// A non-convex body's hull tree.
    Tree(Arc<HullTree>),
    /// A sphere or a capsule.
    Rounded(Arc<Rounded>),
}

/// The exact shapes of a scene's shape table.
#[derive(Clone, Debug, Default)]
pub struct Narrowphase {
    shapes: Vec<ExactShape>,
    /// What the convex shapes' tables take together.
    convex_bytes: usize,
}

/// Convex shapes whose tables take at most this together (a core's second-level cache
/// here) stay in cache from pair to pair, and [`Narrowphase::prefetch_shapes`] leaves them
/// alone: asking for lines already there is work with nothing to gain (the main job's 20
/// shapes on the CPU twins, means of five alternating runs: contacts 32.2 -> 27.4 ms a
/// frame, impacts 100.3 -> 91.8).
pub const PREFETCH_ABOVE_BYTES: usize = 2 << 20;

impl Narrowphase {
    /// Builds each shape's exact body; non-convex meshes are decomposed (from `cache`
    /// when it holds them; `progress` hears about a decomposition that has to run).
    pub fn new(
        geometry: &[ShapeGeometry],
        cache: &Cache,
        progress: &mut dyn FnMut(&str),
    ) -> Result<Self> {
        let shapes = geometry
            .iter()
            .enumerate()
            .map(|(i, g)| {
                Ok(match g {
                    ShapeGeometry::Convex(p) => ExactShape::Convex(p.clone()),
                    ShapeGeometry::Rounded(r) => ExactShape::Rounded(r.clone()),
                    ShapeGeometry::Mesh(m) => ExactShape::Tree(Arc::new(
                        HullTree::decompose(m, &DecomposeParams::default(), cache, progress)
                            .map_err(|e| {
                                Error::Geometry(format!("shape {i} cannot be decomposed: {e}"))
                            })?,
                    )),
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let mut narrow = Narrowphase::default();
        for shape in shapes {
            narrow.push(shape);
        }
        Ok(narrow)
    }

    /// Adds a shape; returns its index.
    pub fn push(&mut self, shape: ExactShape) -> u32 {
        if let ExactShape::Convex(p) = &shape {
            self.convex_bytes += p.table_bytes();
        }
        self.shapes.push(shape);
        self.shapes.len() as u32 - 1
    }

    /// The exact shapes.
    pub fn shapes(&self) -> &[ExactShape] {
        &self.shapes
    }

    /// Whether each pair of `bodies` touches or overlaps, exactly, on all cores.
    pub fn collide_pairs(&self, bodies: &[GpuBody], pairs: &[[u32; 2]]) -> Result<Vec<bool>> {
        let shape_of: Vec<u32> = bodies.iter().map(|b| b.shape).collect();
        self.check_pairs(&shape_of, pairs)?;
        Ok(parallel::par_chunks(pairs, 1, |_, part| {
            part.iter()
                .enumerate()
                .map(|(i, &[a, b])| {
                    self.prefetch_shapes(
                        part.get(i + 1)
                            .map(|&[a, b]| [bodies[a as usize].shape, bodies[b as usize].shape]),
                    );
                    let (ga, gb) = (&bodies[a as usize], &bodies[b as usize]);
                    let (sa, sb) = (
                        &self.shapes[ga.shape as usize],
                        &self.shapes[gb.shape as usize],
                    );
                    let (pa, pb) = (Pose::from_gpu(ga), Pose::from_gpu(gb));
                    balls_gap((sa, &pa), (sb, &pb)) <= 0.0 && self.collide(sa, &pa, sb, &pb)
                })
                .collect()
        }))
    }

    /// Brings two shapes (the next pair's, while this one is worked on) toward the cache:
    /// pairs of many distinct bodies are out of cache (see [`ConvexPolytope::prefetch`]).
    /// Nothing when the convex shapes stay in cache ([`PREFETCH_ABOVE_BYTES`]).
    #[inline]
    pub fn prefetch_shapes(&self, shapes: Option<[u32; 2]>) {
        if self.convex_bytes <= PREFETCH_ABOVE_BYTES {
            return;
        }
        for shape in shapes.into_iter().flatten() {
            if let Some(shape) = self.shapes.get(shape as usize) {
                shape.prefetch();
            }
        }
    }

    /// [`Self::prefetch_shapes`] of `pair`'s bodies (the next pair's, while this one is
    /// worked on).
    #[inline]
    pub fn prefetch_pair(&self, bodies: &[ExactBody], pair: Option<&[u32; 2]>) {
        self.prefetch_shapes(
            pair.map(|&[a, b]| [bodies[a as usize].shape, bodies[b as usize].shape]),
        );
    }

    /// Every body a pair names exists and has a shape.
    fn check_pairs(&self, shape_of: &[u32], pairs: &[[u32; 2]]) -> Result<()> {
        for (i, &[a, b]) in pairs.iter().enumerate() {
            for body in [a, b] {
                let Some(&shape) = shape_of.get(body as usize) else {
                    return Err(Error::Usage(format!(
                        "narrowphase: pair {i} names body {body}, but there are {} bodies",
                        shape_of.len()
                    )));
                };
                if shape as usize >= self.shapes.len() {
                    return Err(Error::InvalidShape {
                        body,
                        what: format!(
                            "shape index {shape} is past the {} shapes",
                            self.shapes.len()
                        ),
                    });
                }
            }
        }
        Ok(())
    }

    /// The contact manifolds of every pair no farther apart than `speculative` (or than
    /// its contact tolerance, where that is larger: see `within`), on all cores,
    /// warm-started from `state` (which then holds exactly these pairs' warm starts).
    /// `bodies[i]` is body `i`'s shape and pose. `toward`, when given, holds a direction per
    /// pair (the GPU's depth estimates) where a pair of polytopes with no warm start begins
    /// its depth walk.
    pub fn contacts(
        &self,
        bodies: &[ExactBody],
        pairs: &[[u32; 2]],
        toward: Option<&[Toward]>,
        speculative: f64,
        state: &mut ContactState,
    ) -> Result<Vec<PairContact>> {
        if let Some(t) = toward
            && t.len() != pairs.len()
        {
            return Err(Error::Usage(format!(
                "{} start directions for {} pairs",
                t.len(),
                pairs.len()
            )));
        }
        if !(speculative.is_finite() && speculative >= 0.0) {
            return Err(Error::Usage(format!(
                "the speculative distance must be finite and non-negative, got {speculative}"
            )));
        }
        let shape_of: Vec<u32> = bodies.iter().map(|b| b.shape).collect();
        self.check_pairs(&shape_of, pairs)?;
        // One pair: its manifolds into `out`, its warm start updated.
        let one = |[a, b]: [u32; 2],
                   dir: Option<Toward>,
                   cache: &mut PairState,
                   out: &mut Vec<PairContact>| {
            let (ba, bb) = (&bodies[a as usize], &bodies[b as usize]);
            // Farther apart than `speculative`: no manifold, and the pair's warm start
            // stays as it was.
            let (sa, sb) = (
                &self.shapes[ba.shape as usize],
                &self.shapes[bb.shape as usize],
            );
            let within = within(speculative, (sa, ba), (sb, bb));
            let gap = balls_gap((sa, &ba.pose), (sb, &bb.pose));
            if gap > within {
                cache.separation = gap;
                cache.manifold.depth.release();
                return;
            }
            let found = self.manifolds(ba, bb, dir, within, cache);
            cache.separation = match (sa, sb) {
                (ExactShape::Convex(_), ExactShape::Convex(_)) => cache.manifold.distance.max(gap),
                _ => gap.max(0.0),
            };
            for (pieces, manifold) in found {
                out.push(PairContact {
                    bodies: [a, b],
                    pieces,
                    manifold,
                });
            }
        };
        let chunk = parallel::chunk_len(pairs.len(), 1);
        let toward_of = |k: usize, len: usize| toward.map(|t| &t[k * chunk..k * chunk + len]);
        if !pairs.windows(2).all(|w| w[0] < w[1]) {
            // Unsorted or repeated pairs: the warm starts taken out in one merge and kept
            // back afterwards.
            let mut warm = state.take(pairs);
            let parts = pairs
                .chunks(chunk)
                .zip(warm.chunks_mut(chunk))
                .enumerate()
                .collect();
            let parts: Vec<Vec<PairContact>> =
                parallel::on_threads(parts, |(k, (part, caches))| {
                    let toward = toward_of(k, part.len());
                    let mut out = Vec::new();
                    for (i, (&pair, cache)) in part.iter().zip(caches).enumerate() {
                        self.prefetch_pair(bodies, part.get(i + 1));
                        one(pair, toward.map(|t| t[i]), cache, &mut out);
                    }
                    out
                });
            state.keep(pairs, warm);
            return Ok(parts.concat());
        }
        // Sorted pairs (a frame's): each thread takes its run of the held warm starts (from
        // the first held pair not below its first pair), works its pairs and returns them
        // with their warm starts, so the merge is on all cores, not one.
        let mut held = std::mem::take(&mut state.pairs);
        let mut runs: Vec<&mut [([u32; 2], PairState)]> = Vec::new();
        let mut rest: &mut [([u32; 2], PairState)] = &mut held;
        for part in pairs.chunks(chunk).skip(1) {
            let end = rest.partition_point(|h| h.0 < part[0]);
            let (run, after) = rest.split_at_mut(end);
            runs.push(run);
            rest = after;
        }
        runs.push(rest);
        let parts = pairs.chunks(chunk).zip(runs).enumerate().collect();
        let parts: Vec<(Vec<PairContact>, HeldRun)> =
            parallel::on_threads(parts, |(k, (part, run))| {
                let toward = toward_of(k, part.len());
                let (mut out, mut kept) = (Vec::new(), Vec::with_capacity(part.len()));
                let mut at = 0;
                for (i, &pair) in part.iter().enumerate() {
                    self.prefetch_pair(bodies, part.get(i + 1));
                    let mut cache = take_forward(run, &mut at, pair).unwrap_or_default();
                    one(pair, toward.map(|t| t[i]), &mut cache, &mut out);
                    kept.push((pair, cache));
                }
                // The warm starts of pairs gone, dropped here, not on one core.
                for h in run.iter_mut() {
                    drop(std::mem::take(&mut h.1));
                }
                (out, kept)
            });
        drop(held);
        let (mut contacts, mut kept) = (Vec::new(), Vec::with_capacity(pairs.len()));
        for (out, run) in parts {
            contacts.extend(out);
            kept.extend(run);
        }
        state.pairs = kept;
        Ok(contacts)
    }

    /// The manifolds of one pair, each with its pieces (0 for a convex or rounded body).
    fn manifolds(
        &self,
        a: &ExactBody,
        b: &ExactBody,
        toward: Option<Toward>,
        speculative: f64,
        cache: &mut PairState,
    ) -> Vec<((u32, u32), Manifold)> {
        use ExactShape::{Convex, Rounded as Round, Tree};
        let (sa, sb) = (
            &self.shapes[a.shape as usize],
            &self.shapes[b.shape as usize],
        );
        let (pa, pb) = (&a.pose, &b.pose);
        let flip = |(p, m): (u32, Manifold)| ((0, p), m.swapped());
        match (sa, sb) {
            (Convex(x), Convex(y)) => {
                let depth = &mut cache.manifold.depth;
                if depth.features.is_none() {
                    depth.toward = toward;
                }
                manifold::polytopes(x, pa, y, pb, speculative, &mut cache.manifold)
                    .map(|m| ((0, 0), m))
                    .into_iter()
                    .collect()
            }
            (Tree(t), Round(r)) => tree_and_rounded(t, pa, r, pb, speculative)
                .into_iter()
                .map(|(p, m)| ((p, 0), m))
                .collect(),
            (Round(r), Tree(t)) => tree_and_rounded(t, pb, r, pa, speculative)
                .into_iter()
                .map(flip)
                .collect(),
            (Round(_), _) | (_, Round(_)) => match (sa.rounded(), sb.rounded()) {
                (Some(x), Some(y)) => manifold::rounded(&x, pa, &y, pb, speculative)
                    .map(|m| ((0, 0), m))
                    .into_iter()
                    .collect(),
                _ => unreachable!("a tree against a rounded body is matched above"),
            },
            _ => match (sa.tree(), sb.tree()) {
                (Some(x), Some(y)) => {
                    let trees = cache.trees.get_or_insert_with(Box::default);
                    let near = tree::pieces_within(&x, *pa, &y, *pb, speculative, &mut trees.tree);
                    // Each piece pair keeps its walks' warm starts while it stays near.
                    let mut last = std::mem::take(&mut trees.pieces);
                    near.into_iter()
                        .filter_map(|(i, j)| {
                            let mut warm = last.remove(&(i, j)).unwrap_or_default();
                            let m = manifold::polytopes(
                                x.piece(i),
                                pa,
                                y.piece(j),
                                pb,
                                speculative,
                                &mut warm,
                            );
                            trees.pieces.insert((i, j), warm);
                            m.map(|m| ((i, j), m))
                        })
                        .collect()
                }
                _ => unreachable!("rounded bodies are matched above"),
            },
        }
    }

    /// The first new contact of two exact shapes over their motions (`t` in `[0, 1]`), and
    /// the pieces that make it (0 for a convex or rounded body): bodies, or pieces of
    /// non-convex ones, touching at the start that stay in that contact or part
    /// ([`advance::holds_or_parts`]: a crate or a cow sliding on a floor) make no contact;
    /// touching ones that can close make one at 0.
    pub fn time_of_impact(
        &self,
        a: &ExactShape,
        motion_a: ScrewMotion,
        b: &ExactShape,
        motion_b: ScrewMotion,
        start: Option<(FeatureId, FeatureId)>,
    ) -> (ToiOutput, (u32, u32)) {
        use ExactShape::{Convex, Rounded as Round, Tree};
        // Convex bodies held in contact from the start: no new one (the trees' pieces are
        // checked one by one, since another piece may come down later).
        // Two polytopes hold along any face at their closest features that separates them;
        // a rounded body's spin moves only its core.
        let convex = |out: ToiOutput, held_by: Held<'_>| {
            let held = match held_by {
                Held::Polytopes(x, y) => advance::held_from_start_polytopes(
                    &out,
                    (x, a.reach(), &motion_a),
                    (y, b.reach(), &motion_b),
                ),
                Held::Rounded(x, y) => advance::held_rounded(&out, (x, &motion_a), (y, &motion_b)),
            };
            if held {
                ToiOutput {
                    state: ToiState::Miss,
                    toi: 1.0,
                    ..out
                }
            } else {
                out
            }
        };
        match (a, b) {
            (Convex(x), Convex(y)) => (
                convex(
                    advance::time_of_impact(&ToiInput {
                        start,
                        ..ToiInput::new(x, motion_a, y, motion_b)
                    }),
                    Held::Polytopes(x, y),
                ),
                (0, 0),
            ),
            (Tree(t), Round(r)) => {
                let hit = tree_toi::first_new_contact_rounded(t, motion_a, r, motion_b);
                (hit.output, (hit.pieces.0, 0))
            }
            (Round(r), Tree(t)) => {
                let hit = tree_toi::first_new_contact_rounded(t, motion_b, r, motion_a);
                (swapped_toi(hit.output), (0, hit.pieces.0))
            }
            (Round(_), _) | (_, Round(_)) => match (a.rounded(), b.rounded()) {
                (Some(x), Some(y)) => (
                    convex(
                        rounded_toi::time_of_impact(&x, motion_a, &y, motion_b, None, None),
                        Held::Rounded(&x, &y),
                    ),
                    (0, 0),
                ),
                _ => unreachable!("a tree against a rounded body is matched above"),
            },
            _ => match (a.tree(), b.tree()) {
                (Some(x), Some(y)) => {
                    let hit = tree_toi::first_new_contact(&x, motion_a, &y, motion_b);
                    (hit.output, hit.pieces)
                }
                _ => unreachable!("rounded bodies are matched above"),
            },
        }
    }

    /// Whether two exact shapes at their poses touch or overlap.
    pub fn collide(&self, a: &ExactShape, pa: &Pose, b: &ExactShape, pb: &Pose) -> bool {
        use ExactShape::{Convex, Rounded as Round, Tree};
        match (a, b) {
            (Convex(x), Convex(y)) => walk::collide(x, pa, y, pb),
            (Tree(t), Round(r)) => tree::collide_with_rounded(t, *pa, r, *pb),
            (Round(r), Tree(t)) => tree::collide_with_rounded(t, *pb, r, *pa),
            (Round(_), _) | (_, Round(_)) => match (a.rounded(), b.rounded()) {
                (Some(x), Some(y)) => rounded::collide(&x, pa, &y, pb),
                _ => unreachable!("a tree against a rounded body is matched above"),
            },
            _ => match (a.tree(), b.tree()) {
                (Some(x), Some(y)) => {
                    tree::collide(&x, *pa, &y, *pb, &mut TreeCache::new()).is_some()
                }
                _ => unreachable!("rounded bodies are matched above"),
            },
        }
    }
}

/// How far apart a pair may be and still have a manifold: the speculative distance, or
/// the pair's contact tolerance where that is larger ([`advance::contact_tolerance`]: a
/// gap of rounding between bodies placed to touch is a contact, as it is a hit for
/// conservative advancement).
fn within(
    speculative: f64,
    (sa, a): (&ExactShape, &ExactBody),
    (sb, b): (&ExactShape, &ExactBody),
) -> f64 {
    let tolerance = advance::contact_tolerance(
        (sa.reach(), a.pose.translation),
        (sb.reach(), b.pose.translation),
    );
    speculative.max(tolerance)
}

/// A tree's pieces against a rounded body: one manifold per piece within `speculative`.
fn tree_and_rounded(
    t: &HullTree,
    pose_t: &Pose,
    r: &Rounded,
    pose_r: &Pose,
    speculative: f64,
) -> Vec<(u32, Manifold)> {
    tree::pieces_within_rounded(t, *pose_t, r, *pose_r, speculative)
        .into_iter()
        .filter_map(|i| {
            manifold::rounded(&plain(t.piece(i).clone()), pose_t, r, pose_r, speculative)
                .map(|m| (i, m))
        })
        .collect()
}

/// At most the distance of two bodies: the gap between the balls about their origins
/// (each of its shape's reach), less the rounding of their coordinates. Where it exceeds
/// the distance a query asks about, a walk would only say so. The frame's broadphase
/// pairs boxes, and many of a crowd's pairs are that far apart (the main job's contacts
/// stage on the CPU twins, means of ten alternating runs: 28.8 -> 24.8 ms a frame).
fn balls_gap((sa, pa): (&ExactShape, &Pose), (sb, pb): (&ExactShape, &Pose)) -> f64 {
    let (ta, tb) = (pa.translation, pb.translation);
    let reach = sa.reach() + sb.reach();
    let rounding = 1e-12 * (ta.abs().max_element() + tb.abs().max_element() + reach);
    ta.distance(tb) - reach - rounding
}

/// An answer for (B, A) as one for (A, B).
pub fn swapped_toi(mut o: ToiOutput) -> ToiOutput {
    (o.point_a, o.point_b) = (o.point_b, o.point_a);
    o.normal = -o.normal;
    o.features = (o.features.1, o.features.0);
    o
}

/// A body as the exact stage sees it: its shape's index and its pose.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ExactBody {
    /// Index into the shapes.
    pub shape: u32,
    /// Pose, f64.
    pub pose: Pose,
}

/// The contact of one pair of bodies (one pair of pieces, for non-convex bodies).
#[derive(Clone, Debug, PartialEq)]
pub struct PairContact {
    /// The bodies (lower index first, as the broadphase gives them).
    pub bodies: [u32; 2],
    /// The pieces of non-convex bodies that touch (0 for convex and rounded bodies).
    pub pieces: (u32, u32),
    /// Normal from the first body to the second, and the points.
    pub manifold: Manifold,
}

/// Warm starts of one pair.
#[derive(Clone, Debug, Default)]
pub struct PairState {
    manifold: ManifoldCache,
    /// A pair of hull trees' (boxed: a frame moves every pair's state twice and makes
    /// one for each new pair, and most pairs are of convex bodies; held inline, the two
    /// maps, each made with its own hasher, took the main job's contacts stage on the CPU
    /// twins 45-48 ms a frame where it takes 37-41).
    trees: Option<Box<TreeState>>,
    /// At most the bodies' distance at the poses of the last contacts query (0 where
    /// not known): what the balls or a polytope pair's walk showed.
    separation: f64,
}

/// Warm starts of a pair of hull trees.
#[derive(Clone, Debug, Default)]
struct TreeState {
    tree: TreeCache,
    /// Per piece pair.
    pieces: HashMap<(u32, u32), ManifoldCache>,
}

/// A run of held pairs and their warm starts, in pair order.
type HeldRun = Vec<([u32; 2], PairState)>;

/// The warm start of `pair` in `held` (sorted by pair), found by walking `at` forward past
/// the pairs below it, and taken out; `None` when the walk passes it by.
fn take_forward(
    held: &mut [([u32; 2], PairState)],
    at: &mut usize,
    pair: [u32; 2],
) -> Option<PairState> {
    while *at < held.len() && held[*at].0 < pair {
        *at += 1;
    }
    let h = held.get_mut(*at).filter(|h| h.0 == pair)?;
    Some(std::mem::take(&mut h.1))
}

/// Warm starts of every pair of the last frame, kept across frames.
#[derive(Clone, Debug, Default)]
pub struct ContactState {
    /// Sorted by pair, each pair once: a frame's sorted pairs are matched in one merge,
    /// with no hashing and no map rebuilt.
    pairs: Vec<([u32; 2], PairState)>,
    /// Bodies whose pairs are forgotten ([`ContactState::forget`]), a bit each: the pairs
    /// are dropped in one pass when next taken, and read as not held until then.
    stale: Vec<u64>,
}

impl ContactState {
    /// The warm starts of `pairs` (fresh ones for pairs not held), taken out.
    fn take(&mut self, pairs: &[[u32; 2]]) -> Vec<PairState> {
        self.settle();
        let mut held = std::mem::take(&mut self.pairs);
        let mut at = 0;
        pairs
            .iter()
            .map(|&p| {
                // Sorted input walks forward; any other order searches.
                take_forward(&mut held, &mut at, p)
                    .or_else(|| {
                        let i = held.binary_search_by(|h| h.0.cmp(&p)).ok()?;
                        Some(std::mem::take(&mut held[i].1))
                    })
                    .unwrap_or_default()
            })
            .collect()
    }

    /// Holds `warm[i]` as `pairs[i]`'s warm starts (the last of a repeated pair).
    fn keep(&mut self, pairs: &[[u32; 2]], warm: Vec<PairState>) {
        let mut held: Vec<([u32; 2], PairState)> = pairs.iter().copied().zip(warm).collect();
        if !pairs.windows(2).all(|w| w[0] < w[1]) {
            // Stable: a repeated pair's last comes last, and is the one kept.
            held.sort_by_key(|h| h.0);
            held.reverse();
            held.dedup_by_key(|h| h.0);
            held.reverse();
        }
        self.pairs = held;
    }

    /// Drops the warm starts of every pair that names one of `bodies`: marked here, in
    /// constant time, and dropped together when the pairs are next taken (a pass over
    /// every held pair for each removed body made removing 1% of 100,000 bodies touching
    /// take 5-7 s, against a step of 0.3-0.8 s).
    pub fn forget(&mut self, bodies: [u32; 2]) {
        for b in bodies {
            let (word, bit) = (b as usize / 64, b % 64);
            if word >= self.stale.len() {
                self.stale.resize(word + 1, 0);
            }
            self.stale[word] |= 1 << bit;
        }
    }

    /// Whether `pair` names a body whose pairs are forgotten.
    fn forgotten(stale: &[u64], pair: [u32; 2]) -> bool {
        pair.iter().any(|&body| {
            stale
                .get(body as usize / 64)
                .is_some_and(|w| w & (1 << (body % 64)) != 0)
        })
    }

    /// Drops the forgotten bodies' pairs.
    fn settle(&mut self) {
        if self.stale.is_empty() {
            return;
        }
        let stale = std::mem::take(&mut self.stale);
        self.pairs
            .retain(|&(pair, _)| !Self::forgotten(&stale, pair));
    }

    /// Pairs held.
    pub fn len(&self) -> usize {
        self.pairs
            .iter()
            .filter(|&&(pair, _)| !Self::forgotten(&self.stale, pair))
            .count()
    }

    /// True when no pair is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Looks pairs up one after another: pairs asked in sorted order are found by walking
    /// forward from the last one (a frame's pairs are sorted, and searching each afresh
    /// took a cache miss a step of the search, 100 ns a pair on 100,000 held).
    pub fn cursor(&self) -> HeldPairs<'_> {
        HeldPairs {
            pairs: &self.pairs,
            stale: &self.stale,
            at: 0,
        }
    }
}

/// A walk over the held pairs ([`ContactState::cursor`]).
#[derive(Debug)]
pub struct HeldPairs<'a> {
    pairs: &'a [([u32; 2], PairState)],
    /// Forgotten bodies ([`ContactState::forget`]): their pairs read as not held.
    stale: &'a [u64],
    at: usize,
}

/// Pairs a cursor steps over one by one before it searches the rest.
const CURSOR_STEPS: usize = 8;

impl<'a> HeldPairs<'a> {
    fn get(&mut self, pair: [u32; 2]) -> Option<&'a PairState> {
        let pairs = self.pairs;
        // A pair before the last one found: search everything.
        let from = if pairs.get(self.at).is_some_and(|h| h.0 <= pair) {
            self.at
        } else {
            0
        };
        let mut at = from;
        while at < pairs.len() && at < from + CURSOR_STEPS && pairs[at].0 < pair {
            at += 1;
        }
        let found = if pairs.get(at).is_some_and(|h| h.0 >= pair) || at == pairs.len() {
            at
        } else {
            at + pairs[at..].partition_point(|h| h.0 < pair)
        };
        self.at = found;
        let stale = self.stale;
        pairs
            .get(found)
            .filter(|h| h.0 == pair && !ContactState::forgotten(stale, pair))
            .map(|h| &h.1)
    }

    /// The closest features the last walk found for `pair` (of two convex bodies), if
    /// held: where a query at the same poses starts its walk.
    pub fn walk_start(&mut self, pair: [u32; 2]) -> Option<(FeatureId, FeatureId)> {
        self.get(pair)?.manifold.walk.features
    }

    /// At most the pair's distance at the poses of the last contacts query (see
    /// [`Narrowphase::contacts`]): 0 where not known, `None` for a pair not held.
    pub fn separation(&mut self, pair: [u32; 2]) -> Option<f64> {
        Some(self.get(pair)?.separation)
    }
}

impl ExactShape {
    /// Brings a convex shape's walk tables toward the cache ([`ConvexPolytope::prefetch`]);
    /// trees and rounded bodies are left alone.
    #[inline]
    pub fn prefetch(&self) {
        if let ExactShape::Convex(p) = self {
            p.prefetch();
        }
    }

    /// The largest distance of a point of the shape from its body origin.
    pub fn reach(&self) -> f64 {
        match self {
            ExactShape::Convex(p) => p.radius(),
            ExactShape::Tree(t) => t.hull().radius(),
            ExactShape::Rounded(r) => r.reach(),
        }
    }

    /// The shape as a hull tree (a polytope is a one-node tree); `None` for a rounded body.
    pub fn tree(&self) -> Option<Arc<HullTree>> {
        match self {
            ExactShape::Convex(p) => Some(Arc::new(HullTree::from_convex(p.clone()))),
            ExactShape::Tree(t) => Some(t.clone()),
            ExactShape::Rounded(_) => None,
        }
    }

    /// A convex polytope that holds the shape: the polytope itself, a tree's hull, or a
    /// rounded body's core with each of its points grown to the cube around its ball (a
    /// zero radius to the smallest cube f64 keeps solid). What the sampled depth estimate
    /// works on: a separation it proves for these holds for the shapes inside. A polytope
    /// and a tree's hull are borrowed, not copied.
    pub fn outer_hull(&self) -> Result<Cow<'_, ConvexPolytope>> {
        match self {
            ExactShape::Convex(p) => Ok(Cow::Borrowed(p)),
            ExactShape::Tree(t) => Ok(Cow::Borrowed(t.hull())),
            ExactShape::Rounded(r) => {
                let core = match &r.core {
                    Core::Point => vec![DVec3::ZERO],
                    Core::Segment { half_height } => {
                        vec![DVec3::Z * -*half_height, DVec3::Z * *half_height]
                    }
                    Core::Polytope(p) => p.vertices().to_vec(),
                };
                let e = r.radius.max(1e-12 * (1.0 + r.reach()));
                let mut points = Vec::with_capacity(8 * core.len());
                for c in core {
                    for k in 0..8 {
                        let sign = |bit: u32| if k >> bit & 1 == 0 { -e } else { e };
                        points.push(c + DVec3::new(sign(0), sign(1), sign(2)));
                    }
                }
                ConvexPolytope::from_points(&points).map(Cow::Owned)
            }
        }
    }

    /// The shape as a rounded body (a polytope is one of radius 0); `None` for a tree.
    pub fn rounded(&self) -> Option<Arc<Rounded>> {
        match self {
            ExactShape::Convex(p) => Some(Arc::new(plain(p.clone()))),
            ExactShape::Rounded(r) => Some(r.clone()),
            ExactShape::Tree(_) => None,
        }
    }
}

/// The bodies of a contact held from the start, as [`Narrowphase::time_of_impact`] checks
/// them.
enum Held<'a> {
    Polytopes(&'a ConvexPolytope, &'a ConvexPolytope),
    Rounded(&'a Rounded, &'a Rounded),
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A warm state marked with `k` (its walk cache's features).
    fn marked(k: u32) -> PairState {
        let mut s = PairState::default();
        s.manifold.walk.features = Some((FeatureId::Vertex(k), FeatureId::Vertex(k)));
        s
    }

    fn mark(s: &PairState) -> Option<u32> {
        match s.manifold.walk.features {
            Some((FeatureId::Vertex(k), _)) => Some(k),
            _ => None,
        }
    }

    /// A cursor finds what a search finds, whatever the order it is asked in: pairs in
    /// sorted order (held or not, runs of misses longer than its steps), repeats, and
    /// pairs out of order.
    #[test]
    fn a_cursor_finds_what_a_search_finds() {
        use crate::rng::Rng;
        let mut rng = Rng::new(0xc0);
        let mut held: Vec<[u32; 2]> = (0..3000)
            .map(|_| [rng.below(60) as u32, rng.below(60) as u32])
            .collect();
        held.sort();
        held.dedup();
        let state = ContactState {
            pairs: held
                .iter()
                .enumerate()
                .map(|(k, &p)| (p, marked(k as u32)))
                .collect(),
            stale: Vec::new(),
        };
        let mut asked: Vec<[u32; 2]> = (0..4000)
            .map(|_| [rng.below(64) as u32, rng.below(64) as u32])
            .collect();
        asked.sort();
        // Out of order too: a sorted run, then the same pairs shuffled into it.
        let mut shuffled = asked.clone();
        for i in (1..shuffled.len()).rev() {
            shuffled.swap(i, rng.below(i as u64 + 1) as usize);
        }
        asked.extend(shuffled);
        // Oracle: a binary search over the held pairs.
        let search = |p: [u32; 2]| {
            let i = state.pairs.binary_search_by(|h| h.0.cmp(&p)).ok()?;
            mark(&state.pairs[i].1)
        };
        let mut cursor = state.cursor();
        let mut hits = 0;
        for &p in &asked {
            let want = search(p);
            assert_eq!(cursor.get(p).and_then(mark), want, "{p:?}");
            assert_eq!(cursor.get(p).and_then(mark), want, "{p:?} again");
            hits += usize::from(want.is_some());
        }
        assert!(hits > 1000 && hits < asked.len() - 1000, "{hits}");
    }

    /// The balls' gap is at most the bodies' distance: on random hulls, spheres,
    /// capsules and rounded boxes at random poses it never exceeds a distance the exact
    /// distance is within, and exceeds it for a fair share of the pairs.
    #[test]
    fn balls_gap_is_at_most_the_distance() {
        use crate::exact::rounded::Contact;
        use crate::geometry::generators;
        use crate::rng::Rng;
        let mut rng = Rng::new(0xba5);
        let hull = |rng: &mut Rng| Arc::new(generators::random_hull(rng, 12, 0.8).unwrap());
        let shapes: Vec<ExactShape> = vec![
            ExactShape::Convex(hull(&mut rng)),
            ExactShape::Convex(Arc::new(
                generators::cuboid(DVec3::new(1.0, 0.2, 0.3)).unwrap(),
            )),
            ExactShape::Rounded(Arc::new(Rounded::sphere(0.4).unwrap())),
            ExactShape::Rounded(Arc::new(Rounded::capsule(0.7, 0.1).unwrap())),
            ExactShape::Rounded(Arc::new(plain(hull(&mut rng)))),
        ];
        let (mut apart, mut pairs) = (0, 0);
        for _ in 0..4000 {
            let (i, j) = (rng.below(5) as usize, rng.below(5) as usize);
            let pose =
                |rng: &mut Rng| Pose::new(rng.unit_vector() * rng.range(0.0, 2.5), rng.rotation());
            let (pa, pb) = (pose(&mut rng), pose(&mut rng));
            let beyond = rng.range(0.0, 0.5);
            let (ra, rb) = (shapes[i].rounded(), shapes[j].rounded());
            let (ra, rb) = (ra.unwrap(), rb.unwrap());
            let d = rounded::distance(&ra, &pa, &rb, &pb);
            let distance = if d.contact == Contact::Separated {
                d.distance
            } else {
                0.0
            };
            pairs += 1;
            if balls_gap((&shapes[i], &pa), (&shapes[j], &pb)) > beyond {
                apart += 1;
                assert!(
                    distance > beyond,
                    "shapes {i} and {j}: {distance} <= {beyond}"
                );
            }
        }
        assert!(apart > pairs / 5, "{apart} of {pairs} pairs apart");
    }

    /// A frame's sorted pairs take and keep their warm starts thread by thread: bodies far
    /// apart leave a pair's warm start as it was, so the marks show that every held pair
    /// asked again kept its own, new pairs started fresh and pairs not asked were
    /// dropped, the same as the one-merge path over the same pairs unsorted.
    #[test]
    fn sorted_frames_keep_warm_starts_thread_by_thread() {
        use crate::rng::Rng;
        let mut narrow = Narrowphase::default();
        narrow.push(ExactShape::Rounded(Arc::new(Rounded::sphere(0.1).unwrap())));
        let bodies: Vec<ExactBody> = (0..200)
            .map(|i| ExactBody {
                shape: 0,
                pose: Pose::new(
                    DVec3::new(f64::from(i) * 10.0, 0.0, 0.0),
                    glam::DQuat::IDENTITY,
                ),
            })
            .collect();
        let mut rng = Rng::new(0x5a1);
        let mut random_pairs = |n: usize| {
            let mut p: Vec<[u32; 2]> = (0..n)
                .map(|_| {
                    let a = rng.below(199) as u32;
                    [a, a + 1 + rng.below(u64::from(199 - a)) as u32]
                })
                .collect();
            p.sort();
            p.dedup();
            p
        };
        let held = random_pairs(3000);
        let asked = random_pairs(3000);
        let seeded = || ContactState {
            pairs: held
                .iter()
                .enumerate()
                .map(|(k, &p)| (p, marked(k as u32)))
                .collect(),
            stale: Vec::new(),
        };
        let mut state = seeded();
        let contacts = narrow
            .contacts(&bodies, &asked, None, 0.01, &mut state)
            .unwrap();
        assert!(contacts.is_empty());
        let kept: Vec<[u32; 2]> = state.pairs.iter().map(|h| h.0).collect();
        assert_eq!(kept, asked);
        let mut both = 0;
        for (pair, s) in &state.pairs {
            let want = held.binary_search(pair).ok().map(|k| k as u32);
            assert_eq!(mark(s), want, "{pair:?}");
            both += usize::from(want.is_some());
        }
        assert!(both > 100 && both < asked.len() - 100, "{both}");
        // The same pairs unsorted take the one-merge path to the same held states.
        let mut reversed = asked.clone();
        reversed.reverse();
        let mut other = seeded();
        narrow
            .contacts(&bodies, &reversed, None, 0.01, &mut other)
            .unwrap();
        let marks =
            |s: &ContactState| -> Vec<_> { s.pairs.iter().map(|(p, w)| (*p, mark(w))).collect() };
        assert_eq!(marks(&other), marks(&state));
    }

    /// Warm starts follow their pairs whatever order a caller passes them in: sorted
    /// frames merge, unsorted and repeated pairs are found, new pairs start fresh, and the
    /// state then holds each pair once (a repeated pair's last warm start).
    #[test]
    fn warm_starts_follow_their_pairs_in_any_order() {
        let mut state = ContactState::default();
        let first = [[0, 1], [0, 5], [2, 3], [4, 9]];
        let warm = (0..4).map(marked).collect();
        state.keep(&first, warm);
        assert_eq!(state.len(), 4);
        let second = [[4, 9], [0, 1], [7, 8], [2, 3], [0, 1]];
        let warm = state.take(&second);
        let marks: Vec<_> = warm.iter().map(mark).collect();
        assert_eq!(marks, [Some(3), Some(0), None, Some(2), None]);
        let warm = (10..15).map(marked).collect();
        state.keep(&second, warm);
        assert_eq!(state.len(), 4);
        let third = [[0, 1], [0, 5], [2, 3], [4, 9], [7, 8]];
        let marks: Vec<_> = state.take(&third).iter().map(mark).collect();
        assert_eq!(marks, [Some(14), None, Some(13), Some(10), Some(12)]);
    }
}
