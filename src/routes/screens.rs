//! The screens' `GET` routes: each renders its [`Screen`] with the flash the
//! last form post left; guest-only screens send a signed-in browser to
//! `dashboard`.

use rocket::response::Redirect;
use rocket::{get, State};
use serde_json::{json, Value};

use super::notices;
use crate::error::AuthError;
use crate::i18n::Language;
use crate::intents::{CompanySize, JobFunction};
use crate::security::same_site_path;
use crate::session::{password_change, AuthUser, Guest, PasswordChangeDue, Session, INTENDED_KEY};
use crate::screens::{Page, Screen, View};
use crate::state::GatehouseState;

type Html = Result<Page, AuthError>;

/// `GET /login`: the sign-in screen. `?redirect=/path` sets where to go after
/// signing in, for same-site paths only.
#[get("/login?<redirect>&<notice>")]
pub fn login(
    _guest: Guest,
    session: Session,
    language: Language,
    gh: &State<GatehouseState>,
    redirect: Option<&str>,
    notice: Option<&str>,
) -> Html {
    if let Some(path) = redirect.and_then(same_site_path) {
        session.insert(INTENDED_KEY, Value::String(gh.settings.absolute(path)));
    }
    let providers: Vec<Value> = gh
        .oidc
        .all()
        .map(|p| json!({"name": p.name, "label": p.settings.label, "logo": p.settings.logo}))
        .collect();
    let view = View {
        flash: session.take_flash(),
        notice: notices::shown(notice),
        extra: vec![("oidc", Value::Array(providers))],
        ..View::default()
    };
    gh.screens.render(Screen::Login, language, view)
}

/// `GET /login` for a signed-in browser: straight to `dashboard`.
#[get("/login?<_redirect>", rank = 2)]
pub fn login_signed_in(gh: &State<GatehouseState>, _redirect: Option<&str>) -> Redirect {
    gh.to_dashboard()
}

/// `GET /login/org-setup`: the organisation set-up screen.
#[get("/login/org-setup")]
pub fn org_setup(
    user: AuthUser,
    session: Session,
    language: Language,
    gh: &State<GatehouseState>,
) -> Html {
    let view = View {
        flash: session.take_flash(),
        args: vec![("name", user.name.clone())],
        extra: vec![
            ("sizes", json!(CompanySize::ALL)),
            ("functions", json!(JobFunction::ALL)),
        ],
        ..View::default()
    };
    gh.screens.render(Screen::OrgSetup, language, view)
}

/// `GET /login/change-password`: a new password before anything else, for
/// a session whose password was found breached.
#[get("/login/change-password")]
pub fn change_password(
    _due: PasswordChangeDue,
    session: Session,
    language: Language,
    gh: &State<GatehouseState>,
) -> Html {
    // A session that did not sign in to the change itself (a recall) is
    // asked for the current password too.
    let current = !password_change::without_current_password(&session);
    let view = View {
        flash: session.take_flash(),
        args: vec![("min", gh.settings.auth.password_min_length.to_string())],
        extra: vec![("current", json!(current))],
        ..View::default()
    };
    gh.screens.render(Screen::ChangePassword, language, view)
}

/// `GET /login/change-password` when no change is due: on to `dashboard`
/// (a guest signs in first).
#[get("/login/change-password", rank = 2)]
pub fn change_password_not_due(_user: AuthUser, gh: &State<GatehouseState>) -> Redirect {
    gh.to_dashboard()
}

/// `GET /logout`: asks before signing out.
#[get("/logout")]
pub fn logout_confirm(_user: AuthUser, language: Language, gh: &State<GatehouseState>) -> Html {
    gh.screens.render(Screen::Logout, language, View::default())
}

/// `GET /login/forgot-password`: asks for the address to send a reset link to.
#[get("/login/forgot-password")]
pub fn forgot_password(
    _guest: Guest,
    session: Session,
    language: Language,
    gh: &State<GatehouseState>,
) -> Html {
    let view = View {
        flash: session.take_flash(),
        ..View::default()
    };
    gh.screens.render(Screen::ForgotPassword, language, view)
}

/// `GET /login/forgot-password` for a signed-in browser.
#[get("/login/forgot-password", rank = 2)]
pub fn forgot_password_signed_in(gh: &State<GatehouseState>) -> Redirect {
    gh.to_dashboard()
}

/// `GET /login/set-password/<token>/<email>`: choose a new password. Renders
/// for any token; `POST /auth/reset-password` is the authoritative check.
#[get("/login/set-password/<token>/<email>")]
pub fn set_password(
    _guest: Guest,
    session: Session,
    language: Language,
    gh: &State<GatehouseState>,
    token: &str,
    email: &str,
) -> Html {
    let view = View {
        flash: session.take_flash(),
        args: vec![("min", gh.settings.auth.password_min_length.to_string())],
        extra: vec![("token", json!(token)), ("email", json!(email))],
        ..View::default()
    };
    gh.screens.render(Screen::SetPassword, language, view)
}

/// `GET /login/set-password/...` for a signed-in browser.
#[get("/login/set-password/<_token>/<_email>", rank = 2)]
pub fn set_password_signed_in(gh: &State<GatehouseState>, _token: &str, _email: &str) -> Redirect {
    gh.to_dashboard()
}
