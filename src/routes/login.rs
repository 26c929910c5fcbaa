//! `POST /auth/login`: the password, then (for a user with two-factor
//! sign-in on) a pending sign-in that `POST /auth/two-factor-challenge`
//! completes.

use rocket::http::CookieJar;
use rocket::response::Redirect;
use rocket::{post, State};
use secrecy::SecretString;
use serde_json::json;

use super::pending;
use crate::auth::users::{self, UserRecord};
use crate::auth::Begun;
use crate::body::{BodyError, Input};
use crate::domain::Email;
use crate::error::{AuthError, FieldErrors};
use crate::events::{AuthEvent, Origin};
use crate::reply::Reply;
use crate::security::{ClientIp, SameOrigin};
use crate::session::{remember, AuthUser, Guest, Session};
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
    jar: &CookieJar<'_>,
    gh: &State<GatehouseState>,
    body: Result<Input, BodyError>,
) -> Posted<Reply> {
    let answer: Result<Reply, AuthError> = async {
        let input = body?;
        let credentials = Credentials::from_input(&input)?;
        let throttles = &gh.throttles;
        let ip = client.to_string();
        let ip_key = throttles.login_ip.ip_key(&ip);
        // An address this instance already refused is answered from memory.
        if let Some(retry_after) = throttles.login_ip.known_spent(&ip_key) {
            return Err(AuthError::Throttled { retry_after });
        }
        // Capacity next, before any write or hash: a full queue, or a client
        // holding its share of it, is refused.
        let place = gh.hasher.reserve(client.0).ok_or(AuthError::Busy)?;
        if let Some(retry_after) = throttles.login_ip.exhausted(&ip_key).await? {
            return Err(AuthError::Throttled { retry_after });
        }
        let key = throttles.login.key(&credentials.email, &ip);
        let check = match throttles.login.begin(&key).await? {
            Begun::Check(check) => check,
            Begun::Refused { retry_after, first } => {
                if first {
                    // Once per window: the lookup costs no more than a sign-in's.
                    let user_id = users::find_by_email(&gh.db, &credentials.email)
                        .await?
                        .map(|u| u.id);
                    let lockout = AuthEvent::Lockout {
                        email: credentials.email.to_string(),
                        ip,
                        user_id,
                    };
                    gh.events.emit(lockout, &from).await;
                }
                return Err(AuthError::Throttled { retry_after });
            }
        };
        let user = users::find_by_email(&gh.db, &credentials.email).await?;
        let verification = gh
            .hasher
            .verify(
                &place,
                &credentials.password,
                user.as_ref().map(|u| u.password_hash.as_str()),
            )
            .await;
        let user_id = user.as_ref().map(|u| u.id);
        let Some(user) = user.filter(|_| verification.matches) else {
            check.failed().await?;
            throttles.login_ip.record(&ip_key).await?;
            let failed = AuthEvent::Failed {
                email: credentials.email.to_string(),
                user_id,
            };
            gh.events.emit(failed, &from).await;
            return Err(AuthError::Credentials);
        };
        check.succeeded().await?;
        if verification.needs_rehash {
            let rehashed = gh
                .hasher
                .hash(&credentials.password)
                .await
                .map_err(AuthError::Internal)?;
            users::set_password_hash(&gh.db, user.id, &rehashed).await?;
        }
        drop(place);
        if gh.two_factor.is_enabled(user.id).await? {
            // Not signed in yet: the second factor completes it.
            pending::begin(&session, user.id, credentials.remember);
            if input.is_form() {
                return Ok(Reply::screen(Screen::TwoFactor.path()));
            }
            return Ok(Reply::json(json!({"message": "two_factor_required"})));
        }
        finish(gh, &session, jar, &from, user, credentials.remember, input.is_form()).await
    }
    .await;
    Posted(answer)
}

/// Signs `user` in on this session (a new id), issues the remember cookie
/// when asked, and answers the next intent, as a sign-in does whether or not
/// a second factor came first.
pub async fn finish(
    gh: &GatehouseState,
    session: &Session,
    jar: &CookieJar<'_>,
    from: &Origin,
    user: UserRecord,
    remember_me: bool,
    is_form: bool,
) -> Result<Reply, AuthError> {
    session.sign_in(user.id);
    if remember_me {
        let token = users::ensure_remember_token(&gh.db, user.id).await?;
        remember(jar, gh, user.id, &token);
    }
    let login = AuthEvent::Login {
        user_id: user.id,
        remember: remember_me,
    };
    gh.events.emit(login, from).await;
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
