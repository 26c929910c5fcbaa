//! Remember-me: a long-lived private (encrypted, authenticated) cookie holding
//! `user_id|remember_token`. Rotating `users.remember_token` (on logout and on
//! password reset) voids every such cookie at once.

use rocket::http::{Cookie, CookieJar, SameSite};
use rocket::request::Request;
use rocket::time::Duration;
use subtle::ConstantTimeEq;

use crate::auth::users;
use crate::db::{Db, DbError};
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

/// The user a valid remember cookie names, if any.
pub(super) async fn recall(req: &Request<'_>, gh: &Shared) -> Result<Option<i64>, DbError> {
    let Some(cookie) = req
        .cookies()
        .get_private(&remember_cookie_name(&gh.settings))
    else {
        return Ok(None);
    };
    let Some((id, token)) = cookie.value().split_once('|') else {
        return Ok(None);
    };
    let Ok(user_id) = id.parse::<i64>() else {
        return Ok(None);
    };
    let stored = users::remember_token(&gh.db, user_id).await?;
    Ok(stored
        .filter(|stored| {
            !stored.is_empty() && bool::from(stored.as_bytes().ct_eq(token.as_bytes()))
        })
        .map(|_| user_id))
}

/// Signs a user out everywhere: every session row of theirs is deleted and
/// `remember_token` rotated, so no remember-me cookie brings one back.
/// Answers how many sessions ended and the new token.
pub async fn end_every_session(db: &Db, user_id: i64) -> Result<(u64, String), DbError> {
    let token = users::rotate_remember_token(db, user_id).await?;
    let ended = super::store::delete_for_user(db, user_id).await?;
    Ok((ended, token))
}

/// Issues the remember cookie for `user_id`, bound to its current token.
pub fn remember(jar: &CookieJar<'_>, gh: &Shared, user_id: i64, token: &str) {
    let cookie = Cookie::build((
        remember_cookie_name(&gh.settings),
        format!("{user_id}|{token}"),
    ))
    .http_only(true)
    .same_site(SameSite::Lax)
    .path("/")
    .secure(gh.settings.is_https())
    .max_age(Duration::days(i64::from(gh.settings.session.remember_days)));
    jar.add_private(cookie);
}

/// Drops the remember cookie from the browser.
pub fn forget(jar: &CookieJar<'_>, gh: &Shared) {
    jar.remove_private(
        Cookie::build(remember_cookie_name(&gh.settings))
            .path("/")
            .secure(gh.settings.is_https()),
    );
}
