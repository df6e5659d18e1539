//! The sampled depth estimate: GPU pass against its CPU twin, and both against the exact
//! depth by enumeration (`exact::depth::enumerate`, f64): est + slack ≥ depth ≥
//! est − bound − slack on every overlapping pair, and a pair reported separated is
//! separated.

mod common;

use glam::{DQuat, DVec3, Quat, Vec3};
use proxima::bodies::{GpuBody, Pose};
use proxima::crowd::{Crowd, Motion};
use proxima::estimate::{GpuDepthEstimator, estimate_cpu};
use proxima::exact::depth::{DepthInput, Toward, enumerate, walk};
use proxima::geometry::ConvexPolytope;
use proxima::geometry::generators::{cone, cuboid, cylinder, icosphere, random_hull};
use proxima::gpu::{Engine, GpuContext};
use proxima::passes::depth::{
    DEFAULT_K, DepthShapes, GpuDepthEstimate, GpuDepthParams, covering_angle, cube_direction,
    pairs_within_limits, slots_for,
};
use proxima::rng::Rng;
use proxima::shape::ShapeGeometry;
use proxima::{Error, Pipeline, broadphase::Choice, passes::broadphase::Method};
use std::sync::Arc;

fn shapes() -> Vec<ConvexPolytope> {
    let mut rng = Rng::new(9);
    vec![
        cuboid(DVec3::splat(0.5)).unwrap(),
        cuboid(DVec3::new(2.0, 0.1, 0.3)).unwrap(), // a plank
        random_hull(&mut rng, 60, 0.7).unwrap(),
        icosphere(0.6, 2).unwrap(),
        cylinder(16, 0.4, 0.8).unwrap(),
        cone(12, 0.5, 0.6).unwrap(),
        random_hull(&mut rng, 500, 0.9).unwrap(),
    ]
}

/// `n` bodies of every shape packed into a small cube (most pairs overlap, some deeply,
/// some are apart), and every pair of them.
fn crowd(n: usize, seed: u64, shape_count: u32) -> (Vec<GpuBody>, Vec<[u32; 2]>) {
    let mut rng = Rng::new(seed);
    let side = 0.9 * (n as f64).cbrt();
    let bodies: Vec<GpuBody> = (0..n)
        .map(|i| {
            let p = rng.point_in(DVec3::splat(-side / 2.0), DVec3::splat(side / 2.0));
            GpuBody::new(
                p.as_vec3(),
                rng.rotation().as_quat(),
                i as u32 % shape_count,
            )
        })
        .collect();
    let mut pairs = Vec::new();
    for a in 0..n as u32 {
        for b in a + 1..n as u32 {
            pairs.push([a, b]);
        }
    }
    (bodies, pairs)
}

/// A crowd of `bodies` at rest over the shapes `polys`.
fn still_crowd(polys: &[ConvexPolytope], bodies: Vec<GpuBody>) -> Crowd {
    Crowd {
        shapes: polys
            .iter()
            .map(|p| {
                ShapeGeometry::Convex(Arc::new(p.clone()))
                    .gpu_bounds()
                    .unwrap()
            })
            .collect(),
        motions: vec![Motion::default(); bodies.len()],
        bodies,
        wrap: None,
    }
}

/// Checks one estimate against the exact depth; returns whether the pair overlaps.
fn check_against_exact(
    label: &str,
    e: &GpuDepthEstimate,
    a: &ConvexPolytope,
    body_a: &GpuBody,
    b: &ConvexPolytope,
    body_b: &GpuBody,
) -> bool {
    let (pa, pb) = (Pose::from_gpu(body_a), Pose::from_gpu(body_b));
    let exact = enumerate(a, &pa, b, &pb);
    let est = f64::from(e.depth);
    let (bound, slack) = (f64::from(e.bound), f64::from(e.slack));
    assert!(e.bound >= 0.0 && e.slack > 0.0, "{label}: {e:?}");
    match exact {
        Some(p) => {
            assert!(
                e.separated == 0,
                "{label}: overlapping (depth {}) but {e:?}",
                p.depth
            );
            assert!(
                est + slack >= p.depth,
                "{label}: est {est} below depth {}",
                p.depth
            );
            assert!(
                p.depth >= est - bound - slack,
                "{label}: depth {} below est {est} - bound {bound}",
                p.depth
            );
            true
        }
        None => false,
    }
}

