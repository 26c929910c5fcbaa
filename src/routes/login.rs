//! `POST /auth/login`: the password, then (for a user with two-factor
//! sign-in on) a pending sign-in that `POST /auth/two-factor-challenge`
//! completes. A right password found in the breached-password file marks
//! the user: the sign-in ends in the `password_change` intent.

use rocket::response::Redirect;
use rocket::{post, State};
use secrecy::{ExposeSecret, SecretString};
use serde_json::json;

use super::posting::GuestRequest;
use super::password_check::{check_password, Checked};
use super::pending::{self, Pending};
use super::sign_in::{finish, note_breached, Completing, Proven};
use crate::body::{BodyError, Input};
use crate::domain::Email;
use crate::error::{AuthError, FieldErrors};
use crate::reply::Reply;
use crate::screens::{Posted, Screen};
use crate::state::GatehouseState;
use crate::security::SameOrigin;

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
#[post("/auth/login", data = "<body>")]
pub async fn login(
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
    let client = guest.client;
    let language = guest.language;
    let answer: Result<Reply, AuthError> = async {
        let input = body?;
        let credentials = Credentials::from_input(&input)?;
        let checked =
            check_password(gh, client, from, &credentials.email, &credentials.password).await?;
        let Checked::Right(mut user) = checked else {
            return Err(AuthError::Credentials);
        };
        let breached = gh.new_passwords.is_listed(credentials.password.expose_secret());
        if gh.two_factor.is_enabled(user.id).await? {
            // Not signed in yet: the second factor completes it, under the
            // credential epoch read with the password hash that was checked.
            // A listed password marks the user only once it has passed.
            let waiting = Pending {
                user_id: user.id,
                remember: credentials.remember,
                epoch: user.epoch,
                provider: None,
                breached,
            };
            pending::begin(session, &waiting);
            if input.is_form() {
                return Ok(Reply::screen(Screen::TwoFactor.path()));
            }
            return Ok(Reply::json(json!({"message": "two_factor_required"})));
        }
        if breached {
            note_breached(gh, &mut user, from).await?;
        }
        let at = Completing::new(jar, session, from, language);
        let proven = Proven::password(user, credentials.remember, input.is_form());
        finish(gh, at, proven).await
    }
    .await;
    Posted(answer)
}

/// A signed-in browser posting the sign-in form goes to `dashboard`.
#[post("/auth/login", rank = 2)]
pub fn login_signed_in(_origin: SameOrigin, gh: &State<GatehouseState>) -> Redirect {
    gh.to_dashboard()
}
