//! Scenes past what one frame binds: on a device whose limits bind a few thousand bodies
//! a frame, the pipeline cuts the scene into slabs, and its pairs equal the same GPU's
//! frame of the whole scene on a device that binds it, and, on boxes given, the CPU
//! twin's.

mod common;

use std::collections::HashSet;

use glam::{Quat, Vec3};
use proxima::bodies::{GpuAabb, GpuBody, GpuShapeBounds};
use proxima::broadphase::Choice;
use proxima::broadphase::cpu_pairs;
use proxima::crowd::Crowd;
use proxima::frame;
use proxima::geometry::ConvexPolytope;
use proxima::geometry::generators::cuboid;
use proxima::gpu::GpuContext;
use proxima::passes::broadphase::Method;
use proxima::passes::depth::DepthShapes;
use proxima::profile::Profile;
use proxima::rng::Rng;
use proxima::slabs::frame_capacity;
use proxima::{Error, Pipeline};

/// `n` bodies in a slab of space 4 units thick (cuts fall along x or y): cubes, rods, and
/// every 500th body a plank 30 units long along x, straddling many slabs; a dense knot of
/// `knot` overlapping bodies at the middle (150: 11,000 pairs, which a 256 KiB pair buffer
/// holds; a slab holding the knot has the most pairs).
fn scene(n: usize, seed: u64, knot: usize) -> Crowd {
    let shapes = vec![
        GpuShapeBounds::from_box(Vec3::ZERO, Vec3::splat(0.5)),
        GpuShapeBounds::from_box(Vec3::ZERO, Vec3::new(0.1, 0.1, 0.9)),
        GpuShapeBounds::from_box(Vec3::ZERO, Vec3::new(15.0, 0.2, 0.05)),
    ];
    let mut rng = Rng::new(seed);
    let side = (n as f32 / 4.0 * 1.2).sqrt();
    let bodies: Vec<GpuBody> = (0..n)
        .map(|i| {
            let shape = match i {
                _ if i % 500 == 0 => 2,
                _ if i % 3 == 0 => 1,
                _ => 0,
            };
            let p = if i % 97 == 0 && i / 97 < knot {
                Vec3::splat(side / 2.0) + rng.unit_vector().as_vec3() * 0.3
            } else {
                Vec3::new(
                    rng.range(0.0, f64::from(side)) as f32,
                    rng.range(0.0, f64::from(side)) as f32,
                    rng.range(0.0, 4.0) as f32,
                )
            };
            let q = if shape == 2 {
                Quat::IDENTITY
            } else {
                rng.rotation().as_quat()
            };
            GpuBody::new(p, q, shape)
        })
        .collect();
    Crowd {
        motions: vec![Default::default(); bodies.len()],
        shapes,
        bodies,
        ..Default::default()
    }
}

/// The pair lists are equal; else the first pairs missing and the first extra.
fn same_pairs(label: &str, got: &[[u32; 2]], want: &[[u32; 2]]) {
    if got == want {
        return;
    }
    let (g, w): (HashSet<_>, HashSet<_>) = (got.iter().collect(), want.iter().collect());
    let missing: Vec<_> = w.difference(&g).take(10).collect();
    let extra: Vec<_> = g.difference(&w).take(10).collect();
    panic!(
        "{label}: {} pairs, want {}; missing {missing:?}, extra {extra:?}, sorted {}",
        got.len(),
        want.len(),
        got.is_sorted()
    );
}

/// How many bounds passes a frame's profile records: one per slab or run.
fn bounds_passes(profile: &Profile) -> usize {
    profile.stages.iter().filter(|s| s.name == "bounds").count()
}

