//! The end of every sign-in — by password, with or without a second
//! factor, or by passkey — in one place: [`finish`] signs the proven user
//! in under a new session id, issues the remember-me cookie when asked,
//! records the event, tells the owner of a new device and dispenses the
//! next intent (`password_change` first for a password found breached);
//! [`after_second_step`] first completes what a pending sign-in left to do.

use rocket::serde::json::Json;
use serde_json::json;

use super::notify::{new_device, notify, Recipient};
use super::pending::Pending;
use crate::auth::second_step::Passed;
use crate::auth::users::{self, UserRecord};
use crate::error::AuthError;
use crate::events::{AuthEvent, Origin};
use crate::i18n::Language;
use crate::intents::{Intent, PasswordChangeReason};
use crate::reply::Reply;
use crate::session::device::{self, Device};
use crate::session::{password_change, reauth, remember, AuthUser, Session, SignedInBy};
use crate::state::GatehouseState;
use rocket::http::CookieJar;

/// How a sign-in was proven.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Method {
    /// The password (and any second factor).
    Password,
    /// A passkey alone, user verified: both factors.
    Passkey,
    /// The OpenID provider of this name (and any second factor).
    Oidc(String),
}

/// Notes that the password a sign-in of `user` just proved is in the
/// breached-password file: the user is marked (the event is recorded when
/// the mark is new), and this sign-in, like every later one until a new
/// password is set, ends in `password_change`.
pub async fn note_breached(
    gh: &GatehouseState,
    user: &mut UserRecord,
    from: &Origin,
) -> Result<(), AuthError> {
    if users::mark_breached(&gh.db, user.id).await? {
        let event = AuthEvent::BreachedPassword { user_id: user.id };
        gh.events.emit(event, from).await;
    }
    user.breached = true;
    Ok(())
}

/// A sign-in whose factors all passed, to be completed.
pub struct Proven {
    /// The account.
    pub user: UserRecord,
    /// Whether the sign-in asked to be remembered.
    pub remember: bool,
    /// How it was proven.
    pub method: Method,
    /// Whether a screen posted it (answered with a 303).
    pub is_form: bool,
    /// The passkey (`gatehouse_passkeys.id`) that proved it, if one did:
    /// removing that passkey ends the session.
    pub passkey_id: Option<i64>,
}

impl Proven {
    /// A password, and any second factor, proved `user`.
    pub fn password(user: UserRecord, remember: bool, is_form: bool) -> Self {
        Self {
            user,
            remember,
            method: Method::Password,
            is_form,
            passkey_id: None,
        }
    }

    /// `user`'s second factor completed a sign-in whose first was the
    /// password, or the OpenID provider `provider`.
    pub fn after_second_step(
        user: UserRecord,
        remember: bool,
        is_form: bool,
        provider: Option<String>,
    ) -> Self {
        Self {
            user,
            remember,
            method: provider.map_or(Method::Password, Method::Oidc),
            is_form,
            passkey_id: None,
        }
    }

    /// The OpenID provider `provider` proved `user` (its callback is a
    /// browser's `GET`, answered with a 303).
    pub fn oidc(user: UserRecord, remember: bool, provider: &str) -> Self {
        Self {
            user,
            remember,
            method: Method::Oidc(provider.to_owned()),
            is_form: true,
            passkey_id: None,
        }
    }

    /// The passkey `passkey_id` alone proved `user` (its script posts
    /// JSON).
    pub fn passkey(user: UserRecord, remember: bool, passkey_id: i64) -> Self {
        Self {
            user,
            remember,
            method: Method::Passkey,
            is_form: false,
            passkey_id: Some(passkey_id),
        }
    }
}

/// The request a sign-in completes in.
pub struct Completing<'a, 'r> {
    /// Rocket's cookies of the request.
    pub jar: &'a CookieJar<'r>,
    /// The session to sign in (under a new id).
    pub session: &'a Session,
    /// The client.
    pub from: &'a Origin,
    /// The request's language (of the new-device mail).
    pub language: Language,
}

