//! Remember-me, per device: a long-lived private (encrypted, authenticated)
//! cookie holding `selector:validator`, and one stored record per cookie
//! ([`remember_store`](super::remember_store)).
//!
//! A cookie is good for one recall: a recall (a browser without a live
//! session presenting it) signs in under a new session id and answers with
//! a new validator for the same record, swapped in by one conditional
//! statement so that two recalls cannot both rotate. For
//! `session.remember_grace_seconds` the replaced validator still signs in,
//! from the rotating recall's client and device only (a browser's own
//! parallel requests), without a new cookie. Any earlier validator presented
//! otherwise is a copy: every cookie of the user is void, every session the
//! record signed in ends, and the owner hears of it ([`Recall::Theft`]).
//!
//! A change to how the user signs in voids every record of theirs
//! ([`void_sign_ins`]); `users.remember_token` still rotates where it always
//! did, for hosts that share the table with Laravel.

use rocket::http::{Cookie, CookieJar, SameSite};
use rocket::request::Request;
use rocket::time::Duration;
use subtle::ConstantTimeEq;

use super::remember_store::{self as store, Remembered, Rotation};
use super::bound::Binding;
use super::Session;
use super::store::Ending;
use super::{device, store as sessions};
use crate::auth::{epoch, users};
use crate::clock::unix_now;
use crate::db::{Db, DbError, Tx};
use crate::domain::{sha256_hex, SecretToken};
use crate::security::{ClientBlock, ClientIp};
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
pub struct Presented {
    /// The record's selector: 32 hex digits.
    pub selector: String,
    /// The validator, whose SHA-256 the record keeps: anything not empty.
    pub validator: String,
}

impl Presented {
    /// Takes a (decrypted) cookie value apart: `None` unless it is a
    /// selector and a validator joined by the first `:`. Public for the
    /// fuzz target `remember_cookie`.
    pub fn parse(value: &str) -> Option<Self> {
        let (selector, validator) = value.split_once(':')?;
        let hex = |s: &str| s.bytes().all(|b| b.is_ascii_hexdigit());
        (selector.len() == SELECTOR_CHARS && hex(selector) && !validator.is_empty())
            .then(|| Self {
                selector: selector.to_owned(),
                validator: validator.to_owned(),
            })
    }
}

/// What a remember cookie presented by a browser without a session did.
pub(super) enum Recall {
    /// Nothing: no cookie, or one that signs nobody in (it is removed).
    Nothing,
    /// It signs `user_id` in: the record's validator was rotated and this
    /// browser got the new one (`rotated`), or this is one of the rotating
    /// browser's parallel requests within the grace.
    SignIn {
        /// The user.
        user_id: i64,
        /// The record's selector (the session keeps it).
        selector: String,
        /// This recall rotated the record.
        rotated: bool,
        /// The record's device binding, which the new session keeps.
        binding: Option<Binding>,
    },
    /// A replaced validator, presented after the grace or by another
    /// browser: a copy. Every cookie of the user is void and every session
    /// the record signed in ended; the request stays a guest.
    Theft {
        /// The owner.
        user_id: i64,
    },
}

/// The selector of the remember cookie this browser sent, if any (whether
/// or not it is still valid).
pub fn own_selector(jar: &CookieJar<'_>, gh: &Shared) -> Option<String> {
    let cookie = jar.get_private(&remember_cookie_name(&gh.settings))?;
    Presented::parse(cookie.value()).map(|p| p.selector)
}

/// The device binding of the remember-me record this browser's cookie
/// names, if it is bound (whether or not its validator is still good).
pub async fn own_binding(jar: &CookieJar<'_>, gh: &Shared) -> Result<Option<Binding>, DbError> {
    let Some(selector) = own_selector(jar, gh) else {
        return Ok(None);
    };
    Ok(store::find(&gh.db, &selector).await?.and_then(|r| r.binding))
}

/// Whether `a` and `b` (hashes) are equal, compared in constant time.
fn same(a: &str, b: &str) -> bool {
    bool::from(a.as_bytes().ct_eq(b.as_bytes()))
}

