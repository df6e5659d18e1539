//! Convex hull construction: proxima's quickhull (exact predicates + coplanar merging)
//! against parry3d-f64's convex hull, on the same points, side by side in one run:
//! uniform in a ball (few hull vertices) and on a sphere (every point on the hull), at
//! 100, 10k and 1M points. `cargo bench --bench hull`.

mod common;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use proxima::geometry::ConvexPolytope;
use proxima::geometry::generators::random_points;
use proxima::rng::Rng;

fn hull(c: &mut Criterion) {
    let mut group = c.benchmark_group("hull");
    for (cloud, inner) in [("ball", 0.0), ("sphere", 1.0)] {
        for n in [100usize, 10_000, 1_000_000] {
            if cloud == "sphere" && n == 1_000_000 {
                continue; // a million hull vertices: minutes for both, measures memory more than the hull
            }
            let points = random_points(&mut Rng::new(n as u64), n, 1.0, inner);
            group.throughput(criterion::Throughput::Elements(n as u64));
            group.bench_with_input(
                BenchmarkId::new(format!("proxima/{cloud}"), n),
                &points,
                |b, p| {
                    b.iter(|| ConvexPolytope::from_points(p).expect("hull"));
                },
            );
            group.bench_with_input(
                BenchmarkId::new(format!("parry/{cloud}"), n),
                &points,
                |b, p| {
                    b.iter(|| parry3d_f64::transformation::convex_hull(p));
                },
            );
        }
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = common::criterion(3);
    targets = hull
}
criterion_main!(benches);
