//! The motion of a body over one step: the screw motion between a start and an end pose
//! (../DESIGN.md, "Continuous collision"). The body frame's origin moves on a straight
//! line at constant speed, and the rotation turns at constant angular velocity about a
//! fixed world axis through that origin: `R(t) = exp(t [ω]×) R0`, `ω` the axis-angle of
//! `R1 R0ᵀ` on the shorter arc (slerp at constant speed, not nlerp, whose speed varies
//! and whose path a bound on ω does not cover). A point fixed in the body moves as
//! `x(t) = R(t) x_local + T0 + t (T1 − T0)`, `t` in `[0, 1]`.
//!
//! Rules for the poses: both must be finite with unit quaternions (within 1e-3, then
//! normalised); a rotation of more than half a turn between them is read as the shorter
//! arc the other way (a quaternion and its negation are the same rotation, so no other
//! reading exists), and a rotation of exactly half a turn (within [`HALF_TURN_MARGIN`]),
//! where the two arcs are equally short, is an error: split such a motion into two steps.

use glam::{DQuat, DVec3};

use crate::bodies::Pose;
use crate::{Error, Result};

/// How close to half a turn a rotation may come before the shorter arc is called
/// ambiguous (radians). Above rounding (1e-16 per component) by far, below any turn a user
/// means as "almost half".
pub const HALF_TURN_MARGIN: f64 = 1e-9;

/// The screw motion between two poses over `t` in `[0, 1]`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ScrewMotion {
    start: Pose,
    end: Pose,
    /// `T1 − T0`: the origin's velocity per unit of `t`.
    linear: DVec3,
    /// Axis × angle of `R1 R0ᵀ` (world frame), the angular velocity per unit of `t`.
    angular: DVec3,
}

impl ScrewMotion {
    /// A body that does not move. The pose is taken as given (as the exact queries take
    /// theirs: see [`crate::exact`]); check it with [`Pose::checked`] first where it comes
    /// from outside.
    pub fn resting(pose: Pose) -> Self {
        Self {
            start: pose,
            end: pose,
            linear: DVec3::ZERO,
            angular: DVec3::ZERO,
        }
    }

    /// The motion from `start` to `end`. Errors name what is wrong: a non-finite pose, a
    /// quaternion that is not unit, or an ambiguous half turn.
    pub fn between(start: Pose, end: Pose) -> Result<Self> {
        let start = checked(start, "start")?;
        let end = checked(end, "end")?;
        let mut relative = end.rotation * start.rotation.conjugate();
        if relative.w < 0.0 {
            relative = -relative;
        }
        let sin_half = relative.xyz().length();
        let angle = 2.0 * sin_half.atan2(relative.w);
        if angle > std::f64::consts::PI - HALF_TURN_MARGIN {
            return Err(Error::Motion(format!(
                "the rotation from the start to the end pose is half a turn \
                 ({angle} rad, within {HALF_TURN_MARGIN} rad of pi): the shorter arc is \
                 ambiguous; split the motion into two steps"
            )));
        }
        // angle / sin_half tends to 2 / w as the angle goes to 0: no division by zero.
        let angular = if sin_half > 0.0 {
            relative.xyz() * (angle / sin_half)
        } else {
            DVec3::ZERO
        };
        Ok(Self {
            start,
            end,
            linear: end.translation - start.translation,
            angular,
        })
    }

