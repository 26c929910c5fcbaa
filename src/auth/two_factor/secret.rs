//! A TOTP secret: drawn at enrolment, shown once as base32, as an
//! `otpauth://` URL and as the QR code of that URL, and otherwise only ever
//! held sealed.

use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};
use qrcode::render::svg;
use qrcode::QrCode;
use rand::RngCore;
use secrecy::{ExposeSecret, SecretSlice};
use totp_rs::{Algorithm, TOTP};

/// Seconds in one TOTP time step (RFC 6238's default, what every
/// authenticator app assumes).
pub const PERIOD: u64 = 30;

/// Digits in a code.
pub const DIGITS: usize = 6;

/// Bytes of a new secret: 160 bits, the length of an HMAC-SHA-1 key that
/// RFC 4226 recommends.
const SECRET_BYTES: usize = 20;

/// Bytes below which a stored secret is refused (RFC 4226: at least 128 bits).
const MIN_SECRET_BYTES: usize = 16;

/// What a label component and a query value may hold unencoded: RFC 3986's
/// unreserved characters.
const COMPONENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// The shared key of a user's authenticator. No `Debug` output; its bytes
/// leave only through [`TotpSecret::base32`], [`TotpSecret::otpauth_url`]
/// and sealing.
pub struct TotpSecret(SecretSlice<u8>);

impl TotpSecret {
    /// A fresh 160-bit secret from the operating system's generator.
    pub fn generate() -> Self {
        let mut bytes = vec![0u8; SECRET_BYTES];
        rand::rngs::OsRng.fill_bytes(&mut bytes);
        Self(SecretSlice::from(bytes))
    }

    /// A secret from its bytes (an opened sealing), unless it is shorter
    /// than 128 bits.
    pub fn from_bytes(bytes: Vec<u8>) -> Option<Self> {
        (bytes.len() >= MIN_SECRET_BYTES).then(|| Self(SecretSlice::from(bytes)))
    }

    /// The raw key.
    pub fn bytes(&self) -> &[u8] {
        self.0.expose_secret()
    }

    /// The generator of this secret's codes: SHA-1, 6 digits, 30 s steps.
    /// Its copy of the key is wiped when it is dropped.
    pub(super) fn totp(&self) -> TOTP {
        TOTP::new_unchecked(Algorithm::SHA1, DIGITS, 1, PERIOD, self.bytes().to_vec())
    }

    /// The secret in base32 (RFC 4648, upper case, no padding), for typing
    /// into an authenticator app by hand.
    pub fn base32(&self) -> String {
        self.totp().get_secret_base32()
    }

    /// The key URI authenticator apps read (Google's `otpauth://` format),
    /// labelled `<issuer>:<account>`, with every parameter spelled out.
    pub fn otpauth_url(&self, issuer: &str, account: &str) -> String {
        let issuer = utf8_percent_encode(issuer, COMPONENT).to_string();
        let account = utf8_percent_encode(account, COMPONENT);
        format!(
            "otpauth://totp/{issuer}:{account}?secret={}&issuer={issuer}\
             &algorithm=SHA1&digits={DIGITS}&period={PERIOD}",
            self.base32()
        )
    }
}

/// The QR code of `text` as an SVG element that can be embedded in a page
/// as it is: no XML declaration, no script, no external reference, only a
/// white square and one black path.
pub fn qr_svg(text: &str) -> Result<String, qrcode::types::QrError> {
    let svg = QrCode::new(text.as_bytes())?
        .render::<svg::Color<'_>>()
        .min_dimensions(200, 200)
        .build();
    Ok(match svg.find("<svg") {
        Some(start) => svg[start..].to_owned(),
        None => svg,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 6238's SHA-1 seed.
    fn rfc_secret() -> TotpSecret {
        TotpSecret::from_bytes(b"12345678901234567890".to_vec()).expect("160 bits")
    }

    #[test]
    fn a_new_secret_is_160_random_bits() {
        let one = TotpSecret::generate();
        let two = TotpSecret::generate();
        assert_eq!(one.bytes().len(), 20);
        assert_ne!(one.bytes(), two.bytes());
        assert_eq!(one.base32().len(), 32, "160 bits are 32 base32 characters");
    }

    #[test]
    fn base32_is_rfc_4648_without_padding() {
        assert_eq!(rfc_secret().base32(), "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ");
    }

    #[test]
    fn a_secret_under_128_bits_is_refused() {
        assert!(TotpSecret::from_bytes(vec![7; 15]).is_none());
        assert!(TotpSecret::from_bytes(vec![7; 16]).is_some());
    }

    #[test]
    fn the_otpauth_url_names_issuer_account_and_every_parameter() {
        assert_eq!(
            rfc_secret().otpauth_url("Gatehouse", "ada+2fa@example.org"),
            "otpauth://totp/Gatehouse:ada%2B2fa%40example.org\
             ?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&issuer=Gatehouse\
             &algorithm=SHA1&digits=6&period=30"
        );
    }

    #[test]
    fn issuer_and_account_cannot_break_out_of_their_place_in_the_url() {
        let url = rfc_secret().otpauth_url("Acme: Ops & Co", "x?secret=AAAA&y@example.org");
        assert!(
            url.starts_with("otpauth://totp/Acme%3A%20Ops%20%26%20Co:x%3Fsecret%3DAAAA%26y%40example.org?"),
            "{url}"
        );
        assert_eq!(url.matches("secret=").count(), 1, "{url}");
        assert!(url.contains("&issuer=Acme%3A%20Ops%20%26%20Co&"), "{url}");
    }

    #[test]
    fn the_qr_code_is_an_inline_svg_without_script() {
        let url = rfc_secret().otpauth_url("Gatehouse", "ada@example.org");
        let svg = qr_svg(&url).expect("fits a QR code");
        assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""), "{svg}");
        assert!(svg.ends_with("</svg>"), "{svg}");
        let lower = svg.to_ascii_lowercase();
        for unwanted in ["<?xml", "<script", "javascript:", "href", " on"] {
            assert!(!lower.contains(unwanted), "{unwanted} in {svg}");
        }
        assert!(svg.contains("<path fill=\"#000\" d=\"M"), "draws the modules: {svg}");
    }

    #[test]
    fn the_longest_address_fits_a_qr_code() {
        let worst = format!("{}@{}", "+".repeat(64), "%".repeat(189));
        assert_eq!(worst.len(), 254, "RFC 5321's longest path");
        let url = rfc_secret().otpauth_url("Gatehouse", &worst);
        assert!(qr_svg(&url).is_ok(), "{} bytes", url.len());
    }

    #[test]
    fn the_qr_code_depends_on_the_url() {
        let secret = rfc_secret();
        let ada = qr_svg(&secret.otpauth_url("Gatehouse", "ada@example.org")).unwrap();
        let bob = qr_svg(&secret.otpauth_url("Gatehouse", "bob@example.org")).unwrap();
        assert_eq!(ada, qr_svg(&secret.otpauth_url("Gatehouse", "ada@example.org")).unwrap());
        assert_ne!(ada, bob);
    }
}
