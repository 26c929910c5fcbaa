//! `POST /auth/forgot-password`: the same answer, status and timing whether
//! or not the address has an account. The request path only validates,
//! counts the attempt and stores the request ([`crate::auth::reset::requests`]); looking
//! the account up, issuing the token and sending the mail happen in the
//! background.

use rocket::response::Redirect;
use rocket::{post, State};
use serde_json::json;

use super::posting::GuestRequest;
use crate::auth::Attempt;
use crate::body::{BodyError, Input};
use crate::domain::Email;
use crate::error::{AuthError, FieldErrors};
use crate::reply::Reply;
use crate::screens::{Posted, Screen};
use crate::state::GatehouseState;
use crate::security::SameOrigin;

/// Parses the one field of the form.
pub fn email_field(input: &Input) -> Result<Email, AuthError> {
    let mut errors = FieldErrors::new();
    match input.required_email("email", &mut errors) {
        Some(email) if errors.is_empty() => Ok(email),
        _ => Err(AuthError::Validation(errors)),
    }
}

/// Queues a reset link for `email` if it has an account.
#[post("/auth/forgot-password", data = "<body>")]
pub async fn forgot_password(
    guest: GuestRequest<'_>,
    gh: &State<GatehouseState>,
    body: Result<Input, BodyError>,
) -> Posted<Reply> {
    let GuestRequest {
        session,
        ..
    } = &guest;
    let ip = guest.client;
    let language = guest.language;
    let answer: Result<Reply, AuthError> = async {
        let input = body?;
        let email = email_field(&input)?;
        let ip = ip.to_string();
        let throttles = &gh.throttles;
        let counters = [
            (&throttles.forgot_ip, throttles.forgot_ip.ip_key(&ip)),
            (&throttles.forgot, throttles.forgot.key(&email, &ip)),
        ];
        for (throttle, key) in counters {
            if let Attempt::Refused { retry_after, .. } = throttle.hit(&key).await? {
                return Err(AuthError::Throttled { retry_after });
            }
        }
        gh.reset_requests.enqueue(&email, language).await?;
        if input.is_form() {
            session.set_flash(json!({"message": "reset_link_sent"}));
            return Ok(Reply::screen(Screen::ForgotPassword.path()));
        }
        Ok(Reply::json(json!({"message": "reset_link_sent"})))
    }
    .await;
    Posted(answer)
}

/// A signed-in browser goes to `dashboard`.
#[post("/auth/forgot-password", rank = 2)]
pub fn forgot_password_signed_in(_origin: SameOrigin, gh: &State<GatehouseState>) -> Redirect {
    gh.to_dashboard()
}
