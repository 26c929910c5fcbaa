//! Two-factor sign-in: turning it on (`POST /auth/two-factor`, then
//! `/confirm` with a first code), new recovery codes, turning it off, and
//! the second step of signing in (`GET /login/two-factor`,
//! `POST /auth/two-factor-challenge`).

use rocket::response::Redirect;
use rocket::serde::json::Json;
use rocket::{get, post, Responder, State};
use serde_json::{json, Value};

use super::confirm::Confirmed;
use super::posting::GuestRequest;
use super::posting::{AccountRequest, Keeping};
use super::account;
use super::ceremony::Ceremony;
use super::passkeys;
use super::sign_in::{finish, note_breached, Completing, Proven};
use super::notify::{notify, recipient};
use super::pending;
use crate::auth::second_step::{
    Answer, Failure, Reserved, Verdict, CLOSED_RETRY_SECONDS, DAY_LIMIT, IN_ROW_LIMIT,
};
use crate::auth::passkeys::Assertion;
use crate::auth::two_factor::RecoveryCodes;
use crate::auth::users;
use crate::body::{BodyError, Input};
use crate::error::{AuthError, FieldErrors};
use crate::events::{AuthEvent, Origin};
use crate::i18n::Language;
use crate::mail::{mailbox, Notice};
use crate::reply::Reply;
use crate::screens::{Page, Posted, Screen, View};
use crate::security::SameOrigin;
use crate::db::Tx;
use crate::session::{AuthUser, Guest, Session};
use crate::state::GatehouseState;

/// A JSON or redirect answer, or a page rendered in place (what must never
/// wait in the session: recovery codes).
#[derive(Responder)]
#[allow(clippy::large_enum_variant)]
pub enum Shown {
    /// JSON, or a 303.
    Reply(Reply),
    /// A rendered screen (200).
    Page(Page),
}

/// The recovery codes as a JSON array.
fn codes_json(codes: &RecoveryCodes) -> Value {
    json!(codes.expose())
}

/// `POST /auth/two-factor` `{password}`: a new secret, not active until
/// confirmed. This answer is the only one that shows it: JSON, or the
/// account screen rendered in place for a form post (never kept in the
/// session, never shown again by `GET /account`).
#[post("/auth/two-factor", data = "<body>")]
pub async fn enable(
    caller: AccountRequest<'_>,
    gh: &State<GatehouseState>,
    body: Result<Confirmed, AuthError>,
) -> Posted<Shown> {
    let AccountRequest {
        who: user,
        session,
        ..
    } = &caller;
    let language = caller.language;
    let answer = async {
        let input = body?.into_input();
        let enrolment = gh
            .two_factor
            .enrol(user.id, &user.email)
            .await?;
        let shown = json!({
            "secret": enrolment.secret_base32(),
            "otpauth_url": enrolment.otpauth_url(),
            "qr_svg": enrolment.qr_svg(),
        });
        if !input.is_form() {
            return Ok(Shown::Reply(Reply::json(shown)));
        }
        let view = View {
            flash: Some(json!({"message": "two_factor_pending"})),
            extra: vec![("enrolment", shown)],
            ..View::default()
        };
        account::render(gh, user, session, language, view)
            .await
            .map(Shown::Page)
    }
    .await;
    Posted(answer)
}

/// Reads the one `code` field.
fn code_field(input: &Input, name: &str) -> Result<String, AuthError> {
    let mut errors = FieldErrors::new();
    match input.required_text(name, &mut errors) {
        Some(code) if errors.is_empty() => Ok(code),
        _ => Err(AuthError::Validation(errors)),
    }
}

