// Pair output staged per workgroup. Every pair a pass finds would otherwise take one
// atomicAdd on the single global counter, and a million pairs contend on that one word.
// Here a pair takes a slot in a workgroup-memory stage (a workgroup atomic); at the end
// one invocation reserves the stage's range in `pairs` with one global atomic and the
// workgroup copies the stage out, coalesced. Pairs past the stage (a workgroup in a
// dense cluster) go straight to the global counter, so none is ever dropped.
//
// The importing shader declares `counter: PairCounter`, `pairs: array<vec2<u32>>` and
// WORKGROUP_SIZE. `flush_pairs` holds barriers: every invocation of the workgroup calls
// it once, from uniform control flow, after its last `emit_pair`.

// Off (a pipeline constant) sends every pair straight to the global counter: the A/B
// baseline of `proxima bench gpu --no-pair-staging`.
override PAIR_STAGING: bool = true;

// 8 KiB of workgroup memory: several times the pairs a workgroup of a sparse crowd finds.
const PAIR_STAGE: u32 = 1024u;

var<workgroup> stage: array<vec2<u32>, PAIR_STAGE>;
var<workgroup> stage_count: atomic<u32>;
var<workgroup> stage_base: u32;

fn emit_pair(a: u32, b: u32) {
    let pair = vec2<u32>(min(a, b), max(a, b));
    if PAIR_STAGING {
        let slot = atomicAdd(&stage_count, 1u);
        if slot < PAIR_STAGE {
            stage[slot] = pair;
            return;
        }
    }
    // Past the capacity the count still grows, so the CPU re-runs with more room.
    let k = atomicAdd(&counter.count, 1u);
    note_wrap(k, 1u);
    if k < counter.capacity {
        pairs[k] = pair;
    }
}

// Records that `old + added` (an atomicAdd on a counter word that returned `old`) passed
// 2^32 - 1 (see PairCounter.wrapped).
fn note_wrap(old: u32, added: u32) {
    if old > 0xffffffffu - added {
        atomicOr(&counter.wrapped, 1u);
    }
}

// Records that a loop stopped before its own condition ended it (see PairCounter.cut).
fn note_cut(cut: bool) {
    if cut {
        atomicOr(&counter.cut, 1u);
    }
}

fn flush_pairs(local_index: u32) {
    workgroupBarrier();
    if local_index == 0u {
        let staged = min(atomicLoad(&stage_count), PAIR_STAGE);
        var base = 0u;
        if staged > 0u {
            base = atomicAdd(&counter.count, staged);
            note_wrap(base, staged);
        }
        stage_base = base;
    }
    let base = workgroupUniformLoad(&stage_base);
    let staged = min(atomicLoad(&stage_count), PAIR_STAGE);
    var i = local_index;
    for (; i < staged; i += WORKGROUP_SIZE) {
        let k = base + i;
        if k < counter.capacity {
            pairs[k] = stage[i];
        }
    }
    note_cut(i < staged);
}
