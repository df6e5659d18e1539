//! The exact stage over a scene's broadphase pairs, every kind of shape mixed (boxes,
//! hulls, tori and bumpy spheres as hull trees, spheres, capsules): each pair's answer
//! against a per-pair oracle (the exact separating-axis test for two polytopes; every
//! piece pair for a hull tree; the rounded query, itself held against parry3d-f64, for
//! curved bodies).

use std::path::Path;

use proxima::bodies::Pose;
use proxima::exact::{rounded, sat};
use proxima::frame;
use proxima::geometry::decompose::Cache;
use proxima::geometry::rounded::Rounded;
use proxima::narrowphase::{ExactShape, Narrowphase};
use proxima::passes::broadphase::Method;
use proxima::scene::Scene;

const SCENE: &str = r#"
seed = 4
[[group]]
shape = { box = [0.5, 0.3, 0.2] }
count = 300
region = { min = [-6, -6, -6], max = [6, 6, 6] }
[[group]]
shape = { random_hull = { points = 20, radius = 0.5 } }
count = 300
region = { min = [-6, -6, -6], max = [6, 6, 6] }
[[group]]
shape = { torus = { major = 0.8, minor = 0.25 } }
count = 120
region = { min = [-6, -6, -6], max = [6, 6, 6] }
[[group]]
shape = { bumpy_sphere = { radius = 0.6, amplitude = 0.3 } }
count = 80
region = { min = [-6, -6, -6], max = [6, 6, 6] }
[[group]]
shape = { sphere = { radius = 0.4 } }
count = 300
region = { min = [-6, -6, -6], max = [6, 6, 6] }
[[group]]
shape = { capsule = { half_height = 0.5, radius = 0.2 } }
count = 300
region = { min = [-6, -6, -6], max = [6, 6, 6] }
"#;

/// Every convex piece of a shape as a rounded body (a polytope is one piece of radius 0).
fn pieces(s: &ExactShape) -> Vec<Rounded> {
    match s {
        ExactShape::Convex(p) => vec![rounded::plain(p.clone())],
        ExactShape::Tree(t) => t.pieces().map(|p| rounded::plain(p.clone())).collect(),
        ExactShape::Rounded(r) => vec![(**r).clone()],
    }
}

fn oracle(a: &ExactShape, pa: &Pose, b: &ExactShape, pb: &Pose) -> bool {
    pieces(a).iter().any(|x| {
        pieces(b)
            .iter()
            .any(|y| match (&x.core, &y.core, x.radius, y.radius) {
                (
                    proxima::geometry::rounded::Core::Polytope(p),
                    proxima::geometry::rounded::Core::Polytope(q),
                    0.0,
                    0.0,
                ) => sat::intersects(p, pa, q, pb),
                _ => rounded::collide(x, pa, y, pb),
            })
    })
}

#[test]
fn every_pair_matches_its_oracle() {
    let scene = Scene::parse(Path::new("mixed.toml"), Path::new("."), SCENE).unwrap();
    let cache = Cache::At(Path::new(env!("CARGO_TARGET_TMPDIR")).join("hull-cache"));
    let narrow = Narrowphase::new(&scene.geometry, &cache, &mut |_| {}).unwrap();
    let bodies = &scene.crowd.bodies;
    let frame = frame::cpu(bodies, &scene.crowd.shapes, Some(Method::Hash)).unwrap();
    let answers = narrow.collide_pairs(bodies, &frame.pairs).unwrap();
    let mut touching = 0;
    let mut kinds = std::collections::BTreeSet::new();
    for (&[a, b], &hit) in frame.pairs.iter().zip(&answers) {
        let (ga, gb) = (&bodies[a as usize], &bodies[b as usize]);
        let (sa, sb) = (
            &narrow.shapes()[ga.shape as usize],
            &narrow.shapes()[gb.shape as usize],
        );
        let (pa, pb) = (Pose::from_gpu(ga), Pose::from_gpu(gb));
        assert_eq!(hit, oracle(sa, &pa, sb, &pb), "pair {a}-{b}");
        if hit {
            touching += 1;
            let kind = |s: &ExactShape| match s {
                ExactShape::Convex(_) => 0,
                ExactShape::Tree(_) => 1,
                ExactShape::Rounded(_) => 2,
            };
            kinds.insert((kind(sa).min(kind(sb)), kind(sa).max(kind(sb))));
        }
    }
    eprintln!(
        "{} pairs, {touching} touching, kinds {kinds:?}",
        frame.pairs.len()
    );
    // Every combination of kinds met in contact.
    assert_eq!(kinds.len(), 6, "{kinds:?}");
    let e = narrow
        .collide_pairs(bodies, &[[0, 99_999]])
        .unwrap_err()
        .to_string();
    assert!(e.contains("names body 99999"), "{e}");
}
