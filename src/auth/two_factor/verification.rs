//! Checking a code an authenticator app shows (RFC 6238: HMAC-SHA-1,
//! 6 digits, 30-second steps, one step of clock drift either way).

use subtle::ConstantTimeEq;

use super::secret::{TotpSecret, DIGITS, PERIOD};

/// The time step a `code` belongs to, if it is the code of `secret` for the
/// step of `now` (Unix seconds) or the step before or after it.
///
/// The code must be six ASCII digits; spaces are ignored, as apps show
/// `123 456`. Every candidate is compared in constant time. The caller
/// accepts the step at most once ([`super::store::accept_step`]).
pub fn verify(secret: &TotpSecret, code: &str, now: u64) -> Option<u64> {
    let code = six_digits(code)?;
    let totp = secret.totp();
    let current = now / PERIOD;
    let mut matched = None;
    for step in current.saturating_sub(1)..=current.saturating_add(1) {
        let expected = totp.generate(step.saturating_mul(PERIOD));
        if bool::from(expected.as_bytes().ct_eq(&code)) {
            matched = Some(step);
        }
    }
    matched
}

/// `code` without spaces, if what is left is exactly six ASCII digits.
fn six_digits(code: &str) -> Option<[u8; DIGITS]> {
    let mut digits = [0u8; DIGITS];
    let mut count = 0;
    for byte in code.bytes().filter(|b| *b != b' ') {
        if !byte.is_ascii_digit() || count == DIGITS {
            return None;
        }
        digits[count] = byte;
        count += 1;
    }
    (count == DIGITS).then_some(digits)
}

/// The code of `secret` at `time` (Unix seconds), as an app would show it.
#[cfg(test)]
pub fn code_at(secret: &TotpSecret, time: u64) -> String {
    secret.totp().generate(time)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rfc_secret() -> TotpSecret {
        TotpSecret::from_bytes(b"12345678901234567890".to_vec()).expect("160 bits")
    }

    /// RFC 6238 appendix B, SHA-1: the time and the last six digits of the
    /// eight-digit value.
    const VECTORS: [(u64, &str); 6] = [
        (59, "287082"),
        (1_111_111_109, "081804"),
        (1_111_111_111, "050471"),
        (1_234_567_890, "005924"),
        (2_000_000_000, "279037"),
        (20_000_000_000, "353130"),
    ];

    #[test]
    fn the_rfc_6238_sha1_vectors_verify_at_their_own_step() {
        let secret = rfc_secret();
        for (time, code) in VECTORS {
            assert_eq!(code_at(&secret, time), code, "generated at {time}");
            assert_eq!(verify(&secret, code, time), Some(time / 30), "{code} at {time}");
        }
    }

    #[test]
    fn one_step_of_drift_is_accepted_either_way() {
        let secret = rfc_secret();
        let (time, code) = (1_111_111_111, "050471");
        let step = time / 30;
        assert_eq!(verify(&secret, code, time - 30), Some(step), "app one step ahead");
        assert_eq!(verify(&secret, code, time + 30), Some(step), "app one step behind");
    }

    #[test]
    fn two_steps_of_drift_are_refused() {
        let secret = rfc_secret();
        let (time, code) = (1_111_111_111, "050471");
        assert_eq!(verify(&secret, code, time - 60), None);
        assert_eq!(verify(&secret, code, time + 60), None);
    }

    #[test]
    fn the_first_steps_after_the_epoch_verify() {
        let secret = rfc_secret();
        let code = code_at(&secret, 0);
        assert_eq!(verify(&secret, &code, 0), Some(0));
        assert_eq!(verify(&secret, "287082", 0), Some(1), "the next step, from step 0");
    }

    #[test]
    fn another_secret_does_not_verify() {
        let other = TotpSecret::from_bytes(b"12345678901234567891".to_vec()).unwrap();
        let time = 1_234_567_890;
        let code = code_at(&other, time);
        assert_ne!(code, "005924");
        assert_eq!(verify(&rfc_secret(), &code, time), None);
    }

    #[test]
    fn spaces_are_ignored() {
        let secret = rfc_secret();
        assert_eq!(verify(&secret, "287 082", 59), Some(1));
        assert_eq!(verify(&secret, " 287082 ", 59), Some(1));
    }

    #[test]
    fn anything_but_six_ascii_digits_is_refused() {
        let secret = rfc_secret();
        for code in [
            "", "28708", "2870820", "28708a", "+87082", "-87082", "287-082", "2870 8",
            "２８７０８２", "287082\n", "\u{0}287082", "87082.",
        ] {
            assert_eq!(verify(&secret, code, 59), None, "{code:?}");
        }
    }

    #[test]
    fn an_eight_digit_rfc_value_is_refused() {
        assert_eq!(verify(&rfc_secret(), "94287082", 59), None);
    }
}
