//! A small deterministic generator (SplitMix64) for scenes, tests and benchmarks: the same
//! seed gives the same crowd on every machine, which the golden hashes of later stages need.

use glam::{DQuat, DVec3};

/// SplitMix64 (Steele, Lea, Flood 2014): one 64-bit state, passes BigCrush, trivially
/// seedable. Not for cryptography.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator from a seed.
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }

    /// Next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform in [lo, hi).
    pub fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.unit()
    }

    /// Uniform integer in [0, n).
    pub fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }

    /// Uniform point in the box [lo, hi).
    pub fn point_in(&mut self, lo: DVec3, hi: DVec3) -> DVec3 {
        DVec3::new(
            self.range(lo.x, hi.x),
            self.range(lo.y, hi.y),
            self.range(lo.z, hi.z),
        )
    }

    /// Uniform unit vector.
    pub fn unit_vector(&mut self) -> DVec3 {
        let z = self.range(-1.0, 1.0);
        let phi = self.range(0.0, std::f64::consts::TAU);
        let r = (1.0 - z * z).max(0.0).sqrt();
        DVec3::new(r * phi.cos(), r * phi.sin(), z)
    }

    /// Uniform random rotation (Shoemake's subgroup algorithm).
    pub fn rotation(&mut self) -> DQuat {
        let (u1, u2, u3) = (self.unit(), self.unit(), self.unit());
        let (a, b) = ((1.0 - u1).sqrt(), u1.sqrt());
        let (t2, t3) = (std::f64::consts::TAU * u2, std::f64::consts::TAU * u3);
        DQuat::from_xyzw(a * t2.sin(), a * t2.cos(), b * t3.sin(), b * t3.cos())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rotations_are_unit_and_units_in_range() {
        let mut rng = Rng::new(7);
        for _ in 0..1000 {
            assert!((rng.rotation().length() - 1.0).abs() < 1e-12);
            assert!((rng.unit_vector().length() - 1.0).abs() < 1e-12);
            let u = rng.unit();
            assert!((0.0..1.0).contains(&u));
            assert!(rng.below(10) < 10);
        }
    }

    #[test]
    fn mean_of_uniform_is_one_half() {
        let mut rng = Rng::new(1);
        let mean = (0..100_000).map(|_| rng.unit()).sum::<f64>() / 100_000.0;
        assert!((mean - 0.5).abs() < 0.005, "{mean}");
    }
}