#[test]
fn gpu_estimate_matches_its_cpu_twin_and_brackets_the_exact_depth() {
    let Some(ctx) = common::gpu("depth estimate") else {
        return;
    };
    let mut engine = Engine::new(ctx);
    let polys = shapes();
    let tables = DepthShapes::new(&polys).unwrap();
    let estimator = GpuDepthEstimator::new(&engine, tables.clone()).unwrap();
    let (bodies, pairs) = crowd(70, 3, polys.len() as u32);
    for k in [DEFAULT_K, 5] {
        let gpu = estimator
            .run(&mut engine, &bodies, &pairs, k)
            .unwrap()
            .estimates;
        let cpu = estimate_cpu(&tables, &bodies, &pairs, k).unwrap();
        assert_eq!(gpu.len(), pairs.len());
        let mut overlapping = 0;
        let mut separated = 0;
        for ((g, c), &[a, b]) in gpu.iter().zip(&cpu).zip(&pairs) {
            let label = format!("k {k}, pair {a}-{b}");
            // Twins: the same least over the same samples, each s within rounding.
            let tol = 2.0 * c.slack.max(g.slack);
            assert!((g.depth - c.depth).abs() <= tol, "{label}: {g:?} vs {c:?}");
            assert!((g.bound - c.bound).abs() <= 1e-5 * c.bound, "{label}");
            assert!((g.slack - c.slack).abs() <= 1e-5 * c.slack, "{label}");
            if c.depth.abs() > tol {
                assert_eq!(g.separated, c.separated, "{label}");
            }
            let n = Vec3::from_array(g.normal);
            assert!((n.length() - 1.0).abs() < 1e-5, "{label}: {n}");
            separated += g.separated;
            let (ba, bb) = (&bodies[a as usize], &bodies[b as usize]);
            let (sa, sb) = (&polys[ba.shape as usize], &polys[bb.shape as usize]);
            for e in [g, c] {
                if check_against_exact(&label, e, sa, ba, sb, bb) {
                    overlapping += 1;
                }
            }
        }
        // Not vacuous: both kinds of pair are there in numbers.
        assert!(
            overlapping > 400 && separated > 300,
            "{overlapping} {separated}"
        );
    }
}