/// `POST /auth/two-factor/confirm` `{code}`: turns it on and shows the
/// recovery codes once. The code is reserved on the user's second-factor
/// count before it is checked (429 once the window is spent), and a wrong
/// one counts toward the second-factor lockout. Turning it on commits with
/// every remember cookie of the user void, the sessions they recalled ended
/// and pending sign-ins dropped; this browser gets a new remember cookie if
/// it had one.
#[post("/auth/two-factor/confirm", data = "<body>")]
pub async fn confirm(
    caller: AccountRequest<'_>,
    gh: &State<GatehouseState>,
    body: Result<Input, BodyError>,
) -> Posted<Shown> {
    let AccountRequest {
        who: user,
        session,
        from,
        ..
    } = &caller;
    let language = caller.language;
    let answer = async {
        let input = body?;
        let code = code_field(&input, "code")?;
        let check = match gh.throttles.second_factor.reserve(user.id).await? {
            Reserved::Check(check) => check,
            Reserved::Refused { retry_after } => return Err(AuthError::Throttled { retry_after }),
        };
        let code = match check.enrolment_code(&gh.two_factor, &code).await? {
            Ok(code) => code,
            Err(failure) => return Err(told(gh, failure, user.id, from, language).await?),
        };
        let turn_on = async |tx: &mut Tx| gh.two_factor.activate(tx, code).await;
        let (codes, _) = caller
            .change_credentials(gh, Keeping::PasswordSessions, turn_on)
            .await?;
        gh.events.emit(AuthEvent::TwoFactorEnabled { user_id: user.id }, from).await;
        notify(gh, recipient(user), language, &Notice::TwoFactorOn);
        shown_codes(gh, user, session, language, &input, "two_factor_enabled", &codes).await
    }
    .await;
    Posted(answer)
}

/// A wrong second-factor answer, counted: the `two_factor_failed` event,
/// and the lockout's event and mail when it locked or closed the second
/// step. Answers the error to give, 429 once no further answer is checked.
pub(super) async fn told(
    gh: &GatehouseState,
    failure: Failure,
    user_id: i64,
    from: &Origin,
    language: Language,
) -> Result<AuthError, AuthError> {
    gh.events
        .emit(AuthEvent::TwoFactorFailed { user_id }, from)
        .await;
    let spent = match failure {
        Failure::Counted { spent } => spent,
        Failure::LockedOut { retry_after } => {
            locked_out(gh, user_id, from, language, Lockout::Hour).await?;
            Some(retry_after)
        }
        Failure::Closed => {
            locked_out(gh, user_id, from, language, Lockout::UntilReset).await?;
            Some(CLOSED_RETRY_SECONDS)
        }
    };
    Ok(match spent {
        Some(retry_after) => AuthError::Throttled { retry_after },
        None => AuthError::TwoFactorFailed,
    })
}

/// `POST /auth/two-factor/recovery-codes` `{password}`: a new set; the old
/// one stops working, in one transaction with every remember cookie of the
/// user, the sessions they recalled and pending sign-ins; this browser gets
/// a new remember cookie if it had one.
#[post("/auth/two-factor/recovery-codes", data = "<body>")]
pub async fn recovery_codes(
    caller: AccountRequest<'_>,
    gh: &State<GatehouseState>,
    body: Result<Confirmed, AuthError>,
) -> Posted<Shown> {
    let AccountRequest {
        who: user,
        session,
        ..
    } = &caller;
    let language = caller.language;
    let answer = async {
        let input = body?.into_input();
        let renew = async |tx: &mut Tx| gh.two_factor.new_recovery_codes_in(tx, user.id).await;
        let (codes, _) = caller
            .change_credentials(gh, Keeping::PasswordSessions, renew)
            .await?;
        notify(gh, recipient(user), language, &Notice::RecoveryCodesRenewed);
        shown_codes(gh, user, session, language, &input, "recovery_codes_renewed", &codes).await
    }
    .await;
    Posted(answer)
}

/// New recovery codes: JSON with them, or the account screen showing them,
/// rendered in place so that they are never kept in the session.
async fn shown_codes(
    gh: &GatehouseState,
    user: &AuthUser,
    session: &Session,
    language: Language,
    input: &Input,
    message: &'static str,
    codes: &RecoveryCodes,
) -> Result<Shown, AuthError> {
    if !input.is_form() {
        return Ok(Shown::Reply(Reply::json(
            json!({"message": message, "recovery_codes": codes_json(codes)}),
        )));
    }
    let view = View {
        flash: Some(json!({"message": message})),
        extra: vec![("recovery_codes", codes_json(codes))],
        ..View::default()
    };
    account::render(gh, user, session, language, view)
        .await
        .map(Shown::Page)
}

