//! The CPU twin of sort-and-sweep.

use super::*;
use crate::bodies::GpuAabb;
use crate::memory::PairBudget;

/// Order-preserving map of f32 to u32 (twin of `sortable_key`).
pub fn sortable_key(x: f32) -> u32 {
    let bits = x.to_bits();
    if bits & 0x8000_0000 != 0 {
        !bits
    } else {
        bits | 0x8000_0000
    }
}

/// CPU twin of sort-and-sweep. Multi-threaded sweep; sorted output.
pub fn sap_pairs_cpu(aabbs: &[GpuAabb]) -> Vec<[u32; 2]> {
    sap_pairs_cpu_within(aabbs, &PairBudget::unlimited())
}

/// [`sap_pairs_cpu`] counting its pairs against `budget`: it stops early, with part of
/// the pairs, once they no longer fit (the caller reads the budget's error).
pub fn sap_pairs_cpu_within(aabbs: &[GpuAabb], budget: &PairBudget) -> Vec<[u32; 2]> {
    let axis = sweep_axis(aabbs);
    let mut order: Vec<u32> = (0..aabbs.len() as u32).collect();
    order.sort_by_key(|&i| sortable_key(aabbs[i as usize].min[axis]));
    let sorted = sap_gather_cpu(aabbs, &order);
    let sorted = &sorted;
    let mut pairs = parallel_ranges(sorted.len(), |range| {
        let mut out = Vec::new();
        for s in range {
            let ba = &sorted[s];
            for bb in &sorted[s + 1..] {
                if bb.min[axis] > ba.max[axis] {
                    break;
                }
                if corners_overlap(ba.min, ba.max, bb.min, bb.max) {
                    out.push([ba.body.min(bb.body), ba.body.max(bb.body)]);
                    if out.len() % PairBudget::STRIDE == 0 && !budget.add(PairBudget::STRIDE) {
                        return out;
                    }
                }
            }
        }
        out
    });
    sort_body_pairs(&mut pairs);
    pairs
}

/// CPU twin of `sap_reach.wgsl`: for each box of `sorted` (ascending lower bounds on
/// `axis`), the end of its sweep and its work items of `chunk` candidates.
pub fn sap_reach_cpu(sorted: &[GpuSortedBox], axis: usize, chunk: u32) -> (Vec<u32>, Vec<u32>) {
    sorted
        .iter()
        .enumerate()
        .map(|(s, b)| {
            let end = s + 1 + sorted[s + 1..].partition_point(|c| c.min[axis] <= b.max[axis]);
            (end as u32, (end - s - 1).div_ceil(chunk as usize) as u32)
        })
        .unzip()
}

/// CPU twin of `sap_gather.wgsl`: the boxes in sorted `order`, with their bodies.
pub fn sap_gather_cpu(aabbs: &[GpuAabb], order: &[u32]) -> Vec<GpuSortedBox> {
    order
        .iter()
        .map(|&i| {
            let b = &aabbs[i as usize];
            GpuSortedBox {
                min: b.min,
                body: i,
                max: b.max,
                _pad0: 0,
            }
        })
        .collect()
}