#[test]
fn everyday_contacts_estimate_within_their_bound() {
    let polys = vec![
        cuboid(DVec3::splat(0.5)).unwrap(),
        cuboid(DVec3::new(2.0, 0.1, 0.3)).unwrap(),
    ];
    let tables = DepthShapes::new(&polys).unwrap();
    let body = |p: DVec3, q: DQuat, shape| GpuBody::new(p.as_vec3(), q.as_quat(), shape);
    let turn = DQuat::from_rotation_y(std::f64::consts::FRAC_PI_2);
    let cases = [
        // Cubes side by side, overlapping by 0.3: a face normal is sampled, so est = 0.3.
        (
            "cubes",
            body(DVec3::ZERO, DQuat::IDENTITY, 0),
            body(DVec3::X * 0.7, DQuat::IDENTITY, 0),
            Some(0.3),
        ),
        // Stacked crates exactly touching: depth 0.
        (
            "crates",
            body(DVec3::ZERO, DQuat::IDENTITY, 0),
            body(DVec3::Y, DQuat::IDENTITY, 0),
            Some(0.0),
        ),
        // Identical bodies at identical poses: the least width, 1.
        (
            "identical",
            body(DVec3::ZERO, DQuat::IDENTITY, 0),
            body(DVec3::ZERO, DQuat::IDENTITY, 0),
            Some(1.0),
        ),
        // Crossed planks pressed together by 0.05.
        (
            "planks",
            body(DVec3::ZERO, DQuat::IDENTITY, 1),
            body(DVec3::Y * 0.15, turn, 1),
            Some(0.05),
        ),
        // Apart by 0.2: certified separated.
        (
            "apart",
            body(DVec3::ZERO, DQuat::IDENTITY, 0),
            body(DVec3::Z * 1.2, DQuat::IDENTITY, 0),
            None,
        ),
        // Far from the origin: the same cubes at 1e4.
        (
            "far",
            body(DVec3::splat(1e4), DQuat::IDENTITY, 0),
            body(DVec3::splat(1e4) + DVec3::X * 0.7, DQuat::IDENTITY, 0),
            Some(0.3),
        ),
    ];
    let bodies: Vec<GpuBody> = cases.iter().flat_map(|c| [c.1, c.2]).collect();
    let pairs: Vec<[u32; 2]> = (0..cases.len() as u32)
        .map(|i| [2 * i, 2 * i + 1])
        .collect();
    let mut runs = vec![estimate_cpu(&tables, &bodies, &pairs, DEFAULT_K).unwrap()];
    if let Some(ctx) = common::gpu("depth estimate everyday") {
        let mut engine = Engine::new(ctx);
        let estimator = GpuDepthEstimator::new(&engine, tables).unwrap();
        runs.push(
            estimator
                .run(&mut engine, &bodies, &pairs, DEFAULT_K)
                .unwrap()
                .estimates,
        );
    }
    for estimates in runs {
        for ((name, a, b, want), e) in cases.iter().zip(&estimates) {
            let overlapping = check_against_exact(
                name,
                e,
                &polys[a.shape as usize],
                a,
                &polys[b.shape as usize],
                b,
            );
            match want {
                Some(depth) => {
                    assert!(overlapping, "{name}");
                    // A face normal of one body is the exact minimiser in each case, so
                    // the estimate is the exact depth up to rounding (which, at 1e4, moved
                    // the bodies themselves when their poses became f32).
                    let exact = enumerate(
                        &polys[a.shape as usize],
                        &Pose::from_gpu(a),
                        &polys[b.shape as usize],
                        &Pose::from_gpu(b),
                    )
                    .unwrap()
                    .depth;
                    let err = (f64::from(e.depth) - exact).abs();
                    assert!(err <= f64::from(e.slack), "{name}: {e:?} vs {exact}");
                    assert!((exact - depth).abs() < 1e-3, "{name}: {exact}");
                }
                None => assert_eq!(e.separated, 1, "{name}: {e:?}"),
            }
        }
    }
}

#[test]
fn the_covering_angle_bounds_the_distance_to_the_nearest_sample() {
    // Brute force: random unit directions against every cube-map sample.
    let mut rng = Rng::new(4);
    for k in [1, 2, 4, 7] {
        let theta = covering_angle(k);
        let samples: Vec<Vec3> = (0..6 * k * k).map(|i| cube_direction(i, k)).collect();
        let mut worst: f64 = 0.0;
        for _ in 0..20_000 {
            let d = rng.unit_vector();
            let nearest = samples
                .iter()
                .map(|s| d.angle_between(s.as_dvec3()))
                .fold(f64::INFINITY, f64::min);
            worst = worst.max(nearest);
        }
        // f32 samples are off by ~1e-7 rad.
        assert!(worst <= theta + 1e-6, "k {k}: {worst} > {theta}");
        // ... and the bound is not loose by much.
        assert!(worst >= 0.6 * theta, "k {k}: {worst} vs {theta}");
    }
    // k = 16: the cells at a face's centre are the widest, their corners √2/16 away on
    // the face's plane.
    let t16 = covering_angle(16);
    assert!((t16 - (2f64.sqrt() / 16.0).atan()).abs() < 1e-12, "{t16}");
}

