//! Two-factor sign-in: turning it on (`POST /auth/two-factor`, then
//! `/confirm` with a first code), new recovery codes, turning it off, and
//! the second step of signing in (`GET /login/two-factor`,
//! `POST /auth/two-factor-challenge`), whose answer `auth::second_step`
//! checks: the routes read it, and tell what its outcome was.

use rocket::response::Redirect;
use rocket::serde::json::Json;
use rocket::{get, post, State};
use serde_json::{json, Value};

use super::account_screen::{self, Shown};
use super::ceremony::{public_key, Ceremony};
use super::notify::{notify, recipient};
use super::pending;
use super::posting::{AccountRequest, GuestRequest, Keeping};
use super::second_factor::{refused_sign_in, told};
use super::sign_in::{after_second_step, Completing};
use super::sudo::Confirmed;
use crate::auth::passkeys::Assertion;
use crate::auth::second_step::{Given, Reserved, SecondStep, Step};
use crate::body::{BodyError, Input};
use crate::db::Tx;
use crate::error::{AuthError, FieldErrors};
use crate::events::AuthEvent;
use crate::i18n::Language;
use crate::mail::Notice;
use crate::reply::Reply;
use crate::screens::{Page, Posted, Screen, View};
use crate::security::SameOrigin;
use crate::session::{Guest, Session};
use crate::state::GatehouseState;

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
        account_screen::render(gh, user, session, language, view)
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

/// Reads the answer to the second step: a passkey's `credential`, else a
/// `recovery_code`, else the one `code` field.
fn given(input: &Input) -> Result<Given, AuthError> {
    let mut ignored = FieldErrors::new();
    if let Some(credential) = input.object("credential", &mut ignored) {
        return Ok(Given::Passkey(credential));
    }
    if let Some(recovery) = input.text("recovery_code", &mut ignored) {
        return Ok(Given::RecoveryCode(recovery));
    }
    code_field(input, "code").map(Given::Code)
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
        let message = "two_factor_enabled";
        account_screen::shown_codes(gh, user, session, language, &input, message, &codes).await
    }
    .await;
    Posted(answer)
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
        let message = "recovery_codes_renewed";
        account_screen::shown_codes(gh, user, session, language, &input, message, &codes).await
    }
    .await;
    Posted(answer)
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
        let given = given(&input)?;
        let second_step = SecondStep {
            limit: &gh.throttles.second_factor,
            two_factor: &gh.two_factor,
            passkeys: &gh.passkeys,
        };
        let kept = async || Ceremony::SecondStep.take::<Assertion>(gh, session).await;
        let step = second_step
            .answer(pending.user_id, pending.epoch, &given, kept)
            .await?;
        match step {
            Step::Closed { retry_after } => {
                pending::end(session);
                Err(AuthError::Throttled { retry_after })
            }
            Step::Refused(refused) => {
                let error = refused_sign_in(gh, refused, pending.user_id, from, language).await?;
                if matches!(error, AuthError::Throttled { .. }) {
                    pending::end(session);
                }
                Err(error)
            }
            Step::Passed(passed) => {
                pending::end(session);
                let at = Completing::new(jar, session, from, language);
                after_second_step(gh, at, pending, passed, input.is_form()).await
            }
        }
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
    Ok(Json(public_key(options)))
}
