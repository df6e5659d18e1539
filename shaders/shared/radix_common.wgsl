// Shared by the radix-sort passes (4 bits per pass, 16 digits, stable). Rust twins:
// passes::radix::{GpuRadixParams, RADIX_BLOCK, RADIX_BITS}.

const RADIX_THREADS: u32 = 128u;
const RADIX_ITEMS: u32 = 8u;
const RADIX_BLOCK: u32 = 1024u; // RADIX_THREADS × RADIX_ITEMS
const RADIX_BITS: u32 = 4u;
const RADIX_DIGITS: u32 = 16u;

struct RadixParams {
    // Number of keys.
    count: u32,
    // Bit position of this pass's digit (the pass is shift / RADIX_BITS).
    shift: u32,
    // Number of blocks of RADIX_BLOCK keys.
    blocks: u32,
    // Number of passes (the sort's, whichever this one is).
    passes: u32,
    // The look-back's rounds of waiting on a block's counts before counting them itself
    // (radix_lookback).
    patience: u32,
    // The key bits sorted by: the low ceil(key_bits / 4) * 4 (radix8's top digit is cut
    // to them, so that it orders by the same bits as the 4-bit sorts).
    mask: u32,
    // Bits of a pass's digit: RADIX_BITS, or RADIX8_BITS for the 8-bit sort (what
    // radix_histogram counts by).
    digit_bits: u32,
}

// The look-back sorts' status words (radix_lookback, radix8_lookback): a ticket counter
// for each of up to 8 passes, the count of late blocks' digits counted by the blocks
// waiting on them (word FALLBACKS), then from word STATUS a word a block and digit, a
// flag (none yet, the block's own count, its inclusive prefix) over a 30-bit count.
const FALLBACKS: u32 = 8u;
const STATUS: u32 = 9u;
const FLAG_COUNT: u32 = 0x40000000u;
const FLAG_PREFIX: u32 = 0x80000000u;
const FLAGS: u32 = 0xc0000000u;
const VALUE_MASK: u32 = 0x3fffffffu;

// The 8-bit sort (radix8_*): 256 digits a pass.
const RADIX8_BITS: u32 = 8u;
const RADIX8_DIGITS: u32 = 256u;

fn digit8_of(key: u32, shift: u32) -> u32 {
    return (key >> shift) & 255u;
}

fn digit_of(key: u32, shift: u32) -> u32 {
    return (key >> shift) & 15u;
}
