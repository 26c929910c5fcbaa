//! Remember-me, per device: a long-lived private (encrypted, authenticated)
//! cookie holding `selector:validator`, and one stored record per cookie
//! ([`remember_store`](super::remember_store)). The record names the user
//! and the session the cookie last signed in, so a cookie can be voided
//! alone (its session ended), with all the user's others (a password
//! change, two-factor turned on or off, "end others": all but the caller's
//! own), or all at once (a reset, `user end-sessions`). `users.remember_token`
//! still rotates where it always did, for hosts that share the table with
//! Laravel; Gatehouse's own check reads only the records.

use rocket::http::{Cookie, CookieJar, SameSite};
use rocket::request::Request;
use rocket::time::Duration;
use subtle::ConstantTimeEq;

use super::remember_store as store;
use crate::auth::{epoch, users};
use crate::clock::unix_now;
use crate::db::{Db, DbError};
use crate::domain::{sha256_hex, SecretToken};
use crate::shared::Shared;

/// Name of the remember-me cookie.
pub const REMEMBER_COOKIE: &str = "gatehouse_remember";

/// The remember-me cookie's name: `__Host-` prefixed when `base_url` is
/// https, as the session cookie is.
pub fn remember_cookie_name(settings: &crate::config::Settings) -> String {
    if settings.is_https() {
        format!("__Host-{REMEMBER_COOKIE}")
    } else {
        REMEMBER_COOKIE.to_owned()
    }
}

/// Characters of a selector: 128 random bits in hex.
const SELECTOR_CHARS: usize = 32;

/// A remember cookie's value taken apart.
struct Presented {
    selector: String,
    validator: String,
}

impl Presented {
    fn parse(value: &str) -> Option<Self> {
        let (selector, validator) = value.split_once(':')?;
        let hex = |s: &str| s.bytes().all(|b| b.is_ascii_hexdigit());
        (selector.len() == SELECTOR_CHARS && hex(selector) && !validator.is_empty())
            .then(|| Self {
                selector: selector.to_owned(),
                validator: validator.to_owned(),
            })
    }
}

/// A remember cookie that checked out: whom it signs in, and its selector.
pub(super) struct Recalled {
    pub user_id: i64,
    pub selector: String,
}

/// The selector of the remember cookie this browser sent, if any (whether
/// or not it is still valid).
pub fn own_selector(jar: &CookieJar<'_>, gh: &Shared) -> Option<String> {
    let cookie = jar.get_private(&remember_cookie_name(&gh.settings))?;
    Presented::parse(cookie.value()).map(|p| p.selector)
}

/// The user a valid remember cookie names, if any: its record exists, its
/// validator matches (compared in constant time) and it is younger than
/// `session.remember_days`.
pub(super) async fn recall(req: &Request<'_>, gh: &Shared) -> Result<Option<Recalled>, DbError> {
    let Some(cookie) = req
        .cookies()
        .get_private(&remember_cookie_name(&gh.settings))
    else {
        return Ok(None);
    };
    let Some(presented) = Presented::parse(cookie.value()) else {
        return Ok(None);
    };
    let Some(record) = store::find(&gh.db, &presented.selector).await? else {
        return Ok(None);
    };
    let lifetime = i64::from(gh.settings.session.remember_days) * 86_400;
    let fresh = unix_now() - record.created_at < lifetime;
    let matches = bool::from(
        sha256_hex(&presented.validator)
            .as_bytes()
            .ct_eq(record.validator_hash.as_bytes()),
    );
    Ok((fresh && matches).then_some(Recalled {
        user_id: record.user_id,
        selector: presented.selector,
    }))
}

/// The cookie of `selector` now belongs to the session stored under
/// `session_id` (it signed that session in, or the session got a new id).
pub async fn follow_session(db: &Db, selector: &str, session_id: &str) -> Result<bool, DbError> {
    store::link(db, selector, session_id, unix_now()).await
}

/// Issues a remember cookie for `user_id`, signed in on the session stored
/// under `session_id`; a remember cookie this browser had before is voided.
pub async fn remember(
    jar: &CookieJar<'_>,
    gh: &Shared,
    user_id: i64,
    session_id: &str,
) -> Result<(), DbError> {
    if let Some(old) = own_selector(jar, gh) {
        store::delete(&gh.db, &old).await?;
    }
    let selector = SecretToken::generate().expose()[..SELECTOR_CHARS].to_owned();
    let validator = SecretToken::generate();
    store::insert(
        &gh.db,
        &selector,
        &validator.digest(),
        user_id,
        session_id,
        unix_now(),
    )
    .await?;
    let cookie = Cookie::build((
        remember_cookie_name(&gh.settings),
        format!("{selector}:{}", validator.expose()),
    ))
    .http_only(true)
    .same_site(SameSite::Lax)
    .path("/")
    .secure(gh.settings.is_https())
    .max_age(Duration::days(i64::from(gh.settings.session.remember_days)));
    jar.add_private(cookie);
    Ok(())
}

/// Voids this browser's remember cookie and drops it from the browser.
pub async fn forget(jar: &CookieJar<'_>, gh: &Shared) -> Result<(), DbError> {
    if let Some(selector) = own_selector(jar, gh) {
        store::delete(&gh.db, &selector).await?;
    }
    jar.remove_private(
        Cookie::build(remember_cookie_name(&gh.settings))
            .path("/")
            .secure(gh.settings.is_https()),
    );
    Ok(())
}

/// Voids the remember cookie of the device whose session is stored under
/// `session_id` (that session is being ended).
pub async fn void_session(db: &Db, session_id: &str) -> Result<u64, DbError> {
    store::delete_for_session(db, session_id).await
}

/// Voids every remember cookie of `user_id` but `keep` (the caller's own,
/// when it has one).
pub async fn void_others(db: &Db, user_id: i64, keep: Option<&str>) -> Result<u64, DbError> {
    match keep {
        Some(keep) => store::delete_others(db, user_id, keep).await,
        None => store::delete_for_user(db, user_id).await,
    }
}

/// Signs a user out everywhere: every session row of theirs is deleted,
/// every remember cookie voided, `remember_token` rotated and the credential
/// epoch moved on (no sign-in waiting for its second factor survives).
/// Answers how many sessions ended.
pub async fn end_every_session(db: &Db, user_id: i64) -> Result<u64, DbError> {
    store::delete_for_user(db, user_id).await?;
    users::rotate_remember_token(db, user_id).await?;
    epoch::advance(db, user_id).await?;
    super::store::delete_for_user(db, user_id).await
}

/// Removes the records of cookies older than `remember_days`.
pub async fn sweep(db: &Db, remember_days: u32) -> Result<u64, DbError> {
    store::sweep(db, unix_now() - i64::from(remember_days) * 86_400).await
}