/// Checks the remember cookie of `req` (a browser without a live session)
/// and rotates it: see the module's documentation. A record bound to a
/// device key recalls only when `proven` names its DBSC session (a refresh
/// proven by that key); otherwise it is left as it is and recalls nothing.
pub(super) async fn recall(
    req: &Request<'_>,
    gh: &Shared,
    proven: Option<&str>,
) -> Result<Recall, DbError> {
    let jar = req.cookies();
    let Some(cookie) = jar.get_private(&remember_cookie_name(&gh.settings)) else {
        return Ok(Recall::Nothing);
    };
    let Some(presented) = Presented::parse(cookie.value()) else {
        drop_cookie(jar, gh);
        return Ok(Recall::Nothing);
    };
    let presented_hash = sha256_hex(&presented.validator);
    let now = unix_now();
    let rotation = Rotation {
        at: now,
        client: ClientBlock::from(ClientIp::of(req, &gh.settings).0).to_string(),
        device: device::presented(jar, gh).unwrap_or_default(),
    };
    // A second look only when another recall rotated the record between
    // this one's read and its swap.
    for _ in 0..2 {
        let Some(record) = store::find(&gh.db, &presented.selector).await? else {
            drop_cookie(jar, gh);
            return Ok(Recall::Nothing);
        };
        if let Some(binding) = &record.binding {
            if proven != Some(binding.id.as_str()) {
                return Ok(Recall::Nothing);
            }
        }
        let lifetime = i64::from(gh.settings.session.remember_days) * 86_400;
        let left = lifetime - (now - record.created_at);
        if left <= 0 {
            drop_cookie(jar, gh);
            return Ok(Recall::Nothing);
        }
        if same(&presented_hash, &record.validator_hash) {
            let validator = SecretToken::generate();
            let swapped = store::rotate(
                &gh.db,
                &presented.selector,
                &record,
                &validator.digest(),
                &rotation,
            )
            .await?;
            if !swapped {
                continue;
            }
            set_cookie(jar, gh, &presented.selector, validator.expose(), left);
            return Ok(Recall::SignIn {
                user_id: record.user_id,
                selector: presented.selector,
                rotated: true,
                binding: record.binding,
            });
        }
        let Some(at) = record
            .replaced
            .iter()
            .position(|replaced| same(&presented_hash, replaced))
        else {
            // Not a validator this record ever had.
            drop_cookie(jar, gh);
            return Ok(Recall::Nothing);
        };
        if at + 1 == record.replaced.len() && within_grace(gh, &record, &rotation) {
            return Ok(Recall::SignIn {
                user_id: record.user_id,
                selector: presented.selector,
                rotated: false,
                binding: record.binding,
            });
        }
        drop_cookie(jar, gh);
        return theft(&gh.db, &presented.selector, &record).await;
    }
    Ok(Recall::Nothing)
}

/// Whether the latest replaced validator of `record`, presented by
/// `now`'s recall, is one of the rotating browser's parallel requests:
/// within the grace, from its client (its /64) and its device cookie.
fn within_grace(gh: &Shared, record: &Remembered, now: &Rotation) -> bool {
    let grace = i64::from(gh.settings.session.remember_grace_seconds);
    record.rotation.as_ref().is_some_and(|rotated| {
        now.at - rotated.at < grace
            && same(&now.client, &rotated.client)
            && same(&now.device, &rotated.device)
    })
}

/// A copy of the record of `selector` was presented: every remember
/// cookie of its user is void and every session the record signed in ends,
/// in one transaction. Reported once: a copy presented after the record
/// was voided finds nothing.
async fn theft(db: &Db, selector: &str, record: &Remembered) -> Result<Recall, DbError> {
    let mut tx = Tx::begin(db).await?;
    if !store::delete_in(&mut tx, selector).await? {
        tx.rollback().await?;
        return Ok(Recall::Nothing);
    }
    sessions::end_recalled_in(&mut tx, selector, record.session_id.as_deref()).await?;
    store::delete_for_user_in(&mut tx, record.user_id).await?;
    tx.commit().await?;
    Ok(Recall::Theft {
        user_id: record.user_id,
    })
}

/// Sets the remember cookie `selector:validator`, good for `seconds`.
fn set_cookie(jar: &CookieJar<'_>, gh: &Shared, selector: &str, validator: &str, seconds: i64) {
    let cookie = Cookie::build((
        remember_cookie_name(&gh.settings),
        format!("{selector}:{validator}"),
    ))
    .http_only(true)
    .same_site(SameSite::Lax)
    .path("/")
    .secure(gh.settings.is_https())
    .max_age(Duration::seconds(seconds));
    jar.add_private(cookie);
}

/// Removes the remember cookie from the browser.
fn drop_cookie(jar: &CookieJar<'_>, gh: &Shared) {
    jar.remove_private(
        Cookie::build(remember_cookie_name(&gh.settings))
            .path("/")
            .secure(gh.settings.is_https()),
    );
}

