//! The success answer of a Gatehouse endpoint: JSON for scripts, a 303 to the
//! next screen for a form post from a screen.

use rocket::response::Redirect;
use rocket::serde::json::Json;
use serde_json::Value;

/// JSON body or redirect to the next screen.
#[derive(rocket::Responder)]
#[allow(clippy::large_enum_variant)]
pub enum Reply {
    /// A JSON body (status 200).
    Json(Json<Value>),
    /// 303 See Other to the next screen.
    Screen(Redirect),
}

impl Reply {
    /// `value` as a JSON answer.
    pub fn json(value: Value) -> Self {
        Self::Json(Json(value))
    }

    /// A 303 to `url`.
    pub fn screen(url: impl Into<String>) -> Self {
        Self::Screen(Redirect::to(url.into()))
    }
}
