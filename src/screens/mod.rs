//! Server-rendered screens. Each works without JavaScript: forms post to the
//! `/auth/*` endpoints, which answer a form post with a 303 to the next screen
//! and leave their message in the session's flash.

mod page;

use rocket::response::content::RawHtml;
use rocket::response::Redirect;
use rocket::{get, State};
use serde_json::Value;

use crate::error::AuthError;
use crate::security::same_site_path;
use crate::session::{AuthUser, Guest, Session, INTENDED_KEY};
use crate::state::GatehouseState;
use page::{Field, Page};

/// `GET /login`: the sign-in screen. `?redirect=/path` sets where to go after
/// signing in, for same-site paths only.
#[get("/login?<redirect>")]
pub fn login(
    _guest: Guest,
    session: Session,
    gh: &State<GatehouseState>,
    redirect: Option<&str>,
) -> RawHtml<String> {
    if let Some(path) = redirect.and_then(same_site_path) {
        session.insert(INTENDED_KEY, Value::String(gh.settings.absolute(path)));
    }
    let flash = session.take_flash();
    Page::new("Sign in", gh, flash.as_ref())
        .form("/auth/login")
        .field(Field::text("email", "Email", "email", "username"))
        .field(Field::password("password", "Password", "current-password"))
        .checkbox("remember", "Keep me signed in")
        .submit("Sign in")
        .link("/login/forgot-password", "Forgot your password?")
        .render()
}

/// `GET /login` for a signed-in browser: straight to `dashboard`.
#[get("/login?<_redirect>", rank = 2)]
pub fn login_signed_in(gh: &State<GatehouseState>, _redirect: Option<&str>) -> Redirect {
    Redirect::to(gh.routes.dashboard.clone())
}

/// `GET /login/org-setup`: the organisation set-up screen.
#[get("/login/org-setup")]
pub fn org_setup(user: AuthUser, session: Session, gh: &State<GatehouseState>) -> RawHtml<String> {
    let flash = session.take_flash();
    Page::new("Set up your organisation", gh, flash.as_ref())
        .intro(&format!(
            "Welcome, {}. Tell us about your organisation.",
            user.name
        ))
        .form("/auth/intents/org-setup")
        .field(Field::text(
            "org_name",
            "Organisation name",
            "text",
            "organization",
        ))
        .select(
            "legal_form",
            "Legal form",
            &[("1", "Company"), ("2", "Individual")],
        )
        .select(
            "company_size",
            "Company size",
            &[
                ("solo", "Just me"),
                ("small", "2–10"),
                ("growing", "11–50"),
                ("mid_market", "51–500"),
                ("enterprise", "500+"),
            ],
        )
        .select(
            "function",
            "Your role",
            &[
                ("developer", "Developer"),
                ("tech_lead", "Tech lead"),
                ("architect", "Architect"),
                ("executive", "Executive"),
                ("other", "Other"),
            ],
        )
        .field(Field::text(
            "billing_email",
            "Billing email (optional)",
            "email",
            "email",
        ))
        .checkbox("marketing_consent", "Send me product news")
        .submit("Continue")
        .render()
}

/// `GET /logout`: asks before signing out.
#[get("/logout")]
pub fn logout_confirm(
    _user: AuthUser,
    gh: &State<GatehouseState>,
) -> Result<RawHtml<String>, AuthError> {
    Ok(Page::new("Sign out", gh, None)
        .intro("Do you want to sign out?")
        .form("/logout")
        .submit("Sign out")
        .render())
}

/// `GET /login/forgot-password`: asks for the address to send a reset link to.
#[get("/login/forgot-password")]
pub fn forgot_password(
    _guest: Guest,
    session: Session,
    gh: &State<GatehouseState>,
) -> RawHtml<String> {
    let flash = session.take_flash();
    Page::new("Forgot your password?", gh, flash.as_ref())
        .intro("Enter your address and we will mail you a link to choose a new password.")
        .form("/auth/forgot-password")
        .field(Field::text("email", "Email", "email", "username"))
        .submit("Send reset link")
        .link("/login", "Back to sign in")
        .render()
}

/// `GET /login/forgot-password` for a signed-in browser.
#[get("/login/forgot-password", rank = 2)]
pub fn forgot_password_signed_in(gh: &State<GatehouseState>) -> Redirect {
    Redirect::to(gh.routes.dashboard.clone())
}

/// `GET /login/set-password/<token>/<email>`: choose a new password. Renders
/// for any token; `POST /auth/reset-password` is the authoritative check.
#[get("/login/set-password/<token>/<email>")]
pub fn set_password(
    _guest: Guest,
    session: Session,
    gh: &State<GatehouseState>,
    token: &str,
    email: &str,
) -> RawHtml<String> {
    let flash = session.take_flash();
    Page::new("Choose a new password", gh, flash.as_ref())
        .form("/auth/reset-password")
        .hidden("token", token)
        .hidden("email", email)
        .field(Field::password("password", "New password", "new-password"))
        .field(Field::password(
            "password_confirmation",
            "Repeat the new password",
            "new-password",
        ))
        .submit("Save password")
        .render()
}

/// `GET /login/set-password/...` for a signed-in browser.
#[get("/login/set-password/<_token>/<_email>", rank = 2)]
pub fn set_password_signed_in(gh: &State<GatehouseState>, _token: &str, _email: &str) -> Redirect {
    Redirect::to(gh.routes.dashboard.clone())
}