    /// The motion of a body with constant linear and angular velocity (world frame, per
    /// second) over `dt` seconds from `start`: the end pose turns by `|angular| dt`, which
    /// must be less than half a turn. The motion turns by `angular · dt` as given (what
    /// [`Self::between`] the two poses would work out again from the end's quaternion, to
    /// rounding, with an arctangent and three square roots a body more).
    pub fn from_velocity(start: Pose, linear: DVec3, angular: DVec3, dt: f64) -> Result<Self> {
        // As the world's steps: a negative one ran the motion backward.
        step_length(dt)?;
        let turn = angular * dt;
        if !(linear * dt).is_finite() || !turn.is_finite() {
            return Err(Error::Motion(format!(
                "velocity {linear} / {angular} over {dt} s is not finite"
            )));
        }
        if turn.length() > std::f64::consts::PI - HALF_TURN_MARGIN {
            return Err(Error::Motion(format!(
                "a turn of {} rad in one step is half a turn or more; take shorter steps",
                turn.length()
            )));
        }
        let start = checked(start, "start")?;
        let end = checked(
            Pose::new(
                start.translation + linear * dt,
                DQuat::from_scaled_axis(turn) * start.rotation,
            ),
            "end",
        )?;
        Ok(Self {
            start,
            end,
            linear: end.translation - start.translation,
            angular: turn,
        })
    }

    /// The pose at `t` (0: the start pose, 1: the end pose, both exactly).
    pub fn at(&self, t: f64) -> Pose {
        if t == 0.0 {
            return self.start;
        }
        if t == 1.0 {
            return self.end;
        }
        Pose::new(
            self.start.translation + self.linear * t,
            (DQuat::from_scaled_axis(self.angular * t) * self.start.rotation).normalize(),
        )
    }

    /// The origin at `t` (the translation of [`Self::at`], without the rotation).
    pub fn at_origin(&self, t: f64) -> DVec3 {
        if t == 1.0 {
            return self.end.translation;
        }
        self.start.translation + self.linear * t
    }

    /// The start pose.
    pub fn start(&self) -> Pose {
        self.start
    }

    /// The end pose.
    pub fn end(&self) -> Pose {
        self.end
    }

    /// The origin's velocity per unit of `t` (`T1 − T0`).
    pub fn linear(&self) -> DVec3 {
        self.linear
    }

    /// The angular velocity per unit of `t` (axis × angle, world frame, at most just under
    /// π long).
    pub fn angular(&self) -> DVec3 {
        self.angular
    }

    /// How fast, per unit of `t`, a point within `reach` of this body's rotation axis (or
    /// origin) and one within `other_reach` of `other`'s can approach each other: the
    /// origins' relative speed plus each spin times its reach. The direction-free bound
    /// on how fast two bodies' distance closes.
    pub fn approach_speed(&self, reach: f64, other: &ScrewMotion, other_reach: f64) -> f64 {
        (self.linear - other.linear).length()
            + self.angular.length() * reach
            + other.angular.length() * other_reach
    }

    /// The largest distance of any of `points` (body frame) from the rotation axis through
    /// the body's origin: how far a point can swing. The axis is fixed in the world and, in
    /// the body frame, fixed too (`R(t)ᵀ ω = R0ᵀ ω`), so the distance holds for every `t`.
    pub fn swing_radius(&self, points: &[DVec3]) -> f64 {
        let Some(axis) = self.angular.try_normalize() else {
            return 0.0;
        };
        let axis = self.start.rotation.conjugate() * axis;
        points
            .iter()
            .map(|&p| (p - axis * axis.dot(p)).length_squared())
            .fold(0.0, f64::max)
            .sqrt()
    }
}

/// The pose with its quaternion normalised ([`Pose::checked`]), or the error naming the
/// end and what is wrong.
fn checked(pose: Pose, which: &str) -> Result<Pose> {
    pose.checked()
        .map_err(|fault| Error::Motion(format!("the {which} {fault}")))
}

/// A step's length, `dt` seconds, when it is finite and not negative; else the named error,
/// for the world's steps and a motion made from velocities alike (`advance` moved bodies
/// backward along their velocities, and a NaN step was blamed on body 0's velocity).
pub(crate) fn step_length(dt: f64) -> Result<()> {
    if dt.is_finite() && dt >= 0.0 {
        Ok(())
    } else {
        Err(Error::Usage(format!(
            "the step must be finite and non-negative, got {dt} s"
        )))
    }
}
