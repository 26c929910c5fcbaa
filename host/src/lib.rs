//! The reference host: the application `cargo run` serves. It shows how a host
//! uses the add-on through its public API only — named routes, a guarded page,
//! an intent dispenser and an org-setup handler, OData sets — and carries the
//! `gatehouse` command line. It is a package of its own: a host depending on
//! `gatehouse` compiles none of it.

pub mod cli;
mod demo;
mod logging;
pub mod odata;
mod org;
mod pages;

pub use org::{OrgDispenser, OrgHandler};

use rocket::figment::Figment;
use rocket::{routes, Build, Rocket};

use gatehouse::Gatehouse;

/// The reference host on `figment` (Rocket's configuration sources).
pub fn rocket(figment: Figment) -> Rocket<Build> {
    rocket::custom(figment)
        .mount(
            "/",
            gatehouse::traced(routes![
                pages::home,
                pages::dashboard,
                pages::terms,
                pages::privacy,
                pages::cookies
            ]),
        )
        .attach(
            odata::sets().into_iter().fold(
                Gatehouse::new()
                    .dispenser(OrgDispenser)
                    .org_setup(OrgHandler),
                Gatehouse::odata_set,
            ),
        )
        .attach(demo::DemoAccount)
}