#[test]
fn bad_inputs_are_named_errors() {
    let polys = shapes();
    let tables = DepthShapes::new(&polys).unwrap();
    let bodies = vec![GpuBody::new(Vec3::ZERO, Quat::IDENTITY, 0); 3];
    let err = estimate_cpu(&tables, &bodies, &[[0, 7]], DEFAULT_K).unwrap_err();
    assert!(err.to_string().contains("body 7"), "{err}");
    let mut bad = bodies.clone();
    bad[2].shape = 99;
    let err = estimate_cpu(&tables, &bad, &[[0, 2]], DEFAULT_K).unwrap_err();
    assert!(
        err.to_string().contains("body 2") && err.to_string().contains("99"),
        "{err}"
    );
    let err = estimate_cpu(&tables, &bodies, &[[0, 1]], 0).unwrap_err();
    assert!(err.to_string().contains("k = 0"), "{err}");
    assert!(
        estimate_cpu(&tables, &bodies, &[], DEFAULT_K)
            .unwrap()
            .is_empty()
    );
    // Poses the pass cannot use in f32, each named with its body: a quaternion whose
    // norm² overflows (it normalised to zero and turned the body the wrong way, an
    // overlapping pair certified apart) or sinks to zero, positions not finite (the CPU
    // twin stopped on an index past its tables) or past ±1e18 (lengths overflow).
    let poses: [(Vec3, [f32; 4], &str); 6] = [
        (Vec3::ZERO, [1e20, 0.0, 0.0, 0.0], "rotation"),
        (Vec3::ZERO, [0.0, 0.0, 0.0, 1e-25], "rotation"),
        (Vec3::ZERO, [f32::NAN, 0.0, 0.0, 1.0], "rotation"),
        (
            Vec3::new(f32::NAN, 0.0, 0.0),
            [0.0, 0.0, 0.0, 1.0],
            "position",
        ),
        (
            Vec3::new(0.0, f32::INFINITY, 0.0),
            [0.0, 0.0, 0.0, 1.0],
            "position",
        ),
        (Vec3::new(0.0, 0.0, -3e18), [0.0, 0.0, 0.0, 1.0], "1e18"),
    ];
    for (position, rotation, what) in poses {
        let mut bad = bodies.clone();
        bad[1] = GpuBody::new(position, Quat::from_array(rotation), 0);
        let err = estimate_cpu(&tables, &bad, &[[0, 1]], DEFAULT_K).unwrap_err();
        assert!(
            err.to_string().contains("body 1") && err.to_string().contains(what),
            "{position} {rotation:?}: {err}"
        );
    }
    // Shapes whose reach leaves the range where the pass's f32 lengths hold: boxes of
    // 1e-25 had a bound and a slack of 0 and were certified apart while overlapping; at
    // 2e38 every s overflowed.
    for size in [1e-25, 1e-19, 3e18, 2e38, 1e39] {
        let tiny = cuboid(DVec3::splat(size)).unwrap();
        let err = DepthShapes::new([&polys[0], &tiny]).unwrap_err();
        assert!(
            err.to_string().contains("shape 1") && err.to_string().contains("reach"),
            "{size}: {err}"
        );
    }
    for size in [1e-17, 1e17] {
        DepthShapes::new([&cuboid(DVec3::splat(size)).unwrap()]).unwrap();
    }
}

/// The depth stage inside a frame (`Plan::Depth`: straight from the broadphase's buffers,
/// the pair count reaching the passes on the GPU) gives, pair for pair, exactly what the
/// standalone pass gives on the frame's own pairs; the CPU twins' frame gives the same
/// pairs and the CPU twin's estimates; the pipelined path the same as the plain one.
#[test]
fn the_depth_stage_of_a_frame_equals_the_pass_on_its_pairs() {
    let Some(ctx) = common::gpu("depth stage") else {
        return;
    };
    let polys = shapes();
    let tables = DepthShapes::new(&polys).unwrap();
    let (bodies, _) = crowd(150, 5, polys.len() as u32);
    let world = still_crowd(&polys, bodies);
    let mut pipeline = Pipeline::on_gpu(ctx.clone());
    let mut twins = Pipeline::cpu();
    for p in [&mut pipeline, &mut twins] {
        p.set_depth_estimate(Some((tables.clone(), DEFAULT_K)))
            .unwrap();
        p.set_broadphase(Choice::Method(Method::Hash));
    }
    let gpu = pipeline.frame(&world).unwrap();
    assert!(gpu.pairs.len() > 1000, "{} pairs", gpu.pairs.len());
    assert_eq!(gpu.estimates.len(), gpu.pairs.len());
    let mut engine = Engine::new(ctx);
    let alone = GpuDepthEstimator::new(&engine, tables.clone())
        .unwrap()
        .run(&mut engine, &world.bodies, &gpu.pairs, DEFAULT_K)
        .unwrap()
        .estimates;
    assert!(
        gpu.estimates == alone,
        "the frame's estimates differ from the pass's"
    );
    let cpu = twins.frame(&world).unwrap();
    assert_eq!(cpu.pairs, gpu.pairs);
    assert_eq!(
        cpu.estimates,
        estimate_cpu(&tables, &world.bodies, &gpu.pairs, DEFAULT_K).unwrap()
    );
    let flight = pipeline.submit(&world).unwrap();
    let piped = pipeline.collect(&world, flight).unwrap();
    assert_eq!((piped.pairs, piped.estimates), (gpu.pairs, gpu.estimates));
}

