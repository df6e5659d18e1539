// Numeric helpers that must not be optimised away. WGSL lets a compiler assume that no
// value is NaN or infinite, so `x != x` is not a reliable test: look at the exponent bits.

fn is_finite_f32(x: f32) -> bool {
    return (bitcast<u32>(x) & 0x7f800000u) != 0x7f800000u;
}

fn all_finite3(v: vec3<f32>) -> bool {
    return is_finite_f32(v.x) && is_finite_f32(v.y) && is_finite_f32(v.z);
}

fn all_finite4(v: vec4<f32>) -> bool {
    return all_finite3(v.xyz) && is_finite_f32(v.w);
}

fn positive_infinity() -> f32 {
    return bitcast<f32>(0x7f800000u);
}