/// `POST /auth/two-factor/disable` `{password}`: in one transaction with
/// every remember cookie of the user void, the sessions they recalled ended
/// and pending sign-ins dropped; this browser gets a new remember cookie if
/// it had one.
#[post("/auth/two-factor/disable", data = "<body>")]
pub async fn disable(
    caller: AccountRequest<'_>,
    gh: &State<GatehouseState>,
    body: Result<Confirmed, AuthError>,
) -> Posted<Reply> {
    let AccountRequest {
        who: user,
        session,
        from,
        ..
    } = &caller;
    let language = caller.language;
    let answer = async {
        let input = body?.into_input();
        let turn_off = async |tx: &mut Tx| gh.two_factor.disable_in(tx, user.id).await;
        caller
            .change_credentials(gh, Keeping::PasswordSessions, turn_off)
            .await?;
        gh.events.emit(AuthEvent::TwoFactorDisabled { user_id: user.id }, from).await;
        notify(gh, recipient(user), language, &Notice::TwoFactorOff);
        let body = json!({"message": "two_factor_disabled"});
        if input.is_form() {
            session.set_flash(body);
            return Ok(Reply::screen(Screen::Account.path()));
        }
        Ok(Reply::json(body))
    }
    .await;
    Posted(answer)
}

/// `GET /login/two-factor`: the code screen of a pending sign-in; without
/// one, back to `/login`.
#[get("/login/two-factor")]
pub async fn screen(
    _guest: Guest,
    session: Session,
    language: Language,
    gh: &State<GatehouseState>,
) -> Result<Result<Page, Redirect>, AuthError> {
    if pending::current(&gh.db, &session).await?.is_none() {
        return Ok(Err(Redirect::to(Screen::Login.path())));
    }
    let view = View {
        flash: session.take_flash(),
        ..View::default()
    };
    gh.screens
        .render(Screen::TwoFactor, language, view)
        .map(Ok)
}