#[test]
fn a_scene_past_one_frame_runs_in_slabs_and_equals_the_cpu_twin() {
    // 256 KiB bindings: 8,192 bodies a frame.
    let Some(ctx) = common::small_device("slabs", 256 << 10) else {
        return;
    };
    assert_eq!(frame_capacity(&ctx.limits()), 8192);
    let world = scene(60_000, 3, 150);
    // The same GPU frame unsliced (the shared context binds the whole scene): the
    // slabs' oracle, box for box. Against the CPU twin it differs at most by pairs whose
    // boxes the twin's f32 rounding parts by an ulp or so (the GPU may fuse a multiply-add).
    let boxes = frame::cpu(&world.bodies, &world.shapes, None)
        .unwrap()
        .aabbs;
    let twin = frame::cpu(&world.bodies, &world.shapes, Some(Method::Hash)).unwrap();
    let mut whole = Pipeline::on_gpu(common::gpu("whole").expect("an adapter"));
    whole.set_broadphase(Choice::Method(Method::Hash));
    let whole = whole.frame(&world).unwrap().pairs;
    assert!(whole.len() > 100_000, "{}", whole.len());
    let (w, t): (HashSet<_>, HashSet<_>) = (whole.iter().collect(), twin.pairs.iter().collect());
    for &&[a, b] in w.symmetric_difference(&t) {
        let (x, y) = (boxes[a as usize], boxes[b as usize]);
        let gap = (0..3)
            .map(|k| (x.min[k] - y.max[k]).max(y.min[k] - x.max[k]))
            .fold(f32::MIN, f32::max);
        let size = x
            .max
            .iter()
            .chain(&y.max)
            .fold(1.0f32, |m, v| m.max(v.abs()));
        assert!(gap.abs() <= 4.0 * f32::EPSILON * size, "{a}-{b}: gap {gap}");
    }
    for method in [Method::Hash, Method::Sweep] {
        let mut pipeline = Pipeline::on_gpu(ctx.clone());
        pipeline.set_broadphase(Choice::Method(method));
        let got = pipeline.frame(&world).unwrap();
        same_pairs(method.name(), &got.pairs, &whole);
        let slabs = bounds_passes(&got.profile);
        assert!(slabs >= 8, "{}: {slabs} slab frames", method.name());
        // Submitted (the pipelined path) the same.
        let flight = pipeline.submit(&world).unwrap();
        let collected = pipeline.collect(&world, flight).unwrap();
        same_pairs("submitted", &collected.pairs, &whole);
        // The broadphase alone on boxes given (swept boxes take this path): the CPU
        // twin's boxes, so the CPU broadphase on them is the oracle.
        same_pairs("boxes", &pipeline.box_pairs(&boxes).unwrap(), &twin.pairs);
        assert_eq!(cpu_pairs(&boxes, method).unwrap(), twin.pairs);
    }
}

#[test]
fn a_pile_denser_than_a_frame_binds_is_named() {
    let Some(ctx) = common::small_device("slabs", 256 << 10) else {
        return;
    };
    let mut world = scene(10_000, 4, 150);
    for b in &mut world.bodies {
        b.position = [1.0, 2.0, 3.0];
    }
    let mut pipeline = Pipeline::on_gpu(ctx);
    match pipeline.frame(&world) {
        Err(Error::Usage(m)) => assert!(m.contains("10000 boxes meet one"), "{m}"),
        other => panic!(
            "expected a named error, got {:?}",
            other.map(|r| r.pairs.len())
        ),
    }
    // A NaN pose in a scene past one frame: named by body, as in any frame.
    let mut world = scene(10_000, 5, 150);
    world.bodies[4321].position[1] = f32::NAN;
    let e = pipeline.frame(&world).unwrap_err().to_string();
    assert!(e.contains("4321"), "{e}");
    // The bounds pass alone goes in runs of 8,128 bodies: named by its index in the world.
    let e = pipeline.bounds(&world).unwrap_err().to_string();
    assert!(e.contains("body 4321"), "{e}");
}

#[test]
fn the_bounds_pass_alone_runs_past_one_frame_in_runs() {
    let Some(ctx) = common::small_device("slabs", 256 << 10) else {
        return;
    };
    let world = scene(30_000, 7, 0);
    let runs = Pipeline::on_gpu(ctx).bounds(&world).unwrap();
    let whole = Pipeline::on_gpu(common::gpu("whole").expect("an adapter"))
        .bounds(&world)
        .unwrap();
    assert_eq!(runs.aabbs.len(), 30_000);
    // The same corners (the padding words are whatever the pooled buffer held).
    let corners = |b: &GpuAabb| (b.min, b.max);
    let differ = (0..30_000)
        .filter(|&i| corners(&runs.aabbs[i]) != corners(&whole.aabbs[i]))
        .count();
    assert_eq!(differ, 0, "boxes differ");
    let passes = bounds_passes(&runs.profile);
    assert_eq!(passes, 4, "30,000 bodies in runs of 8,128");
}

#[test]
fn depth_estimates_follow_their_pairs_through_the_slabs() {
    // 512 KiB bindings: 16,384 bodies a frame, but only 10,922 estimates (48 bytes each):
    // slabs cut smaller until their pairs' estimates fit.
    let Some(ctx) = common::small_device("slabs", 512 << 10) else {
        return;
    };
    let world = scene(20_000, 6, 40);
    let polys: Vec<ConvexPolytope> = world
        .shapes
        .iter()
        .map(|s| cuboid(Vec3::from_array(s.half_extents).as_dvec3()).unwrap())
        .collect();
    let tables = DepthShapes::new(&polys).unwrap();
    let run = |ctx: GpuContext| {
        let mut p = Pipeline::on_gpu(ctx);
        p.set_broadphase(Choice::Method(Method::Hash));
        p.set_depth_estimate(Some((tables.clone(), 2))).unwrap();
        p.frame(&world).unwrap()
    };
    let sliced = run(ctx);
    let whole = run(common::gpu("whole").expect("an adapter"));
    same_pairs("depth", &sliced.pairs, &whole.pairs);
    assert_eq!(sliced.estimates.len(), sliced.pairs.len());
    // Each pair's estimate depends on its two bodies alone: the same bits either way.
    assert!(sliced.estimates == whole.estimates, "the estimates differ");
    let slabs = bounds_passes(&sliced.profile);
    assert!(slabs >= 3, "{slabs} slab frames");
}