/// Pairs past one binding. A pair with an icosphere of 642 vertices spreads its directions
/// over 342 work items, whose workgroups leave one partial each (at most 7 a pair, where
/// one per item took 5.5 kB: 47 pairs a 256 KiB binding). On a device binding 256 KiB a
/// frame's depth stage holds the 300 pairs of 40 bodies; on one binding 32 KiB the pass runs
/// its pairs in several runs, and a frame leaves its estimate to such runs after it; all
/// give, pair for pair, what a device with the default limits gives (and the CPU twin its
/// estimates), submitted or not. One binding 16 KiB cannot hold the tables: a named error.
#[test]
fn the_depth_estimate_past_one_binding_equals_the_default_devices() {
    let Some(ctx) = common::gpu("depth limits") else {
        return;
    };
    let mut polys = shapes();
    polys.push(icosphere(0.6, 3).unwrap());
    let tables = DepthShapes::new(&polys).unwrap();
    let one = GpuDepthParams::new(1, DEFAULT_K, &tables).unwrap();
    assert!(one.chunks_per_pair > 256, "{one:?}");
    assert_eq!(one.slots_per_pair, slots_for(one.chunks_per_pair));
    assert!(one.slots_per_pair <= one.chunks_per_pair.div_ceil(64) + 1);
    let (bodies, pairs) = crowd(40, 7, polys.len() as u32);
    let mut engine = Engine::new(ctx.clone());
    let whole = GpuDepthEstimator::new(&engine, tables.clone())
        .unwrap()
        .run(&mut engine, &bodies, &pairs, DEFAULT_K)
        .unwrap()
        .estimates;
    assert_eq!(whole.len(), pairs.len());

    // Tables past a binding are the named error, not a panic of the device.
    let tiny = Engine::new(common::small_device("depth limits", 16 << 10).expect("an adapter"));
    let err = GpuDepthEstimator::new(&tiny, tables.clone()).unwrap_err();
    assert!(
        matches!(&err, Error::BufferLimit { label, .. } if label == "depth normals"),
        "{err}"
    );
    let small = common::small_device("depth limits", 32 << 10).expect("an adapter");
    let most = pairs_within_limits(&small.limits(), DEFAULT_K, &tables).unwrap() as usize;
    assert!(most >= 100 && 2 * most < pairs.len(), "{most} pairs a run");
    let mut engine = Engine::new(small);
    let runs = GpuDepthEstimator::new(&engine, tables.clone())
        .unwrap()
        .run(&mut engine, &bodies, &pairs, DEFAULT_K)
        .unwrap()
        .estimates;
    assert!(runs == whole, "estimates in runs differ from one run's");

    let world = still_crowd(&polys, bodies);
    let frame_on = |ctx: GpuContext| {
        let mut p = Pipeline::on_gpu(ctx);
        p.set_depth_estimate(Some((tables.clone(), DEFAULT_K)))
            .unwrap();
        p.set_broadphase(Choice::Method(Method::Hash));
        let frame = p.frame(&world).unwrap();
        let flight = p.submit(&world).unwrap();
        let piped = p.collect(&world, flight).unwrap();
        assert_eq!(
            (&piped.pairs, &piped.estimates),
            (&frame.pairs, &frame.estimates)
        );
        frame
    };
    let small = frame_on(common::small_device("depth limits", 256 << 10).expect("an adapter"));
    // On one binding 32 KiB the frame's pairs are more than its depth passes bind: the
    // estimate follows the frame in runs (a named buffer-limit error before).
    let tight = frame_on(common::small_device("depth limits", 32 << 10).expect("an adapter"));
    let default = frame_on(ctx);
    assert!(
        most < tight.pairs.len(),
        "{most} of {} pairs",
        tight.pairs.len()
    );
    assert_eq!(tight.pairs, default.pairs);
    assert!(
        tight.estimates == default.estimates,
        "the estimates in runs after the frame differ"
    );
    assert!(tight.profile.stages.iter().any(|s| s.name == "depth"));
    // A partial per item would bind a quarter of them.
    let per_item = (256 << 10) / (16 * one.chunks_per_pair as usize);
    assert!(
        4 * per_item < small.pairs.len(),
        "{} pairs",
        small.pairs.len()
    );
    assert_eq!(small.pairs, default.pairs);
    assert!(
        small.estimates == default.estimates,
        "the small device's frame estimates differ"
    );
    let cpu = estimate_cpu(&tables, &world.bodies, &small.pairs, DEFAULT_K).unwrap();
    for ((g, c), pair) in small.estimates.iter().zip(&cpu).zip(&small.pairs) {
        let tol = 2.0 * c.slack.max(g.slack);
        assert!((g.depth - c.depth).abs() <= tol, "{pair:?}: {g:?} vs {c:?}");
    }
}

