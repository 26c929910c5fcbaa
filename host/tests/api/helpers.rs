//! `spawn_app()`: every test gets its own reference host and its own database
//! ([`TestDb`]: a fresh SQLite file, or a fresh PostgreSQL schema or MySQL
//! database on the server named by `GATEHOUSE_TEST_DATABASE_URL`).

pub use crate::database::TestDb;
use gatehouse::db::Db;
use gatehouse::session::session_cookie_name;
use gatehouse::Settings;
use rocket::figment::Figment;
use rocket::http::{ContentType, Cookie, Header, Status};
use rocket::local::asynchronous::{Client, LocalResponse};
use rocket::{Build, Rocket};
use serde_json::Value;

/// A password that passes the policy.
pub const PASSWORD: &str = "correct horse battery staple";

/// The `base_url` of every test host unless a test overrides it.
pub const BASE_URL: &str = "http://127.0.0.1:8000";

/// A running host with its own database.
pub struct TestApp {
    /// Rocket's local client (tracks cookies like a browser).
    pub client: Client,
    /// A second handle on the same database, for assertions.
    pub db: Db,
    /// Connection URL of this test's database.
    pub database_url: String,
    /// Name of the session cookie (`__Host-` prefixed under https).
    pub cookie_name: String,
    _database: TestDb,
}

/// The test figment: Rocket's defaults and Rocket.toml, with this test's database.
pub fn figment(database_url: &str) -> Figment {
    rocket::Config::figment()
        .merge(("databases.main.url", database_url))
        .merge(("base_url", BASE_URL))
        .merge(("secret_key", "hPRYyVRiMyxpw5sBB1XeCMN1kFsDCqKvBi2QJxBVHQk="))
        .merge(("log_level", "off"))
}

/// A reference host with default settings.
pub async fn spawn_app() -> TestApp {
    spawn_app_with(|f| f).await
}

/// A reference host with extra configuration.
pub async fn spawn_app_with(configure: impl FnOnce(Figment) -> Figment) -> TestApp {
    spawn_host(|f| gatehouse_host::rocket(configure(f))).await
}

/// Any host, built by `build` from the test figment, on a fresh database.
pub async fn spawn_host(build: impl FnOnce(Figment) -> Rocket<Build>) -> TestApp {
    spawn_host_at(TestDb::new().await, build).await
}

/// Any host, built by `build` from the test figment, on `database` — which
/// the test has prepared (say, with the tables its configuration exposes) and
/// which lives as long as the app.
pub async fn spawn_host_at(
    database: TestDb,
    build: impl FnOnce(Figment) -> Rocket<Build>,
) -> TestApp {
    let database_url = database.url.clone();
    let rocket = build(figment(&database_url));
    let settings = Settings::from_figment(rocket.figment()).expect("valid test configuration");
    let cookie_name = session_cookie_name(&settings);
    let client = Client::tracked(rocket).await.expect("host ignites");
    let db = Db::connect(&database_url).await.expect("test database");
    TestApp {
        client,
        db,
        database_url,
        cookie_name,
        _database: database,
    }
}

impl TestApp {
    /// Another reference host on this test's database (a second instance behind
    /// a load balancer). Its client does not track cookies.
    pub async fn another_instance(&self) -> Client {
        self.another_instance_with(|f| f).await
    }

    /// [`Self::another_instance`] with extra configuration.
    pub async fn another_instance_with(
        &self,
        configure: impl FnOnce(Figment) -> Figment,
    ) -> Client {
        Client::untracked(gatehouse_host::rocket(configure(figment(
            &self.database_url,
        ))))
        .await
        .expect("second instance ignites")
    }

    /// POSTs a JSON body.
    pub async fn post_json(&self, path: &str, body: Value) -> LocalResponse<'_> {
        self.client
            .post(path.to_owned())
            .header(ContentType::JSON)
            .body(body.to_string())
            .dispatch()
            .await
    }

    /// POSTs a form body as a browser would.
    pub async fn post_form(&self, path: &str, body: &str) -> LocalResponse<'_> {
        self.client
            .post(path.to_owned())
            .header(ContentType::Form)
            .header(Header::new("Accept", "text/html"))
            .body(body)
            .dispatch()
            .await
    }

    /// GETs a page as a script would (no `Accept: text/html`).
    pub async fn get_json(&self, path: &str) -> LocalResponse<'_> {
        self.client
            .get(path.to_owned())
            .header(ContentType::JSON)
            .header(Header::new("Accept", "application/json"))
            .dispatch()
            .await
    }

    /// GETs a page as a browser would.
    pub async fn get_html(&self, path: &str) -> LocalResponse<'_> {
        self.client
            .get(path.to_owned())
            .header(Header::new("Accept", "text/html"))
            .dispatch()
            .await
    }

    /// Signs in with JSON and answers the status.
    pub async fn login(&self, email: &str, password: &str) -> Status {
        self.post_json(
            "/auth/login",
            serde_json::json!({"email": email, "password": password}),
        )
        .await
        .status()
    }

    /// Signs out (form button) and answers the status.
    pub async fn logout(&self) -> Status {
        self.post_form("/logout", "").await.status()
    }

    /// Whether the client's cookies sign it in (JSON `GET /dashboard`).
    pub async fn is_signed_in(&self) -> bool {
        match self.get_json("/dashboard").await.status() {
            Status::Ok => true,
            Status::Unauthorized => false,
            other => panic!("unexpected status from /dashboard: {other}"),
        }
    }

    /// The current session cookie value, if the client holds one.
    pub fn session_cookie(&self) -> Option<String> {
        self.client
            .cookies()
            .get(&self.cookie_name)
            .map(|c| c.value().to_owned())
    }
}

/// The JSON body of a response.
pub async fn json(response: LocalResponse<'_>) -> Value {
    let text = response.into_string().await.unwrap_or_default();
    serde_json::from_str(&text).unwrap_or_else(|_| panic!("not JSON: {text}"))
}

/// The cookie named `name` among a response's `Set-Cookie` headers (value
/// percent-decoded, as a browser would send it back).
pub fn set_cookie(response: &LocalResponse<'_>, name: &str) -> Option<Cookie<'static>> {
    response
        .headers()
        .get("Set-Cookie")
        .filter_map(|raw| Cookie::parse_encoded(raw.to_owned()).ok())
        .find(|c| c.name() == name)
}

/// The `Location` header of a redirect.
pub fn location(response: &LocalResponse<'_>) -> String {
    response
        .headers()
        .get_one("Location")
        .expect("Location header")
        .to_owned()
}

/// A header's value.
pub fn header(response: &LocalResponse<'_>, name: &str) -> Option<String> {
    response.headers().get_one(name).map(str::to_owned)
}
