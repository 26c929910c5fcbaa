//! Gatehouse's HTTP routes and catchers: each takes its guards and the managed state and
//! answers through `Reply`, `Posted` or `AuthError`. The parts they use
//! (`auth`, `intents`, `screens`, `session`, …) know no route and no
//! `GatehouseState`.

mod account;
mod account_screen;
mod assets;
mod posting;
mod catchers;
mod ceremony;
mod confirm;
mod dbsc;
mod device_grant;
mod device_screen;
mod forgot;
mod intents;
mod login;
mod logout;
mod new_password;
mod notices;
mod oauth;
pub(crate) mod notify;
mod oidc;
mod oidc_flow;
mod oidc_links;
mod passkeys;
mod password_change;
mod password_check;
mod pending;
mod reset;
mod screens;
mod second_factor;
mod sessions;
mod sign_in;
mod submission;
mod sudo;
mod token_list;
mod tokens;
mod two_factor;

use rocket::{routes, Route};

pub use catchers::all as catchers;
crate::internal! { use oidc::Answer; }

/// Every sign-in, reset, intent and screen route, and the screens' assets,
/// for mounting at `/`.
pub fn all() -> Vec<Route> {
    routes![
        assets::script,
        assets::stylesheet,
        assets::logo,
        login::login,
        login::login_signed_in,
        logout::logout,
        dbsc::register,
        dbsc::refresh,
        forgot::forgot_password,
        forgot::forgot_password_signed_in,
        reset::reset_link,
        reset::reset_password,
        reset::reset_password_signed_in,
        intents::submit,
        intents::unknown,
        password_change::submit,
        screens::login,
        screens::login_signed_in,
        screens::forgot_password,
        screens::forgot_password_signed_in,
        screens::set_password,
        screens::set_password_signed_in,
        screens::org_setup,
        screens::change_password,
        screens::change_password_not_due,
        screens::logout_confirm,
        account::screen,
        account::change_password,
        sessions::list,
        sessions::end,
        sessions::end_others,
        tokens::list,
        tokens::create,
        tokens::revoke,
        device_grant::code,
        device_grant::token,
        device_screen::screen,
        device_screen::approve,
        device_screen::deny,
        two_factor::enable,
        two_factor::confirm,
        two_factor::recovery_codes,
        two_factor::disable,
        two_factor::screen,
        two_factor::challenge,
        two_factor::passkey_options,
        passkeys::list,
        passkeys::registration_options,
        passkeys::register,
        passkeys::remove,
        passkeys::sign_in_options,
        passkeys::sign_in,
        oidc::begin,
        oidc::begin_signed_in,
        oidc::callback,
        oidc_links::list,
        oidc_links::link,
        oidc_links::confirm,
        confirm::confirm_route,
        confirm::passkey_options,
        oidc_links::remove,
    ]
}

#[cfg(test)]
mod tests {
    use rocket::http::Method;

    use super::*;
    use crate::intents::IntentKind;
    use crate::screens::Screen;
    use crate::screens::path_matches;

    /// The route Rocket tries first for `method` at `path`.
    fn first_route<'a>(routes: &'a [Route], method: Method, path: &str) -> Option<&'a Route> {
        routes
            .iter()
            .filter(|route| route.method == method && path_matches(route.uri.path(), path))
            .min_by_key(|route| route.rank)
    }

    #[test]
    fn every_screen_is_served_at_its_path() {
        let routes = all();
        for screen in Screen::ALL {
            assert!(
                routes.iter().any(|route| route.method == rocket::http::Method::Get
                    && route.uri.path() == screen.path()),
                "{screen:?} at {} is not mounted",
                screen.path()
            );
        }
    }

    #[test]
    fn a_session_that_must_change_its_password_may_reach_the_change_and_sign_out() {
        let change = IntentKind::PasswordChange.submission().expect("a screen");
        let open = [change.screen.path(), change.path, Screen::Logout.path()];
        assert_eq!(open, crate::session::password_change::OPEN_PATHS);
    }

    #[test]
    fn every_intent_kind_with_a_screen_is_shown_and_answered() {
        let routes = all();
        for kind in IntentKind::ALL {
            let Some(submission) = kind.submission() else {
                continue;
            };
            let screen = submission.screen.path();
            assert!(
                first_route(&routes, Method::Get, screen).is_some(),
                "{kind:?}: no GET {screen}"
            );
            let answered = first_route(&routes, Method::Post, submission.path);
            assert_eq!(
                answered.and_then(|route| route.name.as_deref()),
                Some("submit"),
                "{kind:?}: POST {} does not reach the submission route",
                submission.path
            );
        }
    }
}
