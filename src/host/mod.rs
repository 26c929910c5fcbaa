//! The reference host: the application `cargo run` serves. It shows how a host
//! uses the add-on — named routes, a guarded page, an intent dispenser and an
//! org-setup handler — and carries the `gatehouse` command line.

pub mod cli;
mod demo;
mod odata;
mod org;
mod pages;

pub use org::{OrgDispenser, OrgHandler};

use rocket::figment::Figment;
use rocket::{routes, Build, Rocket};

use crate::Gatehouse;

/// The reference host on `figment` (Rocket's configuration sources).
pub fn rocket(figment: Figment) -> Rocket<Build> {
    rocket::custom(figment)
        .mount(
            "/",
            routes![
                pages::home,
                pages::dashboard,
                pages::terms,
                pages::privacy,
                pages::cookies
            ],
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
