//! Every counter the sign-in, reset and second-factor routes keep, made
//! from the `auth` settings.

use super::second_step::SecondFactorLimit;
use super::throttle::Throttle;
use crate::db::Db;
use crate::metrics::Metrics;

/// How long a passkey challenge lives (and its claim is kept).
pub const CHALLENGE_SECONDS: u32 = 5 * 60;

/// Every counter of the sign-in and reset routes.
#[derive(Clone, Debug)]
pub struct Throttles {
    /// Sign-in failures per address + client IP.
    pub login: Throttle,
    /// Sign-in failures per client IP, over all addresses.
    pub login_ip: Throttle,
    /// Reset-link requests per address + client IP.
    pub forgot: Throttle,
    /// Reset-link requests per client IP, over all addresses.
    pub forgot_ip: Throttle,
    /// Second-factor codes per user, reserved before they are checked, and
    /// the day's lockout.
    pub second_factor: SecondFactorLimit,
    /// Refused device-bound session proofs per client IP.
    pub dbsc_ip: Throttle,
    /// Device codes issued per client IP.
    pub device_codes_ip: Throttle,
    /// Wrong user codes of the device authorization grant per client IP.
    pub user_codes_ip: Throttle,
    /// Passkey challenges claimed: each is answered once, on every
    /// instance, however many answers arrive at once.
    pub passkey_challenges: Throttle,
}

impl Throttles {
    /// The counters `auth` configures, on `db`, each refusal counted in
    /// `metrics`.
    pub fn new(db: &Db, auth: &crate::config::AuthSettings, metrics: &Metrics) -> Self {
        let window = auth.throttle_window_seconds;
        let counter =
            |scope, limit| Throttle::new(db.clone(), scope, limit, window).counted_in(metrics);
        Self {
            login: counter("login", auth.throttle_attempts),
            login_ip: counter("login-ip", auth.ip_throttle_attempts),
            forgot: counter("forgot", auth.throttle_attempts),
            forgot_ip: counter("forgot-ip", auth.ip_throttle_attempts),
            dbsc_ip: counter("dbsc-ip", auth.ip_throttle_attempts),
            device_codes_ip: counter("device-code-ip", auth.ip_throttle_attempts),
            user_codes_ip: counter("user-code-ip", auth.throttle_attempts),
            second_factor: SecondFactorLimit::new(db, auth.throttle_attempts, window, metrics),
            passkey_challenges: Throttle::new(
                db.clone(),
                "passkey-challenge",
                1,
                CHALLENGE_SECONDS,
            )
            .counted_in(metrics),
        }
    }
}
