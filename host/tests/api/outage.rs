//! A database that goes away: requests answer 503 `server_error` with
//! `Retry-After` while it is unreachable, and succeed again within seconds
//! of it coming back, with no restart of the host. The database server is
//! reached through a TCP relay that the test cuts and restores (SQLite has
//! no server to lose: there the test says so and passes).

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use rocket::http::{ContentType, Status};
use rocket::tokio::net::{TcpListener, TcpStream};
use rocket::tokio::task::JoinSet;
use serde_json::json;

use crate::helpers::{header, json, spawn_host_at, TestDb, PASSWORD};

/// A TCP relay to the database server that can be cut and restored.
struct Relay {
    address: SocketAddr,
    upstream: SocketAddr,
    tasks: Option<rocket::tokio::task::JoinHandle<()>>,
}

impl Relay {
    async fn start(upstream: SocketAddr) -> Relay {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("relay port");
        let address = listener.local_addr().expect("relay address");
        let mut relay = Relay {
            address,
            upstream,
            tasks: None,
        };
        relay.serve(listener);
        relay
    }

    fn serve(&mut self, listener: TcpListener) {
        let upstream = self.upstream;
        self.tasks = Some(rocket::tokio::spawn(async move {
            let mut connections = JoinSet::new();
            while let Ok((mut client, _)) = listener.accept().await {
                connections.spawn(async move {
                    if let Ok(mut server) = TcpStream::connect(upstream).await {
                        let _ =
                            rocket::tokio::io::copy_bidirectional(&mut client, &mut server).await;
                    }
                });
            }
        }));
    }

    /// Drops every relayed connection and refuses new ones.
    fn cut(&mut self) {
        if let Some(tasks) = self.tasks.take() {
            tasks.abort();
        }
    }

    /// Accepts connections again on the same address.
    async fn restore(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(5);
        let listener = loop {
            match TcpListener::bind(self.address).await {
                Ok(listener) => break listener,
                Err(e) if Instant::now() < deadline => {
                    let _ = e;
                    rocket::tokio::time::sleep(Duration::from_millis(50)).await;
                }
                Err(e) => panic!("cannot listen on {} again: {e}", self.address),
            }
        };
        self.serve(listener);
    }
}

#[rocket::async_test]
async fn a_database_outage_answers_503_and_recovers_without_a_restart() {
    let mut database = TestDb::new().await;
    let mut url = url::Url::parse(&database.url).expect("a database URL");
    if url.scheme() == "sqlite" {
        println!("not applicable: SQLite is a file in the process, with no server to lose");
        return;
    }
    let upstream: SocketAddr = format!(
        "{}:{}",
        url.host_str().expect("a host"),
        url.port_or_known_default().expect("a port")
    )
    .parse()
    .expect("a socket address");
    let mut relay = Relay::start(upstream).await;
    url.set_port(Some(relay.address.port())).expect("a port");
    database.url = url.to_string();
    let app = spawn_host_at(database, gatehouse_host::rocket).await;
    app.create_user("ada@example.org", PASSWORD).await;
    assert_eq!(app.login("ada@example.org", PASSWORD).await, Status::Ok);

    relay.cut();
    let login = app
        .post_json(
            "/auth/login",
            json!({"email": "ada@example.org", "password": PASSWORD}),
        )
        .await;
    assert_eq!(login.status(), Status::ServiceUnavailable);
    let retry_after: u64 = header(&login, "Retry-After")
        .expect("Retry-After")
        .parse()
        .unwrap();
    assert!(retry_after >= 1);
    assert_eq!(json(login).await, json!({"message": "server_error"}));
    let odata = app
        .client
        .get("/odata/Users")
        .header(ContentType::JSON)
        .dispatch()
        .await;
    assert_eq!(odata.status(), Status::ServiceUnavailable);
    assert!(header(&odata, "Retry-After").is_some());
    assert_eq!(json(odata).await["error"]["code"], "server_error");

    relay.restore().await;
    let back = Instant::now();
    loop {
        if app.get_json("/dashboard").await.status() == Status::Ok {
            break;
        }
        assert!(
            back.elapsed() < Duration::from_secs(5),
            "not back within 5 s"
        );
        rocket::tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