/// `POST /auth/two-factor-challenge` `{code}`, `{recovery_code}` or `{credential}`:
/// completes a pending sign-in exactly as a sign-in without a second factor
/// ends. A code is checked only after it reserved a slot of the user's
/// limit; once the window is spent (or the day's failures locked the second
/// step) the pending sign-in is dropped (429).
#[post("/auth/two-factor-challenge", data = "<body>")]
pub async fn challenge(
    guest: GuestRequest<'_>,
    gh: &State<GatehouseState>,
    body: Result<Input, BodyError>,
) -> Posted<Reply> {
    let GuestRequest {
        session,
        from,
        jar,
        ..
    } = &guest;
    let language = guest.language;
    let answer = async {
        let input = body?;
        let Some(pending) = pending::current(&gh.db, session).await? else {
            if input.is_form() {
                session.set_flash(json!({"message": "unauthenticated"}));
                return Ok(Reply::screen(Screen::Login.path()));
            }
            return Err(AuthError::Unauthenticated);
        };
        let mut ignored = FieldErrors::new();
        let credential = input.object("credential", &mut ignored);
        let recovery = input.text("recovery_code", &mut ignored);
        let code = match (&credential, &recovery) {
            (None, None) => Some(code_field(&input, "code")?),
            _ => None,
        };
        let check = match gh.throttles.second_factor.reserve(pending.user_id).await? {
            Reserved::Check(check) => check,
            Reserved::Refused { retry_after } => {
                pending::end(session);
                return Err(AuthError::Throttled { retry_after });
            }
        };
        let answer = match (&credential, &recovery, &code) {
            (Some(credential), _, _) => {
                match Ceremony::SecondStep.take::<Assertion>(gh, session).await? {
                    Some(assertion) => Answer::Passkey {
                        credential,
                        assertion,
                    },
                    None => Answer::Unchallenged,
                }
            }
            (None, Some(recovery), _) => Answer::RecoveryCode(recovery),
            (None, None, Some(code)) => Answer::Code(code),
            (None, None, None) => Answer::Unchallenged,
        };
        let verdict = check
            .answer(&gh.two_factor, &gh.passkeys, pending.epoch, answer)
            .await?;
        let renew = match verdict {
            Verdict::Passed {
                renew_recovery_codes,
            } => renew_recovery_codes,
            Verdict::Refused {
                failure,
                counter_went_back,
            } => {
                if let Some(passkey_id) = counter_went_back {
                    let event = AuthEvent::PasskeyRefused {
                        user_id: pending.user_id,
                        passkey_id,
                    };
                    gh.events.emit(event, from).await;
                }
                let error = told(gh, failure, pending.user_id, from, language).await?;
                if matches!(error, AuthError::Throttled { .. }) {
                    pending::end(session);
                    return Err(error);
                }
                return Err(match credential {
                    Some(_) => AuthError::PasskeyFailed,
                    None => error,
                });
            }
        };
        pending::end(session);
        if recovery.is_some() {
            gh.events.emit(AuthEvent::RecoveryCodeUsed {
                user_id: pending.user_id,
            }, from).await;
        }
        let mut user = users::find_by_id(&gh.db, pending.user_id)
            .await?
            .ok_or(AuthError::Unauthenticated)?;
        if pending.breached {
            note_breached(gh, &mut user, from).await?;
        }
        let at = Completing::new(jar, session, from, language);
        let proven =
            Proven::after_second_step(user, pending.remember, input.is_form(), pending.provider);
        let reply = finish(gh, at, proven).await?;
        if !renew {
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
    .await;
    Posted(answer)
}

/// `POST /auth/two-factor/passkey-options`: request options for answering
/// the pending sign-in's second step with one of the pending user's own
/// passkeys (404 while passkeys are off or when they have none).
#[post("/auth/two-factor/passkey-options")]
pub async fn passkey_options(
    _origin: SameOrigin,
    _guest: Guest,
    session: Session,
    gh: &State<GatehouseState>,
) -> Result<Json<Value>, AuthError> {
    let Some(pending) = pending::current(&gh.db, &session).await? else {
        return Err(AuthError::Unauthenticated);
    };
    let (options, assertion) = gh
        .passkeys
        .start_second_step(pending.user_id)
        .await?
        .ok_or(AuthError::NotFound)?;
    Ceremony::SecondStep.keep(&session, &options, &assertion)?;
    Ok(Json(passkeys::public_key(options)))
}

/// How long a lockout keeps the second step closed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lockout {
    /// The day's limit: an hour.
    Hour,
    /// Failures in a row: until the password is reset by mail.
    UntilReset,
}

/// The day's limit of wrong codes was reached, or the limit in a row: the
/// `lockout` event and the mail to the user, who learns that their
/// password is known (and, closed until a reset, how to open it again).
async fn locked_out(
    gh: &GatehouseState,
    user_id: i64,
    from: &Origin,
    language: Language,
    lockout: Lockout,
) -> Result<(), AuthError> {
    gh.events
        .emit(AuthEvent::SecondFactorLockout { user_id }, from)
        .await;
    let Some(user) = users::find_by_id(&gh.db, user_id).await? else {
        return Ok(());
    };
    let forgot = gh.settings.absolute(Screen::ForgotPassword.path());
    let sent = gh
        .composer
        .second_factor_lockout(
            language,
            &user.name,
            match lockout {
                Lockout::Hour => DAY_LIMIT,
                Lockout::UntilReset => IN_ROW_LIMIT,
            },
            lockout == Lockout::UntilReset,
            &forgot,
        )
        .and_then(|mail| mailbox(&user.name, &user.email).map(|to| gh.mailer.send(to, mail)));
    if let Err(e) = sent {
        tracing::error!(error = %e, "second-factor lockout mail not sent");
    }
    Ok(())
}
