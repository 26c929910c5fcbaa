//! Feeds arbitrary remember-me cookies to the path a browser's one takes:
//! the `Cookie` header's pairs as Rocket reads them, the private jar's
//! decryption, then `Presented::parse`. It must never panic; no value the
//! jar did not seal reads back; a value it sealed reads back unchanged;
//! and what `parse` accepts is exactly 32 hex digits, `:`, and a validator
//! that is not empty, which join back to the value.
#![no_main]

use gatehouse::session::Presented;
use libfuzzer_sys::fuzz_target;
use rocket::config::{Config, LogLevel, SecretKey};
use rocket::http::Cookie;
use rocket::local::blocking::Client;

const NAMES: [&str; 2] = ["gatehouse_remember", "__Host-gatehouse_remember"];

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
    CLIENT.with(|client| {
        hostile(client, raw);
        sealed(client, raw);
    });
    check_parse(raw);
});

/// `raw` as a whole `Cookie` header (split and parsed as Rocket does) and
/// as the remember cookie's value: nothing the jar did not seal decrypts.
fn hostile(client: &Client, raw: &str) {
    let mut request = client.get("/");
    for pair in raw.split(';').map(str::trim) {
        if let Ok(cookie) = Cookie::parse_encoded(pair) {
            request = request.cookie(cookie.into_owned());
        }
    }
    for name in NAMES {
        assert!(request.inner().cookies().get_private(name).is_none());
        let request = client.get("/").cookie(Cookie::new(name, raw.to_owned()));
        assert!(request.inner().cookies().get_private(name).is_none());
    }
}

/// `raw` as the value the jar sealed: it reads back unchanged and parses
/// as a value of its own.
fn sealed(client: &Client, raw: &str) {
    let request = client
        .get("/")
        .private_cookie(Cookie::new(NAMES[0], raw.to_owned()));
    let cookie = request.inner().cookies().get_private(NAMES[0]);
    assert_eq!(cookie.as_ref().map(Cookie::value), Some(raw));
}

fn check_parse(raw: &str) {
    match Presented::parse(raw) {
        Some(presented) => {
            assert_eq!(presented.selector.len(), 32);
            assert!(presented.selector.bytes().all(|b| b.is_ascii_hexdigit()));
            assert!(!presented.validator.is_empty());
            assert_eq!(
                format!("{}:{}", presented.selector, presented.validator),
                raw
            );
        }
        None => {
            let good = raw.split_once(':').is_some_and(|(selector, validator)| {
                selector.len() == 32
                    && selector.bytes().all(|b| b.is_ascii_hexdigit())
                    && !validator.is_empty()
            });
            assert!(!good, "refused: {raw:?}");
        }
    }
}
