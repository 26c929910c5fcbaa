//! Sudo mode: the account's sensitive changes (a passkey added or removed,
//! two-factor sign-in turned on or off, new recovery codes, the other
//! sessions ended, a provider linked or unlinked) take their body through
//! one guard, [`Confirmed`], which lets it through while the session's
//! re-authentication window is open ([`reauth`]) or when it carries the
//! caller's right password; a wrong password is refused even inside the
//! window, and counts as a failed sign-in. Otherwise the answer is 422
//! `reauth_required` with the ways the account has to confirm:
//! `POST /auth/confirm` by password or passkey ([`right_password`],
//! [`by_passkey`]), or a round trip to a linked provider
//! (`POST /auth/oidc/NAME/confirm`, whose proof is [`PROOF_SECONDS`] old at
//! most).
//!
//! A password change always asks for the current password
//! ([`current_password`]); an account without one (made by a provider)
//! sets its first only after a fresh proof (a passkey, or a provider's
//! sign-in under five minutes old), never in a plain sign-in's window.
//!
//! It declares no route: every route that changes the account takes what
//! it needs from here, and the account screen shows its state
//! ([`screen_state`]).

use rocket::data::{Data, FromData, Outcome};
use rocket::http::Status;
use rocket::request::Request;
use secrecy::SecretString;
use serde_json::{json, Value};

use super::ceremony::Ceremony;
use super::password_check::{check_password, Checked};
use super::posting::AccountRequest;
use super::second_factor::told;
use crate::auth::epoch;
use crate::auth::oidc::Links;
use crate::auth::passkeys::Assertion;
use crate::auth::second_step::{Answer, Reserved, Verdict};
use crate::auth::users;
use crate::body::Input;
use crate::clock::rfc3339;
use crate::domain::Email;
use crate::error::{AuthError, FieldErrors};
use crate::i18n::Language;
use crate::clock::unix_now;
use crate::session::{bound, reauth, AuthUser, Session};
use crate::state::GatehouseState;

/// How old a provider's sign-in (`auth_time`) may be to confirm the caller.
pub const PROOF_SECONDS: i64 = 5 * 60;

/// The body of a sensitive change, let through by sudo mode: the window
/// was open, or the body carried the caller's right password. Made only
/// by its data guard.
pub struct Confirmed(Input);

impl Confirmed {
    /// The body's fields.
    pub fn into_input(self) -> Input {
        self.0
    }
}

#[rocket::async_trait]
impl<'r> FromData<'r> for Confirmed {
    type Error = AuthError;