#[test]
fn walks_started_from_the_estimate_equal_enumeration_in_fewer_steps() {
    let polys = shapes();
    let tables = DepthShapes::new(&polys).unwrap();
    let (bodies, pairs) = crowd(150, 11, polys.len() as u32);
    let estimates = estimate_cpu(&tables, &bodies, &pairs, DEFAULT_K).unwrap();
    let mut rng = Rng::new(5);
    let (mut queries, mut cold_steps, mut toward_steps) = (0u32, 0u32, 0u32);
    for (e, &[a, b]) in estimates.iter().zip(&pairs) {
        let (ba, bb) = (&bodies[a as usize], &bodies[b as usize]);
        let (sa, sb) = (&polys[ba.shape as usize], &polys[bb.shape as usize]);
        let (pa, pb) = (Pose::from_gpu(ba), Pose::from_gpu(bb));
        let Some(truth) = enumerate(sa, &pa, sb, &pb) else {
            continue;
        };
        let label = format!("pair {a}-{b}");
        let cold = walk(&DepthInput::new(sa, pa, sb, pb)).expect("overlapping");
        let toward = Toward {
            normal: Vec3::from_array(e.normal).as_dvec3(),
            vertices: (e.witness_a, e.witness_b),
        };
        // The estimate's start, and a wrong one: a random direction, vertices past the end.
        let wrong = Toward {
            normal: rng.unit_vector(),
            vertices: (u32::MAX, 7_000),
        };
        let tol = 1e-9 * (1.0 + truth.depth);
        for (start, steps) in [(toward, &mut toward_steps), (wrong, &mut 0)] {
            let input = DepthInput {
                toward: Some(start),
                ..DepthInput::new(sa, pa, sb, pb)
            };
            let p = walk(&input).expect("overlapping");
            assert!(
                (p.depth - truth.depth).abs() <= tol,
                "{label}: from {start:?} {} vs enumeration {}",
                p.depth,
                truth.depth
            );
            *steps += p.steps;
        }
        queries += 1;
        cold_steps += cold.steps;
    }
    println!(
        "{queries} overlapping pairs: {cold_steps} facets visited cold, {toward_steps} from the estimates"
    );
    assert!(queries > 500, "{queries} overlapping pairs");
    assert!(
        toward_steps < cold_steps,
        "{toward_steps} steps from the estimates, {cold_steps} cold"
    );
}
