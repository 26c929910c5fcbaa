//! The screens' script and style sheet, embedded in the binary, and the
//! host's logo from its public directory.

use rocket::fs::NamedFile;
use rocket::{get, State};

use crate::screens::{asset, Asset};
use crate::state::GatehouseState;

/// `GET /gatehouse/app.js`: upgrades the forms to JSON calls.
#[get("/gatehouse/app.js")]
pub fn script() -> Asset {
    asset(crate::screens::SCRIPT, rocket::http::ContentType::JavaScript)
}

/// `GET /gatehouse/app.css`.
#[get("/gatehouse/app.css")]
pub fn stylesheet() -> Asset {
    asset(crate::screens::STYLESHEET, rocket::http::ContentType::CSS)
}

/// The host's logo, when `<public_dir>/assets/ci/logo-full.svg` exists.
#[get("/assets/ci/logo-full.svg")]
pub async fn logo(gh: &State<GatehouseState>) -> Option<NamedFile> {
    NamedFile::open(gh.settings.public_dir.join("assets/ci/logo-full.svg"))
        .await
        .ok()
}
