//! `POST /auth/login`: the password, then (for a user with two-factor
//! sign-in on) a pending sign-in that `POST /auth/two-factor-challenge`
//! completes.

use rocket::http::CookieJar;
use rocket::response::Redirect;
use rocket::{post, State};
use secrecy::SecretString;
use serde_json::json;

use super::password_check::{check_password, Checked};
use super::notify::{new_device, notify, Recipient};
use super::pending;
use crate::auth::users::{self, UserRecord};
use crate::body::{BodyError, Input};
use crate::domain::Email;
use crate::error::{AuthError, FieldErrors};
use crate::events::{AuthEvent, Origin};
use crate::i18n::Language;
use crate::reply::Reply;
use crate::security::{ClientIp, SameOrigin};
use crate::session::device::{self, Device};
use crate::session::{remember, AuthUser, Guest, Session, SignedInBy};
use crate::screens::{Posted, Screen};
use crate::state::GatehouseState;

/// Validated sign-in fields.
struct Credentials {
    email: Email,
    password: SecretString,
    remember: bool,
}

impl Credentials {
    fn from_input(input: &Input) -> Result<Self, AuthError> {
        let mut errors = FieldErrors::new();
        let email = input.required_email("email", &mut errors);
        let password = input.required_password("password", &mut errors);
        if password
            .as_ref()
            .is_some_and(|p| p.chars().count() > crate::domain::MAX_PASSWORD_CHARS)
        {
            errors.add("password", "max_length");
        }
        let remember = input.boolean("remember", &mut errors);
        match (email, password) {
            (Some(email), Some(password)) if errors.is_empty() => Ok(Self {
                email,
                password: SecretString::from(password),
                remember,
            }),
            _ => Err(AuthError::Validation(errors)),
        }
    }
}

/// Checks credentials, regenerates the session and dispenses the next intent.
#[allow(clippy::too_many_arguments)]
#[post("/auth/login", data = "<body>")]
pub async fn login(
    _origin: SameOrigin,
    _guest: Guest,
    session: Session,
    client: ClientIp,
    from: Origin,
    language: Language,
    jar: &CookieJar<'_>,
    gh: &State<GatehouseState>,
    body: Result<Input, BodyError>,
) -> Posted<Reply> {
    let answer: Result<Reply, AuthError> = async {
        let input = body?;
        let credentials = Credentials::from_input(&input)?;
        let checked =
            check_password(gh, client, &from, &credentials.email, &credentials.password).await?;
        let Checked::Right(user) = checked else {
            return Err(AuthError::Credentials);
        };
        if gh.two_factor.is_enabled(user.id).await? {
            // Not signed in yet: the second factor completes it, under the
            // credential epoch read with the password hash that was checked.
            pending::begin(&session, user.id, credentials.remember, user.epoch);
            if input.is_form() {
                return Ok(Reply::screen(Screen::TwoFactor.path()));
            }
            return Ok(Reply::json(json!({"message": "two_factor_required"})));
        }
        let at = Completing::new(jar, &session, &from, language);
        let proven = Proven::password(user, credentials.remember, input.is_form());
        finish(gh, at, proven).await
    }
    .await;
    Posted(answer)
}

/// How a sign-in was proven.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// The password (and any second factor).
    Password,
    /// A passkey alone, user verified: both factors.
    Passkey,
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
/// answers the next intent, however the sign-in was proven.
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
    session.sign_in(user.id);
    session.signed_in_by(SignedInBy {
        remember: None,
        passkey: passkey_id,
    });
    if remember_me {
        // Laravel's column, for hosts that share the table.
        users::ensure_remember_token(&gh.db, user.id).await?;
        let session_id = session.stored_id().unwrap_or_default();
        remember(at.jar, gh, user.id, &session_id).await?;
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
    let next = gh
        .dispenser
        .dispense(&auth_user, &gh.intent_context(session.clone()))
        .await;
    if is_form {
        return Ok(Reply::screen(next.screen_url()));
    }
    Ok(Reply::json(
        json!({"message": "login_success", "next": next.envelope()}),
    ))
}

/// A signed-in browser posting the sign-in form goes to `dashboard`.
#[post("/auth/login", rank = 2)]
pub fn login_signed_in(gh: &State<GatehouseState>) -> Redirect {
    gh.to_dashboard()
}
