//! The demo account: in the debug profile, an empty `users` table gets one
//! account whose credentials are printed at start-up.

use rocket::fairing::{self, Fairing, Info, Kind};
use rocket::{Build, Rocket};

use gatehouse::{AccountError, Accounts, Email};

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
        let Some(accounts) = Accounts::of(&rocket) else {
            return Ok(rocket);
        };
        if !accounts.settings().debug_profile {
            return Ok(rocket);
        }
        match accounts.count().await {
            Ok(0) => {}
            Ok(_) => return Ok(rocket),
            Err(e) => {
                tracing::error!(error = %e, "cannot count users");
                return Err(rocket);
            }
        }
        // Long enough for the configured policy (at least 16 random digits).
        let digits = accounts
            .settings()
            .auth
            .password_min_length
            .saturating_sub(5)
            .max(16);
        let password = format!("demo-{}", random_hex(digits));
        let Some(email) = Email::parse(DEMO_EMAIL) else {
            return Err(rocket);
        };
        match accounts
            .add_user(&email, Some("Demo User"), password.clone().into())
            .await
        {
            Ok(_) => {
                println!(
                    "Demo account (debug profile only): email {DEMO_EMAIL}  password {password}"
                );
                Ok(rocket)
            }
            // Another instance starting on the same database made it first.
            Err(AccountError::Duplicate(_)) => Ok(rocket),
            Err(e) => {
                tracing::error!(error = %e, "cannot create the demo account");
                Err(rocket)
            }
        }
    }
}

/// `digits` random hexadecimal digits.
fn random_hex(digits: usize) -> String {
    (0..digits)
        .map(|_| char::from_digit(rand::random::<u32>() % 16, 16).unwrap_or('0'))
        .collect()
}
