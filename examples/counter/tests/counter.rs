//! The example host, as its users see it: the guarded page refuses a guest
//! and greets a signed-in user, and the count read through `Connection<Db>`
//! follows the accounts Gatehouse stores, whether Gatehouse or the host
//! attached the pool.

use gatehouse::{Accounts, Email};
use rocket::figment::Figment;
use rocket::http::{ContentType, Header, Status};
use rocket::local::asynchronous::Client;

fn figment(dir: &tempfile::TempDir) -> Figment {
    let url = format!(
        "sqlite://{}?mode=rwc",
        dir.path().join("counter.db").display()
    );
    rocket::Config::figment()
        .merge(("databases.main.url", url))
        .merge(("secret_key", [7u8; 64].to_vec()))
        .merge(("log_level", "off"))
}

async fn count(client: &Client) -> String {
    let response = client.get("/users/count").dispatch().await;
    assert_eq!(response.status(), Status::Ok);
    response.into_string().await.expect("a body")
}

async fn counts_users_and_guards_the_dashboard(own_pool: bool) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let client = Client::tracked(counter::rocket(figment(&dir), own_pool))
        .await
        .expect("the example host ignites");
    assert_eq!(count(&client).await, "0");

    let guest = client
        .get("/dashboard")
        .header(Header::new("Accept", "application/json"))
        .dispatch()
        .await;
    assert_eq!(guest.status(), Status::Unauthorized);

    let accounts = Accounts::open(&figment(&dir)).await.expect("accounts");
    let email = Email::parse("ada@example.org").expect("an address");
    let password = "correct horse battery staple of Ada";
    accounts
        .add_user(&email, Some("Ada"), password.to_owned().into())
        .await
        .expect("the account is created");
    assert_eq!(count(&client).await, "1");

    let login = client
        .post("/auth/login")
        .header(ContentType::JSON)
        .header(Header::new("Accept", "application/json"))
        .body(format!(
            r#"{{"email":"ada@example.org","password":"{password}"}}"#
        ))
        .dispatch()
        .await;
    assert_eq!(login.status(), Status::Ok);
    let dashboard = client
        .get("/dashboard")
        .header(Header::new("Accept", "text/html"))
        .dispatch()
        .await;
    assert_eq!(dashboard.status(), Status::Ok);
    assert_eq!(
        dashboard.into_string().await.as_deref(),
        Some("Signed in as ada@example.org")
    );
}

#[tokio::test]
async fn with_the_pool_gatehouse_attaches() {
    counts_users_and_guards_the_dashboard(false).await;
}

#[tokio::test]
async fn with_the_pool_the_host_attaches() {
    counts_users_and_guards_the_dashboard(true).await;
}