impl<'a, 'r> Completing<'a, 'r> {
    /// The request of `jar`, `session`, `from` and `language`.
    pub fn new(
        jar: &'a CookieJar<'r>,
        session: &'a Session,
        from: &'a Origin,
        language: Language,
    ) -> Self {
        Self {
            jar,
            session,
            from,
            language,
        }
    }
}

/// Signs `proven.user` in on this session (a new id), issues the remember
/// cookie when asked, tells the owner of a sign-in from a new device, and
/// answers the next intent, however the sign-in was proven: for a user whose
/// password is marked breached, `password_change` first.
pub async fn finish(
    gh: &GatehouseState,
    at: Completing<'_, '_>,
    proven: Proven,
) -> Result<Reply, AuthError> {
    let Proven {
        user,
        remember: remember_me,
        method,
        is_form,
        passkey_id,
    } = proven;
    let session = at.session;
    let breached = user.breached;
    session.sign_in(user.id);
    session.signed_in_by(SignedInBy {
        remember: None,
        passkey: passkey_id,
    });
    // A sign-in proves who the user is: sudo mode's window opens.
    reauth::proven(session, user.id);
    if remember_me {
        // Laravel's column, for hosts that share the table.
        users::ensure_remember_token(&gh.db, user.id).await?;
        remember(at.jar, gh, user.id, session).await?;
    }
    let login = match method {
        Method::Password => AuthEvent::Login {
            user_id: user.id,
            remember: remember_me,
        },
        Method::Passkey => AuthEvent::PasskeyLogin {
            user_id: user.id,
            remember: remember_me,
        },
        Method::Oidc(provider) => AuthEvent::OidcLogin {
            user_id: user.id,
            remember: remember_me,
            provider,
        },
    };
    gh.events.emit(login, at.from).await;
    match device::signed_in_on(at.jar, gh, user.id).await {
        Ok(Device::New) => {
            let to = Recipient {
                name: &user.name,
                email: &user.email,
            };
            notify(gh, to, at.language, &new_device(at.from));
        }
        Ok(Device::Known) => {}
        Err(e) => tracing::warn!(error = %e, "sign-in device not recorded"),
    }
    let auth_user = AuthUser {
        id: user.id,
        name: user.name,
        email: user.email,
    };
    // A password found breached is changed before anything else: Gatehouse
    // dispenses that itself, before the host's dispenser is asked.
    let next = if breached {
        password_change::require(session);
        Intent::PasswordChange {
            reason: PasswordChangeReason::Breached,
        }
    } else {
        gh.dispenser
            .dispense(&auth_user, &gh.intent_context(session.clone()))
            .await
    };
    if is_form {
        return Ok(Reply::screen(next.screen_url()));
    }
    Ok(Reply::json(
        json!({"message": "login_success", "next": next.envelope()}),
    ))
}

/// Completes `pending`, whose second step `passed` (the pending sign-in is
/// already ended): a spent recovery code is recorded, a password the first
/// step found breached marks the user only now, and [`finish`] signs them
/// in. A recovery code of an earlier, weaker set asks the user to renew the
/// set (a flash, and `renew_recovery_codes` in JSON).
pub async fn after_second_step(
    gh: &GatehouseState,
    at: Completing<'_, '_>,
    pending: Pending,
    passed: Passed,
    is_form: bool,
) -> Result<Reply, AuthError> {
    let user_id = pending.user_id;
    if passed.recovery_code {
        let used = AuthEvent::RecoveryCodeUsed { user_id };
        gh.events.emit(used, at.from).await;
    }
    let mut user = users::find_by_id(&gh.db, user_id)
        .await?
        .ok_or(AuthError::Unauthenticated)?;
    if pending.breached {
        note_breached(gh, &mut user, at.from).await?;
    }
    let session = at.session;
    let proven = Proven::after_second_step(user, pending.remember, is_form, pending.provider);
    let reply = finish(gh, at, proven).await?;
    if !passed.renew_recovery_codes {
        return Ok(reply);
    }
    // A code of an earlier, weaker set: the user is asked to renew them.
    session.set_flash(json!({"message": "recovery_codes_renew"}));
    Ok(match reply {
        Reply::Json(Json(mut body)) => {
            body["renew_recovery_codes"] = json!(true);
            Reply::json(body)
        }
        other => other,
    })
}
