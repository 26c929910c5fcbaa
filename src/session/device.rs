//! The browser a user signs in on: a random id in the private (encrypted
//! and signed) `gatehouse_device` cookie, 400 days, one per browser and
//! shared by everyone who signs in on it. `gatehouse_devices` keeps which
//! users signed in on which device (by the id's SHA-256), so that a sign-in
//! from a device new to the account can be told to its owner.

use rocket::http::{Cookie, CookieJar, SameSite};
use rocket::time::Duration;

use crate::clock::unix_now;
use crate::db::{Db, DbError};
use crate::domain::{sha256_hex, SecretToken};
use crate::shared::Shared;

/// The device cookie's name (without the `__Host-` prefix it has under
/// https).
pub const DEVICE_COOKIE: &str = "gatehouse_device";

/// The device cookie's name: `__Host-` prefixed when `base_url` is https.
pub fn device_cookie_name(settings: &crate::config::Settings) -> String {
    if settings.is_https() {
        format!("__Host-{DEVICE_COOKIE}")
    } else {
        DEVICE_COOKIE.to_owned()
    }
}

/// The SHA-256 hex of the device cookie this browser sent, if any.
pub fn presented(jar: &CookieJar<'_>, gh: &Shared) -> Option<String> {
    let cookie = jar.get_private(&device_cookie_name(&gh.settings))?;
    id_of(cookie.value()).map(sha256_hex)
}

/// The device id a device cookie's (decrypted) value holds: the value
/// itself, unless it is empty. Both reads of the cookie go through it;
/// public for the fuzz target `device_cookie`.
pub fn id_of(value: &str) -> Option<&str> {
    (!value.is_empty()).then_some(value)
}

/// How long a browser keeps its device cookie (browsers cap cookies at 400).
const LIFETIME_DAYS: i64 = 400;

/// Whether a sign-in came from a device the account knew.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Device {
    /// The account signed in on this browser before.
    Known,
    /// The first sign-in of the account on this browser.
    New,
}

/// Records that `user_id` signed in on this browser (giving it a device
/// cookie when it has none, and renewing the cookie's lifetime) and answers
/// whether the account knew it.
pub async fn signed_in_on(
    jar: &CookieJar<'_>,
    gh: &Shared,
    user_id: i64,
) -> Result<Device, DbError> {
    let name = device_cookie_name(&gh.settings);
    let id = match jar.get_private(&name) {
        Some(cookie) if id_of(cookie.value()).is_some() => cookie.value().to_owned(),
        _ => SecretToken::generate().expose().to_owned(),
    };
    let cookie = Cookie::build((name, id.clone()))
        .http_only(true)
        .same_site(SameSite::Lax)
        .path("/")
        .secure(gh.settings.is_https())
        .max_age(Duration::days(LIFETIME_DAYS));
    jar.add_private(cookie);
    let hash = sha256_hex(&id);
    record(&gh.db, &hash, user_id, unix_now()).await
}

/// Notes the device of `device_hash` for `user_id` at `now`: [`Device::New`]
/// only for the sign-in that added the row (of two at once, one).
async fn record(db: &Db, device_hash: &str, user_id: i64, now: i64) -> Result<Device, DbError> {
    let seen = db
        .execute(
            db.query(
                "UPDATE gatehouse_devices SET last_seen_at = $1 \
                 WHERE device_hash = $2 AND user_id = $3",
            )
            .bind(now)
            .bind(device_hash.to_owned())
            .bind(user_id),
        )
        .await?;
    if seen > 0 {
        return Ok(Device::Known);
    }
    let inserted = db
        .execute(
            db.query(
                "INSERT INTO gatehouse_devices (device_hash, user_id, first_seen_at, last_seen_at) \
                 VALUES ($1, $2, $3, $4)",
            )
            .bind(device_hash.to_owned())
            .bind(user_id)
            .bind(now)
            .bind(now),
        )
        .await;
    match inserted {
        Ok(_) => Ok(Device::New),
        Err(sqlx::Error::Database(e)) if e.is_unique_violation() => Ok(Device::Known),
        Err(e) => Err(e),
    }
}

/// Forgets devices not seen since `seen_before` (Unix seconds): their
/// cookies have expired.
pub async fn sweep(db: &Db, seen_before: i64) -> Result<u64, DbError> {
    db.execute(
        db.query("DELETE FROM gatehouse_devices WHERE last_seen_at < $1")
            .bind(seen_before),
    )
    .await
}

/// The oldest `last_seen_at` a device may have and still hold its cookie.
pub fn sweep_horizon(now: i64) -> i64 {
    now - LIFETIME_DAYS * 24 * 60 * 60
}
