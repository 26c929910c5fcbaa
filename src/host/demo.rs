//! The demo account: in the debug profile, an empty `users` table gets one
//! account whose credentials are printed at start-up.

use rocket::fairing::{self, Fairing, Info, Kind};
use rocket::{Build, Rocket};
use secrecy::SecretString;

use crate::auth::users;
use crate::domain::{Email, SecretToken};
use crate::GatehouseState;

/// Address of the demo account.
pub const DEMO_EMAIL: &str = "demo@example.org";

/// Creates the demo account on ignite (debug profile, empty table).
pub struct DemoAccount;

#[rocket::async_trait]
impl Fairing for DemoAccount {
    fn info(&self) -> Info {
        Info {
            name: "Demo account",
            kind: Kind::Ignite,
        }
    }

    async fn on_ignite(&self, rocket: Rocket<Build>) -> fairing::Result {
        let Some(gh) = rocket.state::<GatehouseState>() else {
            return Ok(rocket);
        };
        if !gh.settings.debug_profile {
            return Ok(rocket);
        }
        match users::count(&gh.db).await {
            Ok(0) => {}
            Ok(_) => return Ok(rocket),
            Err(e) => {
                tracing::error!(error = %e, "cannot count users");
                return Err(rocket);
            }
        }
        let password = format!("demo-{}", &SecretToken::generate().expose()[..16]);
        let Some(email) = Email::parse(DEMO_EMAIL) else {
            return Err(rocket);
        };
        let hash = match gh.hasher.hash(&SecretString::from(password.clone())).await {
            Ok(hash) => hash,
            Err(e) => {
                tracing::error!(error = %e, "cannot hash the demo password");
                return Err(rocket);
            }
        };
        match users::create(&gh.db, "Demo User", &email, &hash).await {
            Ok(_) => {
                println!(
                    "Demo account (debug profile only): email {DEMO_EMAIL}  password {password}"
                );
                Ok(rocket)
            }
            // Another instance starting on the same database made it first.
            Err(users::CreateUserError::Duplicate) => Ok(rocket),
            Err(e) => {
                tracing::error!(error = %e, "cannot create the demo account");
                Err(rocket)
            }
        }
    }
}
