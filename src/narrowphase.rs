//! The exact stage after the broadphase, on the CPU: every candidate pair of a scene's
//! bodies decided exactly, whatever their shapes. Each shape becomes an exact body once:
//! a convex polytope (the closest-feature walk, settled by the separating-axis test where
//! it gives up), a non-convex mesh decomposed into a hull tree (`exact::tree`; the
//! decomposition is cached on disk), or a sphere or capsule (`exact::rounded`). Pairs are
//! split over all cores.
//!
//! This is the first exact stage a frame has; contacts, depths and impacts per pair are
//! the pipeline's next steps.

use std::sync::Arc;

use crate::bodies::{GpuBody, Pose};
use crate::exact::rounded::{self, plain};
use crate::exact::tree::{self, TreeCache};
use crate::exact::walk;
use crate::geometry::decompose::{Cache, DecomposeParams};
use crate::geometry::rounded::Rounded;
use crate::geometry::{ConvexPolytope, HullTree};
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
#[derive(Clone, Debug)]
pub struct Narrowphase {
    shapes: Vec<ExactShape>,
}

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
        Ok(Narrowphase { shapes })
    }

    /// The exact shapes.
    pub fn shapes(&self) -> &[ExactShape] {
        &self.shapes
    }

    /// Whether each pair of `bodies` touches or overlaps, exactly, on all cores.
    pub fn collide_pairs(&self, bodies: &[GpuBody], pairs: &[[u32; 2]]) -> Result<Vec<bool>> {
        for (i, &[a, b]) in pairs.iter().enumerate() {
            for body in [a, b] {
                let Some(g) = bodies.get(body as usize) else {
                    return Err(Error::Usage(format!(
                        "narrowphase: pair {i} names body {body}, but there are {} bodies",
                        bodies.len()
                    )));
                };
                if g.shape as usize >= self.shapes.len() {
                    return Err(Error::InvalidShape {
                        body,
                        what: format!(
                            "shape index {} is past the {} shapes",
                            g.shape,
                            self.shapes.len()
                        ),
                    });
                }
            }
        }
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        let chunk = pairs.len().div_ceil(threads).max(1);
        let parts: Vec<Vec<bool>> = std::thread::scope(|scope| {
            let handles: Vec<_> = pairs
                .chunks(chunk)
                .map(|part| {
                    scope.spawn(move || {
                        part.iter()
                            .map(|&[a, b]| {
                                let (ga, gb) = (&bodies[a as usize], &bodies[b as usize]);
                                self.collide(
                                    &self.shapes[ga.shape as usize],
                                    &Pose::from_gpu(ga),
                                    &self.shapes[gb.shape as usize],
                                    &Pose::from_gpu(gb),
                                )
                            })
                            .collect()
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("a narrowphase thread panicked"))
                .collect()
        });
        Ok(parts.concat())
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

impl ExactShape {
    /// The shape as a hull tree (a polytope is a one-node tree); `None` for a rounded body.
    pub fn tree(&self) -> Option<Arc<HullTree>> {
        match self {
            ExactShape::Convex(p) => Some(Arc::new(HullTree::from_convex(p.clone()))),
            ExactShape::Tree(t) => Some(t.clone()),
            ExactShape::Rounded(_) => None,
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