/// Issues a remember cookie for `user_id`, signed in on the session stored
/// under `session_id`; a remember cookie this browser had before is voided.
pub async fn remember(
    jar: &CookieJar<'_>,
    gh: &Shared,
    user_id: i64,
    session: &Session,
) -> Result<(), DbError> {
    let session_id = session.stored_id().unwrap_or_default();
    if let Some(old) = own_selector(jar, gh) {
        store::delete(&gh.db, &old).await?;
    }
    let selector = SecretToken::generate().expose()[..SELECTOR_CHARS].to_owned();
    let validator = SecretToken::generate();
    let now = unix_now();
    let binding = session.binding();
    let digest = validator.digest();
    store::insert(&gh.db, &selector, &digest, user_id, &session_id, now, binding.as_ref()).await?;
    let lifetime = i64::from(gh.settings.session.remember_days) * 86_400;
    set_cookie(jar, gh, &selector, validator.expose(), lifetime);
    Ok(())
}

/// Voids this browser's remember cookie and drops it from the browser.
pub async fn forget(jar: &CookieJar<'_>, gh: &Shared) -> Result<(), DbError> {
    if let Some(selector) = own_selector(jar, gh) {
        store::delete(&gh.db, &selector).await?;
    }
    drop_cookie(jar, gh);
    Ok(())
}

/// Voids the remember cookie of the device whose session is stored under
/// `session_id`, recalled by the record of `recalled_by` if it was (that
/// session is being ended).
pub async fn void_session(
    db: &Db,
    session_id: &str,
    recalled_by: Option<&str>,
) -> Result<u64, DbError> {
    store::delete_for_session(db, session_id, recalled_by).await
}

/// What a change to how `user_id` signs in ends, in `tx`: the sessions
/// `ending` names, every remember cookie of the user (the caller's own
/// too: [`reissue`] gives it a new one once `tx` committed), and every
/// sign-in waiting for its second factor (the credential epoch moves on);
/// `remember_token` rotates (Laravel's column). Answers how many sessions
/// ended.
pub async fn void_sign_ins(tx: &mut Tx, user_id: i64, ending: Ending<'_>) -> Result<u64, DbError> {
    let ended = sessions::end_in(tx, user_id, ending).await?;
    store::delete_for_user_in(tx, user_id).await?;
    users::rotate_remember_token_in(tx, user_id).await?;
    epoch::advance_in(tx, user_id).await?;
    Ok(ended)
}

/// After [`void_sign_ins`]: a browser that had a remember cookie gets a new
/// one (new selector and validator), for its `session`, so that only a
/// copy of the old one stops working.
pub async fn reissue(
    jar: &CookieJar<'_>,
    gh: &Shared,
    user_id: i64,
    session: &Session,
) -> Result<(), DbError> {
    if own_selector(jar, gh).is_none() {
        return Ok(());
    }
    remember(jar, gh, user_id, session).await
}

/// Runs `change` (a new password, two-factor turned on or off, new
/// recovery codes) and [`void_sign_ins`] in one transaction: all of it
/// commits, or none of it does (a failure of `change` rolls it back).
/// Answers what `change` answered and how many sessions ended.
pub async fn credential_change<T, E: From<DbError>>(
    db: &Db,
    user_id: i64,
    ending: Ending<'_>,
    change: impl AsyncFnOnce(&mut Tx) -> Result<T, E>,
) -> Result<(T, u64), E> {
    let mut tx = Tx::begin(db).await?;
    let changed = match change(&mut tx).await {
        Ok(changed) => changed,
        Err(e) => {
            tx.rollback().await?;
            return Err(e);
        }
    };
    let ended = void_sign_ins(&mut tx, user_id, ending).await?;
    tx.commit().await?;
    Ok((changed, ended))
}

/// Signs a user out everywhere, in one transaction: every session and
/// remember cookie of theirs, and every pending sign-in. Answers how many
/// sessions ended.
pub async fn end_every_session(db: &Db, user_id: i64) -> Result<u64, DbError> {
    let nothing = async |_: &mut Tx| Ok::<_, DbError>(());
    let ((), ended) = credential_change(db, user_id, Ending::All, nothing).await?;
    Ok(ended)
}

/// Removes the records of cookies older than `remember_days`.
pub async fn sweep(db: &Db, remember_days: u32) -> Result<u64, DbError> {
    store::sweep(db, unix_now() - i64::from(remember_days) * 86_400).await
}
