//! `POST /auth/forgot-password`: the same answer, status and timing whether
//! or not the address has an account. The request path only validates,
//! counts the attempt and queues a job; looking the account up, issuing the
//! token and sending the mail happen in the background.

use lettre::message::Mailbox;
use rocket::response::Redirect;
use rocket::{post, State};
use serde_json::json;

use super::broker;
use crate::auth::{users, Attempt};
use crate::body::{BodyError, Input};
use crate::domain::Email;
use crate::error::{AuthError, FieldErrors};
use crate::i18n::Language;
use crate::reply::Reply;
use crate::security::{ClientIp, SameOrigin};
use crate::session::{Guest, Session};
use crate::state::GatehouseState;

/// Parses the one field of the form.
pub fn email_field(input: &Input) -> Result<Email, AuthError> {
    let mut errors = FieldErrors::new();
    match input.required_email("email", &mut errors) {
        Some(email) if errors.is_empty() => Ok(email),
        _ => Err(AuthError::Validation(errors)),
    }
}

/// Queues a reset link for `email` if it has an account.
#[allow(clippy::too_many_arguments)]
#[post("/auth/forgot-password", data = "<body>")]
pub async fn forgot_password(
    _origin: SameOrigin,
    _guest: Guest,
    session: Session,
    ip: ClientIp,
    language: Language,
    gh: &State<GatehouseState>,
    body: Result<Input, BodyError>,
) -> Result<Reply, AuthError> {
    let input = body?;
    let email = email_field(&input)?;
    let key = gh.forgot_throttle.key(&email, &ip.to_string());
    if let Attempt::Refused { retry_after, .. } = gh.forgot_throttle.hit(&key).await? {
        return Err(AuthError::Throttled { retry_after });
    }
    let job = ResetJob {
        email,
        language,
        db: gh.db.clone(),
        settings: gh.settings.clone(),
        mailer: gh.mailer.clone(),
        composer: gh.composer.clone(),
    };
    tokio::spawn(job.run());
    if input.is_form() {
        session.set_flash(json!({"message": "reset_link_sent"}));
        return Ok(Reply::screen("/login/forgot-password"));
    }
    Ok(Reply::json(json!({"message": "reset_link_sent"})))
}

/// A signed-in browser goes to `dashboard`.
#[post("/auth/forgot-password", rank = 2)]
pub fn forgot_password_signed_in(gh: &State<GatehouseState>) -> Redirect {
    gh.to_dashboard()
}

struct ResetJob {
    email: Email,
    language: Language,
    db: crate::db::Db,
    settings: std::sync::Arc<crate::Settings>,
    mailer: crate::mail::Mailer,
    composer: std::sync::Arc<crate::mail::Composer>,
}

impl ResetJob {
    async fn run(self) {
        if let Err(e) = self.send().await {
            tracing::error!(error = %e, "reset link could not be issued");
        }
    }

    async fn send(&self) -> Result<(), String> {
        let Some(user) = users::find_by_email(&self.db, &self.email)
            .await
            .map_err(|e| e.to_string())?
        else {
            return Ok(());
        };
        let auth = &self.settings.auth;
        let Some(token) = broker::issue(&self.db, &self.email, auth.reset_throttle_seconds)
            .await
            .map_err(|e| e.to_string())?
        else {
            tracing::info!("reset link requested again within the quiet period; no mail sent");
            return Ok(());
        };
        let link = format!(
            "{}?email={}",
            self.settings
                .absolute(&format!("/password/reset/{}", token.expose())),
            percent_encoding::utf8_percent_encode(
                self.email.as_str(),
                percent_encoding::NON_ALPHANUMERIC
            )
        );
        let mail =
            self.composer
                .reset_link(self.language, &user.name, &link, auth.reset_token_minutes)?;
        self.mailer.send(mailbox(&user.name, &user.email)?, mail);
        Ok(())
    }
}

/// `Name <address>` for a user.
pub fn mailbox(name: &str, email: &str) -> Result<Mailbox, String> {
    let address = email
        .parse()
        .map_err(|e| format!("stored address {email:?} is not deliverable: {e}"))?;
    Ok(Mailbox::new(Some(name.to_owned()), address))
}
