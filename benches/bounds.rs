//! Bounds pass: GPU against its CPU twin at 10k / 100k / 1M bodies, side by side in one run.
//! - `cpu_twin`: the multi-threaded CPU twin.
//! - `gpu_frame`: upload of the poses, the pass, readback of every box (what a CPU consumer
//!   of the boxes pays).
//! - `gpu_resident`: poses already on the GPU (a renderer's buffer), the pass and a wait,
//!   no box readback (what a GPU consumer such as the broadphase pays).
//!
//! Without an adapter the GPU rows are skipped with a printed reason.
//! `cargo bench --bench bounds`; the CLI's `proxima bench bounds` prints the same ratios.

mod common;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use proxima::bodies::GpuShapeBounds;
use proxima::crowd::Crowd;
use proxima::frame::{self, Plan};
use proxima::gpu::Engine;
use proxima::graph::Recording;
use proxima::passes::bounds::{GpuBoundsParams, record_bounds};

fn bounds(c: &mut Criterion) {
    let ctx = common::gpu("bounds");
    let mut group = c.benchmark_group("bounds");
    for n in [10_000usize, 100_000, 1_000_000] {
        let world = Crowd::random(n, 1);
        group.throughput(criterion::Throughput::Elements(n as u64));
        group.bench_with_input(BenchmarkId::new("cpu_twin", n), &world, |b, w| {
            b.iter(|| frame::cpu(&w.bodies, &w.shapes, None).expect("valid scene"));
        });
        let Some(ctx) = &ctx else { continue };
        let mut engine = Engine::new(ctx.clone());
        engine.prepare_all().expect("shaders compile");
        group.bench_with_input(BenchmarkId::new("gpu_frame", n), &world, |b, w| {
            b.iter(|| {
                let (rec, rb) =
                    frame::record(frame::Bodies::Upload(&w.bodies), &w.shapes, Plan::Bounds);
                let out = engine.run(&rec, &[]).expect("frame");
                frame::finish(&out, &rb, &w.bodies, &w.shapes).expect("valid")
            });
        });
        let resident = ctx.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("resident bodies"),
            size: size_of_val(&world.bodies[..]) as u64,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        ctx.queue
            .write_buffer(&resident, 0, bytemuck::cast_slice(&world.bodies));
        group.bench_with_input(BenchmarkId::new("gpu_resident", n), &world, |b, w| {
            b.iter(|| {
                let mut rec = Recording::new();
                let bodies = rec.external(resident.size(), "resident bodies");
                let shapes = rec.array_buffer::<GpuShapeBounds>(w.shapes.len(), "shapes");
                rec.upload(shapes, &w.shapes);
                let params = GpuBoundsParams::new(w.len() as u32, w.shapes.len() as u32);
                let out = record_bounds(&mut rec, bodies, shapes, params);
                let status = rec.readback(out.status);
                engine
                    .run(&rec, &[(bodies, &resident)])
                    .expect("frame")
                    .values::<u32>(status)
            });
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = common::criterion(2);
    targets = bounds
}
criterion_main!(benches);
