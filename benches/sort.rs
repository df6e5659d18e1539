//! Key/value radix sort on resident GPU buffers: proxima's pass (4-bit LSD,
//! reduce-then-scan; the engine's default, and with a compute pass per dispatch; the same
//! digits by decoupled look-back, a dispatch a pass; and 8-bit digits by look-back, half the
//! passes) against
//! lampshade 0.13's `KeyValueSoaSorter` (separate key and value
//! buffers, like ours), same random keys, side by side. Both record into a command buffer,
//! submit and wait; neither reads back. Every iteration first copies the unsorted keys and
//! values in from pristine buffers (a device copy, the same for both): sorting the last
//! iteration's already sorted output would make every scatter sequential, and flatter.
//! `cargo bench --bench sort`.

mod common;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use proxima::gpu::Engine;
use proxima::graph::{BufferProxy, Recording};
use proxima::passes::radix::{
    record_sort_pairs, record_sort_pairs_lookback, record_sort_pairs_radix8,
};
use proxima::rng::Rng;
use wgpu::util::DeviceExt;

fn sort(c: &mut Criterion) {
    let Some(ctx) = common::gpu("sort") else {
        return;
    };
    let mut group = c.benchmark_group("sort");
    let mut sizes = vec![100_000u32, 1_000_000];
    if !ctx.is_software() {
        sizes.extend([4_000_000, 16_000_000]);
    }
    for n in sizes {
        let mut rng = Rng::new(u64::from(n));
        let keys: Vec<u32> = (0..n).map(|_| rng.next_u64() as u32).collect();
        let values: Vec<u32> = (0..n).collect();
        let usage = wgpu::BufferUsages::STORAGE
            | wgpu::BufferUsages::COPY_SRC
            | wgpu::BufferUsages::COPY_DST;
        let buffer = |label, data: &[u32]| {
            ctx.device
                .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                    label: Some(label),
                    contents: bytemuck::cast_slice(data),
                    usage,
                })
        };
        group.throughput(criterion::Throughput::Elements(u64::from(n)));

        let (k0, v0) = (
            buffer("pristine keys", &keys),
            buffer("pristine values", &values),
        );
        let (k, v) = (buffer("keys", &keys), buffer("values", &values));
        // The engine's default (each run of dispatches in one compute pass), a compute pass
        // per dispatch (the A/B baseline), and the look-back paths, 4- and 8-bit.
        type Record =
            fn(&mut Recording, BufferProxy, BufferProxy, u32, u32) -> (BufferProxy, BufferProxy);
        let ways: [(&str, bool, Record); 4] = [
            ("proxima", false, record_sort_pairs),
            ("proxima-pass-per-dispatch", true, record_sort_pairs),
            ("proxima-lookback", false, record_sort_pairs_lookback),
            ("proxima-radix8", false, record_sort_pairs_radix8),
        ];
        for (name, pass_per_dispatch, record) in ways {
            let mut engine = Engine::new(ctx.clone());
            engine.set_pass_per_dispatch(pass_per_dispatch);
            group.bench_function(BenchmarkId::new(name, n), |b| {
                b.iter(|| {
                    let mut rec = Recording::new();
                    let pk = rec.external(k.size(), "keys");
                    let pv = rec.external(v.size(), "values");
                    let pk0 = rec.external(k.size(), "pristine keys");
                    let pv0 = rec.external(v.size(), "pristine values");
                    rec.copy(pk0, 0, pk, 0, k.size());
                    rec.copy(pv0, 0, pv, 0, v.size());
                    let (sk, sv) = record(&mut rec, pk, pv, n, 32);
                    // The result may sit in pooled buffers: copy it home, as a caller would.
                    if sk != pk {
                        rec.copy(sk, 0, pk, 0, k.size());
                        rec.copy(sv, 0, pv, 0, v.size());
                    }
                    engine
                        .run(&rec, &[(pk, &k), (pv, &v), (pk0, &k0), (pv0, &v0)])
                        .expect("sort")
                });
            });
        }

        let (k2, v2) = (buffer("keys", &keys), buffer("values", &values));
        let mut sorter = lampshade::KeyValueSoaSorter::new(&ctx.device, &ctx.queue);
        sorter
            .prepare_sort(&k2, &v2, n)
            .expect("lampshade prepares");
        group.bench_function(BenchmarkId::new("lampshade", n), |b| {
            b.iter(|| {
                let mut encoder = ctx.device.create_command_encoder(&Default::default());
                encoder.copy_buffer_to_buffer(&k0, 0, &k2, 0, k2.size());
                encoder.copy_buffer_to_buffer(&v0, 0, &v2, 0, v2.size());
                sorter
                    .record_reserved_sort(&mut encoder, &k2, &v2, n)
                    .expect("lampshade sorts");
                let index = ctx.queue.submit([encoder.finish()]);
                ctx.device
                    .poll(wgpu::PollType::Wait {
                        submission_index: Some(index),
                        timeout: None,
                    })
                    .expect("wait");
            });
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = common::criterion(3);
    targets = sort
}
criterion_main!(benches);
