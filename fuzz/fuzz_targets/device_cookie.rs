//! Feeds arbitrary device cookies to the path a browser's one takes: the
//! `Cookie` header's pairs as Rocket reads them, the private jar's
//! decryption, then `device::id_of`. It must never panic; no value the jar
//! did not seal reads back; a value it sealed reads back unchanged; and
//! `id_of` takes exactly the values that are not empty, unchanged, whose
//! SHA-256 is 64 hex digits.
#![no_main]

use gatehouse::domain::sha256_hex;
use gatehouse::session::device::{id_of, DEVICE_COOKIE};
use libfuzzer_sys::fuzz_target;
use rocket::config::{Config, LogLevel, SecretKey};
use rocket::http::Cookie;
use rocket::local::blocking::Client;

thread_local! {
    static CLIENT: Client = Client::untracked(rocket::custom(Config {
        secret_key: SecretKey::generate().expect("a secret key"),
        log_level: LogLevel::Off,
        ..Config::debug_default()
    }))
    .expect("a Rocket");
}

fuzz_target!(|data: &[u8]| {
    let Ok(raw) = std::str::from_utf8(data) else {
        return;
    };
    let names = [DEVICE_COOKIE.to_owned(), format!("__Host-{DEVICE_COOKIE}")];
    CLIENT.with(|client| {
        // `raw` as a whole `Cookie` header (split and parsed as Rocket
        // does) and as the device cookie's value: nothing decrypts.
        let mut request = client.get("/");
        for pair in raw.split(';').map(str::trim) {
            if let Ok(cookie) = Cookie::parse_encoded(pair) {
                request = request.cookie(cookie.into_owned());
            }
        }
        for name in &names {
            assert!(request.inner().cookies().get_private(name).is_none());
            let single = client
                .get("/")
                .cookie(Cookie::new(name.clone(), raw.to_owned()));
            assert!(single.inner().cookies().get_private(name).is_none());
        }
        // `raw` as the value the jar sealed: it reads back unchanged.
        let sealed = client
            .get("/")
            .private_cookie(Cookie::new(names[0].clone(), raw.to_owned()));
        let cookie = sealed.inner().cookies().get_private(&names[0]);
        assert_eq!(cookie.as_ref().map(Cookie::value), Some(raw));
    });
    match id_of(raw) {
        Some(id) => {
            assert_eq!(id, raw);
            let hash = sha256_hex(id);
            assert_eq!(hash.len(), 64);
            assert!(hash.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')));
        }
        None => assert!(raw.is_empty()),
    }
});
