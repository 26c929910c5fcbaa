//! A host of the Gatehouse add-on in the form a Rocket developer writes one:
//! a public page, a page for signed-in users only, and a count of the users
//! read through `Connection<Db>` on the pool Gatehouse shares.

use gatehouse::{AuthUser, Db, Gatehouse};
use rocket::{get, routes, Build, Rocket};
use rocket_db_pools::{Connection, Database};

/// `/`: for everyone.
#[get("/")]
fn home() -> &'static str {
    "Counter: sign in at /login"
}

/// `/dashboard`: only for a signed-in user (a browser without a session is
/// sent to `/login`, a script gets 401).
#[get("/dashboard")]
fn dashboard(user: AuthUser) -> String {
    format!("Signed in as {}", user.email)
}

/// `/users/count`: the host's own statement on Gatehouse's database.
#[get("/users/count")]
async fn user_count(mut db: Connection<Db>) -> Option<String> {
    let (count,): (i64,) = sqlx::query_as("SELECT COUNT(*) FROM users")
        .fetch_one(&mut **db)
        .await
        .ok()?;
    Some(count.to_string())
}

/// The application on Rocket's configuration sources. With `own_pool`, the
/// host attaches `Db::init()` itself (before Gatehouse, which then uses that
/// pool); without, Gatehouse attaches it.
pub fn rocket(figment: rocket::figment::Figment, own_pool: bool) -> Rocket<Build> {
    let rocket =
        rocket::custom(figment).mount("/", gatehouse::traced(routes![home, dashboard, user_count]));
    let rocket = if own_pool {
        rocket.attach(Db::init())
    } else {
        rocket
    };
    rocket.attach(Gatehouse::new())
}