    async fn from_data(req: &'r Request<'_>, data: Data<'r>) -> Outcome<'r, Self> {
        let input = match Input::from_data(req, data).await {
            Outcome::Success(input) => input,
            Outcome::Error((status, e)) => return Outcome::Error((status, e.into())),
            Outcome::Forward(forward) => return Outcome::Forward(forward),
        };
        // The route's own guards have already passed; these are cached.
        let (Some(caller), Some(gh)) = (
            req.guard::<AccountRequest<'r>>().await.succeeded(),
            req.rocket().state::<GatehouseState>(),
        ) else {
            return Outcome::Error((Status::Unauthorized, AuthError::Unauthenticated));
        };
        match confirm(gh, &caller, &input).await {
            Ok(()) => Outcome::Success(Confirmed(input)),
            Err(e) => Outcome::Error((e.status(), e)),
        }
    }
}

/// Sudo mode's one decision for `input` of `caller`'s sensitive change.
async fn confirm(
    gh: &GatehouseState,
    caller: &AccountRequest<'_>,
    input: &Input,
) -> Result<(), AuthError> {
    // A body that carries a password field, even an empty one, is judged
    // by it: the window lets through only a body without one.
    if input.carries("password") {
        return right_password(gh, caller, input, "password").await;
    }
    in_window(gh, caller, None).await
}

/// In a bound session, sudo mode asks for a bound cookie under
/// [`bound::FRESH_SECONDS`] old: otherwise 307 back to the same request
/// with the bound cookie expired, which a DBSC browser answers by proving
/// its key before it sends the request again.
fn device_fresh(gh: &GatehouseState, caller: &AccountRequest<'_>) -> Result<(), AuthError> {
    match caller.session.bound() {
        Some(bound) if unix_now() - bound.minted_at >= bound::FRESH_SECONDS => {
            caller.jar.add(bound::cookie::removal(&gh.settings));
            Err(AuthError::DeviceProofRequired)
        }
        _ => Ok(()),
    }
}

/// Lets the change through while the window is open; otherwise 422
/// `reauth_required` with the ways to confirm. `password` is whether the
/// account has one, when that was already read.
async fn in_window(
    gh: &GatehouseState,
    caller: &AccountRequest<'_>,
    password: Option<bool>,
) -> Result<(), AuthError> {
    device_fresh(gh, caller)?;
    let minutes = gh.settings.session.reauth_minutes;
    if reauth::open_until(&caller.session, caller.who.id, minutes).is_some() {
        return Ok(());
    }
    Err(reauth_required(gh, caller, password).await?)
}

/// 422 `reauth_required` with the ways `caller`'s account has to confirm.
/// `password` is whether the account has one, when that was already read.
async fn reauth_required(
    gh: &GatehouseState,
    caller: &AccountRequest<'_>,
    password: Option<bool>,
) -> Result<AuthError, AuthError> {
    let password = match password {
        Some(known) => known,
        None => has_password(gh, &caller.who).await?,
    };
    let passkey = gh.passkeys.is_on() && !gh.passkeys.list(caller.who.id).await?.is_empty();
    let links = Links(&gh.db).of_user(caller.who.id).await?;
    let linked: Vec<&str> = links.iter().map(|l| l.provider.as_str()).collect();
    Ok(AuthError::ReauthRequired {
        methods: methods(gh, password, passkey, &linked),
    })
}

/// The ways an account confirms who it is: `password` (when it has one),
/// `passkey` (when it has one and passkeys are on), and `oidc:NAME` for
/// each `linked` provider that is configured.
fn methods(gh: &GatehouseState, password: bool, passkey: bool, linked: &[&str]) -> Vec<String> {
    let mut methods = Vec::new();
    if password {
        methods.push("password".to_owned());
    }
    if passkey {
        methods.push("passkey".to_owned());
    }
    methods.extend(
        linked
            .iter()
            .filter(|name| gh.oidc.get(name).is_some())
            .map(|name| format!("oidc:{name}")),
    );
    methods
}

/// What the account screen shows of sudo mode for `user` on `session`:
/// whether the window is open and until when, and the ways to confirm
/// (`password` and `passkey` as booleans, the linked `providers` with
/// their labels). `passkey` (whether the account has one) and `linked`
/// (its providers) come from the screen's own listings.
pub async fn screen_state(
    gh: &GatehouseState,
    user: &AuthUser,
    session: &Session,
    language: Language,
    passkey: bool,
    linked: &[&str],
) -> Result<Value, AuthError> {
    let minutes = gh.settings.session.reauth_minutes;
    let until = reauth::open_until(session, user.id, minutes)
        .map(|until| gh.screens.when(language, Some(&rfc3339(until))));
    let password = has_password(gh, user).await?;
    let methods = methods(gh, password, passkey, linked);
    let providers: Vec<Value> = methods
        .iter()
        .filter_map(|m| m.strip_prefix("oidc:"))
        .filter_map(|name| gh.oidc.get(name))
        .map(|p| json!({"name": p.name, "label": p.settings.label}))
        .collect();
    Ok(json!({
        "open": until.is_some(),
        "until": until,
        "password": password,
        "passkey": passkey,
        "providers": providers,
    }))
}

/// The password change's current password, in `field`: always asked for.
/// An account without a password (made by a provider) sets its first one
/// only after a fresh proof instead: a passkey assertion or a provider's
/// sign-in with `prompt=login`, under [`PROOF_SECONDS`] old — never the
/// window a plain sign-in opened. Its body's `password` is the new one,
/// never taken for a confirmation.
pub async fn current_password(
    gh: &GatehouseState,
    caller: &AccountRequest<'_>,
    input: &Input,
    field: &'static str,
) -> Result<(), AuthError> {
    if !input.carries(field) && !has_password(gh, &caller.who).await? {
        device_fresh(gh, caller)?;
        if reauth::fresh(&caller.session, caller.who.id, PROOF_SECONDS) {
            return Ok(());
        }
        return Err(reauth_required(gh, caller, Some(false)).await?);
    }
    right_password(gh, caller, input, field).await
}

/// Reads the password field `field` of `input` and checks it is the
/// caller's: a missing one is 422 `required`, a wrong one 422
/// `current_password` and a failed sign-in. A right one opens the window.
pub async fn right_password(
    gh: &GatehouseState,
    caller: &AccountRequest<'_>,
    input: &Input,
    field: &'static str,
) -> Result<(), AuthError> {
    device_fresh(gh, caller)?;
    let mut errors = FieldErrors::new();
    let password = input.required_password(field, &mut errors);
    let Some(password) = password.filter(|_| errors.is_empty()) else {
        return Err(AuthError::Validation(errors));
    };
    let user = &caller.who;
    let password = SecretString::from(password);
    let email = Email::parse(&user.email).ok_or(AuthError::Unauthenticated)?;
    match check_password(gh, caller.client, &caller.from, &email, &password).await? {
        Checked::Right(account) if account.id == user.id => {
            reauth::proven(&caller.session, user.id);
            Ok(())
        }
        _ => {
            let mut errors = FieldErrors::new();
            errors.add(field, "current_password");
            Err(AuthError::Validation(errors))
        }
    }
}

/// Whether `user`'s account has a password (an account a provider made
/// has none until a reset by mail sets one).
async fn has_password(gh: &GatehouseState, user: &AuthUser) -> Result<bool, AuthError> {
    let record = users::find_by_id(&gh.db, user.id).await?;
    Ok(record.is_some_and(|r| users::has_password(&r.password_hash)))
}

/// Checks a passkey's answer to the challenge of
/// `POST /auth/confirm/passkey-options`, under a reserved check of the
/// caller's second-factor limit (as a second step's answer is), and opens
/// the window when it is right.
pub async fn by_passkey(
    gh: &GatehouseState,
    caller: &AccountRequest<'_>,
    credential: &Value,
) -> Result<(), AuthError> {
    device_fresh(gh, caller)?;
    let user_id = caller.who.id;
    // No challenge issued to this session (or passkeys off): nothing was
    // asked, so nothing is counted against the owner's second factor.
    let Some(assertion) = Ceremony::Confirm
        .take::<Assertion>(gh, &caller.session)
        .await?
    else {
        return Err(AuthError::PasskeyFailed);
    };
    let check = match gh.throttles.second_factor.reserve(user_id).await? {
        Reserved::Check(check) => check,
        Reserved::Refused { retry_after } => return Err(AuthError::Throttled { retry_after }),
    };
    let answer = Answer::Passkey {
        credential,
        assertion,
    };
    let epoch = epoch::current(&gh.db, user_id).await?;
    match check
        .answer(&gh.two_factor, &gh.passkeys, epoch, answer)
        .await?
    {
        Verdict::Passed { .. } => {
            reauth::proven(&caller.session, user_id);
            reauth::proven_afresh(&caller.session, user_id);
            Ok(())
        }
        Verdict::Refused { failure, .. } => {
            let told = told(gh, failure, user_id, &caller.from, caller.language).await?;
            Err(match told {
                throttled @ AuthError::Throttled { .. } => throttled,
                _ => AuthError::PasskeyFailed,
            })
        }
    }
}
